// Gamma^T for the fused OSM kernels (kernels/relative_update, kernels/osm_scan): they
// mix rows of coordinates as u = r Gamma^T, one small product per block of rows.
#pragma once
#include "autograd/var.hpp"
#include "core/small_gemm.hpp"

namespace liegrad::kernels {

// Gamma (m,m) -> Gamma^T (m,m); an empty array for an undefined Gamma (identity mixing).
template <class T>
Array<T> gamma_transposed(const ag::Var<T>& Gamma) {
  if (!Gamma.defined()) return Array<T>();
  const int64_t m = Gamma.shape()[0];
  // Register tiles, not a strided scalar loop: at batch 1 (incremental decoding) this
  // transpose of m^2 numbers per layer and symbol was 40% of osmformer-linear's step.
  Array<T> out = Array<T>::uninitialized(Shape{m, m});
  transpose_ld<T>(m, m, Gamma.value().data(), m, out.data(), m);
  return out;
}

}  // namespace liegrad::kernels
