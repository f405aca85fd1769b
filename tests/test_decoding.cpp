// Incremental decoding (models/decoding.hpp) and the sampler that uses it
// (train/sample.hpp): for the attention models, every cached step's logits against the
// last row of a full forward over the same window, across window restarts, in double and
// float, for the transformer's layouts and every OSMFormer grounding; for the recurrent
// models (every OSM-RNN drive and readout, the expRNN), every cached step against the
// same position of one forward over the whole stream, past the OSM-RNN's
// renormalisation steps; sampled text that is the same with and without the cache, with
// keep = context equal to a window of the last `context` symbols (the sampler's sliding
// window).
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>

#include "autograd/tape.hpp"
#include "data/vocab.hpp"
#include "models/decoding.hpp"
#include "models/model.hpp"
#include "train/sample.hpp"
#include "tests/model_test_utils.hpp"

using namespace liegrad;
using nlohmann::json;

namespace {

// Moves every parameter by N(0, scale^2) so that mixings, temperatures and gains are
// not their identity initial values (algebra-coordinate group parameters stay valid).
template <class T>
void perturb(models::Model<T>& m, double scale, uint64_t seed) {
  Rng rng(seed);
  for (auto& p : m.parameters())
    for (int64_t i = 0; i < p.var.value().size(); ++i) p.var.value()[i] += static_cast<T>(scale * rng.normal());
}

// Feeds a stream of symbols through windows of at most `context` symbols that restart
// at the last `keep` (the sampler's windows), comparing each cached step's logits with
// the last row of forward() over the window. Returns the largest |difference| relative
// to the largest |logit| of the step.
template <class T>
double worst_decode_error(models::Model<T>& model, const std::vector<int32_t>& stream, int64_t context, int64_t keep) {
  ag::NoGrad no_grad;
  model.set_training(false);
  models::IncrementalDecoding<T>* dec = model.incremental_decoding();
  REQUIRE(dec != nullptr);
  models::DecodingCache<T> cache;
  const int64_t C = model.num_classes();
  int64_t start = 0;
  double worst = 0;
  for (int64_t p = 0; p < static_cast<int64_t>(stream.size()); ++p) {
    if (p + 1 - start > context) {  // restart: refill the cache with the last keep - 1 symbols
      start = p + 1 - keep;
      cache.clear();
      for (int64_t j = start; j < p; ++j) dec->decode_step(stream[static_cast<size_t>(j)], cache);
    }
    const Array<T> step = dec->decode_step(stream[static_cast<size_t>(p)], cache);
    CHECK(cache.positions == p + 1 - start);
    const std::vector<int32_t> window(stream.begin() + start, stream.begin() + p + 1);
    const int64_t L = static_cast<int64_t>(window.size());
    const ag::Var<T> full = model.forward(window, 1, L);
    const T* last = full.value().data() + (L - 1) * C;
    double scale = 0, diff = 0;
    for (int64_t c = 0; c < C; ++c) {
      scale = std::max(scale, std::abs(static_cast<double>(last[c])));
      diff = std::max(diff, std::abs(static_cast<double>(step[c]) - static_cast<double>(last[c])));
    }
    worst = std::max(worst, diff / std::max(scale, 1.0));
  }
  return worst;
}

std::vector<json> decoding_configs() {
  return {
      json{{"type", "transformer"}, {"D", 12}, {"layers", 2}, {"heads", 3}},
      json{{"type", "transformer"}, {"D", 8}, {"layers", 3}, {"heads", 2}, {"positional", "none"}, {"head", "tied"}},
      json{{"type", "osmformer"}, {"group", "SO(4)"}, {"layers", 2}, {"heads", 3}, {"grounding", "relative"}},
      json{{"type", "osmformer"}, {"group", "SO(5)"}, {"layers", 2}, {"heads", 2}, {"grounding", "combined"},
           {"grounding_mixing", "shared"}},
      json{{"type", "osmformer"}, {"group", "U(3)"}, {"layers", 2}, {"heads", 4}, {"grounding", "token"},
           {"mixing", "lowrank"}, {"rank", 2}},
      json{{"type", "osmformer"}, {"group", "SO(3)"}, {"layers", 3}, {"heads", 2}, {"grounding", "off"},
           {"positional", "none"}},
  };
}

std::vector<json> recurrent_decoding_configs() {
  return {
      json{{"type", "osm_rnn"}, {"group", "SO(4)"}},
      json{{"type", "osm_rnn"}, {"group", "U(3)"}, {"rnn_drive", "both"}, {"mixing", "lowrank"}, {"rank", 2}},
      json{{"type", "osm_rnn"}, {"group", "SO(5)"}, {"rnn_drive", "token"}, {"mixing", "bounded"}},
      json{{"type", "osm_rnn"}, {"group", "SO(3)"}, {"rnn_drive", "element"}, {"readout", "tied"}, {"mixing", "identity"}},
      json{{"type", "osm_rnn"}, {"group", "SO(4)"}, {"renormalize_every", 5}},
      json{{"type", "exprnn"}, {"hidden", 6}},
  };
}

// A recurrent model's cached steps over `stream` against the rows of one forward over
// all of it: the largest |difference| relative to the largest |logit| of the step.
template <class T>
double worst_recurrent_decode_error(models::Model<T>& model, const std::vector<int32_t>& stream) {
  ag::NoGrad no_grad;
  model.set_training(false);
  models::IncrementalDecoding<T>* dec = model.incremental_decoding();
  REQUIRE(dec != nullptr);
  const int64_t N = static_cast<int64_t>(stream.size()), C = model.num_classes();
  const ag::Var<T> full = model.forward(stream, 1, N);
  models::DecodingCache<T> cache;
  double worst = 0;
  for (int64_t p = 0; p < N; ++p) {
    const Array<T> step = dec->decode_step(stream[static_cast<size_t>(p)], cache);
    CHECK(cache.positions == p + 1);
    double scale = 0, diff = 0;
    for (int64_t c = 0; c < C; ++c) {
      const double want = static_cast<double>(full.value()[p * C + c]);
      scale = std::max(scale, std::abs(want));
      diff = std::max(diff, std::abs(static_cast<double>(step[c]) - want));
    }
    worst = std::max(worst, diff / std::max(scale, 1.0));
  }
  return worst;
}

}  // namespace

