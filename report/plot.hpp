// plot_runs_svg: training and validation BPC against steps for one or several runs
// (their DIR/metrics.jsonl), drawn as one self-contained SVG with axes, ticks,
// labels and a legend. Training curves are thin lines, validation curves thicker
// lines with markers, one colour per run.
#pragma once
#include <string>
#include <vector>

namespace liegrad::report {

// Throws IoError naming a run directory without a readable metrics.jsonl.
std::string plot_runs_svg(const std::vector<std::string>& run_dirs, const std::string& title = "");

}  // namespace liegrad::report
