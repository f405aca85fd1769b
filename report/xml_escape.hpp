// Text for SVG and other XML: <, > and & as entities (the plots of plot.cpp,
// plot_words.cpp, plot_rotations.cpp and length_plot.cpp put run labels and titles into <text> elements).
#pragma once
#include <string>

namespace liegrad::report {

inline std::string xml_escape(const std::string& s) {
  std::string o;
  for (char c : s) o += c == '<' ? "&lt;" : c == '>' ? "&gt;" : c == '&' ? "&amp;" : std::string(1, c);
  return o;
}

}  // namespace liegrad::report
