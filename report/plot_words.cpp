// SVG of accuracy against word length (see plot_words.hpp).
#include "report/plot_words.hpp"

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

namespace {

namespace fs = std::filesystem;

struct Curve {
  std::string label, task;
  int64_t classes = 0, max_len = 0;
  std::vector<std::pair<double, double>> points;  // (length, accuracy)
};

Curve read_curve(const std::string& dir, const std::string& metric) {
  const ScoredRun scored = read_scored_run(dir, " (not a group word run?)");
  const nlohmann::json& r = scored.result;
  Curve c;
  c.label = scored.label;
  c.task = r.value("task", "");
  c.classes = r.value("classes", int64_t{0});
  c.max_len = scored.max_len;
  for (const auto& s : r.at("test")) {
    if (!s.contains("length") || !s.contains(metric))
      throw IoError("plot: '" + scored.file.string() + "' lacks " + metric);
    c.points.emplace_back(s.at("length").get<double>(), s.at(metric).get<double>());
  }
  std::sort(c.points.begin(), c.points.end());
  return c;
}

}  // namespace

bool scored_by_length(const std::string& dir) {
  const fs::path file = fs::path(dir) / "config.json";
  if (!fs::exists(file)) return false;
  const nlohmann::json j = read_run_json(file);
  return j.contains("data") && j["data"].is_object() && j["data"].contains("eval_lengths");
}

std::string plot_word_accuracy_svg(const std::vector<std::string>& run_dirs, const std::string& title,
                                   const std::string& metric) {
  if (metric != "position_acc" && metric != "sequence_acc" && metric != "final_acc")
    throw ValueError("plot: unknown metric '" + metric + "' (expected position_acc, sequence_acc or final_acc)");
  if (run_dirs.empty()) throw ValueError("plot: give at least one run directory");
  std::vector<Curve> runs;
  std::set<double> lengths;
  std::set<std::string> tasks;
  std::set<int64_t> max_lens;
  for (const auto& d : run_dirs) {
    runs.push_back(read_curve(d, metric));
    for (const auto& p : runs.back().points) lengths.insert(p.first);
    tasks.insert(runs.back().task);
    max_lens.insert(runs.back().max_len);
  }
  const LengthAxis axis(lengths);
  constexpr double W = LengthAxis::W, H = LengthAxis::H, L = LengthAxis::L, R = LengthAxis::R, T = LengthAxis::T,
                   B = LengthAxis::B;
  auto px = [&](double len) { return axis.px(len); };
  auto py = [&](double acc) { return H - B - acc * (H - T - B); };
  static const char* colors[] = {"#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#e377c2", "#17becf", "#7f7f7f", "#bcbd22"};
  const std::string metric_label = metric == "position_acc"   ? "accuracy per position"
                                   : metric == "sequence_acc" ? "whole-word accuracy"
                                                              : "accuracy at the last position";
  std::ostringstream o;
  o.setf(std::ios::fixed);
  o.precision(1);
  svg_length_plot_open(o, !title.empty() ? title
                                          : (tasks.size() == 1 ? *tasks.begin() + ": " : std::string()) + metric_label +
                                                " against length");
  for (int k = 0; k <= 10; k += 2) {
    const double a = k / 10.0;
    o << "<line x1=\"" << L << "\" x2=\"" << W - R << "\" y1=\"" << py(a) << "\" y2=\"" << py(a) << "\" stroke=\"#e5e5e5\"/>\n";
    o << "<text x=\"" << L - 6 << "\" y=\"" << py(a) + 4 << "\" text-anchor=\"end\">" << a << "</text>\n";
  }
  svg_length_axis(o, axis, lengths, "word length (log scale)", metric_label);
  if (tasks.size() == 1 && runs.front().classes > 0) {  // chance: 1/|G|
    const double chance = 1.0 / static_cast<double>(runs.front().classes);
    o << "<line x1=\"" << L << "\" x2=\"" << W - R << "\" y1=\"" << py(chance) << "\" y2=\"" << py(chance)
      << "\" stroke=\"#888\" stroke-dasharray=\"6,4\"/>\n<text x=\"" << W - R - 4 << "\" y=\"" << py(chance) - 4
      << "\" text-anchor=\"end\" fill=\"#888\">chance</text>\n";
  }
  svg_longest_training_line(o, axis, max_lens, "word");
  for (size_t i = 0; i < runs.size(); ++i) {
    const char* c = colors[i % 10];
    std::ostringstream p;
    p.setf(std::ios::fixed);
    p.precision(1);
    for (size_t k = 0; k < runs[i].points.size(); ++k)
      p << (k ? " L" : "M") << px(runs[i].points[k].first) << "," << py(runs[i].points[k].second);
    o << "<path d=\"" << p.str() << "\" fill=\"none\" stroke=\"" << c << "\" stroke-width=\"2\"/>\n";
    for (const auto& [len, acc] : runs[i].points)
      o << "<circle cx=\"" << px(len) << "\" cy=\"" << py(acc) << "\" r=\"3.5\" fill=\"" << c << "\"/>\n";
    const double ly = T + 14 + 20.0 * static_cast<double>(i);
    o << "<line x1=\"" << W - R + 14 << "\" x2=\"" << W - R + 40 << "\" y1=\"" << ly << "\" y2=\"" << ly << "\" stroke=\""
      << c << "\" stroke-width=\"2\"/>\n<text x=\"" << W - R + 46 << "\" y=\"" << ly + 4 << "\">" << xml_escape(runs[i].label)
      << "</text>\n";
  }
  o << "</svg>\n";
  return o.str();
}

}  // namespace liegrad::report
