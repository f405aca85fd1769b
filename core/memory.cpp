// Process-wide allocator policy, set once when liegrad_core is loaded.
//
// A training step allocates and frees the same few dozen arrays of 1-30 MB every
// step (activations, gradients, saved intermediates). glibc's defaults hand such
// blocks back to the kernel on free (mmap'd chunks, or heap trimming above 128 KB of
// free top), so the next step takes a page fault and a kernel page clear for every
// 4 KB again: a third of the run time of a small model in a profile. Here, blocks of
// up to 32 MB (glibc's largest mmap threshold) come from the heap and freed memory is
// kept for reuse. Peak resident memory is unchanged in kind (the same arrays are live
// at the peak); only the return of memory between steps is given up.
#include <malloc.h>

namespace liegrad {
namespace {

bool configure_allocator() {
#if defined(__GLIBC__)
  mallopt(M_MMAP_THRESHOLD, 32 << 20);
  mallopt(M_TRIM_THRESHOLD, 1 << 30);
  mallopt(M_TOP_PAD, 16 << 20);
#endif
  return true;
}

[[maybe_unused]] const bool g_configured = configure_allocator();

}  // namespace
}  // namespace liegrad
