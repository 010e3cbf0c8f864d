// float32 loops compiled three times (AVX-512, AVX2+FMA, baseline x86-64) and chosen at run
// time by ActiveCpuIsa() (kiln/exec/cpu_isa.h: the CPU at hand, capped by KILN_MAX_CPU_ISA),
// so one binary runs on any x86-64 and uses the widest vectors the machine has. Transcendentals use
// polynomial approximations (Cephes, as Eigen's packet math does) that vectorise; accuracy is a few
// ulp.
#pragma once

#include <cstdint>

namespace kiln::exec::vmath {

// y[i] = f(x[i]); x and y may be the same array.
void Exp(const float* x, float* y, int64_t n);
void Sigmoid(const float* x, float* y, int64_t n);
void Tanh(const float* x, float* y, int64_t n);
// The error function and its complement (a few ulp; erfc keeps its relative accuracy in the
// tail until it underflows below FLT_MIN).
void Erf(const float* x, float* y, int64_t n);
void Erfc(const float* x, float* y, int64_t n);
void Relu(const float* x, float* y, int64_t n);
// x > 0 ? x : alpha * x (NaN stays NaN).
void LeakyRelu(const float* x, float alpha, float* y, int64_t n);
// TensorFlow's FakeQuant of n values with its nudged range [lo, hi] and step `scale`:
// floor((clamp(x) - lo) * inv_scale - zero + 0.5) * scale, or with `divide` (x - lo) / scale as
// FakeQuantWithMinMaxVars computes it; bit-identical to those scalar forms; NaN stays NaN.
void FakeQuant(const float* x, float* y, int64_t n, float lo, float hi, float scale,
               float inv_scale, float zero, bool divide);
// FakeQuant's integer levels floor((clamp(x) - lo) * inv_scale - zero + 0.5) as bytes: in
// [0, 255] for a range from 0, in [-127, 127] (two's complement) for a symmetric narrow one;
// NaN becomes level 0.
void QuantizeLevels(const float* x, uint8_t* y, int64_t n, float lo, float hi, float inv_scale,
                    float zero);

enum class BinOp { kAdd, kSub, kMul, kDiv, kMax, kMin };
// y[i] = a[i] op b[i]; with a scalar operand: a[i] op b, or a op b[i]. Outputs may alias inputs.
void Binary(BinOp op, const float* a, const float* b, float* y, int64_t n);
void BinaryScalarRight(BinOp op, const float* a, float b, float* y, int64_t n);
void BinaryScalarLeft(BinOp op, float a, const float* b, float* y, int64_t n);

// Softmax (or log-softmax) of `rows` rows of `depth` values each, shifted by the row maximum.
void SoftmaxRows(const float* x, float* y, int64_t rows, int64_t depth, bool log);

// One step of TensorFlow's ResourceApplyAdam on n float32 elements, in place:
// m += (g - m)(1 - beta1); v += (g^2 - v)(1 - beta2); var -= alpha * m' / (sqrt(v) + eps), with
// m' = m, or (Nesterov) g(1 - beta1) + beta1 m. `alpha` is lr sqrt(1 - beta2^t) / (1 - beta1^t).
void AdamStep(float* var, float* m, float* v, const float* g, int64_t n, float alpha, float beta1,
              float beta2, float epsilon, bool nesterov);

// The gradient of a max over one window of `rows` rows (in window order) of n channels: per
// channel, dy goes to the row holding the first maximum and 0 to the others. rows <= 2^24.
void MaxPoolGradWindow(const float* const* in, float* const* out, int64_t rows, const float* dy,
                       int64_t n);

// Whether none of n values is NaN or infinite.
bool AllFinite(const float* x, int64_t n);

// Sum and maximum of n values.
float Sum(const float* x, int64_t n);
float Max(const float* x, int64_t n);

// y[0:n] += x[0:k] w for a row-major [k, n] matrix w whose rows are ldw floats apart (ldw >= n):
// one row's matrix-vector product, for products where a GEMM library's call overhead is most of
// the time (a recurrent layer's step, a Dense layer at batch 1).
void GemvAccumulate(const float* x, const float* w, int64_t ldw, int64_t k, int64_t n, float* y);

// One row of a recurrent cell in one pass (a function call per element-wise op was a tenth of
// a small recurrent model's step), with the graph's results. LSTM (Keras's gate order i, f, g,
// o): z = x_t kernel + h recurrent [4 units], bias [4 units]; c and h are updated in place.
// GRU (reset_after): x = x_t kernel and hu = h recurrent [3 units each, gates z, r, h], bias
// [2, 3 units] (input's, then recurrent's); h is updated in place.
void LstmCell(const float* z, const float* bias, int64_t units, float* c, float* h);
void GruCell(const float* x, const float* hu, const float* bias, int64_t units, float* h);

// Conversions between float32 and the half types' bit patterns, rounding to nearest even (NaN
// stays NaN), as Eigen's float16 and bfloat16 convert.
void HalfToFloat(const uint16_t* x, float* y, int64_t n);
void FloatToHalf(const float* x, uint16_t* y, int64_t n);
void BFloat16ToFloat(const uint16_t* x, float* y, int64_t n);
void FloatToBFloat16(const float* x, uint16_t* y, int64_t n);

}  // namespace kiln::exec::vmath
