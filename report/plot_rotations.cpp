// SVG of angle error against walk length (see plot_rotations.hpp).
#include "report/plot_rotations.hpp"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <set>
#include <sstream>

#include <nlohmann/json.hpp>

#include "core/errors.hpp"
#include "report/length_plot.hpp"
#include "report/run_result.hpp"
#include "report/xml_escape.hpp"

namespace liegrad::report {

// Named, not anonymous: the sanitizer build compiles report/ as one unity file, where
// plot.cpp and plot_words.cpp have helpers of the same names.
namespace rotation_plot {

namespace fs = std::filesystem;

struct Point {
  double length = 0, mean = 0, p95 = 0, floor = 0;
};

struct Run {
  std::string label;
  int64_t max_len = 0;
  std::vector<Point> points;
};

Run read_run(const std::string& dir) {
  const ScoredRun scored = read_scored_run(dir);
  Run run;
  run.label = scored.label;
  run.max_len = scored.max_len;
  for (const auto& s : scored.result.at("test")) {
    if (!s.contains("length") || !s.contains("mean_deg") || !s.contains("p95_deg") || !s.contains("floor_mean_deg"))
      throw IoError("plot: '" + scored.file.string() + "' lacks the angle scores (mean_deg, p95_deg, floor_mean_deg)");
    run.points.push_back({s.at("length").get<double>(), s.at("mean_deg").get<double>(), s.at("p95_deg").get<double>(),
                          s.at("floor_mean_deg").get<double>()});
  }
  std::sort(run.points.begin(), run.points.end(), [](const Point& a, const Point& b) { return a.length < b.length; });
  return run;
}

}  // namespace rotation_plot


bool is_rotation_run(const std::string& dir) {
  const std::filesystem::path file = std::filesystem::path(dir) / "config.json";
  if (!std::filesystem::exists(file)) return false;
  const nlohmann::json j = read_run_json(file);
  return j.contains("data") && j["data"].is_object() && j["data"].value("dataset", "").rfind("rotations:", 0) == 0;
}

std::string plot_rotation_error_svg(const std::vector<std::string>& run_dirs, const std::string& title) {
  if (run_dirs.empty()) throw ValueError("plot: give at least one run directory");
  std::vector<rotation_plot::Run> runs;
  std::set<double> lengths;
  std::set<int64_t> max_lens;
  double lo = 1e300, hi = 0;
  for (const auto& d : run_dirs) {
    runs.push_back(rotation_plot::read_run(d));
    max_lens.insert(runs.back().max_len);
    for (const rotation_plot::Point& p : runs.back().points) {
      lengths.insert(p.length);
      for (double v : {p.mean, p.p95, p.floor})
        if (v > 0) lo = std::min(lo, v), hi = std::max(hi, v);
    }
  }
  if (hi <= 0) lo = 1e-6, hi = 1;
  const double y0 = std::floor(std::log10(lo)), y1 = std::max(std::ceil(std::log10(hi)), y0 + 1);
  const LengthAxis axis(lengths);
  constexpr double W = LengthAxis::W, H = LengthAxis::H, L = LengthAxis::L, R = LengthAxis::R, T = LengthAxis::T,
                   B = LengthAxis::B;
  auto px = [&](double len) { return axis.px(len); };
  // Zero (a floor without noise) sits on the bottom edge.
  auto py = [&](double deg) {
    const double v = deg > 0 ? std::clamp(std::log10(deg), y0, y1) : y0;
    return H - B - (v - y0) / (y1 - y0) * (H - T - B);
  };
  static const char* colors[] = {"#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd",
                                 "#8c564b", "#e377c2", "#17becf", "#7f7f7f", "#bcbd22"};
  std::ostringstream o;
  o.setf(std::ios::fixed);
  o.precision(1);
  svg_length_plot_open(o, !title.empty() ? title : "rotations:SO3: angle error against length");
  for (int k = static_cast<int>(y0); k <= static_cast<int>(y1); ++k) {
    const double y = py(std::pow(10.0, k));
    o << "<line x1=\"" << L << "\" x2=\"" << W - R << "\" y1=\"" << y << "\" y2=\"" << y << "\" stroke=\"#e5e5e5\"/>\n";
    o << "<text x=\"" << L - 6 << "\" y=\"" << y + 4 << "\" text-anchor=\"end\">1e" << k << "</text>\n";
  }
  svg_length_axis(o, axis, lengths, "walk length (log scale)", "geodesic angle error, degrees (log scale)");
  svg_longest_training_line(o, axis, max_lens, "walk");
  auto path = [&](const rotation_plot::Run& run, double rotation_plot::Point::*field) {
    std::ostringstream p;
    p.setf(std::ios::fixed);
    p.precision(1);
    for (size_t k = 0; k < run.points.size(); ++k)
      p << (k ? " L" : "M") << px(run.points[k].length) << "," << py(run.points[k].*field);
    return p.str();
  };
  for (size_t i = 0; i < runs.size(); ++i) {
    const char* c = colors[i % 10];
    o << "<path d=\"" << path(runs[i], &rotation_plot::Point::mean) << "\" fill=\"none\" stroke=\"" << c << "\" stroke-width=\"2\"/>\n";
    o << "<path d=\"" << path(runs[i], &rotation_plot::Point::p95) << "\" fill=\"none\" stroke=\"" << c
      << "\" stroke-width=\"1.5\" stroke-dasharray=\"6,4\"/>\n";
    const bool floor = std::any_of(runs[i].points.begin(), runs[i].points.end(), [](const rotation_plot::Point& p) { return p.floor > 0; });
    if (floor)
      o << "<path d=\"" << path(runs[i], &rotation_plot::Point::floor) << "\" fill=\"none\" stroke=\"#888\" stroke-width=\"1.5\""
        << " stroke-dasharray=\"2,3\"/>\n";
    for (const rotation_plot::Point& p : runs[i].points)
      o << "<circle cx=\"" << px(p.length) << "\" cy=\"" << py(p.mean) << "\" r=\"3.5\" fill=\"" << c << "\"/>\n";
    const double ly = T + 14 + 20.0 * static_cast<double>(i);
    o << "<line x1=\"" << W - R + 14 << "\" x2=\"" << W - R + 40 << "\" y1=\"" << ly << "\" y2=\"" << ly
      << "\" stroke=\"" << c << "\" stroke-width=\"2\"/>\n<text x=\"" << W - R + 46 << "\" y=\"" << ly + 4 << "\">"
      << xml_escape(runs[i].label + (floor ? " (grey: floor)" : "")) << "</text>\n";
  }
  const double ky = T + 14 + 20.0 * static_cast<double>(runs.size()) + 10;
  o << "<text x=\"" << W - R + 14 << "\" y=\"" << ky << "\" fill=\"#555\">solid: mean; dashed: 95th percentile</text>\n";
  o << "</svg>\n";
  return o.str();
}

}  // namespace liegrad::report
