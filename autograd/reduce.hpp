// Reductions: sum and mean over all elements (to a 0-D scalar) or along one axis
// (the axis is removed: (B,T,C) summed over axis 1 gives (B,C)).
#pragma once
#include "autograd/var.hpp"

namespace liegrad::ag {

template <class T> Var<T> sum(const Var<T>& x);
template <class T> Var<T> mean(const Var<T>& x);
template <class T> Var<T> sum(const Var<T>& x, int axis);
template <class T> Var<T> mean(const Var<T>& x, int axis);

}  // namespace liegrad::ag
