// The frame of the plots against length (see length_plot.hpp).
#include "report/length_plot.hpp"

#include <algorithm>
#include <cmath>

#include "report/xml_escape.hpp"

namespace liegrad::report {

LengthAxis::LengthAxis(const std::set<double>& lengths)
    : x0(std::log2(*lengths.begin())), x1(std::max(std::log2(*lengths.rbegin()), x0 + 1)) {}

double LengthAxis::px(double length) const { return L + (std::log2(length) - x0) / (x1 - x0) * (W - L - R); }

void svg_length_plot_open(std::ostream& o, const std::string& heading) {
  using A = LengthAxis;
  o << "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" << A::W << "\" height=\"" << A::H
    << "\" font-family=\"sans-serif\" font-size=\"12\">\n<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n";
  o << "<text x=\"" << (A::L + (A::W - A::L - A::R) / 2) << "\" y=\"24\" text-anchor=\"middle\" font-size=\"15\">"
    << xml_escape(heading) << "</text>\n";
}

void svg_length_axis(std::ostream& o, const LengthAxis& axis, const std::set<double>& lengths,
                     const std::string& x_label, const std::string& y_label) {
  using A = LengthAxis;
  for (double len : lengths) {
    o << "<line x1=\"" << axis.px(len) << "\" x2=\"" << axis.px(len) << "\" y1=\"" << A::T << "\" y2=\"" << A::H - A::B
      << "\" stroke=\"#f0f0f0\"/>\n";
    o << "<text x=\"" << axis.px(len) << "\" y=\"" << A::H - A::B + 18 << "\" text-anchor=\"middle\">"
      << static_cast<int64_t>(len) << "</text>\n";
  }
  o << "<rect x=\"" << A::L << "\" y=\"" << A::T << "\" width=\"" << A::W - A::L - A::R << "\" height=\""
    << A::H - A::T - A::B << "\" fill=\"none\" stroke=\"black\"/>\n";
  o << "<text x=\"" << A::L + (A::W - A::L - A::R) / 2 << "\" y=\"" << A::H - 18 << "\" text-anchor=\"middle\">"
    << xml_escape(x_label) << "</text>\n";
  o << "<text transform=\"translate(20," << A::T + (A::H - A::T - A::B) / 2 << ") rotate(-90)\" text-anchor=\"middle\">"
    << xml_escape(y_label) << "</text>\n";
}

void svg_longest_training_line(std::ostream& o, const LengthAxis& axis, const std::set<int64_t>& max_lens,
                               const std::string& unit) {
  using A = LengthAxis;
  if (max_lens.size() != 1 || *max_lens.begin() <= 0) return;
  const double m = static_cast<double>(*max_lens.begin());
  if (std::log2(m) >= axis.x0 && std::log2(m) <= axis.x1)
    o << "<line x1=\"" << axis.px(m) << "\" x2=\"" << axis.px(m) << "\" y1=\"" << A::T << "\" y2=\"" << A::H - A::B
      << "\" stroke=\"#888\" stroke-dasharray=\"2,3\"/>\n<text x=\"" << axis.px(m) + 4 << "\" y=\"" << A::T + 14
      << "\" fill=\"#888\">longest training " << unit << "</text>\n";
}

}  // namespace liegrad::report
