// `liegrad probe (--checkpoint FILE | --config FILE [--set k=v ...]) [--split val|test]
// [--batches K] [--batch B] [--seq-len T] [--json] [--data-dir DIR]`: what each layer of
// a model with the LayerProbing capability (models/capabilities.hpp; the OSMFormer's is
// models/osmformer_probe.cpp) does to the states: the mean norms of the attention
// and grounding tangents, their cosine, how far the attention step alone and the whole
// layer move each state, and the fraction of the attention step the grounding takes
// back. A checkpoint shows the trained model; a config shows it at initialisation.
// Inputs are K windows of B x T consecutive symbols from the start of the split.
#include <cstdio>

#include "apps/commands.hpp"
#include "core/parallel.hpp"
#include "tasks/registry.hpp"
#include "models/model.hpp"
#include "models/capabilities.hpp"
#include "train/checkpoint.hpp"
#include "train/run_config.hpp"

namespace liegrad::app {

int cmd_probe(const std::vector<std::string>& argv) {
  Args args(argv, {"help", "json"}, {"checkpoint", "config", "split", "batches", "batch", "seq-len", "data-dir", "threads"},
            {"set"});
  if (args.help(
          "usage: liegrad probe (--checkpoint FILE | --config FILE [--set key=value ...]) [--split val|test]\n"
          "                     [--batches K] [--batch B] [--seq-len T] [--json] [--data-dir DIR]\n"
          "Per layer of an OSMFormer (a model with a layer probe), averaged over tokens of K batches of B windows of T symbols from the split\n"
          "(defaults 1, 8 and the run's train.seq_len): |u_att| and |u_gnd| (tangent coordinates),\n"
          "their cosine, the distance the attention step alone and the whole layer move a state, and\n"
          "undone = 1 - layer/attention (1: the grounding takes the attention step back entirely).\n"
          "--config probes the model at initialisation (its train.seed).\n"))
    return 0;
  if (args.has("checkpoint") == args.has("config")) throw UsageError("give one of --checkpoint FILE or --config FILE");
  if (args.has("checkpoint") && !args.all("set").empty()) throw UsageError("--set applies to --config");
  const std::string split = args.get("split", "val");
  if (split != "val" && split != "test") throw UsageError("--split must be 'val' or 'test', got '" + split + "'");
  const int batches = args.get_int("batches", 1), batch = args.get_int("batch", 8);
  if (batches < 1 || batch < 1) throw UsageError("--batches and --batch must be >= 1");

  nlohmann::json config;
  train::LoadedModel loaded;
  std::string source;
  if (args.has("checkpoint")) {
    loaded = train::load_model(args.get("checkpoint"), args.get("data-dir"));
    config = loaded.config;
    source = args.get("checkpoint") + " (step " + std::to_string(loaded.step) + ")";
  } else {
    config = train::read_json_file(args.get("config"));
    train::apply_overrides(config, args.all("set"));
    source = args.get("config") + " at initialisation";
  }
  const train::RunConfig rc = train::parse_run_config(config);
  std::shared_ptr<tasks::Task> task = loaded.task;
  if (!task) task = tasks::make_task({rc.data.section, args.get("data-dir"), /*vocab_record=*/nullptr, /*source=*/""});
  if (!task->text_vocab()) throw UsageError("probe reads text; " + rc.data.dataset + " is not a text dataset");
  set_num_threads(args.get_int("threads", rc.train.threads));
  std::unique_ptr<models::Model<float>> built;
  models::Model<float>* model = loaded.model.get();
  if (!model) {
    built = models::make_model<float>(rc.model, task->input_vocab(), rc.train.seed);
    model = built.get();
  }
  models::LayerProbing<float>* probing = model->layer_probing();
  if (!probing)
    throw UsageError("probe: model type '" + model->type() +
                     "' has no layer probe (attention and grounding steps per layer, as the OSMFormer's)");
  const int T_ = args.get_int("seq-len", static_cast<int>(rc.train.seq_len));
  if (T_ < 1) throw UsageError("--seq-len must be >= 1");
  const std::vector<int32_t>& stream = *task->text_split(split);  // its vocabulary checked against the checkpoint's
  const int64_t per_batch = static_cast<int64_t>(batch) * T_;
  if (static_cast<int64_t>(stream.size()) < per_batch * batches)
    throw UsageError("the " + split + " split has " + std::to_string(stream.size()) + " symbols, fewer than " +
                     std::to_string(batches) + " x " + std::to_string(batch) + " x " + std::to_string(T_));
  std::vector<models::LayerProbe> mean;
  for (int k = 0; k < batches; ++k) {
    const std::vector<int32_t> ids(stream.begin() + k * per_batch, stream.begin() + (k + 1) * per_batch);
    const std::vector<models::LayerProbe> p = probing->probe(ids, batch, T_);
    if (mean.empty()) mean.assign(p.size(), models::LayerProbe{});
    for (size_t l = 0; l < p.size(); ++l) {
      mean[l].attention_norm += p[l].attention_norm / batches;
      mean[l].grounding_norm += p[l].grounding_norm / batches;
      mean[l].cosine += p[l].cosine / batches;
      mean[l].attention_move += p[l].attention_move / batches;
      mean[l].layer_move += p[l].layer_move / batches;
    }
  }
  const std::string grounding = probing->grounding_reading();
  if (args.flag("json")) {
    nlohmann::json j = {{"source", source}, {"grounding", grounding}, {"layers", nlohmann::json::array()}};
    for (const auto& p : mean)
      j["layers"].push_back({{"attention_norm", p.attention_norm}, {"grounding_norm", p.grounding_norm},
                             {"cosine", p.cosine}, {"attention_move", p.attention_move},
                             {"layer_move", p.layer_move}, {"undone", p.undone()}});
    std::printf("%s\n", j.dump().c_str());
    return 0;
  }
  std::printf("%s, grounding %s, %d x %d x %d symbols of %s:%s\n", source.c_str(), grounding.c_str(), batches, batch,
              T_, rc.data.dataset.c_str(), split.c_str());
  std::printf("%5s %10s %10s %8s %14s %11s %8s\n", "layer", "|u_att|", "|u_gnd|", "cosine", "attention_move",
              "layer_move", "undone");
  for (size_t l = 0; l < mean.size(); ++l)
    std::printf("%5zu %10.4f %10.4f %8.4f %14.4f %11.4f %8.4f\n", l, mean[l].attention_norm, mean[l].grounding_norm,
                mean[l].cosine, mean[l].attention_move, mean[l].layer_move, mean[l].undone());
  return 0;
}

}  // namespace liegrad::app
