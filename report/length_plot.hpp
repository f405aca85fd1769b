// The frame of the plots against length (plot_words.cpp, plot_rotations.cpp): an SVG of
// 860 x 520 with the lengths on a log2 x axis (a grid line and a label per length), the
// plot area's border, the axis labels, and a dotted line at the longest training length
// when every run has the same one. Each plot draws its own y axis and curves between.
// The streams keep the caller's number format (fixed, one decimal).
#pragma once
#include <cstdint>
#include <ostream>
#include <set>
#include <string>

namespace liegrad::report {

struct LengthAxis {
  // The SVG's size and the plot area's margins (left, right, top, bottom).
  static constexpr double W = 860, H = 520, L = 70, R = 240, T = 40, B = 60;
  double x0 = 0, x1 = 1;  // log2 of the shortest and the longest length; x1 >= x0 + 1

  // lengths: every length plotted (at least one).
  explicit LengthAxis(const std::set<double>& lengths);
  // The x coordinate of a length.
  double px(double length) const;
};

// The SVG's opening tag, its white background and `heading` centred over the plot area.
void svg_length_plot_open(std::ostream& o, const std::string& heading);

// The lengths' grid lines and labels, the plot area's border and the axis labels.
void svg_length_axis(std::ostream& o, const LengthAxis& axis, const std::set<double>& lengths,
                     const std::string& x_label, const std::string& y_label);

// A dotted vertical line labelled "longest training <unit>" at the runs' longest training
// length, when they all have the same one (max_lens holds one value > 0) within the axis.
void svg_longest_training_line(std::ostream& o, const LengthAxis& axis, const std::set<int64_t>& max_lens,
                               const std::string& unit);

}  // namespace liegrad::report
