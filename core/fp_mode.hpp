// FlushSubnormals: while in scope, the calling thread's float arithmetic flushes
// subnormal results to zero and reads subnormal inputs as zero (x86 MXCSR bits FTZ
// and DAZ, Intel SDM vol. 1 §10.2.3), then the previous mode comes back. A no-op when
// off or without SSE. Per thread: an OpenMP region sets it in each thread's body.
//
// Why: subnormal floats cost a microcode assist per instruction that produces or
// reads one. The attention kernels of trained OSM models make them (probabilities of
// e^-90 times small gradients): 2.3% of a trained osmformer-linear step. Values below
// 1.2e-38 next to probabilities that sum to one change nothing a float sum can hold.
#pragma once

#if defined(__SSE__) || defined(__x86_64__)
#include <xmmintrin.h>
#define LIEGRAD_HAS_MXCSR 1
#else
#define LIEGRAD_HAS_MXCSR 0
#endif

namespace liegrad {

class FlushSubnormals {
 public:
  explicit FlushSubnormals(bool on = true) : on_(on && LIEGRAD_HAS_MXCSR) {
#if LIEGRAD_HAS_MXCSR
    if (on_) {
      saved_ = _mm_getcsr();
      _mm_setcsr(saved_ | kFtz | kDaz);
    }
#endif
  }
  ~FlushSubnormals() {
#if LIEGRAD_HAS_MXCSR
    if (on_) _mm_setcsr(saved_);
#endif
  }
  FlushSubnormals(const FlushSubnormals&) = delete;
  FlushSubnormals& operator=(const FlushSubnormals&) = delete;

 private:
  static constexpr unsigned kFtz = 0x8000, kDaz = 0x0040;
  bool on_;
  unsigned saved_ = 0;
};

}  // namespace liegrad
