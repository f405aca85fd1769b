// Optimizers over a model's named parameters (ag::Parameter), updating the
// aliased tensors in place from their gradients:
//
//   SGD    momentum buffer b <- mu b + g; step along b, or g + mu b (Nesterov;
//          Sutskever et al. 2013), or g when mu = 0. Optional L2 weight decay g += wd w.
//   Adam   Kingma & Ba 2015, Algorithm 1: m <- b1 m + (1-b1) g, v <- b2 v + (1-b2) g^2,
//          w <- w - lr (m / (1-b1^t)) / (sqrt(v / (1-b2^t)) + eps). Optional L2 decay.
//   AdamW  Adam with decoupled weight decay (Loshchilov & Hutter 2019):
//          w <- w - lr (adam_direction + wd w).
//   Adam's bias correction counts t per parameter tensor (as PyTorch does), or with
//   bias_correction "coordinate" per coordinate from the step of its first non-zero
//   gradient. The two agree wherever every coordinate has a gradient from the first
//   step; they differ for rows of a table first read late (the symbols an alphabet
//   curriculum holds back, tasks/words_task.hpp): with a tensor count t >> 1 their
//   moments start at zero with no correction, v is short by a factor of about
//   k (1 - b2) after k steps, and the step m / sqrt(v) is sqrt(10) ~ 3.2 times lr at
//   the first and about 6.5 after ten steps of a steady gradient, where Algorithm 1
//   gives lr (by Cauchy-Schwarz it stays below about 7.3 lr with b1 = 0.9, b2 = 0.999).
//
// Weight decay (either kind) applies only where Parameter::decays() (role Weight):
// never to biases, norms, scalars, tangent mixing or group parameters.
//
// Manifold-mode group parameters (role GroupManifold, value W of shape (V,n,n) in the
// group, docs/models.md §2) take Riemannian steps (Absil, Mahony & Sepulchre 2008, ch. 3-4): the
// Euclidean gradient is pulled back to the algebra, xi = Pi_g(W^T grad), written in the
// group's orthonormal coordinates, g = vee(xi) / real_scale() of shape (V,m) (exactly
// d/du L(W exp(hat u)) at u = 0; see riemannian.cpp); the optimizer's rule runs
// on those coordinates (its moment buffers are (V,m)) and gives a step u (V,m), applied
// by the exponential retraction W <- W exp(hat(u)) (computed in double). W never
// leaves the group except by rounding: in float the defect is a random walk (measured
// 2.0e-5 on SO(8), 1.1e-5 on U(4) after 10,000 random Adam steps), which a polar
// re-orthonormalisation every `reorth_every` steps removes (1.5e-7 and 1.0e-7 with
// reorth_every = 100; off by default, recommended for long float runs).
//
// Parameters with no gradient this step (Var::has_grad() false) are skipped entirely;
// their moments and per-parameter step counts do not advance (like PyTorch). GroupBase
// parameters (the fixed base of a rebased algebra parameter) are never updated.
//
// state_to_json / state_from_json save and restore the step count and every buffer,
// keyed by parameter name; float buffers round-trip exactly, so a resumed run is
// bit-identical.
#pragma once
#include <cstdint>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "autograd/parameter.hpp"

namespace liegrad::optim {

template <class T>
class Optimizer {
 public:
  virtual ~Optimizer() = default;
  Optimizer(const Optimizer&) = delete;
  Optimizer& operator=(const Optimizer&) = delete;

  // One update of every parameter that has a gradient; lr must be finite and >= 0.
  void step(double lr);
  // Drops every parameter's gradient (Var::zero_grad).
  void zero_grad();
  // Projects every manifold parameter back onto its group (polar factor, see
  // riemannian.hpp); step() calls it every reorth_every steps when that is > 0.
  void reorthonormalise();

  const std::vector<ag::Parameter<T>>& params() const { return params_; }
  int64_t step_count() const { return step_; }
  int64_t reorth_every() const { return reorth_every_; }
  // "sgd", "adam" or "adamw".
  virtual std::string name() const = 0;
  // The hyper-parameters as the options object make_optimizer accepts.
  virtual nlohmann::json options_json() const = 0;

  // {"optimizer": name, "step": n, "options": {...},
  //  "params": {name: {"t": n_i, buffer: {"shape": [...], "data": [...]}, ...}, ...}}
  // Non-finite buffer entries are written as the strings "nan", "inf", "-inf".
  nlohmann::json state_to_json() const;
  // Restores a state saved by an optimizer of the same kind over parameters of the same
  // names and shapes. Throws ValueError (naming the parameter and buffer) for a wrong
  // optimizer kind, a missing or extra parameter, a shape or length mismatch, or a
  // malformed entry; on error the optimizer is left unchanged. Hyper-parameters are not
  // restored (they come from the configuration).
  void state_from_json(const nlohmann::json& j);

