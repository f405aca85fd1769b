// Var: the handle autograd works with. A Var is a shared pointer to a Node that
// holds a value, its gradient and whether gradients flow into it. Copying a Var is
// cheap and aliases: both copies see the same value and gradient (like a
// torch.Tensor). Parameters are leaf Vars with requires_grad set; every op result
// is a new Var whose backward step sits on the tape (autograd/tape.hpp).
#pragma once
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "core/array.hpp"
#include "core/parallel.hpp"

namespace liegrad::ag {

template <class T>
struct Node {
  Array<T> value;
  Array<T> grad;  // empty until a gradient first flows in
  bool requires_grad = false;
  bool is_leaf = true;

  // The gradient buffer, allocated as zeros of the value's shape on first use.
  Array<T>& grad_ref() {
    if (grad.empty() && !value.empty()) grad = Array<T>(value.shape());
    if (grad.shape() != value.shape()) grad = Array<T>(value.shape());
    return grad;
  }

  // The gradient buffer for a backward that writes every element of it: when no
  // gradient has flowed in yet, it is allocated without the zero fill and *fresh is set,
  // and the backward must assign its first contribution instead of adding it.
  Array<T>& grad_for_write(bool* fresh) {
    *fresh = grad.empty() || grad.shape() != value.shape();
    if (*fresh) grad = Array<T>::uninitialized(value.shape());
    return grad;
  }
};

template <class T>
class Var {
 public:
  Var() = default;
  explicit Var(Array<T> value, bool requires_grad = false) : node_(std::make_shared<Node<T>>()) {
    node_->value = std::move(value);
    node_->requires_grad = requires_grad;
  }
  // A trainable leaf (requires_grad = true).
  static Var parameter(Array<T> value) { return Var(std::move(value), true); }
  static Var constant(Array<T> value) { return Var(std::move(value), false); }

  bool defined() const { return node_ != nullptr; }
  const Array<T>& value() const { return node_->value; }
  Array<T>& value() { return node_->value; }  // optimizers update parameters in place
  const Shape& shape() const { return node_->value.shape(); }
  int64_t size() const { return node_->value.size(); }
  bool requires_grad() const { return node_ && node_->requires_grad; }
  void set_requires_grad(bool r) { node_->requires_grad = r; }

  // The gradient; empty (size 0) when no gradient has flowed in since zero_grad.
  const Array<T>& grad() const { return node_->grad; }
  Array<T>& grad() { return node_->grad; }
  bool has_grad() const { return !node_->grad.empty(); }
  void zero_grad() { node_->grad = Array<T>(); }

  Node<T>* node() const { return node_.get(); }
  const std::shared_ptr<Node<T>>& node_ptr() const { return node_; }
  bool same(const Var& o) const { return node_ == o.node_; }

 private:
  std::shared_ptr<Node<T>> node_;
};

// A gradient buffer for a backward that writes every element, and whether it is new:
// p is null when the Var takes no gradient; when fresh, the first contribution must be
// assigned (the buffer holds garbage), otherwise added.
template <class T>
struct GradOut {
  T* p = nullptr;
  bool fresh = false;
};

// The gradients of an op's two inputs a and b, each written whole by the backward.
// When a and b are one Var their two contributions must add, so both point into one
// zeroed buffer (never fresh); otherwise each is Node::grad_for_write's.
template <class T>
std::pair<GradOut<T>, GradOut<T>> grads_for_write(const Var<T>& a, const Var<T>& b) {
  GradOut<T> da, db;
  const bool alias = a.same(b);
  auto one = [alias](const Var<T>& v, GradOut<T>& d) {
    if (v.requires_grad()) d.p = alias ? v.node()->grad_ref().data() : v.node()->grad_for_write(&d.fresh).data();
  };
  one(a, da);
  one(b, db);
  return {da, db};
}

// The same for any number of inputs: a Var that is also another of the list points
// into one zeroed buffer (never fresh), so every contribution adds.
template <class T>
std::vector<GradOut<T>> grads_for_write(const std::vector<const Var<T>*>& vars) {
  std::vector<GradOut<T>> out(vars.size());
  for (size_t i = 0; i < vars.size(); ++i) {
    const Var<T>& v = *vars[i];
    if (!v.defined() || !v.requires_grad()) continue;
    bool alias = false;
    for (size_t j = 0; j < vars.size(); ++j) alias = alias || (j != i && vars[j]->defined() && v.same(*vars[j]));
    out[i].p = alias ? v.node()->grad_ref().data() : v.node()->grad_for_write(&out[i].fresh).data();
  }
  return out;
}

// d[i] = f(i) when the gradient buffer d is fresh (Node::grad_for_write: unwritten),
// d[i] += f(i) otherwise; over n elements, in parallel when n is large
// (kMinParallelWork per thread).
template <class T, class F>
void store_grad(T* d, bool fresh, int64_t n, F f) {
  if (fresh)
    parallel_for(n, kMinParallelWork, [&](int64_t i) { d[i] = f(i); });
  else
    parallel_for(n, kMinParallelWork, [&](int64_t i) { d[i] += f(i); });
}

using Varf = Var<float>;
using Vard = Var<double>;

}  // namespace liegrad::ag
