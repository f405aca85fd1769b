// Text generation from a trained model: temperature-scaled, optionally top-k
// truncated sampling of one symbol at a time. Recurrent models carry their state from
// symbol to symbol: in their decoding cache when they offer one (models/decoding.hpp:
// what depends on the weights only, such as the OSM-RNN's token elements and prototypes
// or the expRNN's exp(A), is formed once per call instead of once per symbol; the OSM-RNN
// renormalises its state every renormalize_every symbols, as a forward over the whole
// text does), else through one forward() of one symbol per step. Attention models (transformer, osmformer) read a window of at most
// `context` symbols (their training window): it starts as the prompt's last `context`
// symbols and grows by each drawn symbol; when one more would overfill it, it restarts
// as the last `keep` symbols. Each step's logits are those of the window's last
// position, computed by incremental decoding when the model offers it
// (models/decoding.hpp: the window's cache grows by one position per symbol and a
// restart refills it with `keep` symbols, so a symbol costs O(context) work and n
// symbols O(n)), else by one full forward over the window. Both give the same logits
// (to float rounding). keep = context slides the window by one symbol every step (each
// step a refill of the whole window, O(context^2) work per symbol, the cost of a full
// forward); the default, context/2, spends one extra cached step per symbol and lets
// every prediction see between context/2 and context symbols.
#pragma once
#include <cstdint>
#include <string>

#include "data/vocab.hpp"
#include "models/model.hpp"

namespace liegrad::train {

struct SampleOptions {
  int64_t length = 200;     // symbols to generate (>= 0)
  double temperature = 1.0; // > 0
  int64_t top_k = 0;        // 0 = the whole vocabulary
  uint64_t seed = 0;
  int64_t context = 128;    // attention models: the most symbols the window holds (>= 1)
  int64_t keep = 0;         // attention models: symbols kept when the window restarts (1..context; 0 = max(1, context/2))
  bool cached = true;       // incremental decoding when offered (false: a forward per symbol, of the window or one symbol)
};

// Returns the prompt followed by the generated text. Throws ValueError for a prompt
// with symbols outside the vocabulary (naming them) or bad options.
std::string sample_text(models::Model<float>& model, const data::Vocab& vocab, const std::string& prompt,
                        const SampleOptions& opt);

}  // namespace liegrad::train
