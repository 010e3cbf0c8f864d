// TF's uniform quantization ops (tensorflow/core/kernels/uniform_quant_ops): an integer q means
// (q - zero_point) * scale, per tensor or per `quantization_axis` slice. UniformQuantize,
// UniformDequantize, UniformRequantize (through TF's fixed-point multiplier and shift) and
// UniformQuantizedClipByValue, with TF's rounding (half toward +inf) and its casts (a float
// past int32, or NaN, becomes INT32_MIN before clamping). The products (UniformQuantizedDot,
// ...Convolution and their Hybrid forms) and UniformQuantizedAdd are not here yet.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "kernels/array_util.h"
#include "kernels/kernel_util.h"
#include "kernels/op_families.h"
#include "kernels/quantized_util.h"

namespace kiln::exec {
namespace {

using UniformTypes = TypeList<QInt8, QUInt8, QInt32>;

// The quantization of one operand: its axis and integer range (attrs with a prefix).
struct UniformSpec {
  int axis = -1;
  int64_t qmin = 0, qmax = 0;
};

Status ReadUniformSpec(const PrepareContext& ctx, const std::string& prefix, UniformSpec* s) {
  KILN_PREPARE_ASSIGN(ctx, int64_t axis, ctx.attrs.GetInt(prefix + "quantization_axis", -1));
  if (axis < -1) return ctx.Error(prefix, "quantization_axis must be >= -1, given: ", axis);
  s->axis = static_cast<int>(axis);
  KILN_PREPARE_ASSIGN(ctx, s->qmin, ctx.attrs.GetInt(prefix + "quantization_min_val"));
  KILN_PREPARE_ASSIGN(ctx, s->qmax, ctx.attrs.GetInt(prefix + "quantization_max_val"));
  return OkStatus();
}

// TF's QuantizationAxisAndShapeValid: scales and zero points scalars (axis -1) or vectors as
// long as the data's axis.
Status CheckScales(const KernelContext& ctx, const Shape& data, const Tensor& scales,
                   const Tensor& zero_points, int axis) {
  if (scales.shape() != zero_points.shape())
    return ctx.Error("scales and zero_points shape must be same, but given scales shape ",
                     scales.shape().ToString(), " and zero_points shape ",
                     zero_points.shape().ToString());
  if (axis < -1 || axis >= data.rank())
    return ctx.Error("quantization_axis must be -1 or in range [0, input.rank), but given ", axis);
  if (axis == -1 && scales.rank() != 0)
    return ctx.Error("If quantization_axis is -1, scales and zero_points must be scalar tensors, ",
                     "but given scales shape ", scales.shape().ToString());
  if (axis >= 0 && (scales.rank() != 1 || scales.dim(0) != data.dim(axis)))
    return ctx.Error("If quantization_axis is not -1, scales and zero_points must be a tensor of ",
                     "rank 1 and the size must be equal to the input.dim_size(",
                     "quantization_axis), but given quantization_axis ", axis, ", scales shape ",
                     scales.shape().ToString());
  return OkStatus();
}

Status CheckPositive(const KernelContext& ctx, const Tensor& scales, std::string_view who) {
  for (float s : std::span(scales.data<float>(), static_cast<size_t>(scales.NumElements())))
    if (!(s > 0)) return ctx.Error(who, " scales elements must be all positive.");
  return OkStatus();
}

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

// float to int32 as x86's conversion: NaN and values past int32 give INT32_MIN.
int32_t ToInt32(float v) {
  if (!(v >= -2147483648.0f && v < 2147483648.0f)) return std::numeric_limits<int32_t>::min();
  return static_cast<int32_t>(v);
}

template <typename Q>
Q Clamped(int64_t v, int64_t qmin, int64_t qmax) {
  return Q{static_cast<typename QuantTraits<Q>::Int>(std::max(std::min(v, qmax), qmin))};
}

struct UniformState : OpState {
  DType in = DType::kFloat, out = DType::kFloat;
  UniformSpec spec, out_spec;
};

// ---- UniformQuantize, UniformDequantize ----------------------------------------------------

template <bool kQuantize>
Status PrepareUniformConvert(PrepareContext& ctx) {
  KILN_RETURN_IF_ERROR(ctx.ExpectInputs(3));
  auto st = std::make_shared<UniformState>();
  KILN_PREPARE_ASSIGN(ctx, st->in, ctx.attrs.GetType("Tin"));
  KILN_PREPARE_ASSIGN(ctx, st->out, ctx.attrs.GetType("Tout"));
  const DType q = kQuantize ? st->out : st->in;
  KILN_RETURN_IF_ERROR(ExpectAttrDTypeIn(ctx, kQuantize ? "Tin" : "Tout",
                                         kQuantize ? st->in : st->out, {DType::kFloat}));
  KILN_RETURN_IF_ERROR(
      ExpectAttrDTypeIn(ctx, kQuantize ? "Tout" : "Tin", q, UniformTypes::kDTypes));
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 0, "input", st->in));
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 1, "scales", DType::kFloat));
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 2, "zero_points", DType::kInt32));
  KILN_RETURN_IF_ERROR(ReadUniformSpec(ctx, "", &st->spec));
  ctx.outputs = {TensorSpec{st->out, ctx.inputs[0].shape}};
  ctx.state = std::move(st);
  return OkStatus();
}

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

