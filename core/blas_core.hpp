// Which kernels OpenBLAS runs on this CPU, against what the CPU can do.
//
// Debian's OpenBLAS is built for many CPUs at once (DYNAMIC_ARCH) and picks its kernels
// when it loads, from the CPU's vendor, family and model. A CPU newer than the library
// falls back to an old core: OpenBLAS 0.3.21 (Debian 12) runs its SSE3 "Prescott" kernels
// on Intel family 6 model 207 (Emerald Rapids), whose 1024^3 sgemm then reaches about a
// third of what its AVX-512 "SkylakeX" kernels do on the same machine
// (docs/performance.md). The choice can only be changed before the library loads, with
// the environment variable OPENBLAS_CORETYPE (OpenBLAS's USAGE.md); the library never
// sets it (only the `liegrad` tool does, before OpenBLAS loads: apps/main.cpp). It reads the core OpenBLAS chose (openblas_get_corename), compares its
// vector width with the CPU's (__builtin_cpu_supports), and, when OpenBLAS is below the
// CPU, (1) runs every float product through its own kernel (core/linalg.cpp) and (2)
// names the OPENBLAS_CORETYPE that would match, for `liegrad bench --op gemm` and the
// benchmark scripts.
#pragma once
#include <string>

namespace liegrad {

// Vector ISA levels, in the order of the widest float FMA: none below AVX2, AVX2 + FMA,
// AVX-512 (F, BW, DQ and VL, what OpenBLAS's SkylakeX kernels use).
enum class VectorIsa { Older = 0, Avx2 = 1, Avx512 = 2 };

struct BlasCore {
  std::string name;        // openblas_get_corename(): "Prescott", "Haswell", "SkylakeX", ...
  VectorIsa core_isa;      // the widest ISA of that core's kernels
  VectorIsa cpu_isa;       // the widest ISA this CPU supports
  bool below_cpu() const { return core_isa < cpu_isa; }
  // The OPENBLAS_CORETYPE matching the CPU when OpenBLAS is below it, else "".
  std::string suggested_coretype() const;
};

// The ISA of an OpenBLAS core name (case-insensitive); unknown names count as Older.
VectorIsa openblas_core_isa(const std::string& core_name);
// This CPU's widest ISA.
VectorIsa cpu_vector_isa();
// What the loaded OpenBLAS runs, read once.
const BlasCore& openblas_core();

}  // namespace liegrad
