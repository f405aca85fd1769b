// Tests of train/distributed's helpers without MPI: the single-process communicator is
// the identity, and a stand-in for rank 1 of 2 whose partner holds the same values
// (its sums double; rank 0 alone receives gathers) checks the row split of a batch, the
// lanes of a carried state, the gradient average and its parameters without gradients;
// a process not started by a launcher never initializes MPI, and a build without MPI
// refuses to be one of several. The real 2-rank runs: tests/test_distributed.py (mpi_*).
#include <doctest/doctest.h>

#include <stdlib.h>  // setenv, unsetenv (POSIX)

#include <algorithm>
#include <string>

#include "core/errors.hpp"
#include "train/distributed.hpp"

using namespace liegrad;

namespace {

// Rank 1 of 2, as if rank 0 held exactly this rank's values.
struct TwinRank : train::Communicator {
  int rank() const override { return 1; }
  int size() const override { return 2; }
  void sum(std::span<float> v) override {
    for (float& x : v) x *= 2;
  }
  void sum(std::span<double> v) override {
    for (double& x : v) x *= 2;
  }
  void gather(std::span<const float> mine, std::vector<float>& all) override {}  // rank 0 alone receives
};

ag::Parameter<float> param(const std::string& name, std::vector<float> values, bool with_grad) {
  ag::Parameter<float> p;
  p.name = name;
  const auto n = static_cast<int64_t>(values.size());
  p.var = ag::Var<float>::parameter(Array<float>(Shape{n}, values));
  if (with_grad) {
    ag::Var<float> v = p.var;
    v.grad() = Array<float>(Shape{n}, values);  // the gradient: a copy of the values
  }
  p.dof = n;
  return p;
}

}  // namespace

TEST_CASE("distributed: a single process is the identity") {
  train::Communicator& one = train::single_process();
  CHECK(one.rank() == 0);
  CHECK(one.size() == 1);
  data::Batch b;
  b.B = 3;
  b.T = 2;
  b.inputs = {1, 2, 3, 4, 5, 6};
  b.targets = {2, 3, 4, 5, 6, 7};
  CHECK(train::take_rows(one, b).inputs == b.inputs);
  CHECK(train::rows_per_rank(one, 7) == 7);
  CHECK(train::any(one, true));
  CHECK_FALSE(train::any(one, false));
  CHECK(train::first_rank_where(one, true) == 0);
  CHECK(train::first_rank_where(one, false) == -1);
  std::vector<ag::Parameter<float>> ps{param("w", {1, 2}, true)};
  std::vector<float> buffer;
  train::average_gradients(one, ps, buffer);
  CHECK(ps[0].var.grad().to_vector() == std::vector<float>{1, 2});
  CHECK_THROWS_AS(train::agree(one, [] { throw IoError("x"); }), IoError);
}

TEST_CASE("distributed: rank 1 of 2 takes the second half of the rows and of the lanes") {
  TwinRank r1;
  data::Batch b;
  b.B = 4;
  b.T = 2;
  b.inputs = {0, 1, 10, 11, 20, 21, 30, 31};
  b.targets = {1, 2, 11, 12, 21, 22, 31, 32};
  const data::Batch mine = train::take_rows(r1, b);
  CHECK(mine.B == 2);
  CHECK(mine.T == 2);
  CHECK(mine.inputs == std::vector<int32_t>{20, 21, 30, 31});
  CHECK(mine.targets == std::vector<int32_t>{21, 22, 31, 32});
  // A carried state (B=4 lanes, 1, 2): lanes 2 and 3.
  std::vector<Array<float>> whole{Array<float>(Shape{4, 1, 2}, {0, 1, 2, 3, 4, 5, 6, 7})};
  const auto lanes = train::lanes_of(r1, whole, 4, "ckpt");
  REQUIRE(lanes.size() == 1);
  CHECK(lanes[0].shape() == Shape{2, 1, 2});
  CHECK(lanes[0].to_vector() == std::vector<float>{4, 5, 6, 7});
  CHECK_THROWS_WITH_AS(train::lanes_of(r1, whole, 8, "ckpt"), doctest::Contains("ckpt"), IoError);
  // Only rank 0 receives the gathered lanes.
  CHECK(train::gather_lanes(r1, lanes).empty());
}

TEST_CASE("distributed: a global batch that does not divide among the ranks is refused") {
  TwinRank r1;
  CHECK(train::rows_per_rank(r1, 4) == 2);
  CHECK_THROWS_WITH_AS(train::rows_per_rank(r1, 5), doctest::Contains("train.batch: 5 does not divide among 2 ranks"),
                       ConfigError);
}

TEST_CASE("distributed: the gradient average keeps gradients and their absence") {
  TwinRank r1;
  // The partner holds the same gradients: their average is the gradient itself.
  std::vector<ag::Parameter<float>> ps{param("a", {1, -2, 3}, true), param("b", {5}, false),
                                          param("c", {0.5f, 4}, true)};
  std::vector<float> buffer;
  train::average_gradients(r1, ps, buffer);
  CHECK(ps[0].var.grad().to_vector() == std::vector<float>{1, -2, 3});
  CHECK_FALSE(ps[1].var.has_grad());  // no rank had one
  CHECK(ps[2].var.grad().to_vector() == std::vector<float>{0.5f, 4});
}

TEST_CASE("distributed: when rank 0 failed too, rank 1 stops with PeerFailure") {
  // Rank 1 of 2 whose partner, rank 0, reports a failure in first_rank_where (its -rank is 0).
  struct Rank0Failed : TwinRank {
    void max(std::span<double> v) override { v[0] = std::max(v[0], 0.0); }
  } r1;
  CHECK(train::first_rank_where(r1, true) == 0);
  CHECK_THROWS_AS(train::agree(r1, [] { throw IoError("x"); }), train::PeerFailure);
  CHECK_THROWS_AS(train::agree(r1, [] {}), train::PeerFailure);
  // Alone (its max is the identity), rank 1's own failure is rethrown as it was.
  TwinRank alone;
  CHECK(train::first_rank_where(alone, true) == 1);
  CHECK_THROWS_AS(train::agree(alone, [] { throw IoError("x"); }), IoError);
  CHECK_NOTHROW(train::agree(alone, [] {}));
}

TEST_CASE("distributed: the world of a process not started by a launcher is a single process") {
  for (const char* v : {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMI_RANK", "PMIX_RANK"}) unsetenv(v);
  CHECK(train::world_communicator()->size() == 1);  // no MPI_Init: a plain `liegrad train`
  if (!train::mpi_available()) {
    // Built without MPI but started as 2 processes: refused, rather than two runs in one directory.
    setenv("OMPI_COMM_WORLD_SIZE", "2", 1);
    CHECK_THROWS_WITH_AS(train::world_communicator(), doctest::Contains("built without MPI"), IoError);
    unsetenv("OMPI_COMM_WORLD_SIZE");
  }
}
