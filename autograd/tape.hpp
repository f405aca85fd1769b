// The tape: an explicit list of backward steps in execution order. Each op that
// produces a Var needing gradients appends one step (a closure that reads the
// output's gradient and accumulates into its inputs' gradients with +=, so fan-out
// sums). backward() seeds the loss gradient and runs the steps in reverse in a plain
// loop, with no recursion, so a 100,000-step chain cannot overflow the stack.
//
// There is one tape per thread and scalar type (Tape<T>::current()). NoGrad turns
// recording off for evaluation and sampling.
#pragma once
#include <functional>
#include <vector>

#include "autograd/var.hpp"
#include "core/profile.hpp"

namespace liegrad::ag {

// Recording is on unless a NoGrad guard is alive on this thread.
bool grad_enabled();
void set_grad_enabled(bool on);

class NoGrad {
 public:
  NoGrad() : prev_(grad_enabled()) { set_grad_enabled(false); }
  ~NoGrad() { set_grad_enabled(prev_); }
  NoGrad(const NoGrad&) = delete;
  NoGrad& operator=(const NoGrad&) = delete;

 private:
  bool prev_;
};

template <class T>
class Tape {
 public:
  static Tape& current();

  void record(std::function<void()> step) { steps_.push_back(std::move(step)); }
  size_t size() const { return steps_.size(); }
  // Drops every recorded step (and the intermediate values they keep alive).
  void clear() { steps_.clear(); }

  // Seeds d(loss)/d(loss) = 1 (loss must have one element), runs every step in
  // reverse, then clears the tape. Leaf gradients accumulate into existing ones.
  void backward(const Var<T>& loss);
  // Same with an explicit output cotangent of the loss's shape.
  void backward(const Var<T>& output, const Array<T>& seed);

 private:
  std::vector<std::function<void()>> steps_;
};

// Shorthand for Tape<T>::current().backward(loss).
template <class T>
void backward(const Var<T>& loss) {
  Tape<T>::current().backward(loss);
}

// Used by op wrappers: wraps `value` in a result Var and, when recording is on and
// some input requires a gradient, records `step(out_grad)` on the tape. The step
// is only called when a gradient reached the output. With profiling on, the step is
// timed under the prof::Tag family active when the op was recorded.
template <class T, class Step>
Var<T> record_op(Array<T> value, std::initializer_list<const Var<T>*> inputs, Step&& step) {
  bool needs = false;
  if (grad_enabled())
    for (const Var<T>* v : inputs) needs = needs || v->requires_grad();
  Var<T> out(std::move(value), needs);
  if (needs) {
    out.node()->is_leaf = false;
    std::shared_ptr<Node<T>> node = out.node_ptr();
    Tape<T>::current().record([node, s = std::forward<Step>(step), tag = prof::current_tag()]() mutable {
      if (node->grad.empty()) return;  // nothing flowed into this output
      prof::Scope timed(tag);          // the family tagged when the op ran (bench timing)
      s(static_cast<const Array<T>&>(node->grad));
      node->grad = Array<T>();  // intermediate gradients are freed once used
    });
  }
  return out;
}

}  // namespace liegrad::ag
