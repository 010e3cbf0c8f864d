// The CPU kernels of the quantized image ops in kernels/quantized_image_ops.cc, as TF's reference
// CPU kernels compute them (TF_ENABLE_ONEDNN_OPTS=0). Each uses the conversion TF's kernel uses
// (the scalar or the "Eigen" one, quantized_util.h), a qint32 read through float, and denormals
// flushed, so the integers are TF's (checked against TF in tests/tf/test_quantized_ops_tf.py).
#include "kernels/quantized_image_ops.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>
#include <string_view>
#include <vector>

#include "kernels/kernel_util.h"
#include "kernels/quantized_util.h"
#include "kernels/window_util.h"

namespace kiln::exec {
namespace {

using quantized_image::BatchNormState;
using quantized_image::InstanceNormState;
using quantized_image::PoolState;
using quantized_image::ResizeState;

// ---- QuantizedMaxPool, QuantizedAvgPool ----------------------------------------------------

template <bool kMax>
Status ComputeQuantizedPool(const KernelContext& ctx) {
  for (int i : {1, 2})
    if (ctx.input(i).rank() != 0)
      return ctx.Error(i == 1 ? "min_input" : "max_input", " shape must be rank 0 but is rank ",
                       ctx.input(i).rank());
  const auto& st = ctx.state<PoolState>();
  const Tensor& x = ctx.input(0);
  if (x.rank() != 4) return ctx.Error("input must be 4-dimensional, got ", x.shape().ToString());
  std::array<WindowDim, 3> dims;
  const std::array<int64_t, 4> in{x.dim(0), x.dim(1), x.dim(2), x.dim(3)};
  // Right-aligned over three spatial dims: 2-D pooling uses the last two.
  KILN_RETURN_IF_ERROR(MakeWindowDims(st.window, in, st.window.ksize, &dims));
  const int64_t batch = x.dim(0), h = x.dim(1), w = x.dim(2), c = x.dim(3);
  const Shape out_shape{batch, dims[1].out, dims[2].out, c};
  KILN_ASSIGN_OR_RETURN(Tensor * out, ctx.AllocateOutput(0, out_shape));
  const bool u8 = x.dtype() == DType::kQUInt8;
  for (int64_t n = 0; n < batch; ++n)
    for (int64_t oh = 0; oh < dims[1].out; ++oh)
      for (int64_t ow = 0; ow < dims[2].out; ++ow)
        for (int64_t ch = 0; ch < c; ++ch) {
          int32_t best = std::numeric_limits<int32_t>::min(), sum = 0, count = 0;
          for (int64_t i = 0; i < dims[1].k; ++i) {
            const int64_t ih = oh * dims[1].stride - dims[1].pad_before + i;
            if (ih < 0 || ih >= h) continue;
            for (int64_t j = 0; j < dims[2].k; ++j) {
              const int64_t iw = ow * dims[2].stride - dims[2].pad_before + j;
              if (iw < 0 || iw >= w) continue;
              const int64_t k = ((n * h + ih) * w + iw) * c + ch;
              const int32_t v = u8 ? x.data<QUInt8>()[k].value : x.data<QInt8>()[k].value;
              best = std::max(best, v);
              sum += v;
              ++count;
            }
          }
          const int32_t v = kMax ? best : (count > 0 ? sum / count : 0);
          const int64_t o = ((n * dims[1].out + oh) * dims[2].out + ow) * c + ch;
          if (u8) {
            out->data<QUInt8>()[o].value = static_cast<uint8_t>(v);
          } else {
            out->data<QInt8>()[o].value = static_cast<int8_t>(v);
          }
        }
  KILN_ASSIGN_OR_RETURN(Tensor * a, ctx.AllocateOutput(1, Shape{}));
  KILN_ASSIGN_OR_RETURN(Tensor * b, ctx.AllocateOutput(2, Shape{}));
  a->data<float>()[0] = ScalarFloat(ctx.input(1));
  b->data<float>()[0] = ScalarFloat(ctx.input(2));
  return OkStatus();
}

// ---- QuantizedResizeBilinear ---------------------------------------------------------------

// One axis of TF's quantized bilinear resize: the two source rows and the fraction, in float
// and as a fixed-point weight of `res` bits.
struct ResizeAxis {
  std::vector<int64_t> lower, upper;
  std::vector<float> lerp;
  std::vector<int64_t> ilerp;
};

ResizeAxis MakeResizeAxis(int64_t in, int64_t out, bool align, bool half, int res) {
  ResizeAxis a;
  const float scale = align && in > 1 && out > 1
                          ? static_cast<float>(in - 1) / static_cast<float>(out - 1)
                          : static_cast<float>(in) / static_cast<float>(out);
  for (int64_t i = 0; i < out; ++i) {
    const float pos =
        half ? (static_cast<float>(i) + 0.5f) * scale - 0.5f : static_cast<float>(i) * scale;
    const float floor_pos = std::floor(pos);
    const int64_t upper = std::min(static_cast<int64_t>(std::ceil(pos)), in - 1);
    const int64_t lower = std::min(std::max(static_cast<int64_t>(floor_pos), int64_t{0}), upper);
    const float lerp = pos - floor_pos;
    a.lower.push_back(lower);
    a.upper.push_back(upper);
    a.lerp.push_back(lerp);
    a.ilerp.push_back(static_cast<int64_t>(lerp * static_cast<float>(int64_t{1} << res)));
  }
  return a;
}

Status ComputeQuantizedResize(const KernelContext& ctx) {
  const auto& st = ctx.state<ResizeState>();
  const Tensor& x = ctx.input(0);
  const Tensor& size = ctx.input(1);
  if (ctx.input(2).NumElements() != 1) return ctx.Error("min must be a scalar");
  if (ctx.input(3).NumElements() != 1) return ctx.Error("max must be a scalar");
  if (x.rank() != 4) return ctx.Error("input must be 4-dimensional", x.shape().ToString());
  if (size.rank() != 1 || size.NumElements() != 2)
    return ctx.Error("shape_t must be 1-dimensional with two elements", size.shape().ToString());
  const int64_t batch = x.dim(0), in_h = x.dim(1), in_w = x.dim(2), c = x.dim(3);
  const int64_t out_h = size.data<int32_t>()[0], out_w = size.data<int32_t>()[1];
  if (c <= 0) return ctx.Error("image must have at least one channel");
  if (in_h <= 0 || in_w <= 0) return ctx.Error("input image must be of non-zero size");
  if (out_h <= 0 || out_w <= 0) return ctx.Error("output dimensions must be positive");
  KILN_ASSIGN_OR_RETURN(Tensor * out, ctx.AllocateOutput(0, Shape{batch, out_h, out_w, c}));
  const bool same = out_h == in_h && out_w == in_w;
  const int res = st.type == DType::kQUInt8 ? 7 : 30;
  const ResizeAxis ys = MakeResizeAxis(in_h, out_h, st.align_corners, st.half_pixel_centers, res);
  const ResizeAxis xs = MakeResizeAxis(in_w, out_w, st.align_corners, st.half_pixel_centers, res);
  for (int64_t n = 0; n < batch; ++n)
    for (int64_t y = 0; y < out_h; ++y)
      for (int64_t xo = 0; xo < out_w; ++xo)
        for (int64_t ch = 0; ch < c; ++ch) {
          const int64_t o = ((n * out_h + y) * out_w + xo) * c + ch;
          auto at = [&](int64_t row, int64_t col) {
            return ((n * in_h + row) * in_w + col) * c + ch;
          };
          if (same) {
            std::memcpy(static_cast<char*>(out->raw_data()) + o * DTypeSize(st.type),
                        static_cast<const char*>(x.raw_data()) + o * DTypeSize(st.type),
                        DTypeSize(st.type));
            continue;
          }
          const int64_t tl = at(ys.lower[y], xs.lower[xo]), tr = at(ys.lower[y], xs.upper[xo]);
          const int64_t bl = at(ys.upper[y], xs.lower[xo]), br = at(ys.upper[y], xs.upper[xo]);
          if (st.type == DType::kFloat) {
            const float* v = x.data<float>();
            const float top = v[tl] + (v[tr] - v[tl]) * xs.lerp[xo];
            const float bottom = v[bl] + (v[br] - v[bl]) * xs.lerp[xo];
            out->data<float>()[o] = top + (bottom - top) * ys.lerp[y];
          } else if (st.type == DType::kQUInt8) {
            const QUInt8* v = x.data<QUInt8>();
            const int64_t xl = xs.ilerp[xo], yl = ys.ilerp[y];
            const int64_t top = int64_t{v[tl].value} * 128 + (v[tr].value - v[tl].value) * xl;
            const int64_t bottom = int64_t{v[bl].value} * 128 + (v[br].value - v[bl].value) * xl;
            const int64_t value = top + ((bottom - top) / 128) * yl;
            out->data<QUInt8>()[o].value = static_cast<uint8_t>((value + 64) / 128);
          } else {
            // qint32 read through float, in int64 at 30 fractional bits.
            auto f = [&](int64_t k) {
              return static_cast<int64_t>(static_cast<float>(x.data<QInt32>()[k].value));
            };
            const int64_t one = int64_t{1} << 30;
            const int64_t xl = xs.ilerp[xo], yl = ys.ilerp[y];
            const int64_t top = f(tl) * one + (f(tr) - f(tl)) * xl;
            const int64_t bottom = f(bl) * one + (f(br) - f(bl)) * xl;
            const int64_t value = top + ((bottom - top) / one) * yl;
            out->data<QInt32>()[o].value =
                static_cast<int32_t>(static_cast<uint32_t>((value + (one >> 1)) / one));
          }
        }
  KILN_ASSIGN_OR_RETURN(Tensor * a, ctx.AllocateOutput(1, Shape{}));
  KILN_ASSIGN_OR_RETURN(Tensor * b, ctx.AllocateOutput(2, Shape{}));
  a->data<float>()[0] = ScalarFloat(ctx.input(2));
  b->data<float>()[0] = ScalarFloat(ctx.input(3));
  return OkStatus();
}

// ---- QuantizedBatchNormWithGlobalNormalization ---------------------------------------------

Status ComputeQuantizedBatchNorm(const KernelContext& ctx) {
  const auto& st = ctx.state<BatchNormState>();
  static constexpr std::string_view kNames[] = {"input", "mean", "var", "beta", "gamma"};
  for (int k = 0; k < 5; ++k) {
    KILN_RETURN_IF_ERROR(ExpectOneElementInput(ctx, 3 * k + 1, std::string(kNames[k]) + "_min"));
    KILN_RETURN_IF_ERROR(ExpectOneElementInput(ctx, 3 * k + 2, std::string(kNames[k]) + "_max"));
  }
  const Tensor& x = ctx.input(0);
  if (x.rank() != 4) return ctx.Error("input must be 4-dimensional", x.shape().ToString());
  const int64_t depth = x.dim(3);
  for (int k = 1; k < 5; ++k) {
    const Tensor& p = ctx.input(3 * k);
    if (p.rank() != 1) return ctx.Error(kNames[k], " must be 1-dimensional", p.shape().ToString());
    if (p.NumElements() != depth)
      return ctx.Error("Must provide as many ", kNames[k], " values as the last dimension of the ",
                       "input tensor: ", p.shape().ToString(), " vs. ", x.shape().ToString());
  }
  if (depth <= 1)
    return ctx.Error("Must have at least a mean value", ctx.input(3).shape().ToString());
  const float out_min = -1048576.0f, out_max = 1048576.0f;
  auto param = [&](int k, int64_t c) {
    return QuantizedToFloat(ctx.input(3 * k).data<QUInt8>()[c], ScalarFloat(ctx.input(3 * k + 1)),
                            ScalarFloat(ctx.input(3 * k + 2)));
  };
  std::vector<int32_t> scale_q(static_cast<size_t>(depth)), offset_q(static_cast<size_t>(depth));
  for (int64_t c = 0; c < depth; ++c) {
    float scale = 1.0f / std::sqrt(param(2, c) + st.epsilon);
    if (st.scale_after) scale *= param(4, c);
    const float offset = -param(1, c) * scale + param(3, c);
    scale_q[c] = FloatToQuantized<QInt32>(scale, out_min, out_max).value;
    offset_q[c] = FloatToQuantized<QInt32>(offset, out_min, out_max).value;
  }
  const int32_t one = FloatToQuantized<QInt32>(1.0f, out_min, out_max).value;
  const float in_min = ScalarFloat(ctx.input(1)), in_max = ScalarFloat(ctx.input(2));
  KILN_ASSIGN_OR_RETURN(Tensor * out, ctx.AllocateOutput(0, x.shape()));
  for (int64_t i = 0; i < x.NumElements(); ++i) {
    const int64_t c = i % depth;
    const int32_t in =
        RequantizeInNewRange<QUInt8, QInt32>(x.data<QUInt8>()[i], in_min, in_max, out_min, out_max)
            .value;
    const auto product =
        static_cast<int32_t>(static_cast<uint32_t>(in) * static_cast<uint32_t>(scale_q[c]));
    out->data<QInt32>()[i].value = static_cast<int32_t>(static_cast<uint32_t>(product / one) +
                                                        static_cast<uint32_t>(offset_q[c]));
  }
  KILN_ASSIGN_OR_RETURN(Tensor * a, ctx.AllocateOutput(1, Shape{}));
  KILN_ASSIGN_OR_RETURN(Tensor * b, ctx.AllocateOutput(2, Shape{}));
  a->data<float>()[0] = out_min;
  b->data<float>()[0] = out_max;
  return OkStatus();
}

// ---- QuantizedInstanceNorm -----------------------------------------------------------------

Status ComputeQuantizedInstanceNorm(const KernelContext& ctx) {
  const auto& st = ctx.state<InstanceNormState>();
  KILN_RETURN_IF_ERROR(ExpectScalarInput(ctx, 1, "x_min"));
  KILN_RETURN_IF_ERROR(ExpectScalarInput(ctx, 2, "x_max"));
  const float x_min = ScalarFloat(ctx.input(1)), x_max = ScalarFloat(ctx.input(2));
  if (!(x_min < x_max))
    return ctx.Error("input_min must be less than input_max : ", x_min, " >= ", x_max);
  const Tensor& x = ctx.input(0);
  if (x.rank() != 4) return ctx.Error("x must be 4-dimensional, got ", x.shape().ToString());
  const int64_t batch = x.dim(0), h = x.dim(1), w = x.dim(2), c = x.dim(3);
  const float step = (x_max - x_min) / 255.0f;
  const auto count = static_cast<float>(h * w);
  std::vector<float> y(static_cast<size_t>(x.NumElements()));
  auto at = [&](int64_t n, int64_t i, int64_t j, int64_t ch) {
    return ((n * h + i) * w + j) * c + ch;
  };
  for (int64_t n = 0; n < batch; ++n)
    for (int64_t ch = 0; ch < c; ++ch) {
      // TF's Eigen reductions over H and W: a sequential float sum, W outer, H inner.
      float sum = 0;
      for (int64_t j = 0; j < w; ++j)
        for (int64_t i = 0; i < h; ++i)
          sum += static_cast<float>(x.data<QUInt8>()[at(n, i, j, ch)].value);
      const float mean = sum / count;
      float sq = 0;
      for (int64_t j = 0; j < w; ++j)
        for (int64_t i = 0; i < h; ++i) {
          const float d =
              step * (static_cast<float>(x.data<QUInt8>()[at(n, i, j, ch)].value) - mean);
          sq += d * d;
        }
      const float inv_std = 1.0f / std::sqrt(sq / count + st.epsilon);
      for (int64_t i = 0; i < h; ++i)
        for (int64_t j = 0; j < w; ++j) {
          const int64_t k = at(n, i, j, ch);
          const float d = step * (static_cast<float>(x.data<QUInt8>()[k].value) - mean);
          y[k] = d * inv_std;
        }
    }
  float y_min = st.given_min, y_max = st.given_max;
  if (!st.range_given) {
    y_min = std::numeric_limits<float>::max();
    y_max = std::numeric_limits<float>::lowest();
    for (float v : y) {
      y_min = std::min(y_min, v);
      y_max = std::max(y_max, v);
    }
  }
  if (y_max - y_min < st.min_separation) y_max = y_min + st.min_separation;
  KILN_ASSIGN_OR_RETURN(Tensor * out, ctx.AllocateOutput(0, x.shape()));
  const EigenQuantizer<QUInt8> quantize(y_min, y_max);
  for (size_t k = 0; k < y.size(); ++k) out->data<QUInt8>()[k] = quantize(y[k]);
  KILN_ASSIGN_OR_RETURN(Tensor * a, ctx.AllocateOutput(1, Shape{}));
  KILN_ASSIGN_OR_RETURN(Tensor * b, ctx.AllocateOutput(2, Shape{}));
  a->data<float>()[0] = y_min;
  b->data<float>()[0] = y_max;
  return OkStatus();
}

constexpr KernelEntry kCpu[] = {
    {"QuantizedMaxPool", ComputeQuantizedPool<true>},
    {"QuantizedAvgPool", ComputeQuantizedPool<false>},
    {"QuantizedResizeBilinear", ComputeQuantizedResize},
    {"QuantizedBatchNormWithGlobalNormalization", ComputeQuantizedBatchNorm},
    {"QuantizedInstanceNorm", ComputeQuantizedInstanceNorm},
};

}  // namespace

std::span<const KernelEntry> QuantizedImageCpuKernels() { return kCpu; }

}  // namespace kiln::exec
