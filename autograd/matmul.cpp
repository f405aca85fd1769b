// matmul and transpose: kernels and tape wrappers.
//
// With C = op(A) op(B) and upstream gradient G = dL/dC (Giles 2008, "An extended
// collection of matrix derivative results"):
//   dL/dop(A) = G op(B)^T,  dL/dop(B) = op(A)^T G,
// and a transposed operand receives the transpose of that, which we fold into the
// gemm flags instead of materialising transposes.
#include "autograd/matmul.hpp"

#include "autograd/tape.hpp"
#include "core/linalg.hpp"
#include "core/parallel.hpp"

namespace liegrad::ag {

namespace {

struct MatmulDims {
  int64_t batch, M, N, K;
  bool shared_b;  // (B,M,K) @ (K,N)
};

MatmulDims matmul_dims(const Shape& a, const Shape& b, bool ta, bool tb) {
  auto fail = [&](const std::string& why) {
    throw ShapeError("matmul: " + a.str() + (ta ? "^T" : "") + " @ " + b.str() + (tb ? "^T" : "") + ": " + why);
  };
  if (a.ndim < 2 || b.ndim < 2) fail("operands must be 2-D or 3-D");
  MatmulDims d{};
  d.M = ta ? a.cols() : a.rows();
  const int64_t Ka = ta ? a.rows() : a.cols();
  const int64_t Kb = tb ? b.cols() : b.rows();
  d.N = tb ? b.rows() : b.cols();
  d.K = Ka;
  if (Ka != Kb) fail("inner sizes " + std::to_string(Ka) + " != " + std::to_string(Kb));
  if (a.ndim == 2 && b.ndim == 2) {
    d.batch = 1;
    d.shared_b = false;
  } else if (a.ndim == 3 && b.ndim == 3) {
    if (a[0] != b[0]) fail("batch sizes differ");
    d.batch = a[0];
    d.shared_b = false;
  } else if (a.ndim == 3 && b.ndim == 2) {
    d.batch = a[0];
    d.shared_b = true;
  } else {
    fail("a 2-D left operand with a 3-D right operand is not supported");
  }
  return d;
}

Shape out_shape(const Shape& a, const MatmulDims& d) {
  return a.ndim == 2 ? Shape{d.M, d.N} : Shape{d.batch, d.M, d.N};
}

}  // namespace

template <class T>
void matmul_forward(Array<T>& out, const Array<T>& a, const Array<T>& b, bool ta, bool tb) {
  const MatmulDims d = matmul_dims(a.shape(), b.shape(), ta, tb);
  if (out.shape() != out_shape(a.shape(), d)) out = Array<T>(out_shape(a.shape(), d));
  if (d.shared_b && !ta) {
    // (B*M, K) @ op(b): one large gemm.
    gemm(false, tb, d.batch * d.M, d.N, d.K, T(1), a.data(), d.K, b.data(), tb ? d.K : d.N, T(0), out.data(), d.N);
  } else {
    batched_gemm(d.batch, ta, tb, d.M, d.N, d.K, T(1), a.data(), d.M * d.K, b.data(), d.shared_b ? 0 : d.K * d.N,
                 T(0), out.data(), d.M * d.N);
  }
}

template <class T>
void matmul_backward(Array<T>* da, Array<T>* db, const Array<T>& g, const Array<T>& a, const Array<T>& b, bool ta,
                     bool tb) {
  const MatmulDims d = matmul_dims(a.shape(), b.shape(), ta, tb);
  const int64_t sa = d.M * d.K, sb = d.shared_b ? 0 : d.K * d.N, sg = d.M * d.N;
  if (da) {
    // op(A) grad = G op(B)^T; A stored as (M,K) if !ta else (K,M).
    if (!ta)
      batched_gemm(d.batch, false, !tb, d.M, d.K, d.N, T(1), g.data(), sg, b.data(), sb, T(1), da->data(), sa);
    else  // dA (K,M) = op(B) G^T
      batched_gemm(d.batch, tb, true, d.K, d.M, d.N, T(1), b.data(), sb, g.data(), sg, T(1), da->data(), sa);
  }
  if (db) {
    if (d.shared_b) {
      // Sum over the batch: db += sum_b op(A_b)^T G_b. For !ta this is one gemm over B*M rows.
      if (!ta) {
        if (!tb)
          gemm(true, false, d.K, d.N, d.batch * d.M, T(1), a.data(), d.K, g.data(), d.N, T(1), db->data(), d.N);
        else
          gemm(true, false, d.N, d.K, d.batch * d.M, T(1), g.data(), d.N, a.data(), d.K, T(1), db->data(), d.K);
      } else {
        for (int64_t bi = 0; bi < d.batch; ++bi) {
          const T* ab = a.data() + bi * sa;
          const T* gb = g.data() + bi * sg;
          if (!tb)  // db (K,N) += A_b (K,M) G_b (M,N)
            gemm(false, false, d.K, d.N, d.M, T(1), ab, d.M, gb, d.N, T(1), db->data(), d.N);
          else  // db (N,K) += G_b^T (N,M) A_b^T (M,K)
            gemm(true, true, d.N, d.K, d.M, T(1), gb, d.N, ab, d.M, T(1), db->data(), d.K);
        }
      }
    } else if (!tb) {  // dB (K,N) = op(A)^T G
      batched_gemm(d.batch, !ta, false, d.K, d.N, d.M, T(1), a.data(), sa, g.data(), sg, T(1), db->data(), d.K * d.N);
    } else {  // dB (N,K) = G^T op(A)
      batched_gemm(d.batch, true, ta, d.N, d.K, d.M, T(1), g.data(), sg, a.data(), sa, T(1), db->data(), d.K * d.N);
    }
  }
}

template <class T>
Var<T> matmul(const Var<T>& a, const Var<T>& b, bool ta, bool tb) {
  Array<T> out;
  matmul_forward(out, a.value(), b.value(), ta, tb);
  return record_op<T>(std::move(out), {&a, &b}, [a, b, ta, tb](const Array<T>& g) {
    matmul_backward(a.requires_grad() ? &a.node()->grad_ref() : nullptr,
                    b.requires_grad() ? &b.node()->grad_ref() : nullptr, g, a.value(), b.value(), ta, tb);
  });
}

namespace {
// out[b, j, i] = x[b, i, j] (+= when accumulate).
template <class T>
void transpose_kernel(const Array<T>& x, T* out, bool accumulate) {
  const int64_t B = x.shape().batch(), R = x.shape().rows(), C = x.shape().cols();
  const T* px = x.data();
  parallel_for(B, grain_for(R * C), [&](int64_t b) {
    const T* xb = px + b * R * C;
    T* ob = out + b * R * C;
    for (int64_t i = 0; i < R; ++i)
      for (int64_t j = 0; j < C; ++j) {
        if (accumulate)
          ob[j * R + i] += xb[i * C + j];
        else
          ob[j * R + i] = xb[i * C + j];
      }
  });
}
}  // namespace

template <class T>
Var<T> transpose(const Var<T>& x) {
  require_ndim("transpose", x.shape(), 2, 3);
  const Shape& s = x.shape();
  Array<T> out(s.ndim == 2 ? Shape{s[1], s[0]} : Shape{s[0], s[2], s[1]});
  transpose_kernel(x.value(), out.data(), false);
  return record_op<T>(std::move(out), {&x}, [x](const Array<T>& g) {
    transpose_kernel(g, x.node()->grad_ref().data(), true);
  });
}

#define LIEGRAD_INSTANTIATE(T)                                                                                 \
  template Var<T> matmul(const Var<T>&, const Var<T>&, bool, bool);                                            \
  template Var<T> transpose(const Var<T>&);                                                                    \
  template void matmul_forward(Array<T>&, const Array<T>&, const Array<T>&, bool, bool);                      \
  template void matmul_backward(Array<T>*, Array<T>*, const Array<T>&, const Array<T>&, const Array<T>&, bool, \
                                bool);
LIEGRAD_INSTANTIATE(float)
LIEGRAD_INSTANTIATE(double)
#undef LIEGRAD_INSTANTIATE

}  // namespace liegrad::ag
