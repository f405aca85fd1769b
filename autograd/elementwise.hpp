// Element-wise ops on the tape: binary arithmetic with broadcasting, and unary maps.
//
// Broadcasting (binary ops): the second operand b may have a's shape, be a scalar
// (one element, e.g. a 0-D scalar parameter), or be a row vector of a's last-axis
// size (shape (C) or (1,C)), added to every row of a. The gradient of a broadcast
// operand is the sum over the rows it was broadcast to.
#pragma once
#include "autograd/var.hpp"

namespace liegrad::ag {

template <class T> Var<T> add(const Var<T>& a, const Var<T>& b);
template <class T> Var<T> sub(const Var<T>& a, const Var<T>& b);
template <class T> Var<T> mul(const Var<T>& a, const Var<T>& b);
template <class T> Var<T> div(const Var<T>& a, const Var<T>& b);

template <class T> Var<T> neg(const Var<T>& x);
// c * x for a constant c (not differentiated).
template <class T> Var<T> scale(const Var<T>& x, T c);
// x + c for a constant c.
template <class T> Var<T> add_const(const Var<T>& x, T c);

template <class T> Var<T> exp(const Var<T>& x);
template <class T> Var<T> log(const Var<T>& x);
template <class T> Var<T> tanh(const Var<T>& x);
template <class T> Var<T> sigmoid(const Var<T>& x);
template <class T> Var<T> relu(const Var<T>& x);
// GELU with the exact Gaussian CDF, x * Phi(x) (torch.nn.GELU's default).
template <class T> Var<T> gelu(const Var<T>& x);
template <class T> Var<T> square(const Var<T>& x);

}  // namespace liegrad::ag
