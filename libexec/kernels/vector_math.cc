#include "kernels/vector_math.h"

#include <bit>
#include <cmath>
#include <cstring>
#include <limits>

// One clone per x86-64 level; the loader picks the best the CPU supports. (Plain loops: the
// compiler vectorises each clone for its ISA.)
#if defined(__x86_64__) && !defined(KILN_NO_CPU_DISPATCH)
#define KILN_CPU_DISPATCH \
  __attribute__((target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default")))
#else
#define KILN_CPU_DISPATCH
#endif

namespace kiln::exec::vmath {
namespace {

// e^x for finite x (Cephes' expf): x = g + n ln 2 with |g| <= ln2/2, e^g by a degree-6
// polynomial, 2^n through the exponent bits. Branch-free, so it vectorises.
inline float ExpApprox(float x) {
  x = std::fmin(std::fmax(x, -87.3365447505f), 88.3762626647949f);
  const float fx = std::floor(x * 1.44269504088896341f + 0.5f);
  float g = x - fx * 0.693359375f;
  g = g + fx * 2.12194440e-4f;
  const float g2 = g * g;
  float p = 1.9875691500E-4f;
  p = p * g + 1.3981999507E-3f;
  p = p * g + 8.3334519073E-3f;
  p = p * g + 4.1665795894E-2f;
  p = p * g + 1.6666665459E-1f;
  p = p * g + 5.0000001201E-1f;
  p = p * g2 + g + 1.0f;
  const int32_t e = static_cast<int32_t>(fx) + 127;
  return p * std::bit_cast<float>(e << 23);
}

// ExpApprox with IEEE edges: NaN stays NaN, overflow is inf, deep underflow is 0.
inline float ExpFull(float x) {
  const float r = ExpApprox(x);
  return x != x ? x
                : (x > 88.7228391f ? std::numeric_limits<float>::infinity()
                                   : (x < -87.3365447505f ? 0.0f : r));
}

inline float SigmoidApprox(float x) {
  const float r = 1.0f / (1.0f + ExpApprox(-x));
  return x != x ? x : (x < -87.0f ? 0.0f : r);
}

// tanh(x) = 1 - 2 / (e^{2x} + 1); for small |x| the series keeps the relative error small.
inline float TanhApprox(float x) {
  const float big = 1.0f - 2.0f / (ExpApprox(2.0f * x) + 1.0f);
  const float x2 = x * x;
  const float small = x * (1.0f + x2 * (-0.333333333f + x2 * (0.133333333f + x2 * -0.0539682540f)));
  return x != x ? x : (std::fabs(x) < 0.0625f ? small : big);
}

template <BinOp kOp>
inline float Apply(float a, float b) {
  if constexpr (kOp == BinOp::kAdd) return a + b;
  if constexpr (kOp == BinOp::kSub) return a - b;
  if constexpr (kOp == BinOp::kMul) return a * b;
  if constexpr (kOp == BinOp::kDiv) return a / b;
  // NaN propagates, as TF's maximum/minimum do.
  if constexpr (kOp == BinOp::kMax) return a != a || b != b ? a + b : (a < b ? b : a);
  if constexpr (kOp == BinOp::kMin) return a != a || b != b ? a + b : (b < a ? b : a);
}

}  // namespace

KILN_CPU_DISPATCH void Exp(const float* x, float* y, int64_t n) {
  for (int64_t i = 0; i < n; ++i) y[i] = ExpFull(x[i]);
}

KILN_CPU_DISPATCH void Sigmoid(const float* x, float* y, int64_t n) {
  for (int64_t i = 0; i < n; ++i) y[i] = SigmoidApprox(x[i]);
}

KILN_CPU_DISPATCH void Tanh(const float* x, float* y, int64_t n) {
  for (int64_t i = 0; i < n; ++i) y[i] = TanhApprox(x[i]);
}

KILN_CPU_DISPATCH void AdamStep(float* __restrict var, float* __restrict m, float* __restrict v,
                                const float* __restrict g, int64_t n, float alpha, float beta1,
                                float beta2, float epsilon, bool nesterov) {
  const float a1 = 1.0f - beta1;
  const float a2 = 1.0f - beta2;
  if (nesterov) {
    for (int64_t i = 0; i < n; ++i) {
      const float mi = m[i] + (g[i] - m[i]) * a1;
      const float vi = v[i] + (g[i] * g[i] - v[i]) * a2;
      m[i] = mi;
      v[i] = vi;
      var[i] -= (g[i] * a1 + beta1 * mi) * alpha / (std::sqrt(vi) + epsilon);
    }
    return;
  }
  for (int64_t i = 0; i < n; ++i) {
    const float mi = m[i] + (g[i] - m[i]) * a1;
    const float vi = v[i] + (g[i] * g[i] - v[i]) * a2;
    m[i] = mi;
    v[i] = vi;
    var[i] -= mi * alpha / (std::sqrt(vi) + epsilon);
  }
}

KILN_CPU_DISPATCH void MaxPoolGradWindow(const float* const* in, float* const* out, int64_t rows,
                                         const float* dy, int64_t n) {
  if (rows <= 0) return;
  // GCC does not vectorise the compare-and-select over a channel array here, so 16 channels at
  // a time go through vector extensions (one zmm on AVX-512, split on narrower targets). The
  // winning row is kept as a float so compare and select share one vector type. Values pass
  // through memcpy, never as function arguments (whose ABI differs between the clones).
  using V = float __attribute__((vector_size(64)));
  constexpr int64_t kW = sizeof(V) / sizeof(float);
  int64_t c0 = 0;
  for (; c0 + kW <= n; c0 += kW) {
    V best, which = {}, x;
    std::memcpy(&best, in[0] + c0, sizeof(V));
    for (int64_t j = 1; j < rows; ++j) {
      std::memcpy(&x, in[j] + c0, sizeof(V));
      const V fj = V{} + static_cast<float>(j);
      // Strictly greater replaces: the first maximum wins (and NaN never does).
      which = best < x ? fj : which;
      best = best < x ? x : best;
    }
    V d, o;
    const V zero = {};
    std::memcpy(&d, dy + c0, sizeof(V));
    for (int64_t j = 0; j < rows; ++j) {
      const V fj = V{} + static_cast<float>(j);
      o = which == fj ? d : zero;
      std::memcpy(out[j] + c0, &o, sizeof(V));
    }
  }
  for (; c0 < n; ++c0) {
    float best = in[0][c0];
    int64_t which = 0;
    for (int64_t j = 1; j < rows; ++j) {
      if (best < in[j][c0]) {
        best = in[j][c0];
        which = j;
      }
    }
    for (int64_t j = 0; j < rows; ++j) out[j][c0] = j == which ? dy[c0] : 0.0f;
  }
}

KILN_CPU_DISPATCH void Relu(const float* x, float* y, int64_t n) {
  // x < 0 ? 0 : x keeps NaN, as TF's relu does.
  for (int64_t i = 0; i < n; ++i) y[i] = x[i] < 0.0f ? 0.0f : x[i];
}

#define KILN_BINARY_SWITCH(body)       \
  switch (op) {                        \
    case BinOp::kAdd: {                \
      constexpr BinOp k = BinOp::kAdd; \
      body;                            \
      return;                          \
    }                                  \
    case BinOp::kSub: {                \
      constexpr BinOp k = BinOp::kSub; \
      body;                            \
      return;                          \
    }                                  \
    case BinOp::kMul: {                \
      constexpr BinOp k = BinOp::kMul; \
      body;                            \
      return;                          \
    }                                  \
    case BinOp::kDiv: {                \
      constexpr BinOp k = BinOp::kDiv; \
      body;                            \
      return;                          \
    }                                  \
    case BinOp::kMax: {                \
      constexpr BinOp k = BinOp::kMax; \
      body;                            \
      return;                          \
    }                                  \
    case BinOp::kMin: {                \
      constexpr BinOp k = BinOp::kMin; \
      body;                            \
      return;                          \
    }                                  \
  }

KILN_CPU_DISPATCH void Binary(BinOp op, const float* a, const float* b, float* y, int64_t n) {
  KILN_BINARY_SWITCH(for (int64_t i = 0; i < n; ++i) y[i] = Apply<k>(a[i], b[i]))
}

KILN_CPU_DISPATCH void BinaryScalarRight(BinOp op, const float* a, float b, float* y, int64_t n) {
  KILN_BINARY_SWITCH(for (int64_t i = 0; i < n; ++i) y[i] = Apply<k>(a[i], b))
}

KILN_CPU_DISPATCH void BinaryScalarLeft(BinOp op, float a, const float* b, float* y, int64_t n) {
  KILN_BINARY_SWITCH(for (int64_t i = 0; i < n; ++i) y[i] = Apply<k>(a, b[i]))
}
#undef KILN_BINARY_SWITCH

KILN_CPU_DISPATCH float Sum(const float* x, int64_t n) {
  // Eight partial sums: vectorised, and rounding like TF's blocked Eigen reductions.
  float acc[8] = {0, 0, 0, 0, 0, 0, 0, 0};
  int64_t i = 0;
  for (; i + 8 <= n; i += 8)
    for (int k = 0; k < 8; ++k) acc[k] += x[i + k];
  float s = ((acc[0] + acc[1]) + (acc[2] + acc[3])) + ((acc[4] + acc[5]) + (acc[6] + acc[7]));
  for (; i < n; ++i) s += x[i];
  return s;
}

KILN_CPU_DISPATCH float Max(const float* x, int64_t n) {
  float m = -std::numeric_limits<float>::infinity();
  bool nan = false;
  for (int64_t i = 0; i < n; ++i) {
    nan |= x[i] != x[i];
    m = x[i] > m ? x[i] : m;
  }
  return nan ? std::numeric_limits<float>::quiet_NaN() : m;
}

KILN_CPU_DISPATCH void SoftmaxRows(const float* x, float* y, int64_t rows, int64_t depth,
                                   bool log) {
  for (int64_t r = 0; r < rows; ++r) {
    const float* in = x + r * depth;
    float* out = y + r * depth;
    float m = -std::numeric_limits<float>::infinity();
    for (int64_t j = 0; j < depth; ++j) m = in[j] > m ? in[j] : m;
    float sum = 0;
    if (log) {
      for (int64_t j = 0; j < depth; ++j) sum += ExpFull(in[j] - m);
      const float shift = m + std::log(sum);
      for (int64_t j = 0; j < depth; ++j) out[j] = in[j] - shift;
    } else {
      for (int64_t j = 0; j < depth; ++j) {
        const float e = ExpFull(in[j] - m);
        out[j] = e;
        sum += e;
      }
      const float inv = 1.0f / sum;
      for (int64_t j = 0; j < depth; ++j) out[j] *= inv;
    }
  }
}

}  // namespace kiln::exec::vmath
