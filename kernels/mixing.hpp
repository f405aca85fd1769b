// Gamma^T for the fused OSM kernels (kernels/relative_update, kernels/osm_scan): they
// mix rows of coordinates as u = r Gamma^T, one small product per block of rows.
#pragma once
#include "autograd/var.hpp"

namespace liegrad::kernels {

// Gamma (m,m) -> Gamma^T (m,m); an empty array for an undefined Gamma (identity mixing).
template <class T>
Array<T> gamma_transposed(const ag::Var<T>& Gamma) {
  if (!Gamma.defined()) return Array<T>();
  const int64_t m = Gamma.shape()[0];
  Array<T> out(Shape{m, m});
  const T* gm = Gamma.value().data();
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < m; ++j) out[j * m + i] = gm[i * m + j];
  return out;
}

}  // namespace liegrad::kernels
