// Tape storage per thread, the grad-mode flag, and the reverse sweep.
#include "autograd/tape.hpp"

namespace liegrad::ag {

namespace {
thread_local bool t_grad_enabled = true;
}

bool grad_enabled() { return t_grad_enabled; }
void set_grad_enabled(bool on) { t_grad_enabled = on; }

template <class T>
Tape<T>& Tape<T>::current() {
  thread_local Tape<T> tape;
  return tape;
}

template <class T>
void Tape<T>::backward(const Var<T>& loss) {
  if (loss.size() != 1)
    throw ShapeError("backward: the loss must have exactly one element, got shape " + loss.shape().str() +
                     " (pass an explicit seed for non-scalar outputs)");
  backward(loss, Array<T>(loss.shape(), T(1)));
}

template <class T>
void Tape<T>::backward(const Var<T>& output, const Array<T>& seed) {
  require_same_shape("backward seed", output.shape(), seed.shape());
  if (!output.requires_grad()) {
    steps_.clear();
    throw ValueError("backward: the output does not depend on any Var that requires a gradient");
  }
  Array<T>& g = output.node()->grad_ref();
  for (int64_t i = 0; i < g.size(); ++i) g[i] += seed[i];
  // Plain reverse loop: no recursion, whatever the depth of the graph.
  for (size_t i = steps_.size(); i-- > 0;) {
    steps_[i]();
    steps_[i] = nullptr;  // release captured intermediates as we go
  }
  steps_.clear();
}

template class Tape<float>;
template class Tape<double>;

}  // namespace liegrad::ag
