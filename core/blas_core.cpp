// OpenBLAS's chosen core against the CPU (core/blas_core.hpp). Core names are those of
// OpenBLAS's driver/others/dynamic.c (gotoblas_corename); the AVX2 and AVX-512 lists
// are the cores whose sgemm kernels use those instructions.
#include "core/blas_core.hpp"

#include <cblas.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <string_view>

namespace liegrad {

VectorIsa openblas_core_isa(const std::string& core_name) {
  std::string lower(core_name);
  std::transform(lower.begin(), lower.end(), lower.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  constexpr std::array<std::string_view, 3> avx512 = {"skylakex", "cooperlake", "sapphirerapids"};
  constexpr std::array<std::string_view, 4> avx2 = {"haswell", "zen", "excavator", "steamroller"};
  if (std::find(avx512.begin(), avx512.end(), lower) != avx512.end()) return VectorIsa::Avx512;
  if (std::find(avx2.begin(), avx2.end(), lower) != avx2.end()) return VectorIsa::Avx2;
  return VectorIsa::Older;
}

VectorIsa cpu_vector_isa() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512dq") &&
      __builtin_cpu_supports("avx512vl"))
    return VectorIsa::Avx512;
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) return VectorIsa::Avx2;
#endif
  return VectorIsa::Older;
}

std::string BlasCore::suggested_coretype() const {
  if (!below_cpu()) return "";
  return cpu_isa == VectorIsa::Avx512 ? "SKYLAKEX" : "HASWELL";
}

const BlasCore& openblas_core() {
  static const BlasCore core = [] {
    const char* name = openblas_get_corename();
    BlasCore c;
    c.name = name ? name : "unknown";
    c.core_isa = openblas_core_isa(c.name);
    c.cpu_isa = cpu_vector_isa();
    return c;
  }();
  return core;
}

}  // namespace liegrad
