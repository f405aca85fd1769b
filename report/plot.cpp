// SVG plotting of metrics.jsonl curves (see plot.hpp). "Nice" tick steps follow
// Heckbert's 1990 labelling (1, 2, 5 times a power of ten).
#include "report/plot.hpp"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <iomanip>
#include <sstream>

#include <nlohmann/json.hpp>

#include "core/errors.hpp"
#include "report/run_result.hpp"
#include "report/xml_escape.hpp"

namespace liegrad::report {

namespace {

struct Series {
  std::string label;
  std::vector<std::pair<double, double>> train, val;
};

Series read_run(const std::string& dir) {
  const std::filesystem::path file = std::filesystem::path(dir) / "metrics.jsonl";
  std::ifstream in(file);
  if (!in) throw IoError("plot: cannot read '" + file.string() + "' (is '" + dir + "' a run directory?)");
  Series s;
  s.label = run_label(dir);
  std::string line;
  while (std::getline(in, line)) {
    const nlohmann::json j = nlohmann::json::parse(line, nullptr, false);
    if (j.is_discarded() || !j.contains("step")) continue;
    const double step = j.at("step").get<double>();
    if (j.contains("bpc")) s.train.emplace_back(step, j.at("bpc").get<double>());
    if (j.contains("val_bpc")) s.val.emplace_back(step, j.at("val_bpc").get<double>());
  }
  if (s.train.empty() && s.val.empty()) throw IoError("plot: '" + file.string() + "' holds no BPC values");
  return s;
}

double nice_step(double range, int target_ticks) {
  const double raw = range / target_ticks;
  const double mag = std::pow(10.0, std::floor(std::log10(raw)));
  const double f = raw / mag;
  return (f < 1.5 ? 1 : f < 3 ? 2 : f < 7 ? 5 : 10) * mag;
}

}  // namespace

std::string plot_runs_svg(const std::vector<std::string>& run_dirs, const std::string& title) {
  if (run_dirs.empty()) throw ValueError("plot: give at least one run directory");
  std::vector<Series> runs;
  for (const auto& d : run_dirs) runs.push_back(read_run(d));
  double x0 = 1e300, x1 = -1e300, y0 = 1e300, y1 = -1e300;
  for (const auto& r : runs)
    for (const auto* pts : {&r.train, &r.val})
      for (const auto& [x, y] : *pts) {
        if (!std::isfinite(y)) continue;
        x0 = std::min(x0, x);
        x1 = std::max(x1, x);
        y0 = std::min(y0, y);
        y1 = std::max(y1, y);
      }
  x0 = 0;
  if (x1 <= x0) x1 = x0 + 1;
  if (y1 - y0 < 1e-6) y1 = y0 + 1;
  const double ystep = nice_step(y1 - y0, 6), xstep = nice_step(x1 - x0, 8);
  y0 = std::floor(y0 / ystep) * ystep;
  y1 = std::ceil(y1 / ystep) * ystep;
  const double W = 860, H = 520, L = 70, R = 200, T = 40, B = 60;
  auto px = [&](double x) { return L + (x - x0) / (x1 - x0) * (W - L - R); };
  auto py = [&](double y) { return H - B - (y - y0) / (y1 - y0) * (H - T - B); };
  static const char* colors[] = {"#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#e377c2", "#17becf"};
  std::ostringstream o;
  o.setf(std::ios::fixed);
  o.precision(1);
  o << "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" << W << "\" height=\"" << H << "\" font-family=\"sans-serif\" font-size=\"12\">\n";
  o << "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n";
  o << "<text x=\"" << (L + (W - L - R) / 2) << "\" y=\"24\" text-anchor=\"middle\" font-size=\"15\">"
    << xml_escape(title.empty() ? "bits per character" : title) << "</text>\n";
  // Grid and ticks.
  for (double y = y0; y <= y1 + ystep / 2; y += ystep) {
    o << "<line x1=\"" << L << "\" x2=\"" << W - R << "\" y1=\"" << py(y) << "\" y2=\"" << py(y) << "\" stroke=\"#e5e5e5\"/>\n";
    o << "<text x=\"" << L - 6 << "\" y=\"" << py(y) + 4 << "\" text-anchor=\"end\">" << std::setprecision(ystep < 0.1 ? 2 : 1) << y << "</text>\n";
  }
  o.precision(0);
  for (double x = x0; x <= x1 + xstep / 2; x += xstep) {
    o << "<line x1=\"" << px(x) << "\" x2=\"" << px(x) << "\" y1=\"" << T << "\" y2=\"" << H - B << "\" stroke=\"#f0f0f0\"/>\n";
    o << "<text x=\"" << px(x) << "\" y=\"" << H - B + 18 << "\" text-anchor=\"middle\">" << x << "</text>\n";
  }
  o.precision(1);
  o << "<rect x=\"" << L << "\" y=\"" << T << "\" width=\"" << W - L - R << "\" height=\"" << H - T - B << "\" fill=\"none\" stroke=\"black\"/>\n";
  o << "<text x=\"" << L + (W - L - R) / 2 << "\" y=\"" << H - 18 << "\" text-anchor=\"middle\">training step</text>\n";
  o << "<text transform=\"translate(20," << T + (H - T - B) / 2 << ") rotate(-90)\" text-anchor=\"middle\">BPC</text>\n";
  // Curves and legend.
  for (size_t i = 0; i < runs.size(); ++i) {
    const char* c = colors[i % 8];
    auto path = [&](const std::vector<std::pair<double, double>>& pts) {
      std::ostringstream p;
      p.setf(std::ios::fixed);
      p.precision(1);
      bool first = true;
      for (const auto& [x, y] : pts) {
        if (!std::isfinite(y)) continue;
        p << (first ? "M" : " L") << px(x) << "," << py(y);
        first = false;
      }
      return p.str();
    };
    if (!runs[i].train.empty())
      o << "<path d=\"" << path(runs[i].train) << "\" fill=\"none\" stroke=\"" << c << "\" stroke-width=\"1\" opacity=\"0.6\"/>\n";
    if (!runs[i].val.empty()) {
      o << "<path d=\"" << path(runs[i].val) << "\" fill=\"none\" stroke=\"" << c << "\" stroke-width=\"2.5\"/>\n";
      for (const auto& [x, y] : runs[i].val)
        if (std::isfinite(y)) o << "<circle cx=\"" << px(x) << "\" cy=\"" << py(y) << "\" r=\"3\" fill=\"" << c << "\"/>\n";
    }
    const double ly = T + 20 + 36.0 * static_cast<double>(i);
    o << "<line x1=\"" << W - R + 14 << "\" x2=\"" << W - R + 40 << "\" y1=\"" << ly << "\" y2=\"" << ly << "\" stroke=\"" << c << "\" stroke-width=\"1\"/>\n";
    o << "<line x1=\"" << W - R + 14 << "\" x2=\"" << W - R + 40 << "\" y1=\"" << ly + 14 << "\" y2=\"" << ly + 14 << "\" stroke=\"" << c << "\" stroke-width=\"2.5\"/>\n";
    o << "<text x=\"" << W - R + 46 << "\" y=\"" << ly + 4 << "\">" << xml_escape(runs[i].label) << " train</text>\n";
    o << "<text x=\"" << W - R + 46 << "\" y=\"" << ly + 18 << "\">" << xml_escape(runs[i].label) << " validation</text>\n";
  }
  o << "</svg>\n";
  return o.str();
}

}  // namespace liegrad::report
