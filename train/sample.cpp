// sample_text (see sample.hpp).
#include "train/sample.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>

#include "autograd/tape.hpp"
#include "core/rng.hpp"
#include "models/decoding.hpp"

namespace liegrad::train {

namespace {
// Draws an id from logits (V) / temperature by inverse transform sampling: one uniform
// u in [0, total) and the first id whose running sum of weights exp((l - max) / t)
// reaches it. With top_k the candidates are the k largest logits in descending order;
// over the whole vocabulary they are the ids in order (sorting them would cost more than
// a small model's decoding step, and the distribution is the same).
int32_t draw(const float* logits, int64_t V, const SampleOptions& opt, Rng& rng) {
  const int64_t k = opt.top_k > 0 ? std::min(opt.top_k, V) : V;
  std::vector<int32_t> ids;
  if (k < V) {
    ids.resize(static_cast<size_t>(V));
    std::iota(ids.begin(), ids.end(), 0);
    std::partial_sort(ids.begin(), ids.begin() + k, ids.end(),
                      [&](int32_t a, int32_t b) { return logits[a] > logits[b]; });
  }
  const auto id = [&](int64_t i) { return ids.empty() ? static_cast<int32_t>(i) : ids[static_cast<size_t>(i)]; };
  const double top = ids.empty() ? *std::max_element(logits, logits + V) : logits[ids[0]];
  std::vector<double> w(static_cast<size_t>(k));
  double total = 0;
  for (int64_t i = 0; i < k; ++i) total += w[static_cast<size_t>(i)] = std::exp((logits[id(i)] - top) / opt.temperature);
  double u = rng.uniform() * total;
  for (int64_t i = 0; i < k; ++i) {
    u -= w[static_cast<size_t>(i)];
    if (u <= 0) return id(i);
  }
  return id(k - 1);
}
}  // namespace

std::string sample_text(models::Model<float>& model, const data::Vocab& vocab, const std::string& prompt_in,
                        const SampleOptions& opt) {
  if (opt.temperature <= 0 || !std::isfinite(opt.temperature))
    throw ValueError("sample: temperature must be > 0, got " + std::to_string(opt.temperature));
  if (opt.length < 0) throw ValueError("sample: length must be >= 0, got " + std::to_string(opt.length));
  if (opt.top_k < 0) throw ValueError("sample: top-k must be >= 0, got " + std::to_string(opt.top_k));
  if (opt.context < 1) throw ValueError("sample: context must be >= 1, got " + std::to_string(opt.context));
  if (opt.keep < 0 || opt.keep > opt.context)
    throw ValueError("sample: keep must be in 0..context (" + std::to_string(opt.context) + "), got " +
                     std::to_string(opt.keep));
  std::string prompt = prompt_in;
  if (prompt.empty()) prompt = vocab.contains('\n') ? "\n" : std::string(1, vocab.symbol(0));
  std::vector<int32_t> ids = vocab.encode(prompt);  // throws naming unknown symbols
  ag::NoGrad no_grad;
  model.set_training(false);
  Rng rng(opt.seed);
  const int64_t V = vocab.size();
  std::string out = prompt_in;
  models::IncrementalDecoding<float>* decoder = opt.cached ? model.incremental_decoding() : nullptr;
  if (model.recurrent() && decoder) {  // the state in the cache, the weights' fixed work formed once
    models::DecodingCache<float> cache;
    Array<float> logits;
    for (int32_t id : ids) logits = decoder->decode_step(id, cache);
    for (int64_t i = 0; i < opt.length; ++i) {
      const int32_t next = draw(logits.data(), V, opt, rng);
      out += vocab.symbol(next);
      logits = decoder->decode_step(next, cache);
    }
  } else if (model.recurrent()) {
    models::RecurrentState<float> state;
    ag::Varf logits = model.forward(ids, 1, static_cast<int64_t>(ids.size()), &state);
    int64_t last = static_cast<int64_t>(ids.size()) - 1;
    for (int64_t i = 0; i < opt.length; ++i) {
      const int32_t next = draw(logits.value().data() + last * V, V, opt, rng);
      out += vocab.symbol(next);
      logits = model.forward({next}, 1, 1, &state);
      last = 0;
    }
  } else {
    const int64_t keep = opt.keep > 0 ? opt.keep : std::max<int64_t>(1, opt.context / 2);
    models::DecodingCache<float> cache;
    auto size = [&] { return static_cast<int64_t>(ids.size()); };
    int64_t start = std::max<int64_t>(0, size() - opt.context);  // the window is ids[start, size())
    int64_t fed = start;                                         // ids[start, fed) are in the cache
    Array<float> last;                                           // the cached path's newest logits (V)
    for (int64_t i = 0; i < opt.length; ++i) {
      const float* logits = nullptr;
      ag::Varf full;
      if (decoder) {
        while (fed < size()) last = decoder->decode_step(ids[static_cast<size_t>(fed++)], cache);
        logits = last.data();
      } else {
        const std::vector<int32_t> window(ids.begin() + start, ids.end());
        const int64_t L = static_cast<int64_t>(window.size());
        full = model.forward(window, 1, L);
        logits = full.value().data() + (L - 1) * V;
      }
      const int32_t next = draw(logits, V, opt, rng);
      ids.push_back(next);
      out += vocab.symbol(next);
      if (size() - start > opt.context) {  // the window would overfill: restart it
        start = size() - keep;
        fed = start;
        cache.clear();
      }
    }
  }
  return out;
}

}  // namespace liegrad::train