TEST_CASE("a recurrent model's cached steps equal one forward over the whole stream at every position") {
  const int64_t V = 7;
  const auto stream = test::tokens(41, V, 3);  // past the renormalisation at 16 and 32 (5, ..., 40)
  for (const json& config : recurrent_decoding_configs()) {
    CAPTURE(config.dump());
    auto md = models::make_model<double>(config, V, 5);
    perturb(*md, 0.3, 9);
    CHECK(worst_recurrent_decode_error(*md, stream) < 1e-12);
    auto mf = models::make_model<float>(config, V, 5);
    perturb(*mf, 0.3, 9);
    CHECK(worst_recurrent_decode_error(*mf, stream) < 1e-5);
  }
}

TEST_CASE("a recurrent model's decoding cache holds the weights' fixed work from its first step") {
  // Changing every weight after the first step leaves the cached constants (the OSM-RNN's
  // token elements and prototypes, the expRNN's exp(A)) as they were: the next step is
  // the one the old transition weights give. A cache cleared after the change reads the new ones.
  for (const json& config : {recurrent_decoding_configs()[0], recurrent_decoding_configs()[5]}) {
    CAPTURE(config.dump());
    const std::string group_key = config["type"] == "osm_rnn" ? "embed" : "transition";
    auto a = models::make_model<double>(config, 7, 5);
    auto b = models::make_model<double>(config, 7, 5);
    models::DecodingCache<double> ca, cb;
    a->incremental_decoding()->decode_step(2, ca);
    b->incremental_decoding()->decode_step(2, cb);
    ag::Parameter<double>* moved = b->find_parameter(group_key);
    REQUIRE(moved != nullptr);
    for (int64_t i = 0; i < moved->var.value().size(); ++i) moved->var.value()[i] += 0.5;
    const Array<double> sa = a->incremental_decoding()->decode_step(4, ca);
    const Array<double> sb = b->incremental_decoding()->decode_step(4, cb);
    for (int64_t c = 0; c < 7; ++c) CHECK(sa[c] == sb[c]);
    cb.clear();
    b->incremental_decoding()->decode_step(2, cb);
    const Array<double> fresh = b->incremental_decoding()->decode_step(4, cb);
    double diff = 0;
    for (int64_t c = 0; c < 7; ++c) diff = std::max(diff, std::abs(fresh[c] - sa[c]));
    CHECK(diff > 1e-3);
  }
}

