// The optimizer base (parameter checks, the Euclidean and Riemannian update loops,
// checkpoint state), SGD, Adam/AdamW and the factory. See optimizer.hpp for the maths.
#include "optim/optimizer.hpp"

#include <cmath>
#include <set>
#include <sstream>
#include <type_traits>

#include "core/array_json.hpp"
#include "core/config.hpp"
#include "core/errors.hpp"
#include "optim/riemannian.hpp"

namespace liegrad::optim {

namespace {

// Reads a buffer saved by state_to_json into an array of the expected shape.
template <class T>
Array<T> buffer_from_json(const nlohmann::json& j, const Shape& expected, const std::string& where) {
  Array<T> a = array_from_json<T>(j, "data", where);
  if (a.shape() != expected)
    throw ValueError(where + ": saved shape " + a.shape().str() + " does not match the parameter's " + expected.str());
  return a;
}

// The shape of a parameter's update (and buffers): its value's, (V,m) on a manifold,
// and empty for a GroupBase, which is never trained.
template <class T>
Shape update_shape(const ag::Parameter<T>& p) {
  if (p.role == ag::ParamRole::GroupBase) return Shape{0};
  if (!p.on_manifold()) return p.var.shape();
  return Shape{p.var.shape().batch(), algebra_dim(*p.group)};
}

}  // namespace

// ---------------------------------------------------------------- Optimizer base

template <class T>
Optimizer<T>::Optimizer(std::vector<ag::Parameter<T>> params, std::vector<std::string> buffer_names,
                        int64_t reorth_every)
    : params_(std::move(params)), buffer_names_(std::move(buffer_names)), reorth_every_(reorth_every) {
  if (reorth_every < 0)
    throw ValueError("optimizer option reorth_every must be >= 0, got " + std::to_string(reorth_every));
  std::set<std::string> seen;
  for (const ag::Parameter<T>& p : params_) {
    if (!p.var.defined()) throw ValueError("optimizer: parameter '" + p.name + "' has no tensor");
    if (!seen.insert(p.name).second) throw ValueError("optimizer: parameter name '" + p.name + "' appears twice");
    if (p.on_manifold()) {
      if (!p.group) throw ValueError("optimizer: manifold parameter '" + p.name + "' has no group");
      const Shape& s = p.var.shape();
      const int64_t n = matrix_side(*p.group);
      if (s.ndim < 2 || s.rows() != n || s.cols() != n)
        throw ShapeError("optimizer: manifold parameter '" + p.name + "' has shape " + s.str() + ", expected (V," +
                         std::to_string(n) + "," + std::to_string(n) + ") group elements");
    }
    Slot slot;
    for (size_t b = 0; b < buffer_names_.size(); ++b) slot.buf.emplace_back(update_shape(p));
    slots_.push_back(std::move(slot));
  }
}

template <class T>
void Optimizer<T>::step(double lr) {
  if (!(std::isfinite(lr) && lr >= 0))
    throw ValueError(name() + ": learning rate must be finite and >= 0, got " + number_for_message(lr));
  ++step_;
  for (size_t i = 0; i < params_.size(); ++i) {
    ag::Parameter<T>& p = params_[i];
    if (!p.var.has_grad() || p.role == ag::ParamRole::GroupBase) continue;
    Array<T>& w = p.var.value();
    const Array<T>& grad = p.var.grad();
    require_same_shape(("optimizer step of '" + p.name + "'").c_str(), w.shape(), grad.shape());
    if (p.on_manifold()) {
      const Array<T> g = riemannian_grad_coords(*p.group, w, grad);  // (V,m)
      scratch_.assign(static_cast<size_t>(g.size()), 0.0);
      direction(slots_[i], g.data(), nullptr, false, g.size(), scratch_.data());
      Array<T> u(g.shape());
      for (int64_t k = 0; k < u.size(); ++k) u[k] = static_cast<T>(-lr * scratch_[static_cast<size_t>(k)]);
      retract_exp(*p.group, w, u);
    } else {
      scratch_.assign(static_cast<size_t>(w.size()), 0.0);
      direction(slots_[i], grad.data(), w.data(), p.decays(), w.size(), scratch_.data());
      for (int64_t k = 0; k < w.size(); ++k)
        w[k] = static_cast<T>(static_cast<double>(w[k]) - lr * scratch_[static_cast<size_t>(k)]);
    }
  }
  if (reorth_every_ > 0 && step_ % reorth_every_ == 0) reorthonormalise();
}

template <class T>
void Optimizer<T>::zero_grad() {
  for (ag::Parameter<T>& p : params_) p.var.zero_grad();
}

template <class T>
void Optimizer<T>::reorthonormalise() {
  for (ag::Parameter<T>& p : params_)
    if (p.on_manifold()) polar_reorthonormalise(p.var.value());
}

template <class T>
nlohmann::json Optimizer<T>::state_to_json() const {
  nlohmann::json ps = nlohmann::json::object();
  for (size_t i = 0; i < params_.size(); ++i) {
    nlohmann::json e = {{"t", slots_[i].t}};
    for (size_t b = 0; b < buffer_names_.size(); ++b) e[buffer_names_[b]] = array_to_json(slots_[i].buf[b], "data");
    ps[params_[i].name] = std::move(e);
  }
  return {{"optimizer", name()}, {"step", step_}, {"options", options_json()}, {"params", std::move(ps)}};
}

template <class T>
void Optimizer<T>::state_from_json(const nlohmann::json& j) {
  const std::string what = name() + " state";
  if (!j.is_object() || !j.contains("optimizer") || !j.contains("step") || !j.contains("params") ||
      !j.at("params").is_object())
    throw ValueError(what + ": expected an object with \"optimizer\", \"step\" and \"params\"");
  if (!j.at("optimizer").is_string() || j.at("optimizer").get<std::string>() != name())
    throw ValueError(what + ": the saved state is of optimizer " + j.at("optimizer").dump() + ", not \"" + name() +
                     "\"");
  if (!j.at("step").is_number_integer() || j.at("step").get<int64_t>() < 0)
    throw ValueError(what + ": bad step count " + j.at("step").dump());
  const nlohmann::json& ps = j.at("params");
  std::set<std::string> mine;
  std::vector<Slot> loaded;
  for (size_t i = 0; i < params_.size(); ++i) {
    const std::string& pn = params_[i].name;
    mine.insert(pn);
    const std::string where = what + " for parameter '" + pn + "'";
    if (!ps.contains(pn)) throw ValueError(what + ": no entry for parameter '" + pn + "'");
    const nlohmann::json& e = ps.at(pn);
    if (!e.is_object() || !e.contains("t") || !e.at("t").is_number_integer() || e.at("t").get<int64_t>() < 0)
      throw ValueError(where + ": missing or bad per-parameter step count \"t\"");
    Slot s;
    s.t = e.at("t").get<int64_t>();
    for (size_t b = 0; b < buffer_names_.size(); ++b) {
      if (!e.contains(buffer_names_[b])) throw ValueError(where + ": no buffer " + buffer_names_[b]);
      s.buf.push_back(
          buffer_from_json<T>(e.at(buffer_names_[b]), slots_[i].buf[b].shape(), where + ", buffer " + buffer_names_[b]));
    }
    loaded.push_back(std::move(s));
  }
  for (const auto& kv : ps.items())
    if (!mine.count(kv.key()))
      throw ValueError(what + ": saved parameter '" + kv.key() + "' is not a parameter of this model");
  slots_ = std::move(loaded);
  step_ = j.at("step").get<int64_t>();
}

// ---------------------------------------------------------------- SGD

namespace {
void check_nonneg(const char* key, double v) {
  if (!(std::isfinite(v) && v >= 0))
    throw ValueError(std::string("optimizer option ") + key + " must be finite and >= 0, got " + number_for_message(v));
}
void check_beta(const char* key, double v) {
  if (!(v >= 0 && v < 1))
    throw ValueError(std::string("optimizer option ") + key + " must be in [0, 1), got " + number_for_message(v));
}
}  // namespace

template <class T>
SGD<T>::SGD(std::vector<ag::Parameter<T>> params, const SgdOptions& opt)
    : Optimizer<T>(std::move(params),
                   opt.momentum > 0 ? std::vector<std::string>{"momentum_buffer"} : std::vector<std::string>{},
                   opt.reorth_every),
      opt_(opt) {
  check_nonneg("momentum", opt.momentum);
  check_nonneg("weight_decay", opt.weight_decay);
  if (opt.nesterov && !(opt.momentum > 0))
    throw ValueError("optimizer option nesterov = true needs momentum > 0, got momentum = " + number_for_message(opt.momentum));
}

template <class T>
nlohmann::json SGD<T>::options_json() const {
  return {{"momentum", opt_.momentum},
          {"nesterov", opt_.nesterov},
          {"weight_decay", opt_.weight_decay},
          {"reorth_every", opt_.reorth_every}};
}

template <class T>
void SGD<T>::direction(typename Optimizer<T>::Slot& s, const T* g, const T* w, bool decays, int64_t n, double* d) {
  ++s.t;
  const double wd = (decays && w) ? opt_.weight_decay : 0.0;
  const double mu = opt_.momentum;
  for (int64_t k = 0; k < n; ++k) {
    double gk = static_cast<double>(g[k]);
    if (wd > 0) gk += wd * static_cast<double>(w[k]);
    if (mu > 0) {
      T& b = s.buf[0][k];  // starts at 0, so the first step sets b = g (as PyTorch does)
      b = static_cast<T>(mu * static_cast<double>(b) + gk);
      d[k] = opt_.nesterov ? gk + mu * static_cast<double>(b) : static_cast<double>(b);
    } else {
      d[k] = gk;
    }
  }
}

// ---------------------------------------------------------------- Adam / AdamW

template <class T>
Adam<T>::Adam(std::vector<ag::Parameter<T>> params, const AdamOptions& opt) : Adam(std::move(params), opt, false) {}

template <class T>
Adam<T>::Adam(std::vector<ag::Parameter<T>> params, const AdamOptions& opt, bool decoupled)
    : Optimizer<T>(std::move(params),
                   opt.coordinate_bias_correction ? std::vector<std::string>{"exp_avg", "exp_avg_sq", "steps"}
                                                  : std::vector<std::string>{"exp_avg", "exp_avg_sq"},
                   opt.reorth_every),
      opt_(opt),
      decoupled_(decoupled) {
  check_beta("beta1", opt.beta1);
  check_beta("beta2", opt.beta2);
  if (!(std::isfinite(opt.eps) && opt.eps > 0))
    throw ValueError("optimizer option eps must be finite and > 0, got " + number_for_message(opt.eps));
  check_nonneg("weight_decay", opt.weight_decay);
}

template <class T>
nlohmann::json Adam<T>::options_json() const {
  return {{"beta1", opt_.beta1},
          {"beta2", opt_.beta2},
          {"eps", opt_.eps},
          {"weight_decay", opt_.weight_decay},
          {"reorth_every", opt_.reorth_every},
          {"bias_correction", opt_.coordinate_bias_correction ? "coordinate" : "parameter"}};
}

template <class T>
void Adam<T>::direction(typename Optimizer<T>::Slot& s, const T* g, const T* w, bool decays, int64_t n, double* d) {
  ++s.t;
  const double b1 = opt_.beta1, b2 = opt_.beta2, eps = opt_.eps;
  const double bc1 = 1.0 - std::pow(b1, static_cast<double>(s.t));
  const double bc2 = 1.0 - std::pow(b2, static_cast<double>(s.t));
  const double wd = (decays && w) ? opt_.weight_decay : 0.0;
  T* m = s.buf[0].data();
  T* v = s.buf[1].data();
  // One loop per form of the decay, each in SIMD: with the branches inside, GCC kept the
  // loop scalar (one vsqrtsd and three vdivsd per element, `objdump`), and this loop was
  // 3-4% of a transformer step, all of it in the serial part (per-thread `perf` samples,
  // 2026-12-05). The same operations per element in the same order.
  auto run = [&](auto l2, auto decoupled) {
#pragma omp simd
    for (int64_t k = 0; k < n; ++k) {
      double gk = static_cast<double>(g[k]);
      if constexpr (decltype(l2)::value) gk += wd * static_cast<double>(w[k]);  // L2 penalty (plain Adam)
      const double mk = b1 * static_cast<double>(m[k]) + (1.0 - b1) * gk;
      const double vk = b2 * static_cast<double>(v[k]) + (1.0 - b2) * gk * gk;
      m[k] = static_cast<T>(mk);
      v[k] = static_cast<T>(vk);
      double dk = (mk / bc1) / (std::sqrt(vk / bc2) + eps);
      if constexpr (decltype(decoupled)::value) dk += wd * static_cast<double>(w[k]);  // Loshchilov & Hutter 2019
      d[k] = dk;
    }
  };
  if (opt_.coordinate_bias_correction) {
    // Each coordinate's own count k: 0 until its first non-zero gradient, then one more
    // every step (the moments of a coordinate that has started decay as in Algorithm 1).
    // The corrections depend on the count only, and a row's coordinates start together,
    // so neighbours mostly share it: std::pow runs when the count changes.
    T* steps = s.buf[2].data();
    double last_count = -1.0, bc1k = 1.0, bc2k = 1.0;
    for (int64_t k = 0; k < n; ++k) {
      double gk = static_cast<double>(g[k]);
      if (wd > 0 && !decoupled_) gk += wd * static_cast<double>(w[k]);
      double dk = 0.0;
      if (steps[k] > 0 || gk != 0.0) {
        const double count = static_cast<double>(steps[k]) + 1.0;  // exact in float to 2^24 steps
        steps[k] = static_cast<T>(count);
        const double mk = b1 * static_cast<double>(m[k]) + (1.0 - b1) * gk;
        const double vk = b2 * static_cast<double>(v[k]) + (1.0 - b2) * gk * gk;
        m[k] = static_cast<T>(mk);
        v[k] = static_cast<T>(vk);
        if (count != last_count) {
          bc1k = 1.0 - std::pow(b1, count);
          bc2k = 1.0 - std::pow(b2, count);
          last_count = count;
        }
        dk = (mk / bc1k) / (std::sqrt(vk / bc2k) + eps);
      }
      if (wd > 0 && decoupled_) dk += wd * static_cast<double>(w[k]);
      d[k] = dk;
    }
  } else if (wd > 0 && !decoupled_)
    run(std::true_type{}, std::false_type{});
  else if (wd > 0)
    run(std::false_type{}, std::true_type{});
  else
    run(std::false_type{}, std::false_type{});
}

// ---------------------------------------------------------------- factory

std::vector<std::string> optimizer_names() { return {"sgd", "adam", "adamw"}; }

namespace {

AdamOptions read_adam(ConfigReader& o, double default_wd) {
  AdamOptions a;
  a.beta1 = o.get_double("beta1", a.beta1);
  a.beta2 = o.get_double("beta2", a.beta2);
  o.allow({"betas"});
  if (o.has("betas")) {
    const nlohmann::json& b = o.json().at("betas");
    if (!b.is_array() || b.size() != 2 || !b[0].is_number() || !b[1].is_number())
      throw ValueError("optimizer option betas must be [beta1, beta2], got " + b.dump());
    a.beta1 = b[0].get<double>();
    a.beta2 = b[1].get<double>();
  }
  a.eps = o.get_double("eps", a.eps);
  a.weight_decay = o.get_double("weight_decay", default_wd);
  a.reorth_every = o.get_int("reorth_every", 0);
  a.coordinate_bias_correction =
      o.get_string("bias_correction", "parameter", {"parameter", "coordinate"}) == "coordinate";
  return a;
}

}  // namespace

template <class T>
std::unique_ptr<Optimizer<T>> make_optimizer(const std::string& name, std::vector<ag::Parameter<T>> params,
                                             const nlohmann::json& options) {
  ConfigReader o(options, "optimizer " + name);  // not an object: ConfigError
  if (name != "sgd" && name != "adam" && name != "adamw") {
    std::string known;
    for (const std::string& n : optimizer_names()) known += (known.empty() ? "" : ", ") + n;
    throw ValueError("unknown optimizer '" + name + "'; known optimizers: " + known);
  }
  SgdOptions s;
  AdamOptions a;
  try {
    if (name == "sgd") {
      s.momentum = o.get_double("momentum", s.momentum);
      s.nesterov = o.get_bool("nesterov", s.nesterov);
      s.weight_decay = o.get_double("weight_decay", s.weight_decay);
      s.reorth_every = o.get_int("reorth_every", s.reorth_every);
    } else {
      a = read_adam(o, name == "adamw" ? 0.01 : 0.0);
    }
  } catch (const ConfigError& e) {
    throw ValueError(e.what());  // a mistyped value is a ValueError, as for out-of-range ones (optimizer.hpp)
  }
  o.finish();  // an unknown key: ConfigError naming it
  if (name == "sgd") return std::make_unique<SGD<T>>(std::move(params), s);
  if (name == "adam") return std::make_unique<Adam<T>>(std::move(params), a);
  return std::make_unique<AdamW<T>>(std::move(params), a);
}

template class Optimizer<float>;
template class Optimizer<double>;
template class SGD<float>;
template class SGD<double>;
template class Adam<float>;
template class Adam<double>;
template std::unique_ptr<Optimizer<float>> make_optimizer(const std::string&, std::vector<ag::Parameter<float>>,
                                                          const nlohmann::json&);
template std::unique_ptr<Optimizer<double>> make_optimizer(const std::string&, std::vector<ag::Parameter<double>>,
                                                           const nlohmann::json&);

}  // namespace liegrad::optim
