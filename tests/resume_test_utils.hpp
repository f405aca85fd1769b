// Helpers of the tests that a run cut short and resumed trains exactly as one that was
// not (test_train.cpp, test_word_training.cpp, test_rotations.cpp): the cut and resumed
// run, and the bit-for-bit comparison of two runs' training losses.
#pragma once
#include <doctest/doctest.h>

#include <cstdint>
#include <string>

#include <nlohmann/json.hpp>

#include "tests/train_test_utils.hpp"
#include "train/trainer.hpp"

namespace liegrad::test {

// Trains `config` into out_dir until step stop_at (TrainOptions::stop_at, `liegrad train
// --stop-at`), checks that it stopped there, then resumes it in out_dir to its end and
// returns the resumed segment's result.
inline train::TrainResult train_cut_and_resumed(const nlohmann::json& config, const std::string& out_dir,
                                                int64_t stop_at) {
  train::TrainOptions cut;
  cut.out_dir = out_dir;
  cut.stop_at = stop_at;
  const train::TrainResult part = train::run_training(config, cut);
  CHECK(part.interrupted);
  CHECK(part.steps_done == stop_at);
  train::TrainOptions rest;
  rest.out_dir = out_dir;
  rest.resume = true;
  return train::run_training(nlohmann::json(), rest);
}

// The training losses logged in two run directories' metrics.jsonl are the same, step for
// step and bit for bit.
inline void check_same_losses(const std::string& dir_a, const std::string& dir_b) {
  const auto la = metrics_lines(dir_a, "loss"), lb = metrics_lines(dir_b, "loss");
  REQUIRE(la.size() == lb.size());
  for (size_t i = 0; i < la.size(); ++i) {
    CHECK(la[i]["step"] == lb[i]["step"]);
    CHECK(la[i]["loss"].get<double>() == lb[i]["loss"].get<double>());
  }
}

}  // namespace liegrad::test
