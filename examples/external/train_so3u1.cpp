// train_so3u1: builds the so3u1_rnn model (so3u1_rnn.hpp) through liegrad's model
// registry, checks its gradient against finite differences with liegrad's check_vjp,
// trains it for a few steps with liegrad's AdamW on a text file, and writes a
// checkpoint that `liegrad eval --plugin libso3u1_model.so` and `liegrad sample` read.
//
//   train_so3u1 TEXT_FILE OUT_DIR [STEPS]
//
// Writes OUT_DIR/so3u1.json (the checkpoint) and OUT_DIR/result.json (test BPC, the
// first and last losses). Exit status 1 when the gradient check fails, the loss does
// not fall, or the reloaded checkpoint evaluates differently; 2 on bad arguments.
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <filesystem>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "autograd/gradcheck.hpp"
#include "autograd/nn_ops.hpp"
#include "autograd/tape.hpp"
#include "core/rng.hpp"
#include "data/batcher.hpp"
#include "data/datasets.hpp"
#include "optim/clip.hpp"
#include "optim/optimizer.hpp"
#include "so3u1_rnn.hpp"
#include "train/checkpoint.hpp"
#include "tasks/evaluate.hpp"

using namespace liegrad;

namespace {

// check_vjp of the whole model: the cross-entropy of so3u1_logits as a function of all
// five weights, in double, on a (2,3) batch with 5 symbols and 3 features.
bool check_gradient() {
  const nlohmann::json cfg = {{"type", "so3u1_rnn"}, {"features", 3}};
  auto model = models::make_model<double>(cfg, 5, 7);
  auto* m = dynamic_cast<so3u1::So3U1Rnn<double>*>(model.get());
  const groups::Group& g = m->group();
  const int64_t B = 2, T = 3, n = g.n();
  const std::vector<int32_t> inputs = {0, 3, 1, 4, 2, 2}, targets = {3, 1, 0, 2, 2, 4};
  const auto& w = m->weights();
  const std::vector<Array<double>> x = {w.embed.value(), w.mix.value(), w.proto.value(), w.out_w.value(),
                                        w.out_b.value()};
  Array<double> H0(Shape{B, n, n});
  for (int64_t b = 0; b < B; ++b)
    for (int64_t i = 0; i < n; ++i) H0.at(b, i, i) = 1;
  auto loss = [&](const std::vector<ag::Vard>& v) {
    ag::Vard H = ag::Vard::constant(H0);
    return ag::cross_entropy(so3u1::so3u1_logits(g, {v[0], v[1], v[2], v[3], v[4]}, inputs, B, T, H), targets);
  };
  Rng rng(3);
  const ag::VjpResult r = ag::check_vjp("so3u1_rnn loss", loss, x, rng);
  std::printf("gradient check %s: worst relative error %.2e over inputs %s -> %s\n", r.name.c_str(), r.max_rel_error,
              r.shapes.c_str(), r.passed ? "ok" : "FAILED");
  return r.passed;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3 || argc > 4) {
    std::fprintf(stderr, "usage: %s TEXT_FILE OUT_DIR [STEPS]\n", argv[0]);
    return 2;
  }
  const std::string text = std::filesystem::absolute(argv[1]).string(), out = argv[2];
  const int64_t steps = argc == 4 ? std::atoll(argv[3]) : 60;
  if (steps < 20) {
    std::fprintf(stderr, "STEPS must be >= 20\n");
    return 2;
  }
  try {
    so3u1::register_so3u1_rnn();  // the same call the plugin's entry point makes
    if (!check_gradient()) return 1;

    // The run configuration stored in the checkpoint: `liegrad eval` reads its data
    // section (this text file, split 80/10/10) and train.seq_len.
    const int64_t B = 8, T = 32;
    nlohmann::json config = {
        {"model", {{"type", "so3u1_rnn"}, {"group", "SO(3)xU(1)"}, {"features", 16}}},
        {"data", {{"dataset", "text:" + text}, {"val_frac", 0.1}, {"test_frac", 0.1}}},
        {"train", {{"steps", steps}, {"batch", B}, {"seq_len", T}, {"optimizer", "adamw"}, {"lr", 0.02}}}};
    const data::Corpus corpus = data::load_corpus("text:" + text, "", 0.1, 0.1);
    auto model = models::make_model<float>(config["model"], corpus.vocab.size(), /*seed=*/1);
    std::printf("model %s on %s: %lld parameters, vocabulary %lld, %zu training symbols\n", model->type().c_str(),
                config["model"]["group"].get<std::string>().c_str(), static_cast<long long>(model->parameter_count()),
                static_cast<long long>(corpus.vocab.size()), corpus.train.size());

    // Truncated back-propagation through time over B lanes, AdamW, clipping at 1.
    auto opt = optim::make_optimizer<float>("adamw", model->parameters(), {{"weight_decay", 0.0}});
    data::SequentialBatcher batches(corpus.train, B, T);
    models::RecurrentState<float> state;
    double first = 0, last = 0;
    const int64_t window = 10;
    for (int64_t step = 0; step < steps; ++step) {
      const data::Batch batch = batches.next();
      if (batch.starts_new_pass) state.clear();
      opt->zero_grad();
      ag::Tape<float>::current().clear();
      const ag::Varf loss = ag::cross_entropy(model->forward(batch.inputs, B, T, &state), batch.targets);
      ag::backward(loss);
      optim::clip_grad_norm(model->parameters(), 1.0);
      opt->step(0.02);
      const double l = loss.value().item();
      if (step < window) first += l / window;
      if (step >= steps - window) last += l / window;
      if ((step + 1) % 10 == 0) std::printf("step %3lld  loss %.4f\n", static_cast<long long>(step + 1), l);
    }
    std::printf("mean loss of the first %lld steps %.4f, of the last %lld %.4f\n", static_cast<long long>(window),
                first, static_cast<long long>(window), last);

    const double test_bpc = tasks::evaluate_bpc(*model, corpus.test, T).bpc;
    std::filesystem::create_directories(out);
    const std::string ckpt = out + "/so3u1.json";
    train::write_checkpoint(ckpt, config, corpus.vocab, *model, steps);
    // Reload as `liegrad eval` does (make_model from the stored config, then the values).
    train::LoadedModel reloaded = train::load_model(ckpt);
    const double reloaded_bpc = tasks::evaluate_bpc(*reloaded.model, corpus.test, T).bpc;
    std::printf("test BPC %.6f (reloaded checkpoint: %.6f); checkpoint %s\n", test_bpc, reloaded_bpc, ckpt.c_str());
    train::write_json_atomic(out + "/result.json", {{"test_bpc", test_bpc},
                                                   {"first_loss", first},
                                                   {"last_loss", last},
                                                   {"checkpoint", ckpt}});
    if (!(last < first)) {
      std::fprintf(stderr, "the loss did not fall (%.4f -> %.4f)\n", first, last);
      return 1;
    }
    if (std::fabs(reloaded_bpc - test_bpc) > 1e-9) {
      std::fprintf(stderr, "the reloaded checkpoint evaluates to %.9f, not %.9f\n", reloaded_bpc, test_bpc);
      return 1;
    }
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "train_so3u1: %s\n", e.what());
    return 1;
  }
}
