// The CPU kernels of the quantized products in kernels/quantized_product_ops.cc, as TensorFlow's
// oneDNN build runs them.
// There are no zero points: a quint8 input means x * max(|min|, |max|) / 255, a qint8 one
// x * range / 127, the qint8 filter w * range / 127 (per output channel when its min and max
// are vectors). Products accumulate exactly in int32 (what TF gives on CPUs with VNNI; oneDNN
// on AVX2 saturates pairs of products to int16), then, in float as oneDNN:
// real = acc * (src_scale * wei_scale) + bias (+ summand), ReLU, and the output is real at its
// scale rounded half to even and saturated. The scale bookkeeping (a float bias added in real
// units, a qint32 bias dequantized, a per-channel qint32 output on one common scale) is TF
// 2.21's, checked against it in tests/tf/test_quantized_ops_tf.py. TF's reference kernels with
// zero points, QuantizedMatMul and QuantizedConv2D, are in quantized_reference_ops.cc.
#include "kernels/quantized_product_ops.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string_view>
#include <vector>

#include "kernels/kernel_util.h"
#include "kernels/quantized_util.h"
#include "kernels/window_util.h"

namespace kiln::exec {
namespace {

using quantized_product::ConvForm;
using quantized_product::MatMulForm;
using quantized_product::QConvState;
using quantized_product::QMatMulState;

// Float to an integer of [lo, hi]: saturate, then round half to even (oneDNN's conversion).
int64_t RoundSaturate(float v, int64_t lo, int64_t hi) {
  if (std::isnan(v)) return 0;
  const double r = std::nearbyint(static_cast<double>(v));
  return static_cast<int64_t>(std::clamp(r, static_cast<double>(lo), static_cast<double>(hi)));
}

float MaxAbs(float a, float b) { return std::max(std::abs(a), std::abs(b)); }

// The integer limit a quantized type's range maps to (oneDNN's u8 / s8 scales).
float IntLimit(DType t) { return t == DType::kQUInt8 ? 255.0f : 127.0f; }

void StoreQuantized(Tensor* out, int64_t i, int64_t v) {
  switch (out->dtype()) {
    case DType::kQUInt8:
      out->data<QUInt8>()[i].value = static_cast<uint8_t>(v);
      break;
    case DType::kQInt8:
      out->data<QInt8>()[i].value = static_cast<int8_t>(v);
      break;
    default:
      out->data<QInt32>()[i].value = static_cast<int32_t>(v);
      break;
  }
}

void OutputLimits(DType t, int64_t* lo, int64_t* hi) {
  if (t == DType::kQUInt8) {
    *lo = 0;
    *hi = 255;
  } else if (t == DType::kQInt8) {
    *lo = -128;
    *hi = 127;
  } else {
    *lo = std::numeric_limits<int32_t>::min();
    *hi = std::numeric_limits<int32_t>::max();
  }
}

// An element of an 8-bit quantized tensor as its integer.
int32_t Int8At(const Tensor& t, int64_t i) {
  return t.dtype() == DType::kQUInt8 ? t.data<QUInt8>()[i].value : t.data<QInt8>()[i].value;
}

// ---- Convolutions --------------------------------------------------------------------------

Status ComputeQConv(const KernelContext& ctx) {
  const auto& st = ctx.state<QConvState>();
  const ConvForm& f = *st.form;
  const Tensor& x = ctx.input(0);
  const Tensor& w = ctx.input(1);
  if (x.rank() != 4) return ctx.Error("input must be 4-dimensional, got ", x.shape().ToString());
  if (w.rank() != 4) return ctx.Error("filter must be 4-dimensional: ", w.shape().ToString());
  if (w.NumElements() == 0)
    return ctx.Error("filter must not have zero elements (i.e. all dimensions must be non-zero)");
  const int64_t batch = x.dim(0), in_c = x.dim(3), kh = w.dim(0), kw = w.dim(1);
  if (w.dim(2) != in_c)
    return ctx.Error("input and filter must have the same depth: ", in_c, " vs ", w.dim(2));
  const int64_t mult = f.depthwise ? w.dim(3) : 1;
  const int64_t out_c = f.depthwise ? in_c * mult : w.dim(3);
  for (int i = st.min_input; i < st.min_input + 2; ++i)
    KILN_RETURN_IF_ERROR(ExpectScalarInput(ctx, i, i == st.min_input ? "min_input" : "max_input"));
  const Tensor& min_f = ctx.input(st.min_filter);
  const Tensor& max_f = ctx.input(st.min_filter + 1);
  if (min_f.shape() != max_f.shape() || min_f.NumElements() == 0)
    return ctx.Error(
        "`min_ and max_filter` must have same shape and contain at least one element.");
  const int64_t ranges = min_f.NumElements();
  if (ranges != 1 && ranges < out_c)
    return ctx.Error("min_filter and max_filter have ", ranges, " elements; expected 1 or ", out_c,
                     " (one per output channel)");
  if (f.bias && ctx.input(st.bias).NumElements() != out_c)
    return ctx.Error("bias has ", ctx.input(st.bias).NumElements(), " elements; expected ", out_c,
                     " (one per output channel)");
  // Window geometry.
  std::array<WindowDim, 2> dims;
  for (int d = 0; d < 2; ++d) {
    WindowDim& wd = dims[d];
    wd.in = x.dim(1 + d);
    wd.k = w.dim(d);
    wd.stride = st.strides[d];
    wd.dilation = st.dilations[d];
    if (st.explicit_pads) {
      wd.pad_before = st.pad_before[d];
      wd.pad_after = st.pad_after[d];
      const int64_t span = wd.in + wd.pad_before + wd.pad_after - wd.effective_k();
      if (span < 0) return ctx.Error("the padded input is smaller than the filter");
      wd.out = span / wd.stride + 1;
    } else {
      KILN_RETURN_IF_ERROR(ComputeWindowDim(st.padding, &wd));
    }
  }
  const Shape out_shape{batch, dims[0].out, dims[1].out, out_c};
  // Scales, in float as TF computes them.
  const float min_in = ScalarFloat(ctx.input(st.min_input));
  const float max_in = ScalarFloat(ctx.input(st.min_input + 1));
  const float rin = MaxAbs(min_in, max_in);
  const float src_scale = rin / IntLimit(st.input_type);
  std::vector<float> rf(static_cast<size_t>(out_c)), wei_scale(static_cast<size_t>(out_c));
  float min_min = min_f.data<float>()[0], max_max = max_f.data<float>()[0];
  for (int64_t r = 0; r < ranges; ++r) {
    min_min = std::min(min_min, min_f.data<float>()[r]);
    max_max = std::max(max_max, max_f.data<float>()[r]);
  }
  for (int64_t c = 0; c < out_c; ++c) {
    const int64_t r = ranges == 1 ? 0 : c;
    rf[c] = MaxAbs(min_f.data<float>()[r], max_f.data<float>()[r]);
    wei_scale[c] = static_cast<float>(rf[c] / 127.0);
  }
  float dst_scale;
  float min_out = 0, max_out = 0;
  if (f.requantize) {
    KILN_RETURN_IF_ERROR(ExpectScalarInput(ctx, st.min_freezed, "min_freezed_output"));
    KILN_RETURN_IF_ERROR(ExpectScalarInput(ctx, st.min_freezed + 1, "max_freezed_output"));
    min_out = ScalarFloat(ctx.input(st.min_freezed));
    max_out = ScalarFloat(ctx.input(st.min_freezed + 1));
    dst_scale = MaxAbs(min_out, max_out) / IntLimit(st.out_type);
  } else {
    const auto single = static_cast<float>(MaxAbs(min_min, max_max) / 127.0);
    dst_scale = single * src_scale;
  }
  const float inv_dst = 1.0f / dst_scale;
  // Bias in real units.
  std::vector<float> bias(static_cast<size_t>(out_c), 0.0f);
  if (f.bias) {
    const Tensor& b = ctx.input(st.bias);
    for (int64_t c = 0; c < out_c; ++c) {
      if (st.bias_type == DType::kFloat) {
        bias[c] = b.data<float>()[c];
      } else {
        const double limit = st.input_type == DType::kQUInt8 ? 255.0 * 127.0 : 127.0 * 127.0;
        const auto scale = static_cast<float>(limit / (static_cast<double>(rin) * rf[c]));
        bias[c] = static_cast<float>(b.data<QInt32>()[c].value) / scale;
      }
    }
  }
  const Tensor* summand = f.sum != 0 ? &ctx.input(st.summand) : nullptr;
  float summand_scale = 1.0f;
  if (summand != nullptr) {
    if (summand->shape() != out_shape)
      return ctx.Error("summand has shape ", summand->shape().ToString(),
                       "; expected the output's shape ", out_shape.ToString());
    if (f.sum == 2) {
      KILN_RETURN_IF_ERROR(ExpectScalarInput(ctx, st.min_summand, "min_freezed_summand"));
      KILN_RETURN_IF_ERROR(ExpectScalarInput(ctx, st.min_summand + 1, "max_freezed_summand"));
      const float range = MaxAbs(ScalarFloat(ctx.input(st.min_summand)),
                                 ScalarFloat(ctx.input(st.min_summand + 1)));
      summand_scale = range / (st.summand_type == DType::kQInt8 ? 127.0f : 255.0f);
    }
  }
  int64_t lo, hi;
  OutputLimits(st.out_type, &lo, &hi);
  // TF's signed-sum form writes into the qint8 summand's buffer: it saturates at 127.
  if (st.summand_type == DType::kQInt8 && f.sum == 2) hi = std::min<int64_t>(hi, 127);
  KILN_ASSIGN_OR_RETURN(Tensor * out, ctx.AllocateOutput(0, out_shape));
  const int64_t oh_n = dims[0].out, ow_n = dims[1].out;
  const int64_t in_h = x.dim(1), in_w = x.dim(2);
  ctx.threads().ParallelFor(batch * oh_n, 1, [&](int64_t begin, int64_t end) {
    std::vector<int32_t> acc(static_cast<size_t>(out_c));
    for (int64_t row = begin; row < end; ++row) {
      const int64_t n = row / oh_n, oh = row % oh_n;
      for (int64_t ow = 0; ow < ow_n; ++ow) {
        std::fill(acc.begin(), acc.end(), 0);
        for (int64_t i = 0; i < kh; ++i) {
          const int64_t ih = oh * dims[0].stride + i * dims[0].dilation - dims[0].pad_before;
          if (ih < 0 || ih >= in_h) continue;
          for (int64_t j = 0; j < kw; ++j) {
            const int64_t iw = ow * dims[1].stride + j * dims[1].dilation - dims[1].pad_before;
            if (iw < 0 || iw >= in_w) continue;
            const int64_t xbase = ((n * in_h + ih) * in_w + iw) * in_c;
            const int64_t wbase = (i * kw + j) * in_c * w.dim(3);
            for (int64_t ci = 0; ci < in_c; ++ci) {
              const int32_t xv = Int8At(x, xbase + ci);
              if (xv == 0) continue;
              const int8_t* wrow = &w.data<QInt8>()[wbase + ci * w.dim(3)].value;
              if (f.depthwise) {
                for (int64_t m = 0; m < mult; ++m) acc[ci * mult + m] += xv * wrow[m];
              } else {
                for (int64_t co = 0; co < out_c; ++co) acc[co] += xv * wrow[co];
              }
            }
          }
        }
        const int64_t obase = ((n * oh_n + oh) * ow_n + ow) * out_c;
        for (int64_t co = 0; co < out_c; ++co) {
          float real = static_cast<float>(acc[co]) * (src_scale * wei_scale[co]) + bias[co];
          if (f.sum == 1) real += summand->data<float>()[obase + co];
          if (f.sum == 2) real += summand_scale * static_cast<float>(Int8At(*summand, obase + co));
          if (f.relu) real = std::max(real, 0.0f);
          StoreQuantized(out, obase + co, RoundSaturate(real * inv_dst, lo, hi));
        }
      }
    }
  });
  // Output ranges: the frozen ones, or the product's (per filter range when it is a vector).
  const Shape range_shape = f.requantize || min_f.rank() == 0 ? Shape{} : Shape{ranges};
  KILN_ASSIGN_OR_RETURN(Tensor * mn, ctx.AllocateOutput(1, range_shape));
  KILN_ASSIGN_OR_RETURN(Tensor * mx, ctx.AllocateOutput(2, range_shape));
  if (f.requantize) {
    mn->data<float>()[0] = min_out;
    mx->data<float>()[0] = max_out;
  } else {
    // MklQuantizationRangeForMultiplication: qint8 levels are symmetric (254 steps).
    const float a_level = (max_in - min_in) / (st.input_type == DType::kQUInt8 ? 255.0f : 254.0f);
    for (int64_t r = 0; r < ranges; ++r) {
      const float c = a_level * ((max_f.data<float>()[r] - min_f.data<float>()[r]) / 254.0f);
      mn->data<float>()[r] = c * static_cast<float>(std::numeric_limits<int32_t>::min());
      mx->data<float>()[r] = c * static_cast<float>(std::numeric_limits<int32_t>::max());
    }
  }
  return OkStatus();
}

// ---- Matrix products -----------------------------------------------------------------------

Status ComputeQMatMul(const KernelContext& ctx) {
  const auto& st = ctx.state<QMatMulState>();
  const MatMulForm& f = st.form;
  const Tensor& a = ctx.input(0);
  const Tensor& b = ctx.input(1);
  const Tensor& bias = ctx.input(2);
  static constexpr std::string_view kNames[] = {
      "min_a", "max_a", "min_b", "max_b", "min_freezed_output", "max_freezed_output"};
  for (int i = 3; i < ctx.num_inputs(); ++i)
    KILN_RETURN_IF_ERROR(ExpectScalarInput(ctx, i, kNames[i - 3]));
  if (a.rank() != 2 || b.rank() != 2 || a.dim(1) != b.dim(0))
    return ctx.Error("a ", a.shape().ToString(), " and b ", b.shape().ToString(),
                     " are not matrices of an [M, K] x [K, N] product");
  const int64_t m = a.dim(0), k = a.dim(1), n = b.dim(1);
  if (bias.rank() != 1 || bias.dim(0) != n)
    return ctx.Error("bias has shape ", bias.shape().ToString(), "; expected [", n, "]");
  const float min_a = ScalarFloat(ctx.input(3)), max_a = ScalarFloat(ctx.input(4));
  const float min_b = ScalarFloat(ctx.input(5)), max_b = ScalarFloat(ctx.input(6));
  // TF's oneDNN kernel adds an undocumented compensation for a quint8 input whose SCALED range
  // reaches below 0; refused rather than guessed.
  if (!st.min_first && min_a < 0)
    return Unimplemented("node '", ctx.node_name(), "': input_quant_mode SCALED with min_a < 0 (",
                         min_a,
                         ") is not supported; a quint8 input in SCALED mode holds [0, max_a]");
  const auto src_scale =
      static_cast<float>(st.min_first ? (max_a - min_a) / 255.0 : MaxAbs(min_a, max_a) / 255.0);
  const auto wei_scale = static_cast<float>(MaxAbs(min_b, max_b) / 127.0);
  const float scale = src_scale * wei_scale;
  // Bias in real units (TF's MIN_FIRST compensation for a float bias, added as is).
  std::vector<float> bias_f(static_cast<size_t>(n));
  const auto* bq = reinterpret_cast<const int8_t*>(b.raw_data());
  if (st.bias_type == DType::kFloat) {
    const auto qa_amin = static_cast<float>(255.0 * min_a / (max_a - min_a));
    for (int64_t j = 0; j < n; ++j) {
      bias_f[j] = bias.data<float>()[j];
      if (st.min_first) {
        int32_t colsum = 0;
        for (int64_t i = 0; i < k; ++i) colsum += bq[i * n + j];
        bias_f[j] += static_cast<float>(colsum) * qa_amin;
      }
    }
  } else {
    const double range_a = st.min_first ? static_cast<double>(max_a - min_a) : max_a;
    const auto out_scale = static_cast<float>(255.0 * 127.0 / (range_a * MaxAbs(max_b, min_b)));
    for (int64_t j = 0; j < n; ++j)
      bias_f[j] = static_cast<float>(bias.data<QInt32>()[j].value) / out_scale;
  }
  float dst_scale = scale;
  float frozen_min = 0, frozen_max = 0;
  if (f.requantize) {
    frozen_min = ScalarFloat(ctx.input(7));
    frozen_max = ScalarFloat(ctx.input(8));
    dst_scale = MaxAbs(frozen_min, frozen_max) / 255.0f;
  }
  const float inv_dst = 1.0f / dst_scale;
  int64_t lo, hi;
  OutputLimits(st.out_type, &lo, &hi);
  KILN_ASSIGN_OR_RETURN(Tensor * out, ctx.AllocateOutput(0, Shape{m, n}));
  const auto* aq = reinterpret_cast<const uint8_t*>(a.raw_data());
  ctx.threads().ParallelFor(m, std::max<int64_t>(1, 16384 / std::max<int64_t>(k * n, 1)),
                            [&](int64_t begin, int64_t end) {
                              std::vector<int32_t> acc(static_cast<size_t>(n));
                              for (int64_t i = begin; i < end; ++i) {
                                std::fill(acc.begin(), acc.end(), 0);
                                for (int64_t p = 0; p < k; ++p) {
                                  const int32_t av = aq[i * k + p];
                                  if (av == 0) continue;
                                  const int8_t* brow = bq + p * n;
                                  for (int64_t j = 0; j < n; ++j) acc[j] += av * brow[j];
                                }
                                for (int64_t j = 0; j < n; ++j) {
                                  float real = static_cast<float>(acc[j]) * scale + bias_f[j];
                                  if (f.relu) real = std::max(real, 0.0f);
                                  if (f.dequantize) {
                                    out->data<float>()[i * n + j] = real;
                                  } else {
                                    StoreQuantized(out, i * n + j,
                                                   RoundSaturate(real * inv_dst, lo, hi));
                                  }
                                }
                              }
                            });
  if (f.dequantize) return OkStatus();
  KILN_ASSIGN_OR_RETURN(Tensor * mn, ctx.AllocateOutput(1, Shape{}));
  KILN_ASSIGN_OR_RETURN(Tensor * mx, ctx.AllocateOutput(2, Shape{}));
  if (f.requantize) {
    mn->data<float>()[0] = frozen_min;
    mx->data<float>()[0] = frozen_max;
  } else {
    const float c = ((max_a - min_a) / 255.0f) * ((max_b - min_b) / 254.0f);
    mn->data<float>()[0] = c * static_cast<float>(std::numeric_limits<int32_t>::min());
    mx->data<float>()[0] = c * static_cast<float>(std::numeric_limits<int32_t>::max());
  }
  return OkStatus();
}

constexpr KernelEntry kCpu[] = {
    {"QuantizedConv2DPerChannel", ComputeQConv},
    {"QuantizedConv2DAndRelu", ComputeQConv},
    {"QuantizedConv2DAndRequantize", ComputeQConv},
    {"QuantizedConv2DAndReluAndRequantize", ComputeQConv},
    {"QuantizedConv2DWithBias", ComputeQConv},
    {"QuantizedConv2DWithBiasAndRelu", ComputeQConv},
    {"QuantizedConv2DWithBiasAndRequantize", ComputeQConv},
    {"QuantizedConv2DWithBiasAndReluAndRequantize", ComputeQConv},
    {"QuantizedConv2DWithBiasSumAndRelu", ComputeQConv},
    {"QuantizedConv2DWithBiasSumAndReluAndRequantize", ComputeQConv},
    {"QuantizedConv2DWithBiasSignedSumAndReluAndRequantize", ComputeQConv},
    {"QuantizedDepthwiseConv2D", ComputeQConv},
    {"QuantizedDepthwiseConv2DWithBias", ComputeQConv},
    {"QuantizedDepthwiseConv2DWithBiasAndRelu", ComputeQConv},
    {"QuantizedDepthwiseConv2DWithBiasAndReluAndRequantize", ComputeQConv},
    {"QuantizedMatMulWithBias", ComputeQMatMul},
    {"QuantizedMatMulWithBiasAndRelu", ComputeQMatMul},
    {"QuantizedMatMulWithBiasAndRequantize", ComputeQMatMul},
    {"QuantizedMatMulWithBiasAndReluAndRequantize", ComputeQMatMul},
    {"QuantizedMatMulWithBiasAndDequantize", ComputeQMatMul},
};

}  // namespace
std::span<const KernelEntry> QuantizedProductCpuKernels() { return kCpu; }

}  // namespace kiln::exec
