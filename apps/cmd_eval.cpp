// `liegrad eval --checkpoint FILE [--split val|test] [--text FILE] [--json]
// [--data-dir DIR]`: BPC of a checkpoint over a whole split of its dataset, or over
// a text file (every character must be in the checkpoint's vocabulary).
// For a group word run (data.dataset "words:<group>"): accuracy per position,
// per whole word and at the last position, by word length, on the split's fixed
// evaluation words (`--lengths 64,128,...` and `--sequences N` override the
// config's data.eval_lengths and data.test_sequences).
#include <cstdio>
#include <cstdlib>
#include <sstream>

#include "apps/commands.hpp"
#include "core/parallel.hpp"
#include "data/datasets.hpp"
#include "train/checkpoint.hpp"
#include "train/evaluate.hpp"
#include "train/run_config.hpp"
#include "train/word_diagnosis.hpp"
#include "train/word_eval.hpp"

namespace liegrad::app {

namespace {

// "64,128,256" -> {64, 128, 256}; each length checked against the generator's limit.
std::vector<int64_t> parse_lengths(const std::string& text) {
  std::vector<int64_t> out;
  std::stringstream ss(text);
  std::string item;
  while (std::getline(ss, item, ',')) {
    char* end = nullptr;
    const long long v = std::strtoll(item.c_str(), &end, 10);
    if (item.empty() || *end != '\0') throw UsageError("--lengths expects integers separated by commas, got '" + text + "'");
    data::check_eval_word_length(v, "--lengths");
    out.push_back(v);
  }
  if (out.empty()) throw UsageError("--lengths expects at least one length");
  return out;
}

// Accuracy by length for a group word checkpoint.
int eval_words(const Args& args, const train::LoadedModel& m, const train::RunConfig& rc, const std::string& split) {
  if (args.has("text")) throw UsageError("--text applies to language models; " + rc.data.dataset + " has no text");
  const std::vector<int64_t> lengths = args.has("lengths") ? parse_lengths(args.get("lengths")) : rc.data.eval_lengths;
  const int sequences = args.get_int("sequences", static_cast<int>(rc.data.test_sequences));
  if (sequences < 1) throw UsageError("--sequences must be >= 1, got " + std::to_string(sequences));
  const auto scores = train::evaluate_word_lengths(*m.model, *m.words, rc.train.seed,
                                                   split == "val" ? data::WordSplit::Val : data::WordSplit::Test,
                                                   lengths, sequences);
  const std::string source = rc.data.dataset + ":" + split;
  const auto diagnosis =
      train::diagnose_word_model(*m.model, *m.words, rc.train.seed, train::drift_lengths(lengths), train::kDriftWords);
  if (args.flag("json")) {
    nlohmann::json j = {{"source", source}, {"step", m.step}, {"lengths", nlohmann::json::array()}};
    for (const auto& s : scores) j["lengths"].push_back(s.to_json());
    if (diagnosis) j["diagnosis"] = diagnosis->to_json();
    std::printf("%s\n", j.dump().c_str());
    return 0;
  }
  std::printf("%s, %d words per length (checkpoint step %lld)\n", source.c_str(), sequences,
              static_cast<long long>(m.step));
  std::printf("%8s %10s %14s %14s %11s\n", "length", "loss", "position_acc", "sequence_acc", "final_acc");
  for (const auto& s : scores)
    std::printf("%8lld %10.4f %14.4f %14.4f %11.4f\n", static_cast<long long>(s.length), s.loss, s.position_acc,
                s.sequence_acc, s.final_acc);
  if (!diagnosis) return 0;
  // The group-structure diagnosis (train/word_diagnosis.hpp).
  if (diagnosis->state_independent)
    std::printf("transitions: homomorphism defect max %.3g, mean %.3g over %lld pairs; order defect max %.3g\n",
                diagnosis->homomorphism_defect_max, diagnosis->homomorphism_defect_mean,
                static_cast<long long>(diagnosis->pairs), diagnosis->order_defect_max);
  else
    std::printf("transitions: the drive's step depends on the state (no homomorphism defect)\n");
  if (diagnosis->state_independent) {
    std::printf("defect spectrum (RMS defect per direction, ascending):");
    for (double r : diagnosis->defect_spectrum) std::printf(" %.3g", r);
    std::printf("\nexact subspace: %lld of %zu directions below %.2f, RMS defect %.3g there, %.3g elsewhere\n",
                static_cast<long long>(diagnosis->exact_dims), diagnosis->defect_spectrum.size(), train::kExactDirection,
                diagnosis->exact_rms_defect, diagnosis->rest_rms_defect);
  }
  std::printf("drift over %lld test words: %8s %18s %21s %18s %9s\n", static_cast<long long>(train::kDriftWords),
              "length", "to_true_prototype", "to_nearest_prototype", "on_exact_subspace", "accuracy");
  for (const auto& d : diagnosis->drift) {
    char exact[32] = "-";
    if (d.on_exact_subspace >= 0) std::snprintf(exact, sizeof exact, "%.4f", d.on_exact_subspace);
    std::printf("%29s %8lld %18.4f %21.4f %18s %9.4f\n", "", static_cast<long long>(d.length), d.to_true_prototype,
                d.to_nearest_prototype, exact, d.accuracy);
  }
  return 0;
}

}  // namespace

int cmd_eval(const std::vector<std::string>& argv) {
  Args args(argv, {"help", "json"}, {"checkpoint", "split", "text", "data-dir", "threads", "lengths", "sequences"});
  if (args.help(
          "usage: liegrad eval --checkpoint FILE [--split val|test] [--text FILE] [--json] [--data-dir DIR]\n"
          "       liegrad eval --checkpoint FILE [--split val|test] [--lengths 64,128,...] [--sequences N] [--json]\n"
          "Bits per character over the whole split (transformers: consecutive non-overlapping windows;\n"
          "recurrent models: the state carried from the first symbol to the last).\n"
          "For a group word run (words:<group>): loss and accuracy (per position, whole word, last\n"
          "position) by word length on the split's fixed words; lengths and word count default to\n"
          "data.eval_lengths and data.test_sequences.\n"))
    return 0;
  if (!args.has("checkpoint")) throw UsageError("--checkpoint FILE is required");
  const std::string split = args.get("split", "test");
  if (split != "val" && split != "test") throw UsageError("--split must be 'val' or 'test', got '" + split + "'");
  train::LoadedModel m = train::load_model(args.get("checkpoint"));
  const train::RunConfig rc = train::parse_run_config(m.config);
  set_num_threads(args.get_int("threads", rc.train.threads));
  if (m.words) return eval_words(args, m, rc, split);
  if (args.has("lengths") || args.has("sequences"))
    throw UsageError("--lengths and --sequences apply to group word runs (words:<group>), not to " + rc.data.dataset);
  std::vector<int32_t> stream;
  std::string source;
  if (args.has("text")) {
    source = args.get("text");
    const std::string text = data::read_file_bytes(source);
    try {
      stream = m.vocab.encode(text);
    } catch (const ValueError& e) {
      throw ValueError("'" + source + "' cannot be encoded with the checkpoint's vocabulary: " + e.what());
    }
  } else {
    const data::Corpus c = data::load_corpus(rc.data.dataset, args.get("data-dir"), rc.data.val_frac, rc.data.test_frac);
    if (!(c.vocab == m.vocab))
      throw ValueError("the dataset's vocabulary differs from the checkpoint's; was it trained on " + rc.data.dataset + "?");
    stream = split == "val" ? c.val : c.test;
    source = rc.data.dataset + ":" + split;
  }
  const train::EvalResult r = train::evaluate_bpc(*m.model, stream, rc.train.seq_len);
  if (args.flag("json"))
    std::printf("{\"source\": \"%s\", \"bpc\": %.6f, \"nats\": %.6f, \"predictions\": %lld}\n", source.c_str(), r.bpc,
                r.nats_per_symbol, static_cast<long long>(r.predictions));
  else
    std::printf("%s: %.4f BPC over %lld predictions\n", source.c_str(), r.bpc, static_cast<long long>(r.predictions));
  return 0;
}

}  // namespace liegrad::app
