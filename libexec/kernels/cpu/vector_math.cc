#include "kernels/cpu/vector_math.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <limits>

#include "kiln/exec/cpu_isa.h"

#if defined(__x86_64__)
#include <immintrin.h>
#endif

// The loops are compiled once per x86-64 level and chosen at run time by ActiveCpuIsa(): the
// widest vectors the machine has, unless the environment caps the ISA (KILN_MAX_CPU_ISA), so
// tests run the AVX2 and baseline copies on an AVX-512 machine too. (Our own table rather than
// target_clones, whose ifunc resolver cannot be capped.)
#if defined(__x86_64__) && !defined(KILN_NO_CPU_DISPATCH)
#define KILN_VMATH_LEVELS 1
#endif

namespace kiln::exec::vmath {

#define KILN_VMATH_TARGET
#define KILN_VMATH_VECTOR_BYTES 16
namespace baseline {
#include "kernels/cpu/vector_math_loops.inc"
}  // namespace baseline
#undef KILN_VMATH_TARGET
#undef KILN_VMATH_VECTOR_BYTES

#ifdef KILN_VMATH_LEVELS
#define KILN_VMATH_TARGET __attribute__((target("arch=x86-64-v3")))
#define KILN_VMATH_VECTOR_BYTES 32
namespace avx2 {
#include "kernels/cpu/vector_math_loops.inc"
}  // namespace avx2
#undef KILN_VMATH_TARGET
#undef KILN_VMATH_VECTOR_BYTES

#define KILN_VMATH_TARGET __attribute__((target("arch=x86-64-v4")))
#define KILN_VMATH_VECTOR_BYTES 64
namespace avx512 {
#include "kernels/cpu/vector_math_loops.inc"
}  // namespace avx512
#undef KILN_VMATH_TARGET
#undef KILN_VMATH_VECTOR_BYTES
#endif

namespace {

// The one list of dispatched loops.
#define KILN_VMATH_LOOPS(X) \
  X(Exp)                    \
  X(Sigmoid)                \
  X(Tanh)                   \
  X(Erf)                    \
  X(Erfc)                   \
  X(Relu)                   \
  X(LeakyRelu)              \
  X(FakeQuant)              \
  X(QuantizeLevels)         \
  X(Binary)                 \
  X(BinaryScalarRight)      \
  X(BinaryScalarLeft)       \
  X(SoftmaxRows)            \
  X(AdamStep)               \
  X(MaxPoolGradWindow)      \
  X(AllFinite)              \
  X(Sum)                    \
  X(Max)                    \
  X(GemvAccumulate)         \
  X(LstmCell)               \
  X(GruCell)                \
  X(HalfToFloat)            \
  X(FloatToHalf)            \
  X(BFloat16ToFloat)        \
  X(FloatToBFloat16)

struct Loops {
#define KILN_X(f) decltype(&baseline::f) f;
  KILN_VMATH_LOOPS(KILN_X)
#undef KILN_X
};

#define KILN_X(f) &LEVEL::f,
#define LEVEL baseline
constexpr Loops kBaseline = {KILN_VMATH_LOOPS(KILN_X)};
#undef LEVEL
#ifdef KILN_VMATH_LEVELS
#define LEVEL avx2
constexpr Loops kAvx2 = {KILN_VMATH_LOOPS(KILN_X)};
#undef LEVEL
#define LEVEL avx512
constexpr Loops kAvx512 = {KILN_VMATH_LOOPS(KILN_X)};
#undef LEVEL
#endif
#undef KILN_X

const Loops& Active() {
  static const Loops* loops = [] {
#ifdef KILN_VMATH_LEVELS
    switch (ActiveCpuIsa()) {
      case CpuIsa::kAvx512:
        return &kAvx512;
      case CpuIsa::kAvx2:
        return &kAvx2;
      case CpuIsa::kBaseline:
        break;
    }
#endif
    return &kBaseline;
  }();
  return *loops;
}

}  // namespace

void Exp(const float* x, float* y, int64_t n) { Active().Exp(x, y, n); }
void Sigmoid(const float* x, float* y, int64_t n) { Active().Sigmoid(x, y, n); }
void Tanh(const float* x, float* y, int64_t n) { Active().Tanh(x, y, n); }
void Erf(const float* x, float* y, int64_t n) { Active().Erf(x, y, n); }
void Erfc(const float* x, float* y, int64_t n) { Active().Erfc(x, y, n); }
void Relu(const float* x, float* y, int64_t n) { Active().Relu(x, y, n); }
void LeakyRelu(const float* x, float alpha, float* y, int64_t n) {
  Active().LeakyRelu(x, alpha, y, n);
}
void QuantizeLevels(const float* x, uint8_t* y, int64_t n, float lo, float hi, float inv_scale,
                    float zero) {
  Active().QuantizeLevels(x, y, n, lo, hi, inv_scale, zero);
}
void FakeQuant(const float* x, float* y, int64_t n, float lo, float hi, float scale,
               float inv_scale, float zero, bool divide) {
  Active().FakeQuant(x, y, n, lo, hi, scale, inv_scale, zero, divide);
}
void Binary(BinOp op, const float* a, const float* b, float* y, int64_t n) {
  Active().Binary(op, a, b, y, n);
}
void BinaryScalarRight(BinOp op, const float* a, float b, float* y, int64_t n) {
  Active().BinaryScalarRight(op, a, b, y, n);
}
void BinaryScalarLeft(BinOp op, float a, const float* b, float* y, int64_t n) {
  Active().BinaryScalarLeft(op, a, b, y, n);
}
void SoftmaxRows(const float* x, float* y, int64_t rows, int64_t depth, bool log) {
  Active().SoftmaxRows(x, y, rows, depth, log);
}
void AdamStep(float* var, float* m, float* v, const float* g, int64_t n, float alpha, float beta1,
              float beta2, float epsilon, bool nesterov) {
  Active().AdamStep(var, m, v, g, n, alpha, beta1, beta2, epsilon, nesterov);
}
void MaxPoolGradWindow(const float* const* in, float* const* out, int64_t rows, const float* dy,
                       int64_t n) {
  Active().MaxPoolGradWindow(in, out, rows, dy, n);
}
bool AllFinite(const float* x, int64_t n) { return Active().AllFinite(x, n); }
float Sum(const float* x, int64_t n) { return Active().Sum(x, n); }
float Max(const float* x, int64_t n) { return Active().Max(x, n); }
void GemvAccumulate(const float* x, const float* w, int64_t ldw, int64_t k, int64_t n, float* y) {
  Active().GemvAccumulate(x, w, ldw, k, n, y);
}
void LstmCell(const float* z, const float* bias, int64_t units, float* c, float* h) {
  Active().LstmCell(z, bias, units, c, h);
}
void GruCell(const float* x, const float* hu, const float* bias, int64_t units, float* h) {
  Active().GruCell(x, hu, bias, units, h);
}
void HalfToFloat(const uint16_t* x, float* y, int64_t n) { Active().HalfToFloat(x, y, n); }
void FloatToHalf(const float* x, uint16_t* y, int64_t n) { Active().FloatToHalf(x, y, n); }
void BFloat16ToFloat(const uint16_t* x, float* y, int64_t n) { Active().BFloat16ToFloat(x, y, n); }
void FloatToBFloat16(const float* x, uint16_t* y, int64_t n) { Active().FloatToBFloat16(x, y, n); }

}  // namespace kiln::exec::vmath
