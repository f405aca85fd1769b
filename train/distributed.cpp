// Communicators (see distributed.hpp): the single-process identity, MPI_COMM_WORLD when
// built with MPI (LIEGRAD_HAVE_MPI, set by train/CMakeLists.txt), and the helpers that
// split batches, average gradients and move carried state between lanes and ranks.
#include "train/distributed.hpp"

#include <algorithm>
#include <cstdlib>
#include <exception>

#ifdef LIEGRAD_HAVE_MPI
#include <mpi.h>
#endif

namespace liegrad::train {

void Communicator::abort(int code) { std::exit(code); }

Communicator& single_process() {
  static Communicator one;
  return one;
}

namespace {

// The number of processes a launcher started, from the variables Open MPI's mpirun and
// PMI (MPICH, srun --mpi=pmi2) set; 1 under PMIx (srun --mpi=pmix), which tells the rank
// but not the count; 0 when none is set (not started by a launcher). Slurm's own
// SLURM_NTASKS is not used: a plain process in a batch script has it too.
int launched_size() {
  for (const char* v : {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE"})
    if (const char* s = std::getenv(v)) return std::max(std::atoi(s), 1);
  if (std::getenv("PMIX_RANK") || std::getenv("PMI_RANK")) return 1;
  return 0;
}

#ifdef LIEGRAD_HAVE_MPI
class MpiWorld final : public Communicator {
 public:
  MpiWorld() {
    int provided = 0;
    // Only the training thread calls MPI; OpenMP threads compute between the calls.
    MPI_Init_thread(nullptr, nullptr, MPI_THREAD_FUNNELED, &provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
    MPI_Comm_size(MPI_COMM_WORLD, &size_);
  }
  ~MpiWorld() override { MPI_Finalize(); }
  int rank() const override { return rank_; }
  int size() const override { return size_; }
  void sum(std::span<float> v) override { reduce(v.data(), v.size(), MPI_FLOAT, MPI_SUM); }
  void sum(std::span<double> v) override { reduce(v.data(), v.size(), MPI_DOUBLE, MPI_SUM); }
  void max(std::span<double> v) override { reduce(v.data(), v.size(), MPI_DOUBLE, MPI_MAX); }
  void broadcast(std::span<double> v) override {
    MPI_Bcast(v.data(), static_cast<int>(v.size()), MPI_DOUBLE, 0, MPI_COMM_WORLD);
  }
  void gather(std::span<const float> mine, std::vector<float>& all) override {
    if (rank_ == 0) all.resize(mine.size() * static_cast<size_t>(size_));
    MPI_Gather(mine.data(), static_cast<int>(mine.size()), MPI_FLOAT, rank_ == 0 ? all.data() : nullptr,
               static_cast<int>(mine.size()), MPI_FLOAT, 0, MPI_COMM_WORLD);
  }
  [[noreturn]] void abort(int code) override {
    MPI_Abort(MPI_COMM_WORLD, code);
    std::exit(code);
  }

 private:
  static void reduce(void* p, size_t n, MPI_Datatype type, MPI_Op op) {
    if (n == 0) return;
    MPI_Allreduce(MPI_IN_PLACE, p, static_cast<int>(n), type, op, MPI_COMM_WORLD);
  }
  int rank_ = 0, size_ = 1;
};
#endif

}  // namespace

bool mpi_available() {
#ifdef LIEGRAD_HAVE_MPI
  return true;
#else
  return false;
#endif
}

std::unique_ptr<Communicator> world_communicator() {
  const int launched = launched_size();
#ifdef LIEGRAD_HAVE_MPI
  if (launched > 0) return std::make_unique<MpiWorld>();
#else
  if (launched > 1)
    throw IoError("started as one of " + std::to_string(launched) +
                  " processes by an MPI launcher, but this liegrad was built without MPI "
                  "(install libopenmpi-dev and rebuild; see docs/distributed.md)");
#endif
  return std::make_unique<Communicator>();
}

bool any(Communicator& comm, bool flag) {
  if (comm.size() == 1) return flag;
  double v = flag ? 1 : 0;
  comm.max({&v, 1});
  return v > 0;
}

int first_rank_where(Communicator& comm, bool flag) {
  if (comm.size() == 1) return flag ? 0 : -1;
  double v = flag ? -comm.rank() : -comm.size();  // the max of -rank is the lowest rank
  comm.max({&v, 1});
  return v <= -comm.size() ? -1 : static_cast<int>(-v);
}

void agree(Communicator& comm, const std::function<void()>& fn) {
  std::exception_ptr failure;
  try {
    fn();
  } catch (...) {
    failure = std::current_exception();
  }
  const int first = first_rank_where(comm, failure != nullptr);
  if (first < 0) return;
  if (first == comm.rank()) std::rethrow_exception(failure);
  throw PeerFailure("rank " + std::to_string(first) + " failed");
}

int64_t rows_per_rank(const Communicator& comm, int64_t B) {
  if (B % comm.size() != 0)
    throw ConfigError("train.batch: " + std::to_string(B) + " does not divide among " + std::to_string(comm.size()) +
                      " ranks (train.batch is the global batch; choose a multiple of the rank count)");
  return B / comm.size();
}

data::Batch take_rows(const Communicator& comm, const data::Batch& global) {
  if (comm.size() == 1) return global;
  const int64_t n = rows_per_rank(comm, global.B);
  const auto first = static_cast<size_t>(comm.rank() * n * global.T), count = static_cast<size_t>(n * global.T);
  data::Batch out = global;
  out.B = n;
  out.inputs.assign(global.inputs.begin() + first, global.inputs.begin() + first + count);
  out.targets.assign(global.targets.begin() + first, global.targets.begin() + first + count);
  // Real-valued features and targets: the same rows, at their widths per position.
  auto rows_of = [&](const std::vector<float>& all, std::vector<float>& mine) {
    const size_t width = all.size() / static_cast<size_t>(global.B * global.T);
    mine.assign(all.begin() + static_cast<std::ptrdiff_t>(first * width),
                all.begin() + static_cast<std::ptrdiff_t>((first + count) * width));
  };
  if (!global.features.empty()) rows_of(global.features, out.features);
  if (!global.values.empty()) rows_of(global.values, out.values);
  return out;
}

void average_gradients(Communicator& comm, const std::vector<ag::Parameter<float>>& params,
                       std::vector<float>& buffer) {
  if (comm.size() == 1) return;
  // Layout: every trained parameter's gradient (zeros where this rank has none), then
  // one presence count per parameter, so a parameter without a gradient anywhere keeps none.
  size_t n = 0, count = 0;
  for (const auto& p : params)
    if (p.var.defined() && p.role != ag::ParamRole::GroupBase) n += static_cast<size_t>(p.var.value().size()), ++count;
  buffer.assign(n + count, 0.0f);
  size_t at = 0, k = n;
  for (const auto& p : params) {
    if (!p.var.defined() || p.role == ag::ParamRole::GroupBase) continue;
    const auto size = static_cast<size_t>(p.var.value().size());
    if (p.var.has_grad()) {
      const Array<float>& g = p.var.grad();
      std::copy(g.data(), g.data() + size, buffer.begin() + static_cast<std::ptrdiff_t>(at));
      buffer[k] = 1;
    }
    at += size;
    ++k;
  }
  comm.sum(buffer);
  const float scale = 1.0f / static_cast<float>(comm.size());
  at = 0;
  k = n;
  for (const auto& p : params) {
    if (!p.var.defined() || p.role == ag::ParamRole::GroupBase) continue;
    const auto size = static_cast<size_t>(p.var.value().size());
    if (buffer[k] > 0) {
      ag::Var<float> v = p.var;  // an aliasing handle: writing its gradient writes the model's
      if (!v.has_grad()) v.grad() = Array<float>(v.value().shape());
      float* g = v.grad().data();
      for (size_t i = 0; i < size; ++i) g[i] = buffer[at + i] * scale;
    }
    at += size;
    ++k;
  }
}

std::vector<Array<float>> gather_lanes(Communicator& comm, const std::vector<Array<float>>& mine) {
  if (comm.size() == 1) return mine;
  std::vector<Array<float>> whole;
  std::vector<float> all;
  for (const auto& a : mine) {
    comm.gather({a.data(), static_cast<size_t>(a.size())}, all);
    if (!comm.is_root()) continue;
    std::vector<int64_t> dims = a.shape().vec();
    dims.at(0) *= comm.size();
    whole.emplace_back(Shape::of(dims), all);
  }
  return whole;
}

std::vector<Array<float>> lanes_of(const Communicator& comm, const std::vector<Array<float>>& whole, int64_t B,
                                   const std::string& what) {
  if (comm.size() == 1) return whole;
  const int64_t n = rows_per_rank(comm, B);
  std::vector<Array<float>> mine;
  for (const auto& a : whole) {
    std::vector<int64_t> dims = a.shape().vec();
    if (dims.empty() || dims[0] != B)
      throw IoError(what + ": a carried state tensor of shape " + a.shape().str() + " does not have " +
                    std::to_string(B) + " lanes (train.batch) first");
    const int64_t per_lane = a.size() / B;
    dims[0] = n;
    const auto first = a.begin() + static_cast<std::ptrdiff_t>(comm.rank() * n * per_lane);
    mine.emplace_back(Shape::of(dims), std::vector<float>(first, first + static_cast<std::ptrdiff_t>(n * per_lane)));
  }
  return mine;
}

}  // namespace liegrad::train
