// SVG of accuracy against word length (see plot_words.hpp).
#include "report/plot_words.hpp"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include <nlohmann/json.hpp>

#include "core/errors.hpp"
#include "report/xml_escape.hpp"

namespace liegrad::report {

namespace {

namespace fs = std::filesystem;

struct Curve {
  std::string label, task;
  int64_t classes = 0, max_len = 0;
  std::vector<std::pair<double, double>> points;  // (length, accuracy)
};

nlohmann::json read_json(const fs::path& file) {
  std::ifstream in(file);
  if (!in) throw IoError("plot: cannot read '" + file.string() + "'");
  const nlohmann::json j = nlohmann::json::parse(in, nullptr, false);
  if (j.is_discarded()) throw IoError("plot: '" + file.string() + "' is not valid JSON");
  return j;
}

Curve read_curve(const std::string& dir, const std::string& metric) {
  const fs::path file = fs::path(dir) / "result.json";
  if (!fs::exists(file))
    throw IoError("plot: '" + file.string() + "' does not exist (is the run in '" + dir + "' finished?)");
  const nlohmann::json r = read_json(file);
  if (!r.contains("test") || !r.at("test").is_array() || r.at("test").empty())
    throw IoError("plot: '" + file.string() + "' holds no test scores by length (not a group word run?)");
  Curve c;
  c.label = fs::path(dir).filename().string();
  if (c.label.empty()) c.label = fs::path(dir).parent_path().filename().string();
  c.task = r.value("task", "");
  c.classes = r.value("classes", int64_t{0});
  c.max_len = r.contains("config") ? r["config"]["data"].value("max_len", int64_t{0}) : 0;
  for (const auto& s : r.at("test")) {
    if (!s.contains("length") || !s.contains(metric)) throw IoError("plot: '" + file.string() + "' lacks " + metric);
    c.points.emplace_back(s.at("length").get<double>(), s.at(metric).get<double>());
  }
  std::sort(c.points.begin(), c.points.end());
  return c;
}

}  // namespace

bool scored_by_length(const std::string& dir) {
  const fs::path file = fs::path(dir) / "config.json";
  if (!fs::exists(file)) return false;
  const nlohmann::json j = read_json(file);
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
  const double x0 = std::log2(*lengths.begin()), x1 = std::max(std::log2(*lengths.rbegin()), x0 + 1);
  const double W = 860, H = 520, L = 70, R = 240, T = 40, B = 60;
  auto px = [&](double len) { return L + (std::log2(len) - x0) / (x1 - x0) * (W - L - R); };
  auto py = [&](double acc) { return H - B - acc * (H - T - B); };
  static const char* colors[] = {"#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#e377c2", "#17becf", "#7f7f7f", "#bcbd22"};
  const std::string metric_label = metric == "position_acc"   ? "accuracy per position"
                                   : metric == "sequence_acc" ? "whole-word accuracy"
                                                              : "accuracy at the last position";
  std::ostringstream o;
  o.setf(std::ios::fixed);
  o.precision(1);
  o << "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" << W << "\" height=\"" << H
    << "\" font-family=\"sans-serif\" font-size=\"12\">\n<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n";
  const std::string heading =
      !title.empty() ? title : (tasks.size() == 1 ? *tasks.begin() + ": " : std::string()) + metric_label + " against length";
  o << "<text x=\"" << (L + (W - L - R) / 2) << "\" y=\"24\" text-anchor=\"middle\" font-size=\"15\">" << xml_escape(heading)
    << "</text>\n";
  for (int k = 0; k <= 10; k += 2) {
    const double a = k / 10.0;
    o << "<line x1=\"" << L << "\" x2=\"" << W - R << "\" y1=\"" << py(a) << "\" y2=\"" << py(a) << "\" stroke=\"#e5e5e5\"/>\n";
    o << "<text x=\"" << L - 6 << "\" y=\"" << py(a) + 4 << "\" text-anchor=\"end\">" << a << "</text>\n";
  }
  for (double len : lengths) {
    o << "<line x1=\"" << px(len) << "\" x2=\"" << px(len) << "\" y1=\"" << T << "\" y2=\"" << H - B << "\" stroke=\"#f0f0f0\"/>\n";
    o << "<text x=\"" << px(len) << "\" y=\"" << H - B + 18 << "\" text-anchor=\"middle\">" << static_cast<int64_t>(len)
      << "</text>\n";
  }
  o << "<rect x=\"" << L << "\" y=\"" << T << "\" width=\"" << W - L - R << "\" height=\"" << H - T - B
    << "\" fill=\"none\" stroke=\"black\"/>\n";
  o << "<text x=\"" << L + (W - L - R) / 2 << "\" y=\"" << H - 18 << "\" text-anchor=\"middle\">word length (log scale)</text>\n";
  o << "<text transform=\"translate(20," << T + (H - T - B) / 2 << ") rotate(-90)\" text-anchor=\"middle\">"
    << xml_escape(metric_label) << "</text>\n";
  if (tasks.size() == 1 && runs.front().classes > 0) {  // chance: 1/|G|
    const double chance = 1.0 / static_cast<double>(runs.front().classes);
    o << "<line x1=\"" << L << "\" x2=\"" << W - R << "\" y1=\"" << py(chance) << "\" y2=\"" << py(chance)
      << "\" stroke=\"#888\" stroke-dasharray=\"6,4\"/>\n<text x=\"" << W - R - 4 << "\" y=\"" << py(chance) - 4
      << "\" text-anchor=\"end\" fill=\"#888\">chance</text>\n";
  }
  if (max_lens.size() == 1 && *max_lens.begin() > 0) {
    const double m = static_cast<double>(*max_lens.begin());
    if (std::log2(m) >= x0 && std::log2(m) <= x1)
      o << "<line x1=\"" << px(m) << "\" x2=\"" << px(m) << "\" y1=\"" << T << "\" y2=\"" << H - B
        << "\" stroke=\"#888\" stroke-dasharray=\"2,3\"/>\n<text x=\"" << px(m) + 4 << "\" y=\"" << T + 14
        << "\" fill=\"#888\">longest training word</text>\n";
  }
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
