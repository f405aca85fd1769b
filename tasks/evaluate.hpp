// Bits per character over a whole split (docs/models.md §7):
//   BPC = (1/(N-1)) sum_t -log2 p(x_t | x_<t), every symbol after the first predicted once.
// Transformers (osmformer, transformer) read consecutive non-overlapping windows,
// inputs x[s..s+T-1] and targets x[s+1..s+T] for s = 0, T, 2T, ..., the last one
// shorter; several full windows run as one batch. Recurrent models (osm_rnn, lstm,
// exprnn) start from their initial state at the first symbol and carry it to the
// end, window by window, with batch 1.
#pragma once
#include <cstdint>
#include <vector>

#include "models/model.hpp"

namespace liegrad::tasks {

struct EvalResult {
  double bpc = 0;
  double nats_per_symbol = 0;
  int64_t predictions = 0;
};

// stream (N): symbol ids; seq_len T; max_symbols > 0 evaluates only the first
// max_symbols symbols (for quick interim checks); batch: windows per forward pass.
template <class T>
EvalResult evaluate_bpc(models::Model<T>& model, const std::vector<int32_t>& stream, int64_t seq_len,
                        int64_t max_symbols = 0, int64_t batch = 16);

}  // namespace liegrad::tasks
