// plot_rotation_error_svg: angle error against walk length for one or several
// rotation-tracking runs (data.dataset "rotations:SO3"), read from each DIR/result.json's
// "test" scores (tasks/rotation_eval.hpp), as one self-contained SVG: per run the mean
// (solid, markers) and the 95th percentile (dashed) of the geodesic angle in degrees,
// both axes on log scales (lengths log2, degrees log10: errors span many decades), the
// floor of exact integration (grey, dotted) when it is above zero, and a dotted line at
// the longest training length when every run has the same one.
#pragma once
#include <string>
#include <vector>

namespace liegrad::report {

// True when DIR/config.json's data.dataset starts with "rotations:".
bool is_rotation_run(const std::string& dir);

// Throws IoError naming a run directory without a readable result.json holding test
// scores by length (an unfinished run).
std::string plot_rotation_error_svg(const std::vector<std::string>& run_dirs, const std::string& title = "");

}  // namespace liegrad::report
