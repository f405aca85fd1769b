// Global-norm gradient clipping (see clip.hpp).
#include "optim/clip.hpp"

#include <cmath>

namespace liegrad::optim {

template <class T>
double grad_norm(const std::vector<ag::Parameter<T>>& params) {
  double ss = 0;
  for (const ag::Parameter<T>& p : params) {
    if (!p.var.defined() || !p.var.has_grad() || p.role == ag::ParamRole::GroupBase) continue;
    const Array<T>& g = p.var.grad();
    for (int64_t i = 0; i < g.size(); ++i) ss += static_cast<double>(g[i]) * static_cast<double>(g[i]);
  }
  return std::sqrt(ss);
}

template <class T>
double clip_grad_norm(const std::vector<ag::Parameter<T>>& params, double max_norm) {
  const double norm = grad_norm(params);
  const bool on = std::isfinite(max_norm) && max_norm > 0;
  if (!on || !std::isfinite(norm) || norm <= max_norm) return norm;
  const double factor = max_norm / norm;
  for (const ag::Parameter<T>& p : params) {
    if (!p.var.defined() || !p.var.has_grad() || p.role == ag::ParamRole::GroupBase) continue;
    ag::Var<T> v = p.var;  // an aliasing handle: scaling its gradient scales the model's
    Array<T>& g = v.grad();
    for (int64_t i = 0; i < g.size(); ++i) g[i] = static_cast<T>(static_cast<double>(g[i]) * factor);
  }
  return norm;
}

template double grad_norm(const std::vector<ag::Parameter<float>>&);
template double grad_norm(const std::vector<ag::Parameter<double>>&);
template double clip_grad_norm(const std::vector<ag::Parameter<float>>&, double);
template double clip_grad_norm(const std::vector<ag::Parameter<double>>&, double);

}  // namespace liegrad::optim
