// evaluate_bpc (see evaluate.hpp). Negative log-likelihoods are summed in double.
#include "tasks/evaluate.hpp"

#include <cmath>

#include "autograd/ops.hpp"
#include "data/batcher.hpp"
#include "tasks/eval_scope.hpp"

namespace liegrad::tasks {

template <class T>
EvalResult evaluate_bpc(models::Model<T>& model, const std::vector<int32_t>& full, int64_t seq_len,
                        int64_t max_symbols, int64_t batch) {
  const EvaluationScope<T> evaluating(model);
  const std::vector<int32_t> prefix =
      max_symbols > 0 && max_symbols < static_cast<int64_t>(full.size())
          ? std::vector<int32_t>(full.begin(), full.begin() + max_symbols)
          : std::vector<int32_t>();
  const std::vector<int32_t>& stream = prefix.empty() ? full : prefix;
  if (stream.size() < 2) throw ValueError("evaluate_bpc: a split needs at least 2 symbols, got " + std::to_string(stream.size()));
  const data::EvalWindows windows(stream, seq_len);
  double total = 0;
  auto add_nll = [&](const ag::Var<T>& logits, const std::vector<int32_t>& targets) {
    for (double v : ag::row_nll(logits.value(), targets)) total += v;
  };
  if (model.recurrent()) {
    models::RecurrentState<T> state;
    for (const auto& w : windows) {
      std::vector<int32_t> in(w.inputs.begin(), w.inputs.end()), tg(w.targets.begin(), w.targets.end());
      add_nll(model.forward(in, 1, w.length, &state), tg);
    }
  } else {
    std::vector<int32_t> in, tg;
    int64_t rows = 0;
    auto flush = [&](int64_t len) {
      if (rows == 0) return;
      add_nll(model.forward(in, rows, len), tg);
      in.clear();
      tg.clear();
      rows = 0;
    };
    for (const auto& w : windows) {
      if (w.length != seq_len) {  // the short last window runs alone
        flush(seq_len);
        in.assign(w.inputs.begin(), w.inputs.end());
        tg.assign(w.targets.begin(), w.targets.end());
        rows = 1;
        flush(w.length);
        continue;
      }
      in.insert(in.end(), w.inputs.begin(), w.inputs.end());
      tg.insert(tg.end(), w.targets.begin(), w.targets.end());
      if (++rows == batch) flush(seq_len);
    }
    flush(seq_len);
  }
  EvalResult r;
  r.predictions = windows.predictions();
  r.nats_per_symbol = total / static_cast<double>(r.predictions);
  r.bpc = r.nats_per_symbol / std::log(2.0);
  return r;
}

template EvalResult evaluate_bpc(models::Model<float>&, const std::vector<int32_t>&, int64_t, int64_t, int64_t);
template EvalResult evaluate_bpc(models::Model<double>&, const std::vector<int32_t>&, int64_t, int64_t, int64_t);

}  // namespace liegrad::tasks
