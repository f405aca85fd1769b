// `liegrad train --config FILE [--set key=value ...] --out DIR [--resume] [--force]
// [--data-dir DIR]`: runs train::run_training. SIGINT/SIGTERM ask the trainer to
// write last.json and stop; the exit code is then 130 (SIGINT) or 143 (SIGTERM).
// Started by an MPI launcher (`mpirun -np N liegrad train ...`), every process is a
// rank of one data-parallel run (train/distributed.hpp, docs/distributed.md): rank 0
// prints; a rank that fails prints one line naming itself and ends the job.
#include <unistd.h>

#include <atomic>
#include <csignal>
#include <cstdio>
#include <iostream>

#include "apps/commands.hpp"
#include "train/distributed.hpp"
#include "train/run_config.hpp"
#include "train/trainer.hpp"

namespace liegrad::app {

namespace {
std::atomic<bool> g_stop{false};
volatile std::sig_atomic_t g_signal = 0;
extern "C" void on_signal(int sig) {
  g_signal = sig;
  g_stop.store(true);
}
}  // namespace

namespace {

int train_on(train::Communicator& comm, const std::vector<std::string>& argv) {
  Args args(argv, {"help", "resume", "force", "quiet"}, {"config", "out", "data-dir", "stop-at"}, {"set"});
  if (args.help(
          "usage: liegrad train --config FILE --out DIR [--set key=value ...] [--data-dir DIR]\n"
          "                     [--resume] [--force] [--quiet]\n"
          "  --config FILE     run configuration (model, data, train sections; see configs/ and docs/training.md)\n"
          "  --set k=v         override a config value, e.g. --set train.lr=1e-3 --set model.group=U(8)\n"
          "  --out DIR         run directory: config.json, metrics.jsonl, best.json, last.json, result.json\n"
          "  --resume          continue the run in DIR from last.json (--config optional)\n"
          "  --force           overwrite a directory that holds another run\n"
          "  --data-dir DIR    where the datasets are (else $LIEGRAD_DATA, else ../shared/data)\n"
          "  --stop-at STEP    stop after STEP, writing last.json (continue later with --resume)\n"))
    return 0;
  if (!args.has("out")) throw UsageError("--out DIR is required (see --help)");
  if (!args.has("config") && !args.flag("resume")) throw UsageError("--config FILE is required (see --help)");
  if (args.flag("resume") && args.flag("force")) throw UsageError("--resume and --force exclude each other");
  nlohmann::json config;
  if (args.has("config")) {
    config = train::read_json_file(args.get("config"));
    train::apply_overrides(config, args.all("set"));
  } else if (!args.all("set").empty()) {
    throw UsageError("--set needs --config (with --resume, give the run's config.json)");
  }
  train::TrainOptions opt;
  opt.out_dir = args.get("out");
  opt.data_dir = args.get("data-dir");
  opt.resume = args.flag("resume");
  opt.force = args.flag("force");
  opt.progress_bar = isatty(STDERR_FILENO);
  opt.log = args.flag("quiet") || !comm.is_root() ? nullptr : (opt.progress_bar ? &std::cerr : &std::cout);
  opt.comm = &comm;
  opt.stop = &g_stop;
  opt.stop_at = args.get_int("stop-at", 0);
  std::signal(SIGINT, on_signal);
  std::signal(SIGTERM, on_signal);
  const train::TrainResult r = train::run_training(config, opt);
  if (!comm.is_root()) return r.interrupted ? (g_signal == SIGTERM ? 143 : g_signal == SIGINT ? 130 : 0) : 0;
  if (r.interrupted) return g_signal == SIGTERM ? 143 : g_signal == SIGINT ? 130 : 0;
  std::printf("%s\n", r.headline.c_str());
  return 0;
}

}  // namespace

int cmd_train(const std::vector<std::string>& argv) {
  const std::unique_ptr<train::Communicator> comm = train::world_communicator();
  if (comm->size() == 1) return train_on(*comm, argv);  // errors reach main(), which prints them
  // Several ranks: the same argument error on every rank is printed by rank 0 only; any
  // other failure by the rank that has it, which then ends the whole job (no rank waits).
  const auto fail = [&](const char* kind, const char* what, int code) {
    std::fprintf(stderr, "liegrad train: %srank %d of %d: %s\n", kind, comm->rank(), comm->size(), what);
    std::fflush(stderr);
    comm->abort(code);
  };
  try {
    return train_on(*comm, argv);
  } catch (const train::PeerFailure&) {
    return 1;  // the failing rank has reported; every rank agreed to stop
  } catch (const UsageError& e) {
    if (comm->is_root()) std::fprintf(stderr, "liegrad train: %s\n", e.what());
    return 2;
  } catch (const liegrad::Error& e) {
    fail("error: ", e.what(), 1);
  } catch (const std::exception& e) {
    fail("internal error: ", e.what(), 3);
  }
  return 1;
}

}  // namespace liegrad::app
