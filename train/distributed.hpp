// Data-parallel training across processes (docs/distributed.md): the small interface
// the trainer talks to, so it needs no MPI and no #ifdef. A Communicator is the set
// of ranks of one run; single_process() is the identity for one process, and
// world_communicator() is MPI_COMM_WORLD when liegrad was built with MPI and started
// by a launcher (mpirun, srun), else single_process().
//
// Every rank builds the same model from the same seed, takes its rows of each global
// batch (take_rows), and average_gradients() sums the gradients of all ranks in one
// flat buffer (MPI_Allreduce) and divides by the rank count, so every rank applies
// the gradient of the global batch's mean loss and holds identical weights.
//
// Collectives must be called by every rank in the same order. A failure that not
// every rank sees must end the job: agree() turns a local failure into the same
// decision on every rank (PeerFailure on the ranks that did not fail), and abort()
// ends every rank when that is not possible.
#pragma once
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "core/array.hpp"
#include "core/errors.hpp"
#include "data/batcher.hpp"
#include "autograd/parameter.hpp"

namespace liegrad::train {

// Another rank failed and reported it; this rank stops without a message of its own.
struct PeerFailure : Error {
  using Error::Error;
};

class Communicator {
 public:
  virtual ~Communicator() = default;
  virtual int rank() const { return 0; }
  virtual int size() const { return 1; }
  bool is_root() const { return rank() == 0; }
  // Element-wise sums / maxima over all ranks, in place, the same result on every rank.
  virtual void sum(std::span<float> v) {}
  virtual void sum(std::span<double> v) {}
  virtual void max(std::span<double> v) {}
  // Rank 0's value on every rank.
  virtual void broadcast(std::span<double> v) {}
  // mine (n) from every rank, concatenated in rank order into all (size() * n) on rank 0
  // (all is left untouched elsewhere).
  virtual void gather(std::span<const float> mine, std::vector<float>& all) { all.assign(mine.begin(), mine.end()); }
  // Ends every rank of the run with this exit code (single process: std::exit).
  [[noreturn]] virtual void abort(int code);
};

// The identity communicator of a process that trains alone.
Communicator& single_process();

// True when this build has MPI support (found by CMake's find_package(MPI)).
bool mpi_available();

// MPI_COMM_WORLD when started by an MPI launcher (MPI_Init here, MPI_Finalize when the
// returned object is destroyed), else a single process. IoError when a launcher started
// more than one process but this build has no MPI (each would train alone).
std::unique_ptr<Communicator> world_communicator();

// ---- helpers the trainer uses ----

// True on every rank when flag is true on any rank.
bool any(Communicator& comm, bool flag);
// The lowest rank whose flag is true, or -1 when none is (the same on every rank).
int first_rank_where(Communicator& comm, bool flag);
// Runs fn on every rank, then agrees: when fn threw on some rank, the lowest such rank
// rethrows its exception and every other rank throws PeerFailure. fn must not call
// collectives (a rank that failed before them would leave the others waiting).
void agree(Communicator& comm, const std::function<void()>& fn);

// The rows of this rank's share of a global batch of B rows: B / size() rows from
// rank() * B / size(). ConfigError when B does not divide by size().
int64_t rows_per_rank(const Communicator& comm, int64_t B);
data::Batch take_rows(const Communicator& comm, const data::Batch& global);

// Sums the gradients of params over all ranks and divides by size(); a parameter with
// no gradient on any rank keeps none. buffer: reused scratch. Identity for one rank.
void average_gradients(Communicator& comm, const std::vector<ag::Parameter<float>>& params,
                       std::vector<float>& buffer);

// Carried recurrent state per lane: each tensor (B/size(), ...) holds this rank's lanes.
// gather_lanes returns the whole state (B, ...) on rank 0 (empty elsewhere); lanes_of
// takes this rank's lanes of a whole state (IoError naming `what` when a tensor's first
// dimension is not B).
std::vector<Array<float>> gather_lanes(Communicator& comm, const std::vector<Array<float>>& mine);
std::vector<Array<float>> lanes_of(const Communicator& comm, const std::vector<Array<float>>& whole, int64_t B,
                                   const std::string& what);

}  // namespace liegrad::train
