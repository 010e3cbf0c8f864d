// Subnormal floats read and written as zero while kiln computes on the CPU, as TensorFlow does
// (its executor flushes denormals around every CPU kernel, its thread pools for good): the
// results match TF's where values are tiny (a 1e-40 input is 0 to TF, so `x > 0` is false),
// and arithmetic on subnormals, tens of times slower on x86, never happens.
#pragma once

#if defined(__x86_64__) || defined(__i386__)
#include <xmmintrin.h>
#endif

namespace kiln::exec {

// Sets flush-to-zero and denormals-are-zero on the calling thread (x86: MXCSR's FTZ and DAZ;
// AArch64: FPCR's FZ) and puts the previous mode back when it goes. Threads a thread creates
// while it holds one start with the same mode.
class ScopedFlushDenormals {
 public:
  ScopedFlushDenormals() {
#if defined(__x86_64__) || defined(__i386__)
    saved_ = _mm_getcsr();
    _mm_setcsr(saved_ | kFtz | kDaz);
#elif defined(__aarch64__)
    __asm__ volatile("mrs %0, fpcr" : "=r"(saved_));
    __asm__ volatile("msr fpcr, %0" : : "r"(saved_ | kFz));
#endif
  }
  ~ScopedFlushDenormals() {
#if defined(__x86_64__) || defined(__i386__)
    _mm_setcsr(saved_);
#elif defined(__aarch64__)
    __asm__ volatile("msr fpcr, %0" : : "r"(saved_));
#endif
  }
  ScopedFlushDenormals(const ScopedFlushDenormals&) = delete;
  ScopedFlushDenormals& operator=(const ScopedFlushDenormals&) = delete;

 private:
#if defined(__x86_64__) || defined(__i386__)
  static constexpr unsigned kFtz = 0x8000, kDaz = 0x0040;
  unsigned saved_ = 0;
#elif defined(__aarch64__)
  static constexpr unsigned long kFz = 1UL << 24;
  unsigned long saved_ = 0;
#endif
};

}  // namespace kiln::exec
