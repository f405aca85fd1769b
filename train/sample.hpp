// Text generation from a trained model: temperature-scaled, optionally top-k
// truncated sampling of one symbol at a time. Transformers see at most `context`
// previous symbols (their training window); recurrent models carry their state.
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
  int64_t context = 128;    // transformer window
};

// Returns the prompt followed by the generated text. Throws ValueError for a prompt
// with symbols outside the vocabulary (naming them) or bad options.
std::string sample_text(models::Model<float>& model, const data::Vocab& vocab, const std::string& prompt,
                        const SampleOptions& opt);

}  // namespace liegrad::train
