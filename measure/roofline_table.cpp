// The roofline table of `liegrad bench` (see roofline.hpp): bounds from the counts of
// models/roofline.cpp and the run's measured peak and bandwidth, and the report.
#include "measure/roofline_table.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "core/errors.hpp"
#include "core/profile.hpp"

namespace liegrad::measure {

namespace {

// Bound and measured-against-bound of one row (its cost and measured_ns already set).
void bound(RooflineRow& row, double peak_gflop_per_s, double stream_gb_per_s) {
  if (!row.cost.derived || (row.cost.flops <= 0 && row.cost.bytes <= 0)) return;
  const double compute_ns = row.cost.flops / peak_gflop_per_s;  // FLOP / (GFLOP/s) = ns
  const double memory_ns = row.cost.bytes / stream_gb_per_s;    // byte / (GB/s) = ns
  row.bound_ns = std::max(compute_ns, memory_ns);
  row.bound_by = compute_ns >= memory_ns ? "compute" : "memory";
  if (row.measured_ns > 0) row.of_bound = row.bound_ns / row.measured_ns;
}

nlohmann::json or_null(double v, bool valid) { return valid ? nlohmann::json(v) : nlohmann::json(); }

nlohmann::json row_json(const RooflineRow& r) {
  const bool work = r.cost.derived;
  return {{"derived", r.cost.derived},
          {"flops_per_token", or_null(r.cost.flops, work)},
          {"bytes_per_token", or_null(r.cost.bytes, work)},
          {"flop_per_byte", or_null(r.cost.bytes > 0 ? r.cost.flops / r.cost.bytes : 0.0, work && r.cost.bytes > 0)},
          {"bound_ns_per_token", or_null(r.bound_ns, !r.bound_by.empty())},
          {"bound_by", r.bound_by},
          {"measured_ns_per_token", or_null(r.measured_ns, r.measured_ns >= 0)},
          {"of_bound", or_null(r.of_bound, r.of_bound >= 0)},
          {"note", r.cost.note}};
}

}  // namespace

Roofline make_roofline(const models::StepCosts& costs, const std::vector<std::pair<std::string, double>>& shares,
                       double step_seconds, double tokens, double peak_gflop_per_s, double stream_gb_per_s) {
  if (!(peak_gflop_per_s > 0) || !(stream_gb_per_s > 0) || !(tokens > 0) || !(step_seconds > 0))
    throw ValueError("roofline: peak, bandwidth, tokens and step time must be positive");
  if (!shares.empty() && shares.size() != costs.family.size())
    throw ValueError("roofline: " + std::to_string(shares.size()) + " time shares for " +
                     std::to_string(costs.family.size()) + " families");
  Roofline r;
  r.peak_gflop_per_s = peak_gflop_per_s;
  r.stream_gb_per_s = stream_gb_per_s;
  const double step_ns = 1e9 * step_seconds / tokens;
  r.step.family = "step";
  r.step.cost.derived = true;
  r.step.measured_ns = shares.empty() ? -1 : step_ns;
  for (size_t f = 0; f < costs.family.size(); ++f) {
    RooflineRow row;
    row.family = f < static_cast<size_t>(prof::kFamilies) ? prof::family_name(static_cast<prof::Family>(f)) : "other";
    if (!shares.empty() && shares[f].first != row.family)
      throw ValueError("roofline: time share '" + shares[f].first + "' where '" + row.family + "' was expected");
    row.cost = costs.family[f];
    row.measured_ns = shares.empty() ? -1 : shares[f].second * step_ns;
    bound(row, peak_gflop_per_s, stream_gb_per_s);
    if (row.cost.derived) {
      r.step.cost.flops += row.cost.flops;
      r.step.cost.bytes += row.cost.bytes;
      r.step.bound_ns += row.bound_ns;
    }
    r.families.push_back(std::move(row));
  }
  r.step.bound_by = "sum";
  if (r.step.measured_ns > 0) r.step.of_bound = r.step.bound_ns / r.step.measured_ns;
  return r;
}

nlohmann::json Roofline::to_json() const {
  nlohmann::json fam = nlohmann::json::object();
  for (const RooflineRow& row : families) fam[row.family] = row_json(row);
  nlohmann::json s = row_json(step);
  s["note"] = "the derived families' FLOPs, bytes and bounds summed, against the whole step";
  return {{"peak_gflop_per_s", peak_gflop_per_s}, {"gemm_n", gemm_n},   {"stream_gb_per_s", stream_gb_per_s},
          {"stream_mib_per_array", stream_mib},     {"families", fam}, {"step", s}};
}

std::string Roofline::to_text() const {
  char buf[320];
  std::snprintf(buf, sizeof buf,
                "roofline per token (peak %.1f GFLOP/s: the fastest %lld^3 GEMM; bandwidth %.1f GB/s: STREAM triad, "
                "%lld MiB arrays; both measured in this run):\n",
                peak_gflop_per_s, static_cast<long long>(gemm_n), stream_gb_per_s, static_cast<long long>(stream_mib));
  std::string s = buf;
  std::snprintf(buf, sizeof buf, "  %-15s %14s %12s %8s %10s %-8s %12s %9s\n", "family", "FLOP", "bytes", "FLOP/B",
                "bound ns", "bound by", "measured ns", "of bound");
  s += buf;
  std::string notes;
  auto line = [&](const RooflineRow& r) {
    if (!r.cost.derived) {
      std::snprintf(buf, sizeof buf, "  %-15s %14s %12s %8s %10s %-8s ", r.family.c_str(), "-", "-", "-", "-", "-");
    } else {
      char ratio[32] = "-";
      if (r.cost.bytes > 0) std::snprintf(ratio, sizeof ratio, "%.1f", r.cost.flops / r.cost.bytes);
      std::snprintf(buf, sizeof buf, "  %-15s %14.0f %12.0f %8s %10.1f %-8s ", r.family.c_str(), r.cost.flops,
                    r.cost.bytes, ratio, r.bound_ns, r.bound_by.empty() ? "-" : r.bound_by.c_str());
    }
    s += buf;
    if (r.measured_ns >= 0)
      std::snprintf(buf, sizeof buf, "%12.1f ", r.measured_ns);
    else
      std::snprintf(buf, sizeof buf, "%12s ", "-");
    s += buf;
    if (r.of_bound >= 0)
      std::snprintf(buf, sizeof buf, "%9.2f\n", r.of_bound);
    else
      std::snprintf(buf, sizeof buf, "%9s\n", "-");
    s += buf;
    if (!r.cost.note.empty()) notes += "  " + r.family + ": " + r.cost.note + "\n";
  };
  for (const RooflineRow& r : families)
    if (!r.cost.derived || r.cost.flops > 0 || r.cost.bytes > 0 || r.measured_ns > 0) line(r);
  line(step);
  return s + notes;
}

}  // namespace liegrad::measure
