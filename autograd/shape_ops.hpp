// Ops that rearrange elements without arithmetic: reshape, slice, concat.
#pragma once
#include <vector>

#include "autograd/var.hpp"

namespace liegrad::ag {

// Same elements under a new shape of equal count.
template <class T>
Var<T> reshape(const Var<T>& x, const Shape& shape);

// Elements [start, end) along `axis` (negative axes count from the end).
template <class T>
Var<T> slice(const Var<T>& x, int axis, int64_t start, int64_t end);

// Joins arrays along `axis`; all other sizes must agree.
template <class T>
Var<T> concat(const std::vector<Var<T>>& xs, int axis);

}  // namespace liegrad::ag
