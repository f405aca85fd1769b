// The best checkpoint's books (see best_checkpoint.hpp).
#include "train/best_checkpoint.hpp"

namespace liegrad::train {

bool BestCheckpoint::offer(double criterion, int64_t step) {
  if (offer_final(criterion, step)) {
    evals_since_best_ = 0;
    return true;
  }
  ++evals_since_best_;
  return false;
}

bool BestCheckpoint::offer_final(double criterion, int64_t step) {
  if (step_ >= 0 && !(criterion < criterion_)) return false;
  criterion_ = criterion;
  step_ = step;
  return true;
}

nlohmann::json BestCheckpoint::progress(const std::string& key) const {
  return {{key, step_ >= 0 ? nlohmann::json(criterion_) : nlohmann::json()},
          {"best_step", step_},
          {"evals_since_best", evals_since_best_}};
}

void BestCheckpoint::restore(const nlohmann::json& p, const std::string& key) {
  step_ = p.value("best_step", int64_t{-1});
  if (step_ >= 0) criterion_ = p.at(key).get<double>();
  evals_since_best_ = p.value("evals_since_best", int64_t{0});
}

}  // namespace liegrad::train