TEST_CASE("incremental decoding equals the full forward's last position across window restarts") {
  const int64_t V = 7;
  const auto stream = test::tokens(41, V, 3);
  for (const json& config : decoding_configs()) {
    CAPTURE(config.dump());
    auto md = models::make_model<double>(config, V, 5);
    perturb(*md, 0.3, 9);
    CHECK(worst_decode_error(*md, stream, 12, 5) < 1e-12);
    CHECK(worst_decode_error(*md, stream, 9, 9) < 1e-12);  // keep = context: the window slides by one
    auto mf = models::make_model<float>(config, V, 5);
    perturb(*mf, 0.3, 9);
    CHECK(worst_decode_error(*mf, stream, 12, 5) < 1e-5);
  }
}

TEST_CASE("incremental decoding is what a full forward of a longer window gives at its positions") {
  // A window as long as the stream: position p's cached logits equal row p of one forward.
  auto m = models::make_model<double>(decoding_configs()[2], 7, 5);
  perturb(*m, 0.3, 9);
  const auto stream = test::tokens(33, 7, 4);
  ag::NoGrad no_grad;
  const ag::Var<double> full = m->forward(stream, 1, 33);
  models::DecodingCache<double> cache;
  double worst = 0;
  for (int64_t p = 0; p < 33; ++p) {
    const Array<double> step = m->incremental_decoding()->decode_step(stream[static_cast<size_t>(p)], cache);
    for (int64_t c = 0; c < 7; ++c) worst = std::max(worst, std::abs(step[c] - full.value()[p * 7 + c]));
  }
  CHECK(worst < 1e-12);
  CHECK(m->incremental_decoding()->decode_step(6, cache).size() == 7);
  CHECK_THROWS(m->incremental_decoding()->decode_step(7, cache));  // outside the vocabulary
}

// sample_text's draw written out (temperature 1, whole vocabulary): softmax weights of
// the logits row (V) in the order of the ids, one uniform per symbol.
static int32_t draw_by_hand(const float* row, int64_t V, Rng& rng) {
  const double top = *std::max_element(row, row + V);
  std::vector<double> w;
  double total = 0;
  for (int32_t c = 0; c < V; ++c) total += w.emplace_back(std::exp(row[c] - top));
  double u = rng.uniform() * total;
  for (int32_t c = 0; c < V; ++c) {
    u -= w[static_cast<size_t>(c)];
    if (u <= 0) return c;
  }
  return static_cast<int32_t>(V - 1);
}

TEST_CASE("a recurrent model's cached sampling draws what one forward over the whole text gives") {
  // The reference reads the whole text so far in one forward for every symbol (O(n^2)),
  // renormalising the state every renormalize_every positions as training does; the
  // cached path must give the same text. (A forward of one symbol per step carrying the
  // state never reaches a renormalisation, so it is not the reference.)
  const data::Vocab vocab = data::Vocab::from_symbols("abcdefg\n");
  for (const json& config : recurrent_decoding_configs()) {
    CAPTURE(config.dump());
    auto m = models::make_model<float>(config, vocab.size(), 5);
    perturb(*m, 0.5, 9);
    train::SampleOptions opt;
    opt.length = 70;
    opt.seed = 11;
    const std::string cached = train::sample_text(*m, vocab, "abc", opt);
    CHECK(cached.size() == 73);
    std::vector<int32_t> ids = vocab.encode("abc");
    std::string expected = "abc";
    Rng rng(opt.seed);
    ag::NoGrad no_grad;
    m->set_training(false);
    const int64_t V = vocab.size();
    for (int64_t i = 0; i < opt.length; ++i) {
      const auto L = static_cast<int64_t>(ids.size());
      models::RecurrentState<float> state;
      const ag::Varf logits = m->forward(ids, 1, L, &state);
      const int32_t next = draw_by_hand(logits.value().data() + (L - 1) * V, V, rng);
      ids.push_back(next);
      expected += vocab.symbol(next);
    }
    CHECK(cached == expected);
  }
}

