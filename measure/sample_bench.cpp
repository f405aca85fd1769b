// The generation benchmark (see sample_bench.hpp).
#include "measure/sample_bench.hpp"

#include <cstdio>

#include "core/errors.hpp"
#include "core/parallel.hpp"
#include "data/vocab.hpp"
#include "measure/bench.hpp"
#include "models/model.hpp"
#include "tasks/registry.hpp"
#include "train/checkpoint.hpp"
#include "train/run_config.hpp"
#include "train/sample.hpp"

namespace liegrad::measure {

using namespace bench_detail;

SampleBenchResult bench_sampling(const nlohmann::json& config, const SampleBenchOptions& opt) {
  if (opt.repeats < 1) throw ValueError("bench --sample: repeats must be >= 1, got " + std::to_string(opt.repeats));
  if (opt.lengths.empty()) throw ValueError("bench --sample: no lengths given");
  for (int64_t n : opt.lengths)
    if (n < 1) throw ValueError("bench --sample: every length must be >= 1, got " + std::to_string(n));
  const train::RunConfig rc = train::parse_run_config(config);
  const int threads = opt.threads > 0 ? opt.threads : rc.train.threads;
  set_num_threads(threads);
  const auto task = tasks::make_task({rc.data.section, opt.data_dir, /*vocab_record=*/nullptr, /*source=*/""});
  const int64_t V = task->input_vocab();
  if (task->classes() > 0 && task->classes() != V)  // classes() 0: a language model (C = V)
    throw ValueError("bench --sample: the model reads " + std::to_string(V) + " symbols but predicts " +
                     std::to_string(task->classes()) + " classes; only a language model generates");
  if (V > 256) throw ValueError("bench --sample: vocabularies of more than 256 symbols are not sampled, got " + std::to_string(V));
  auto model = models::make_model<float>(rc.model, V, rc.train.seed, V);
  if (!opt.checkpoint.empty())
    train::parameters_from_json(*model, train::read_checkpoint(opt.checkpoint).at("parameters"),
                                "checkpoint '" + opt.checkpoint + "'");
  // V distinct byte symbols: the benchmark needs the symbols' count, not the corpus's.
  std::string symbols;
  for (int64_t v = 0; v < V; ++v) symbols += static_cast<char>(v);
  const data::Vocab vocab = data::Vocab::from_symbols(symbols);

  SampleBenchResult r;
  r.model = model->type();
  r.parameters = model->parameter_count();
  r.vocab = V;
  r.context = rc.train.seq_len;
  r.threads = threads;
  r.repeats = opt.repeats;
  r.cached = opt.cached;
  uint64_t seed = 1;
  for (int64_t n : opt.lengths) {
    train::SampleOptions so;
    so.length = n;
    so.context = rc.train.seq_len;
    so.cached = opt.cached;
    SampleBenchResult::Row row;
    row.length = n;
    row.symbols_per_s = rates(opt.repeats, static_cast<double>(n), [&] {
      so.seed = seed++;
      train::sample_text(*model, vocab, std::string(1, vocab.symbol(0)), so);
    });
    row.us_per_symbol = row.symbols_per_s.median > 0 ? 1e6 / row.symbols_per_s.median : 0;
    r.rows.push_back(row);
  }
  r.peak_rss_mib = peak_rss_mib();
  return r;
}

nlohmann::json SampleBenchResult::to_json() const {
  nlohmann::json rows_json = nlohmann::json::array();
  for (const Row& row : rows)
    rows_json.push_back({{"length", row.length}, {"symbols_per_s", spread_json(row.symbols_per_s)},
                         {"us_per_symbol", row.us_per_symbol}});
  return {{"mode", "sample"}, {"model", model},   {"parameters", parameters}, {"vocab", vocab},
          {"context", context}, {"threads", threads}, {"repeats", repeats}, {"cached", cached},
          {"batch", 1},         {"rows", rows_json}, {"peak_rss_mib", peak_rss_mib}};
}

std::string SampleBenchResult::to_text() const {
  char buf[256];
  std::snprintf(buf, sizeof buf, "sampling %s (%lld parameters, V = %lld, window %lld), batch 1, %d threads, %s\n",
                model.c_str(), static_cast<long long>(parameters), static_cast<long long>(vocab),
                static_cast<long long>(context), threads,
                cached ? "state or cache carried" : "a full forward per symbol");
  std::string out = buf;
  for (const Row& row : rows) {
    std::snprintf(buf, sizeof buf, "  n = %6lld: %s, %.1f us per symbol\n", static_cast<long long>(row.length),
                  spread_text(row.symbols_per_s, " symbols/s", 0).c_str(), row.us_per_symbol);
    out += buf;
  }
  std::snprintf(buf, sizeof buf, "peak memory: %.0f MiB\n", peak_rss_mib);
  return out + buf;
}

}  // namespace liegrad::measure