 protected:
  // Per-parameter state: buffers in buffer_names order, of the update's shape (the
  // value's shape; (V,m) coordinates for manifold parameters), and a step count.
  struct Slot {
    std::vector<Array<T>> buf;
    int64_t t = 0;
  };

  // Validates the parameters (defined, unique names, manifold ones with a group and a
  // (V,n,n) value of the group's size) and allocates zeroed buffers.
  Optimizer(std::vector<ag::Parameter<T>> params, std::vector<std::string> buffer_names, int64_t reorth_every);

  // The descent direction d (n values, so that the update is w <- w - lr d) for one
  // parameter from its gradient g (n values); w is the current value for Euclidean
  // parameters, null for manifold ones (whose g are algebra coordinates). Advances the
  // slot's buffers and count. `decays` is Parameter::decays().
  virtual void direction(Slot& s, const T* g, const T* w, bool decays, int64_t n, double* d) = 0;

 private:
  std::vector<ag::Parameter<T>> params_;
  std::vector<std::string> buffer_names_;
  std::vector<Slot> slots_;
  int64_t step_ = 0;
  int64_t reorth_every_ = 0;
  std::vector<double> scratch_;
};

struct SgdOptions {
  double momentum = 0.0;      // >= 0
  bool nesterov = false;      // requires momentum > 0
  double weight_decay = 0.0;  // >= 0, L2 (added to the gradient), Weight role only
  int64_t reorth_every = 0;   // >= 0; 0 = never re-orthonormalise manifold parameters
};

template <class T>
class SGD : public Optimizer<T> {
 public:
  SGD(std::vector<ag::Parameter<T>> params, const SgdOptions& opt = {});
  std::string name() const override { return "sgd"; }
  nlohmann::json options_json() const override;

 protected:
  void direction(typename Optimizer<T>::Slot& s, const T* g, const T* w, bool decays, int64_t n, double* d) override;

 private:
  SgdOptions opt_;
};

struct AdamOptions {
  double beta1 = 0.9;         // in [0, 1)
  double beta2 = 0.999;       // in [0, 1)
  double eps = 1e-8;          // > 0
  double weight_decay = 0.0;  // >= 0; L2 for Adam, decoupled for AdamW; Weight role only
  int64_t reorth_every = 0;   // >= 0; 0 = never re-orthonormalise manifold parameters
  bool coordinate_bias_correction = false;  // bias_correction "coordinate" (see the head comment)
};

template <class T>
class Adam : public Optimizer<T> {
 public:
  Adam(std::vector<ag::Parameter<T>> params, const AdamOptions& opt = {});
  std::string name() const override { return decoupled_ ? "adamw" : "adam"; }
  nlohmann::json options_json() const override;

 protected:
  Adam(std::vector<ag::Parameter<T>> params, const AdamOptions& opt, bool decoupled);
  void direction(typename Optimizer<T>::Slot& s, const T* g, const T* w, bool decays, int64_t n, double* d) override;

 private:
  AdamOptions opt_;
  bool decoupled_;
};

// AdamW: AdamOptions::weight_decay is decoupled; default 0.01 (as in PyTorch).
template <class T>
class AdamW : public Adam<T> {
 public:
  static AdamOptions defaults() {
    AdamOptions o;
    o.weight_decay = 0.01;
    return o;
  }
  AdamW(std::vector<ag::Parameter<T>> params, const AdamOptions& opt = defaults())
      : Adam<T>(std::move(params), opt, true) {}
};

// The names make_optimizer accepts: "sgd", "adam", "adamw".
std::vector<std::string> optimizer_names();

// Builds an optimizer by name from an options object (null or {} for defaults):
//   sgd:   momentum, nesterov, weight_decay, reorth_every
//   adam:  beta1, beta2 (or betas: [b1, b2]), eps, weight_decay, reorth_every,
//          bias_correction ("parameter" or "coordinate")
//   adamw: as adam (weight_decay default 0.01)
// Unknown name: ValueError listing the known ones. Out-of-range or mistyped value:
// ValueError naming the key and value. Unknown key: ConfigError naming it (and the
// nearest known key when one is close; the options are read by core/config.hpp).
template <class T>
std::unique_ptr<Optimizer<T>> make_optimizer(const std::string& name, std::vector<ag::Parameter<T>> params,
                                             const nlohmann::json& options = nlohmann::json::object());

}  // namespace liegrad::optim