// TF's QuantizeMultiplier: a double multiplier as a Q31 fixed-point value and a shift.
void QuantizeMultiplier(double m, int32_t* fixed, int* shift) {
  const double q = std::frexp(m, shift);
  auto q_fixed = static_cast<int64_t>(std::round(q * static_cast<double>(int64_t{1} << 31)));
  if (q_fixed == (int64_t{1} << 31)) {
    q_fixed /= 2;
    ++*shift;
  }
  if (*shift < -31) {
    *shift = 0;
    q_fixed = 0;
  }
  if (*shift > 30) {
    *shift = 30;
    q_fixed = (int64_t{1} << 31) - 1;
  }
  *fixed = static_cast<int32_t>(q_fixed);
}

// x * multiplier, rounding half toward +inf, saturated to int32.
int64_t MultiplyByQuantizedMultiplier(int64_t x, int32_t fixed, int shift) {
  const int total = 31 - shift;
  const int64_t r = (x * fixed + (int64_t{1} << (total - 1))) >> total;
  return std::clamp<int64_t>(r, std::numeric_limits<int32_t>::min(),
                             std::numeric_limits<int32_t>::max());
}

Status PrepareUniformRequantize(PrepareContext& ctx) {
  KILN_RETURN_IF_ERROR(ctx.ExpectInputs(5));
  auto st = std::make_shared<UniformState>();
  KILN_PREPARE_ASSIGN(ctx, st->in, ctx.attrs.GetType("Tin"));
  KILN_PREPARE_ASSIGN(ctx, st->out, ctx.attrs.GetType("Tout"));
  KILN_RETURN_IF_ERROR(ExpectAttrDTypeIn(ctx, "Tin", st->in, {DType::kQInt8, DType::kQInt32}));
  KILN_RETURN_IF_ERROR(ExpectAttrDTypeIn(ctx, "Tout", st->out, {DType::kQInt8, DType::kQInt32}));
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 0, "input", st->in));
  for (int i : {1, 3}) KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, i, "scales", DType::kFloat));
  for (int i : {2, 4}) KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, i, "zero_points", DType::kInt32));
  KILN_RETURN_IF_ERROR(ReadUniformSpec(ctx, "input_", &st->spec));
  KILN_RETURN_IF_ERROR(ReadUniformSpec(ctx, "output_", &st->out_spec));
  if (st->spec.axis >= 0 && st->out_spec.axis >= 0 && st->spec.axis != st->out_spec.axis)
    return ctx.Error("If input and output is both per-axis quantized, the quantization axis ",
                     "must be same.");
  ctx.outputs = {TensorSpec{st->out, ctx.inputs[0].shape}};
  ctx.state = std::move(st);
  return OkStatus();
}

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

Status PrepareUniformClip(PrepareContext& ctx) {
  KILN_RETURN_IF_ERROR(ctx.ExpectInputs(5));
  auto st = std::make_shared<UniformState>();
  KILN_PREPARE_ASSIGN(ctx, st->in, ctx.attrs.GetType("T"));
  KILN_RETURN_IF_ERROR(ExpectAttrDTypeIn(ctx, "T", st->in, {DType::kQInt32}));
  for (int i = 0; i < 3; ++i) KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, i, "operand", st->in));
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 3, "scales", DType::kFloat));
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 4, "zero_points", DType::kInt32));
  KILN_RETURN_IF_ERROR(ReadUniformSpec(ctx, "", &st->spec));
  ctx.outputs = {TensorSpec{st->in, ctx.inputs[0].shape}};
  ctx.state = std::move(st);
  return OkStatus();
}

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

constexpr OpDefinition kDefs[] = {
    {"UniformQuantize", "output", kOpFreshOutputs, PrepareUniformConvert<true>},
    {"UniformDequantize", "output", kOpFreshOutputs, PrepareUniformConvert<false>},
    {"UniformRequantize", "output", kOpFreshOutputs, PrepareUniformRequantize},
    {"UniformQuantizedClipByValue", "output", kOpFreshOutputs, PrepareUniformClip},
};

constexpr KernelEntry kCpu[] = {
    {"UniformQuantize", ComputeUniformConvert<true>},
    {"UniformDequantize", ComputeUniformConvert<false>},
    {"UniformRequantize", ComputeUniformRequantize},
    {"UniformQuantizedClipByValue", ComputeUniformClip},
};

}  // namespace

std::span<const OpDefinition> UniformQuantizedOpDefs() { return kDefs; }
std::span<const KernelEntry> UniformQuantizedCpuKernels() { return kCpu; }

}  // namespace kiln::exec
