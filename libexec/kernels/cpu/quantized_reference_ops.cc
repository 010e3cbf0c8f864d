// The CPU kernels of TF's reference quantized products in kernels/quantized_reference_ops.cc:
// the integers are sum((a - a0) * (b - b0)), exact and wrapping as TF's gemmlowp path, and the
// range is one level of a times one of b.
#include "kernels/quantized_reference_ops.h"

#include <algorithm>
#include <array>
#include <cstdint>
#include <string_view>
#include <vector>

#include "kernels/kernel_util.h"
#include "kernels/quantized_util.h"
#include "kernels/window_util.h"

namespace kiln::exec {
namespace {

using quantized_reference::ClassicState;

// ---- QuantizedMatMul, QuantizedConv2D (reference kernels, with zero points) ----------------

Status ClassicRanges(const KernelContext& ctx, bool conv, float r[4]) {
  static constexpr std::string_view kMatMul[] = {"min_a", "max_a", "min_b", "max_b"};
  static constexpr std::string_view kConv[] = {"min_input", "max_input", "min_filter",
                                               "max_filter"};
  for (int i = 0; i < 4; ++i) {
    const Tensor& t = ctx.input(2 + i);
    if (conv ? t.rank() != 0 : t.NumElements() != 1)
      return ctx.Error(conv ? kConv[i] : kMatMul[i], " must be a scalar, but got shape ",
                       t.shape().ToString());
    r[i] = ScalarFloat(t);
  }
  if (!conv && !(r[1] > r[0])) return ctx.Error("max_a must be larger than min_a.");
  if (!conv && !(r[3] > r[2])) return ctx.Error("max_b must be larger than min_b.");
  return OkStatus();
}

Status WriteProductRange(const KernelContext& ctx, const float r[4]) {
  float mn, mx;
  QuantizationRangeForMultiplication<QUInt8, QUInt8, QInt32>(r[0], r[1], r[2], r[3], &mn, &mx);
  KILN_ASSIGN_OR_RETURN(Tensor * a, ctx.AllocateOutput(1, Shape{}));
  KILN_ASSIGN_OR_RETURN(Tensor * b, ctx.AllocateOutput(2, Shape{}));
  a->data<float>()[0] = mn;
  b->data<float>()[0] = mx;
  return OkStatus();
}

int32_t WrapAdd(int32_t a, int32_t b) {
  return static_cast<int32_t>(static_cast<uint32_t>(a) + static_cast<uint32_t>(b));
}
int32_t WrapMul(int32_t a, int32_t b) {
  return static_cast<int32_t>(static_cast<uint32_t>(a) * static_cast<uint32_t>(b));
}

Status ComputeQuantizedMatMul(const KernelContext& ctx) {
  const auto& st = ctx.state<ClassicState>();
  float r[4];
  KILN_RETURN_IF_ERROR(ClassicRanges(ctx, false, r));
  const Tensor& a = ctx.input(0);
  const Tensor& b = ctx.input(1);
  if (a.rank() != 2) return ctx.Error("In[0] is not a matrix");
  if (b.rank() != 2) return ctx.Error("In[1] is not a matrix");
  const int64_t m = a.dim(st.transpose_a ? 1 : 0), k = a.dim(st.transpose_a ? 0 : 1);
  const int64_t n = b.dim(st.transpose_b ? 0 : 1);
  if (b.dim(st.transpose_b ? 1 : 0) != k)
    return ctx.Error("Matrix size-incompatible: In[0]: ", a.shape().ToString(),
                     ", In[1]: ", b.shape().ToString());
  const auto oa = static_cast<int32_t>(FloatToQuantizedUnclamped<QUInt8>(0.0f, r[0], r[1]));
  const auto ob = static_cast<int32_t>(FloatToQuantizedUnclamped<QUInt8>(0.0f, r[2], r[3]));
  const auto* av = reinterpret_cast<const uint8_t*>(a.raw_data());
  const auto* bv = reinterpret_cast<const uint8_t*>(b.raw_data());
  KILN_ASSIGN_OR_RETURN(Tensor * out, ctx.AllocateOutput(0, Shape{m, n}));
  ctx.threads().ParallelFor(m, 1, [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i)
      for (int64_t j = 0; j < n; ++j) {
        int32_t acc = 0;
        for (int64_t p = 0; p < k; ++p) {
          const int32_t x = av[st.transpose_a ? p * m + i : i * k + p] - oa;
          const int32_t y = bv[st.transpose_b ? j * k + p : p * n + j] - ob;
          acc = WrapAdd(acc, WrapMul(x, y));
        }
        out->data<QInt32>()[i * n + j].value = acc;
      }
  });
  return WriteProductRange(ctx, r);
}

Status ComputeQuantizedConv2D(const KernelContext& ctx) {
  const auto& st = ctx.state<ClassicState>();
  const Tensor& x = ctx.input(0);
  const Tensor& w = ctx.input(1);
  for (int i : {0, 1}) {
    const Tensor& t = ctx.input(i);
    for (int d = 0; d < t.rank(); ++d)
      if (t.dim(d) == 0) return ctx.Error("Invalid input: Shapes dimension cannot be 0.");
  }
  if (x.rank() != 4) return ctx.Error("input must be rank 4 but is rank ", x.rank());
  if (w.rank() != 4) return ctx.Error("filter must be rank 4 but is rank ", w.rank());
  float r[4];
  KILN_RETURN_IF_ERROR(ClassicRanges(ctx, true, r));
  const int64_t batch = x.dim(0), h = x.dim(1), wd = x.dim(2), in_c = x.dim(3);
  const int64_t kh = w.dim(0), kw = w.dim(1), out_c = w.dim(3);
  if (w.dim(2) != in_c)
    return ctx.Error("input and filter must have the same depth: ", in_c, " vs ", w.dim(2));
  std::array<WindowDim, 2> dims;
  for (int d = 0; d < 2; ++d) {
    dims[d].in = x.dim(1 + d);
    dims[d].k = w.dim(d);
    dims[d].stride = st.stride;
    KILN_RETURN_IF_ERROR(ComputeWindowDim(st.padding, &dims[d]));
  }
  const int64_t oh_n = dims[0].out, ow_n = dims[1].out;
  // TF's offsets: C division of the SAME padding (truncating), none for VALID.
  const int64_t top =
      st.padding == WindowPadding::kSame ? ((oh_n - 1) * st.stride + kh - h) / 2 : 0;
  const int64_t left =
      st.padding == WindowPadding::kSame ? ((ow_n - 1) * st.stride + kw - wd) / 2 : 0;
  const auto oi = static_cast<int32_t>(FloatToQuantizedUnclamped<QUInt8>(0.0f, r[0], r[1]));
  const auto of = static_cast<int32_t>(FloatToQuantizedUnclamped<QUInt8>(0.0f, r[2], r[3]));
  // Padding: TF's im2col fills with the offset's low byte (a real 0 unless max_input < 0);
  // with a negative offset its reference path pads with a real 0.
  const int32_t pad = oi < 0 ? 0 : (oi & 0xff) - oi;
  const auto* xv = reinterpret_cast<const uint8_t*>(x.raw_data());
  const auto* wv = reinterpret_cast<const uint8_t*>(w.raw_data());
  KILN_ASSIGN_OR_RETURN(Tensor * out, ctx.AllocateOutput(0, Shape{batch, oh_n, ow_n, out_c}));
  ctx.threads().ParallelFor(batch * oh_n, 1, [&](int64_t begin, int64_t end) {
    std::vector<int32_t> acc(static_cast<size_t>(out_c));
    for (int64_t row = begin; row < end; ++row) {
      const int64_t n = row / oh_n, oh = row % oh_n;
      for (int64_t ow = 0; ow < ow_n; ++ow) {
        std::fill(acc.begin(), acc.end(), 0);
        for (int64_t i = 0; i < kh; ++i)
          for (int64_t j = 0; j < kw; ++j) {
            const int64_t ih = oh * st.stride - top + i, iw = ow * st.stride - left + j;
            const bool inside = ih >= 0 && ih < h && iw >= 0 && iw < wd;
            for (int64_t ci = 0; ci < in_c; ++ci) {
              const int32_t v = inside ? xv[((n * h + ih) * wd + iw) * in_c + ci] - oi : pad;
              const uint8_t* wrow = wv + ((i * kw + j) * in_c + ci) * out_c;
              for (int64_t co = 0; co < out_c; ++co)
                acc[co] = WrapAdd(acc[co], WrapMul(v, wrow[co] - of));
            }
          }
        QInt32* o = out->data<QInt32>() + ((n * oh_n + oh) * ow_n + ow) * out_c;
        for (int64_t co = 0; co < out_c; ++co) o[co].value = acc[co];
      }
    }
  });
  return WriteProductRange(ctx, r);
}

constexpr KernelEntry kCpu[] = {
    {"QuantizedMatMul", ComputeQuantizedMatMul},
    {"QuantizedConv2D", ComputeQuantizedConv2D},
};

}  // namespace

std::span<const KernelEntry> QuantizedReferenceCpuKernels() { return kCpu; }

}  // namespace kiln::exec
