// Incremental decoding: an attention model's logits for one new position from what it
// cached for the earlier positions of the same window, so generating n symbols costs
// O(n x window) work in the attention and O(n) in everything else, instead of one full
// forward of O(window^2) per symbol (train/sample.hpp uses it).
//
// decode_step(x, cache) appends symbol x at position p = cache.positions of the window
// the cache holds and returns the logits (C) of that position: the last row of
// forward() over the cache's p + 1 symbols, to float rounding. The cache holds, per
// layer, exactly what the layer's attention reads of the earlier positions:
//   transformer: each position's keys and values (2D numbers per layer), since ALiBi
//                puts no position into them, a position's k and v never change;
//   osmformer:   each position's state H_j entering the layer (n x n), which is both
//                its key (scores Re tr(H_i* H_j)) and its value (A_i = mean softmax H_j).
// A window starts empty (clear()); the positions are window positions, so a sampler
// that moves its window starts a new cache (positions inside a layer depend on the
// window's first symbol: the keys of layer 2 on, and the OSMFormer's states, are
// functions of everything from it).
// Evaluation-only: dropout is never applied, whatever set_training says.
#pragma once
#include <cstdint>
#include <vector>

#include "autograd/var.hpp"

namespace liegrad::models {

template <class T>
struct DecodingCache {
  int64_t positions = 0;                // symbols appended since clear()
  std::vector<std::vector<T>> layers;   // per layer: positions x row width, model-specific (above)
  std::vector<ag::Var<T>> constants;    // what every step reuses (e.g. the token elements), model-specific
  void clear() {
    positions = 0;
    layers.clear();
    constants.clear();
  }
};

template <class T>
class IncrementalDecoding {
 public:
  virtual ~IncrementalDecoding() = default;
  // Appends `symbol` (0 <= symbol < V) and returns its position's logits (C), without recording.
  virtual Array<T> decode_step(int32_t symbol, DecodingCache<T>& cache) = 0;
};

}  // namespace liegrad::models