TEST_CASE("top_k draws among the k largest logits only; top_k = 1 is greedy") {
  // Written out from one forward over the whole text per symbol: with k = 1 every symbol
  // is the argmax of its row; with k = 2 every symbol is one of its row's two largest.
  const data::Vocab vocab = data::Vocab::from_symbols("abcdefg\n");
  auto m = models::make_model<float>(recurrent_decoding_configs()[0], vocab.size(), 5);
  perturb(*m, 0.5, 9);
  ag::NoGrad no_grad;
  const int64_t V = vocab.size();
  for (int64_t k : {1, 2}) {
    CAPTURE(k);
    train::SampleOptions opt;
    opt.length = 40;
    opt.seed = 3;
    opt.top_k = k;
    const std::string text = train::sample_text(*m, vocab, "abc", opt);
    REQUIRE(text.size() == 43);
    m->set_training(false);
    for (size_t i = 3; i < text.size(); ++i) {
      const std::vector<int32_t> ids = vocab.encode(text.substr(0, i));
      models::RecurrentState<float> state;
      const ag::Varf logits = m->forward(ids, 1, static_cast<int64_t>(ids.size()), &state);
      const float* row = logits.value().data() + (static_cast<int64_t>(ids.size()) - 1) * V;
      const int32_t drawn = vocab.encode(std::string(1, text[i]))[0];
      int64_t larger = 0;  // how many logits exceed the drawn one's
      for (int64_t c = 0; c < V; ++c) larger += row[c] > row[drawn];
      CHECK(larger < k);
    }
  }
}

TEST_CASE("sampled text is the same with and without the decoding cache") {
  const data::Vocab vocab = data::Vocab::from_symbols("abcdefg\n");
  for (const json& config : {decoding_configs()[0], decoding_configs()[3]}) {
    CAPTURE(config.dump());
    auto m = models::make_model<float>(config, vocab.size(), 5);
    perturb(*m, 0.5, 9);
    for (int64_t keep : {0, 1, 7, 16}) {
      CAPTURE(keep);
      train::SampleOptions opt;
      opt.length = 70;
      opt.context = 16;
      opt.keep = keep;
      opt.seed = 11;
      const std::string cached = train::sample_text(*m, vocab, "abc", opt);
      opt.cached = false;
      const std::string full = train::sample_text(*m, vocab, "abc", opt);
      CHECK(cached == full);
      CHECK(cached.size() == 73);
    }
  }
}

TEST_CASE("keep = context samples from a window of the last context symbols") {
  // The sliding window written out: each symbol drawn from one forward over the last
  // `context` symbols, with sample_text's draw (temperature 1, whole vocabulary).
  const data::Vocab vocab = data::Vocab::from_symbols("abcdefg\n");
  auto m = models::make_model<float>(decoding_configs()[2], vocab.size(), 5);
  perturb(*m, 0.5, 9);
  train::SampleOptions opt;
  opt.length = 40;
  opt.context = 10;
  opt.keep = 10;
  opt.seed = 4;
  const std::string text = train::sample_text(*m, vocab, "gfedcbagfedcba", opt);
  // The same draws by hand: softmax weights, one uniform per symbol.
  std::vector<int32_t> ids = vocab.encode("gfedcbagfedcba");
  Rng rng(opt.seed);
  ag::NoGrad no_grad;
  m->set_training(false);
  std::string expected = "gfedcbagfedcba";
  const int64_t V = vocab.size();
  for (int64_t i = 0; i < opt.length; ++i) {
    const int64_t start = std::max<int64_t>(0, static_cast<int64_t>(ids.size()) - opt.context);
    const std::vector<int32_t> window(ids.begin() + start, ids.end());
    const int64_t L = static_cast<int64_t>(window.size());
    const ag::Varf logits = m->forward(window, 1, L);
    const int32_t next = draw_by_hand(logits.value().data() + (L - 1) * V, V, rng);
    ids.push_back(next);
    expected += vocab.symbol(next);
  }
  CHECK(text == expected);
}

TEST_CASE("sample rejects a keep outside 0..context") {
  const data::Vocab vocab = data::Vocab::from_symbols("ab");
  auto m = models::make_model<float>(decoding_configs()[0], 2, 5);
  train::SampleOptions opt;
  opt.context = 8;
  opt.keep = 9;
  CHECK_THROWS_AS(train::sample_text(*m, vocab, "a", opt), ValueError);
  opt.keep = -1;
  CHECK_THROWS_AS(train::sample_text(*m, vocab, "a", opt), ValueError);
}
