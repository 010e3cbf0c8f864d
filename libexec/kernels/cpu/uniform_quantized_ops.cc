// The CPU kernels of TF's uniform quantization ops in kernels/uniform_quantized_ops.cc, with TF's
// rounding (half toward +inf), its casts (a float past int32, or NaN, becomes INT32_MIN before
// clamping) and its fixed-point requantization.
#include "kernels/uniform_quantized_ops.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <string_view>
#include <tuple>
#include <vector>

#include "kernels/kernel_util.h"
#include "kernels/type_lists.h"
#include "kernels/uniform_quantized_util.h"

namespace kiln::exec {
namespace {

using uniform_quantized::AddState;
using uniform_quantized::DotState;
using uniform_quantized::UniformState;
using uniform_quantized::UniformTypes;

// The slice index of flat element i along axis (0 for per-tensor).
struct AxisIndex {
  int64_t inner = 1, depth = 1;
  AxisIndex(const Shape& s, int axis) {
    if (axis < 0) return;
    depth = s.dim(axis);
    for (int d = axis + 1; d < s.rank(); ++d) inner *= s.dim(d);
  }
  int64_t operator()(int64_t i) const { return depth == 1 ? 0 : (i / inner) % depth; }
};

// ---- UniformQuantize, UniformDequantize ----------------------------------------------------

template <bool kQuantize>
Status ComputeUniformConvert(const KernelContext& ctx) {
  const auto& st = ctx.state<UniformState>();
  const Tensor& x = ctx.input(0);
  const Tensor& scales = ctx.input(1);
  const Tensor& zps = ctx.input(2);
  KILN_RETURN_IF_ERROR(CheckScales(ctx, x.shape(), scales, zps, st.spec.axis));
  if (!kQuantize) KILN_RETURN_IF_ERROR(CheckPositive(ctx, scales, "rhs"));
  KILN_ASSIGN_OR_RETURN(Tensor * out, ctx.AllocateOutput(0, x.shape()));
  const AxisIndex channel(x.shape(), st.spec.axis);
  return Dispatch<UniformTypes>(kQuantize ? st.out : st.in, [&](auto tag) -> Status {
    using Q = typename decltype(tag)::type;
    for (int64_t i = 0; i < x.NumElements(); ++i) {
      const int64_t c = channel(i);
      const int32_t zp = zps.data<int32_t>()[c];
      if constexpr (kQuantize) {
        const float inv = 1.0f / scales.data<float>()[c];
        const int32_t level = ToInt32(std::floor(x.data<float>()[i] * inv + 0.5f));
        const auto shifted =
            static_cast<int32_t>(static_cast<uint32_t>(level) + static_cast<uint32_t>(zp));
        out->data<Q>()[i] = Clamped<Q>(shifted, st.spec.qmin, st.spec.qmax);
      } else {
        const auto v = static_cast<int32_t>(static_cast<uint32_t>(x.data<Q>()[i].value) -
                                            static_cast<uint32_t>(zp));
        out->data<float>()[i] = static_cast<float>(v) * scales.data<float>()[c];
      }
    }
    return OkStatus();
  });
}

// ---- UniformRequantize ---------------------------------------------------------------------

Status ComputeUniformRequantize(const KernelContext& ctx) {
  const auto& st = ctx.state<UniformState>();
  const Tensor& x = ctx.input(0);
  KILN_RETURN_IF_ERROR(CheckScales(ctx, x.shape(), ctx.input(1), ctx.input(2), st.spec.axis));
  KILN_RETURN_IF_ERROR(CheckScales(ctx, x.shape(), ctx.input(3), ctx.input(4), st.out_spec.axis));
  KILN_RETURN_IF_ERROR(CheckPositive(ctx, ctx.input(1), "input"));
  KILN_RETURN_IF_ERROR(CheckPositive(ctx, ctx.input(3), "output"));
  const int axis = st.spec.axis >= 0 ? st.spec.axis : st.out_spec.axis;
  const AxisIndex channel(x.shape(), axis);
  const bool per_in = st.spec.axis >= 0, per_out = st.out_spec.axis >= 0;
  std::vector<int32_t> fixed(static_cast<size_t>(channel.depth));
  std::vector<int> shift(static_cast<size_t>(channel.depth));
  for (int64_t c = 0; c < channel.depth; ++c) {
    const double m = static_cast<double>(ctx.input(1).data<float>()[per_in ? c : 0]) /
                     ctx.input(3).data<float>()[per_out ? c : 0];
    QuantizeMultiplier(m, &fixed[c], &shift[c]);
  }
  KILN_ASSIGN_OR_RETURN(Tensor * out, ctx.AllocateOutput(0, x.shape()));
  for (int64_t i = 0; i < x.NumElements(); ++i) {
    const int64_t c = channel(i);
    const int64_t in =
        x.dtype() == DType::kQInt8 ? x.data<QInt8>()[i].value : x.data<QInt32>()[i].value;
    const int64_t v = MultiplyByQuantizedMultiplier(
                          in - ctx.input(2).data<int32_t>()[per_in ? c : 0], fixed[c], shift[c]) +
                      ctx.input(4).data<int32_t>()[per_out ? c : 0];
    if (st.out == DType::kQInt8) {
      out->data<QInt8>()[i] = Clamped<QInt8>(v, st.out_spec.qmin, st.out_spec.qmax);
    } else {
      out->data<QInt32>()[i] = Clamped<QInt32>(v, st.out_spec.qmin, st.out_spec.qmax);
    }
  }
  return OkStatus();
}

// ---- UniformQuantizedClipByValue -----------------------------------------------------------

Status ComputeUniformClip(const KernelContext& ctx) {
  const auto& st = ctx.state<UniformState>();
  const Tensor& x = ctx.input(0);
  const Tensor& scales = ctx.input(3);
  KILN_RETURN_IF_ERROR(CheckScales(ctx, x.shape(), scales, ctx.input(4), st.spec.axis));
  for (int i : {1, 2})
    if (ctx.input(i).shape() != scales.shape())
      return ctx.Error("Input ", i == 1 ? "min" : "max",
                       " shape must be same as scales/zero_points. Given ", i == 1 ? "min" : "max",
                       " of shape ", ctx.input(i).shape().ToString(),
                       " and scales/zero_points of shape ", scales.shape().ToString());
  KILN_ASSIGN_OR_RETURN(Tensor * out, ctx.AllocateOutput(0, x.shape()));
  const AxisIndex channel(x.shape(), st.spec.axis);
  for (int64_t i = 0; i < x.NumElements(); ++i) {
    const int64_t c = channel(i);
    out->data<QInt32>()[i].value =
        std::min(std::max(x.data<QInt32>()[i].value, ctx.input(1).data<QInt32>()[c].value),
                 ctx.input(2).data<QInt32>()[c].value);
  }
  return OkStatus();
}

// ---- UniformQuantizedAdd -------------------------------------------------------------------

// An operand of UniformQuantizedAdd requantized to the output's scales with zero point 0.
Status RequantizeOperand(const KernelContext& ctx, const Tensor& x, int first, int axis,
                         int out_axis, std::string_view who, std::vector<int64_t>* out) {
  const Tensor& scales = ctx.input(first);
  const Tensor& zps = ctx.input(first + 1);
  KILN_RETURN_IF_ERROR(CheckScales(ctx, x.shape(), scales, zps, axis));
  KILN_RETURN_IF_ERROR(CheckPositive(ctx, scales, who));
  const Tensor& out_scales = ctx.input(6);
  const int target = out_axis == -1 ? -1 : axis;
  if (out_axis >= 0 && axis < 0)
    return ctx.Error(who, " is per-tensor quantized and output per-axis: not supported (",
                     "TensorFlow's kernel aborts)");
  const AxisIndex channel(x.shape(), axis >= 0 ? axis : target);
  // One multiplier per channel, as UniformRequantize.
  std::vector<int32_t> fixed(static_cast<size_t>(channel.depth));
  std::vector<int> shift(static_cast<size_t>(channel.depth));
  for (int64_t c = 0; c < channel.depth; ++c) {
    const double m = static_cast<double>(scales.data<float>()[axis >= 0 ? c : 0]) /
                     out_scales.data<float>()[target >= 0 ? c : 0];
    QuantizeMultiplier(m, &fixed[c], &shift[c]);
  }
  out->resize(static_cast<size_t>(x.NumElements()));
  for (int64_t i = 0; i < x.NumElements(); ++i) {
    const int64_t c = channel(i);
    (*out)[i] = MultiplyByQuantizedMultiplier(
        int64_t{x.data<QInt32>()[i].value} - zps.data<int32_t>()[axis >= 0 ? c : 0], fixed[c],
        shift[c]);
  }
  return OkStatus();
}

Status ComputeUniformAdd(const KernelContext& ctx) {
  const auto& st = ctx.state<AddState>();
  const Tensor& lhs = ctx.input(0);
  const Tensor& rhs = ctx.input(1);
  auto shape = BroadcastShapes(lhs.shape(), rhs.shape());
  if (!shape.ok())
    return ctx.Error("Cannot Add tensors of shapes: ", lhs.shape().ToString(),
                     rhs.shape().ToString());
  KILN_RETURN_IF_ERROR(CheckScales(ctx, *shape, ctx.input(6), ctx.input(7), st.out.axis));
  KILN_RETURN_IF_ERROR(CheckPositive(ctx, ctx.input(6), "output"));
  for (const auto& [operand, spec, who] :
       {std::tuple{&lhs, &st.lhs, "lhs"}, std::tuple{&rhs, &st.rhs, "rhs"}})
    if (spec->axis >= 0 && st.out.axis >= 0 &&
        operand->rank() - spec->axis != shape->rank() - st.out.axis)
      return ctx.Error("If ", who, " and output is both per-axis quantized, the quantization ",
                       "axis must match.");
  std::vector<int64_t> l, r;
  KILN_RETURN_IF_ERROR(RequantizeOperand(ctx, lhs, 2, st.lhs.axis, st.out.axis, "lhs", &l));
  KILN_RETURN_IF_ERROR(RequantizeOperand(ctx, rhs, 4, st.rhs.axis, st.out.axis, "rhs", &r));
  const BroadcastPlan plan = MakeBroadcastPlan(lhs.shape(), rhs.shape(), *shape);
  const AxisIndex channel(*shape, st.out.axis);
  KILN_ASSIGN_OR_RETURN(Tensor * out, ctx.AllocateOutput(0, *shape));
  std::array<int64_t, kMaxRank> idx{};
  for (int64_t i = 0; i < plan.num_elements; ++i) {
    int64_t a = 0, b = 0;
    for (int d = 0; d < plan.rank; ++d) {
      a += idx[d] * plan.a_strides[d];
      b += idx[d] * plan.b_strides[d];
    }
    const auto sum =
        static_cast<int32_t>(static_cast<uint32_t>(l[a]) + static_cast<uint32_t>(r[b]) +
                             static_cast<uint32_t>(ctx.input(7).data<int32_t>()[channel(i)]));
    out->data<QInt32>()[i] = Clamped<QInt32>(sum, st.out.qmin, st.out.qmax);
    for (int d = plan.rank - 1; d >= 0 && ++idx[d] == plan.dims[d]; --d) idx[d] = 0;
  }
  return OkStatus();
}

// ---- UniformQuantizedDot, UniformQuantizedDotHybrid ----------------------------------------

Status ComputeUniformDot(const KernelContext& ctx) {
  const auto& st = ctx.state<DotState>();
  const Tensor& lhs = ctx.input(0);
  const Tensor& rhs = ctx.input(1);
  if (lhs.rank() != 2)
    return ctx.Error("lhs rank must be 2, but given lhs shape ", lhs.shape().ToString());
  if (rhs.rank() != 2)
    return ctx.Error("rhs rank must be 2, but given rhs shape ", rhs.shape().ToString());
  if (lhs.dim(1) != rhs.dim(0))
    return ctx.Error("lhs.dim_size(1) and rhs.dim_size(0) must be equal, but given lhs shape ",
                     lhs.shape().ToString(), " and rhs shape ", rhs.shape().ToString());
  const int rhs_in = st.hybrid ? 2 : 4;
  const int rhs_axis = ctx.input(rhs_in).rank() == 1 ? 1 : -1;
  KILN_RETURN_IF_ERROR(
      CheckScales(ctx, rhs.shape(), ctx.input(rhs_in), ctx.input(rhs_in + 1), rhs_axis));
  KILN_RETURN_IF_ERROR(CheckPositive(ctx, ctx.input(rhs_in), "rhs"));
  const int64_t b = lhs.dim(0), k = lhs.dim(1), n = rhs.dim(1);
  const float* rs = ctx.input(rhs_in).data<float>();
  const int32_t* rz = ctx.input(rhs_in + 1).data<int32_t>();
  auto rhs_at = [&](int64_t p, int64_t j) {
    return int64_t{rhs.data<QInt8>()[p * n + j].value} - rz[rhs_axis >= 0 ? j : 0];
  };
  KILN_ASSIGN_OR_RETURN(Tensor * out, ctx.AllocateOutput(0, Shape{b, n}));
  if (st.hybrid) {
    std::vector<int32_t> q;
    for (int64_t i = 0; i < b; ++i) {
      float scale;
      int32_t zp;
      QuantizeRow(lhs.data<float>() + i * k, k, &q, &scale, &zp);
      for (int64_t j = 0; j < n; ++j) {
        int32_t acc = 0;
        for (int64_t p = 0; p < k; ++p)
          acc = static_cast<int32_t>(static_cast<uint32_t>(acc) +
                                     static_cast<uint32_t>((q[p] - zp) * rhs_at(p, j)));
        out->data<float>()[i * n + j] = static_cast<float>(acc) * scale * rs[rhs_axis >= 0 ? j : 0];
      }
    }
    return OkStatus();
  }
  if (ctx.input(2).rank() != 0 || ctx.input(3).rank() != 0)
    return ctx.Error("lhs scales/zero_points must be all scalar tensors. Given: ",
                     ctx.input(2).shape().ToString());
  const int out_axis = ctx.input(6).rank() == 1 ? 1 : -1;
  if (rhs_axis == -1 && out_axis == 1)
    return ctx.Error("If rhs is per-tensor quantized, output must be also per-tensor quantized.");
  KILN_RETURN_IF_ERROR(CheckScales(ctx, Shape{b, n}, ctx.input(6), ctx.input(7), out_axis));
  KILN_RETURN_IF_ERROR(CheckPositive(ctx, ctx.input(2), "lhs"));
  KILN_RETURN_IF_ERROR(CheckPositive(ctx, ctx.input(6), "output"));
  const float ls = ctx.input(2).data<float>()[0];
  const int32_t lz = ctx.input(3).data<int32_t>()[0];
  for (int64_t j = 0; j < n; ++j) {
    const double m = static_cast<double>(ls) * rs[rhs_axis >= 0 ? j : 0] /
                     ctx.input(6).data<float>()[out_axis >= 0 ? j : 0];
    int32_t fixed;
    int shift;
    QuantizeMultiplier(m, &fixed, &shift);
    const int32_t oz = ctx.input(7).data<int32_t>()[out_axis >= 0 ? j : 0];
    for (int64_t i = 0; i < b; ++i) {
      int32_t acc = 0;
      for (int64_t p = 0; p < k; ++p)
        acc = static_cast<int32_t>(
            static_cast<uint32_t>(acc) +
            static_cast<uint32_t>((int64_t{lhs.data<QInt8>()[i * k + p].value} - lz) *
                                  rhs_at(p, j)));
      out->data<QInt32>()[i * n + j] = Clamped<QInt32>(
          MultiplyByQuantizedMultiplier(acc, fixed, shift) + oz, st.out.qmin, st.out.qmax);
    }
  }
  return OkStatus();
}

constexpr KernelEntry kCpu[] = {
    {"UniformQuantize", ComputeUniformConvert<true>},
    {"UniformDequantize", ComputeUniformConvert<false>},
    {"UniformRequantize", ComputeUniformRequantize},
    {"UniformQuantizedClipByValue", ComputeUniformClip},
    {"UniformQuantizedAdd", ComputeUniformAdd},
    {"UniformQuantizedDot", ComputeUniformDot},
    {"UniformQuantizedDotHybrid", ComputeUniformDot},
};

}  // namespace

std::span<const KernelEntry> UniformQuantizedCpuKernels() { return kCpu; }

}  // namespace kiln::exec
