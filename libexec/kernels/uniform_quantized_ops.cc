// TF's uniform quantization ops (tensorflow/core/kernels/uniform_quant_ops): an integer q means
// (q - zero_point) * scale, per tensor or per `quantization_axis` slice. UniformQuantize,
// UniformDequantize, UniformRequantize (through TF's fixed-point multiplier and shift) and
// UniformQuantizedClipByValue, with TF's rounding (half toward +inf) and its casts (a float
// past int32, or NaN, becomes INT32_MIN before clamping); UniformQuantizedAdd (both operands
// requantized to the output's scales, then added) and UniformQuantizedDot and its Hybrid form
// (float lhs quantized per row, asymmetric int8); UniformQuantizedConvolution and its Hybrid
// form, N-D with XLA-style dimension numbers (a serialized proto in the attr), lhs and rhs
// dilation, padding and feature and batch groups.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <string_view>
#include <tuple>
#include <utility>
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

// ---- UniformQuantizedAdd -------------------------------------------------------------------

struct AddState : OpState {
  UniformSpec lhs, rhs, out;
};

Status PrepareUniformAdd(PrepareContext& ctx) {
  KILN_RETURN_IF_ERROR(ctx.ExpectInputs(8));
  auto st = std::make_shared<AddState>();
  KILN_PREPARE_ASSIGN(ctx, DType t, ctx.attrs.GetType("T"));
  KILN_RETURN_IF_ERROR(ExpectAttrDTypeIn(ctx, "T", t, {DType::kQInt32}));
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 0, "lhs", t));
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 1, "rhs", t));
  for (int i = 2; i < 8; i += 2) {
    KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, i, "scales", DType::kFloat));
    KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, i + 1, "zero_points", DType::kInt32));
  }
  KILN_RETURN_IF_ERROR(ReadUniformSpec(ctx, "lhs_", &st->lhs));
  KILN_RETURN_IF_ERROR(ReadUniformSpec(ctx, "rhs_", &st->rhs));
  KILN_RETURN_IF_ERROR(ReadUniformSpec(ctx, "output_", &st->out));
  auto shape = BroadcastPartialShapes(ctx.inputs[0].shape, ctx.inputs[1].shape);
  if (!shape.ok()) return ctx.Error(shape.status().message());
  ctx.outputs = {TensorSpec{t, *shape}};
  ctx.state = std::move(st);
  return OkStatus();
}

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

// The operands of a uniform quantized product (Dot, Convolution) and their quantization attrs:
// qint8 x qint8 -> qint32, or the Hybrid form float x qint8 -> float (rhs attrs only).
Status ReadProductOperands(PrepareContext& ctx, bool hybrid, UniformSpec* lhs, UniformSpec* rhs,
                           UniformSpec* out) {
  KILN_RETURN_IF_ERROR(ctx.ExpectInputs(hybrid ? 4 : 8));
  if (hybrid) {
    KILN_PREPARE_ASSIGN(ctx, DType l, ctx.attrs.GetType("Tlhs"));
    KILN_PREPARE_ASSIGN(ctx, DType r, ctx.attrs.GetType("Trhs"));
    KILN_PREPARE_ASSIGN(ctx, DType o, ctx.attrs.GetType("Tout"));
    KILN_RETURN_IF_ERROR(ExpectAttrDTypeIn(ctx, "Tlhs", l, {DType::kFloat}));
    KILN_RETURN_IF_ERROR(ExpectAttrDTypeIn(ctx, "Trhs", r, {DType::kQInt8}));
    KILN_RETURN_IF_ERROR(ExpectAttrDTypeIn(ctx, "Tout", o, {DType::kFloat}));
    KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 0, "lhs", DType::kFloat));
    KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 1, "rhs", DType::kQInt8));
    KILN_RETURN_IF_ERROR(ReadUniformSpec(ctx, "rhs_", rhs));
  } else {
    KILN_PREPARE_ASSIGN(ctx, DType in, ctx.attrs.GetType("Tin"));
    KILN_PREPARE_ASSIGN(ctx, DType o, ctx.attrs.GetType("Tout"));
    KILN_RETURN_IF_ERROR(ExpectAttrDTypeIn(ctx, "Tin", in, {DType::kQInt8}));
    KILN_RETURN_IF_ERROR(ExpectAttrDTypeIn(ctx, "Tout", o, {DType::kQInt32}));
    KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 0, "lhs", in));
    KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 1, "rhs", in));
    KILN_RETURN_IF_ERROR(ReadUniformSpec(ctx, "lhs_", lhs));
    KILN_RETURN_IF_ERROR(ReadUniformSpec(ctx, "rhs_", rhs));
    KILN_RETURN_IF_ERROR(ReadUniformSpec(ctx, "output_", out));
    if (lhs->axis != -1) return ctx.Error("lhs_quantization_axis Attr must be -1 (per-tensor).");
  }
  for (int i = 2; i < (hybrid ? 4 : 8); i += 2) {
    KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, i, "scales", DType::kFloat));
    KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, i + 1, "zero_points", DType::kInt32));
  }
  return OkStatus();
}

struct DotState : OpState {
  UniformSpec lhs, rhs, out;
  bool hybrid = false;
};

Status PrepareUniformDot(PrepareContext& ctx) {
  auto st = std::make_shared<DotState>();
  st->hybrid = ctx.op == "UniformQuantizedDotHybrid";
  KILN_RETURN_IF_ERROR(ReadProductOperands(ctx, st->hybrid, &st->lhs, &st->rhs, &st->out));
  if (!st->hybrid && st->out.axis != -1 && st->out.axis != 1)
    return ctx.Error("output_quantization_axis Attr must be 1 (per-channel) or -1 (per-tensor).");
  if (st->rhs.axis != -1 && st->rhs.axis != 1)
    return ctx.Error("rhs_quantization_axis Attr must be 1 (per-channel) or -1 (per-tensor).");
  const PartialShape& a = ctx.inputs[0].shape;
  const PartialShape& b = ctx.inputs[1].shape;
  ctx.outputs = {
      TensorSpec{st->hybrid ? DType::kFloat : DType::kQInt32,
                 PartialShape{a.unknown_rank() ? -1 : a.dim(0), b.unknown_rank() ? -1 : b.dim(1)}}};
  ctx.state = std::move(st);
  return OkStatus();
}

// TF's AsymmetricQuantize of one float row to int8: its own scale and zero point.
void QuantizeRow(const float* row, int64_t n, std::vector<int32_t>* q, float* scale, int32_t* zp) {
  double rmin = 0, rmax = 0;
  for (int64_t i = 0; i < n; ++i) {
    rmin = std::min(rmin, static_cast<double>(row[i]));
    rmax = std::max(rmax, static_cast<double>(row[i]));
  }
  const double s = (rmax - rmin) / 255.0;
  const double inv = rmax - rmin != 0 ? 255.0 / (rmax - rmin) : 0.0;
  q->assign(static_cast<size_t>(n), 0);
  if (s == 0 || !std::isfinite(inv)) {
    *scale = 1.0f;
    *zp = 0;
    return;
  }
  const double zmin = -128 - rmin / s, zmax = 127 - rmax / s;
  const double emin = 128 + std::abs(rmin / s), emax = 127 + std::abs(rmax / s);
  const double zd = emin < emax ? zmin : zmax;
  *zp = zd <= -128 ? -128 : zd >= 127 ? 127 : static_cast<int32_t>(std::round(zd));
  *scale = static_cast<float>(s);
  const auto inv_f = static_cast<float>(inv);
  for (int64_t i = 0; i < n; ++i) {
    const int64_t v = int64_t{ToInt32(std::floor(row[i] * inv_f + 0.5f))} + *zp;
    (*q)[i] = static_cast<int32_t>(std::clamp<int64_t>(v, -128, 127));
  }
}

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

// ---- UniformQuantizedConvolution, UniformQuantizedConvolutionHybrid -----------------------

// UniformQuantizedConvolutionDimensionNumbersAttr, read from its wire form (fields 1..9: input
// batch, feature, spatial; kernel input feature, output feature, spatial; output batch, feature,
// spatial).
struct ConvDims {
  int64_t in_batch = 0, in_feature = 1, k_in = 1, k_out = 0, out_batch = 0, out_feature = 1;
  std::vector<int64_t> in_spatial, k_spatial, out_spatial;
};

bool ReadVarint(std::string_view s, size_t* pos, uint64_t* v) {
  *v = 0;
  for (int shift = 0; shift < 64 && *pos < s.size(); shift += 7) {
    const auto byte = static_cast<uint8_t>(s[(*pos)++]);
    *v |= static_cast<uint64_t>(byte & 0x7f) << shift;
    if ((byte & 0x80) == 0) return true;
  }
  return false;
}

bool ParseConvDims(std::string_view s, ConvDims* d) {
  *d = ConvDims{};
  d->in_batch = d->in_feature = d->k_in = d->k_out = d->out_batch = d->out_feature = 0;
  int64_t* scalars[] = {nullptr,   &d->in_batch, &d->in_feature, nullptr,        &d->k_in,
                        &d->k_out, nullptr,      &d->out_batch,  &d->out_feature};
  std::vector<int64_t>* lists[] = {nullptr, nullptr,        nullptr,       &d->in_spatial,
                                   nullptr, nullptr,        &d->k_spatial, nullptr,
                                   nullptr, &d->out_spatial};
  size_t pos = 0;
  while (pos < s.size()) {
    uint64_t key, v;
    if (!ReadVarint(s, &pos, &key)) return false;
    const uint64_t field = key >> 3, wire = key & 7;
    if (field < 1 || field > 9) return false;
    if (wire == 0) {
      if (!ReadVarint(s, &pos, &v)) return false;
      if (field == 3 || field == 6 || field == 9) {
        lists[field]->push_back(static_cast<int64_t>(v));
      } else {
        *scalars[field] = static_cast<int64_t>(v);
      }
    } else if (wire == 2 && (field == 3 || field == 6 || field == 9)) {  // packed
      uint64_t len;
      if (!ReadVarint(s, &pos, &len) || len > s.size() - pos) return false;
      const size_t end = pos + len;
      while (pos < end) {
        if (!ReadVarint(s, &pos, &v)) return false;
        lists[field]->push_back(static_cast<int64_t>(v));
      }
    } else {
      return false;
    }
  }
  return true;
}

struct ConvState : OpState {
  bool hybrid = false;
  UniformSpec lhs, rhs, out;
  std::vector<int64_t> strides, lhs_dilation, rhs_dilation, explicit_padding;
  std::string padding;
  int64_t feature_groups = 1, batch_groups = 1;
  std::string dimension_numbers;
};

Status PrepareUniformConv(PrepareContext& ctx) {
  auto st = std::make_shared<ConvState>();
  st->hybrid = ctx.op == "UniformQuantizedConvolutionHybrid";
  KILN_RETURN_IF_ERROR(ReadProductOperands(ctx, st->hybrid, &st->lhs, &st->rhs, &st->out));
  KILN_PREPARE_ASSIGN(ctx, st->strides, ctx.attrs.GetIntList("window_strides", {}));
  KILN_PREPARE_ASSIGN(ctx, st->lhs_dilation, ctx.attrs.GetIntList("lhs_dilation", {}));
  KILN_PREPARE_ASSIGN(ctx, st->rhs_dilation, ctx.attrs.GetIntList("rhs_dilation", {}));
  KILN_PREPARE_ASSIGN(ctx, st->explicit_padding, ctx.attrs.GetIntList("explicit_padding", {}));
  KILN_PREPARE_ASSIGN(ctx, st->padding, ctx.attrs.GetString("padding"));
  if (st->padding != "EXPLICIT" && st->padding != "SAME" && st->padding != "VALID")
    return ctx.Error("padding Attr must be one of [EXPLICIT | SAME | VALID], but given: ",
                     st->padding);
  if (st->padding != "EXPLICIT" && !st->explicit_padding.empty())
    return ctx.Error("If padding Attr is not 'EXPLICIT', explicit_padding Attr must be empty. ",
                     "Given padding ", st->padding, " and explicit_padding of size ",
                     st->explicit_padding.size());
  KILN_PREPARE_ASSIGN(ctx, st->feature_groups, ctx.attrs.GetInt("feature_group_count", 1));
  KILN_PREPARE_ASSIGN(ctx, st->batch_groups, ctx.attrs.GetInt("batch_group_count", 1));
  KILN_PREPARE_ASSIGN(ctx, st->dimension_numbers, ctx.attrs.GetString("dimension_numbers", ""));
  ConvDims dims;
  if (!st->dimension_numbers.empty() && !ParseConvDims(st->dimension_numbers, &dims))
    return ctx.Error("Error parsing convolution dimension numbers.");
  const PartialShape& lhs = ctx.inputs[0].shape;
  ctx.outputs = {TensorSpec{st->hybrid ? DType::kFloat : DType::kQInt32,
                            lhs.unknown_rank() ? lhs : UnknownDims(lhs.rank())}};
  ctx.state = std::move(st);
  return OkStatus();
}

Status CheckDim(const KernelContext& ctx, int64_t rank, int64_t d) {
  if (d < 0 || d >= rank)
    return ctx.Error("Each dimension number must be in region [0, rank). Given rank ", rank,
                     " and dimension number value ", d);
  return OkStatus();
}

// The attrs checked against the operands and filled in (TF's
// ValidateOrFillParamsAndValidateShape): dimension numbers, strides, dilations, padding.
Status ConvGeometry(const KernelContext& ctx, const ConvState& st, const Shape& lhs,
                    const Shape& rhs, ConvDims* d, std::vector<int64_t>* strides,
                    std::vector<int64_t>* lhs_dil, std::vector<int64_t>* rhs_dil,
                    std::vector<int64_t>* pads, Shape* out) {
  if (lhs.rank() != rhs.rank())
    return ctx.Error("lhs and rhs must have same dims. Given lhs and rhs of shapes: ",
                     lhs.ToString(), rhs.ToString());
  const int rank = lhs.rank();
  if (rank <= 2) return ctx.Error("lhs and rhs shape dims must be at least 3. Given: ", rank);
  const auto spatial = static_cast<size_t>(rank - 2);
  for (auto [list, name] :
       {std::pair{strides, "window_strides"}, std::pair{lhs_dil, "lhs_dilation"},
        std::pair{rhs_dil, "rhs_dilation"}}) {
    if (list->empty()) list->assign(spatial, 1);
    if (list->size() != spatial) return ctx.Error("Size of ", name, " Attr must be dims - 2.");
    for (int64_t v : *list)
      if (v < 1) return ctx.Error("All elements of ", name, " must be >= 1.");
  }
  if (st.dimension_numbers.empty()) {
    *d = ConvDims{};
    for (size_t i = 0; i < spatial; ++i) {
      d->in_spatial.push_back(static_cast<int64_t>(2 + i));
      d->k_spatial.push_back(static_cast<int64_t>(2 + i));
      d->out_spatial.push_back(static_cast<int64_t>(2 + i));
    }
  } else {
    ParseConvDims(st.dimension_numbers, d);
    for (int64_t v : {d->in_batch, d->in_feature, d->k_in, d->k_out, d->out_batch, d->out_feature})
      KILN_RETURN_IF_ERROR(CheckDim(ctx, rank, v));
    for (const auto* list : {&d->in_spatial, &d->k_spatial, &d->out_spatial}) {
      if (list->size() != spatial)
        return ctx.Error("Spatial dimensions size must be rank - 2. Given rank ", rank,
                         " and spatial dimensions size ", list->size());
      for (int64_t v : *list) KILN_RETURN_IF_ERROR(CheckDim(ctx, rank, v));
    }
  }
  const int64_t lhs_features = lhs.dim(static_cast<int>(d->in_feature));
  const int64_t rhs_in = rhs.dim(static_cast<int>(d->k_in));
  const int64_t rhs_out = rhs.dim(static_cast<int>(d->k_out));
  const int64_t lhs_batch = lhs.dim(static_cast<int>(d->in_batch));
  if (st.feature_groups <= 0 || lhs_features % st.feature_groups != 0 ||
      lhs_features / st.feature_groups != rhs_in || rhs_out % st.feature_groups != 0)
    return ctx.Error("feature_group_count ", st.feature_groups, " does not fit lhs features ",
                     lhs_features, ", rhs input features ", rhs_in, " and output features ",
                     rhs_out);
  if (st.batch_groups <= 0 || lhs_batch % st.batch_groups != 0 || rhs_out % st.batch_groups != 0)
    return ctx.Error("batch_group_count ", st.batch_groups, " does not divide lhs batch ",
                     lhs_batch, " and rhs output features ", rhs_out);
  auto dilated = [](int64_t size, int64_t dil) {
    return size == 0 ? 0 : size + (dil - 1) * (size - 1);
  };
  pads->assign(2 * spatial, 0);
  if (st.padding == "EXPLICIT") {
    if (st.explicit_padding.size() != 2 * spatial)
      return ctx.Error("Size of explicit_padding Attr must be 2 * (rank - 2). Given rank ", rank,
                       " and explicit_padding of size ", st.explicit_padding.size());
    for (int64_t v : st.explicit_padding)
      if (v < 0) return ctx.Error("All explicit_padding elems must be >= 0");
    *pads = st.explicit_padding;
  }
  std::vector<int64_t> out_dims(static_cast<size_t>(rank));
  out_dims[d->out_batch] = lhs_batch / st.batch_groups;
  out_dims[d->out_feature] = rhs_out;
  for (size_t i = 0; i < spatial; ++i) {
    const int64_t l = dilated(lhs.dim(static_cast<int>(d->in_spatial[i])), (*lhs_dil)[i]);
    const int64_t r = dilated(rhs.dim(static_cast<int>(d->k_spatial[i])), (*rhs_dil)[i]);
    const int64_t stride = (*strides)[i];
    if (st.padding == "SAME") {
      const int64_t size = (l + stride - 1) / stride;
      const int64_t total = std::max<int64_t>((size - 1) * stride + r - l, 0);
      (*pads)[2 * i] = total / 2;
      (*pads)[2 * i + 1] = total - total / 2;
    }
    const int64_t numerator = l + (*pads)[2 * i] + (*pads)[2 * i + 1] - r + 1;
    out_dims[d->out_spatial[i]] = std::max<int64_t>((numerator + stride - 1) / stride, 0);
  }
  KILN_ASSIGN_OR_RETURN(*out, Shape::FromDims(out_dims));
  return OkStatus();
}

std::vector<int64_t> RowMajorStrides(const Shape& s) {
  std::vector<int64_t> st(static_cast<size_t>(s.rank()), 1);
  for (int d = s.rank() - 2; d >= 0; --d) st[d] = st[d + 1] * s.dim(d + 1);
  return st;
}

Status ComputeUniformConv(const KernelContext& ctx) {
  const auto& st = ctx.state<ConvState>();
  const Tensor& lhs = ctx.input(0);
  const Tensor& rhs = ctx.input(1);
  ConvDims d;
  std::vector<int64_t> strides = st.strides, lhs_dil = st.lhs_dilation, rhs_dil = st.rhs_dilation,
                       pads;
  Shape out_shape;
  KILN_RETURN_IF_ERROR(ConvGeometry(ctx, st, lhs.shape(), rhs.shape(), &d, &strides, &lhs_dil,
                                    &rhs_dil, &pads, &out_shape));
  const int rhs_first = st.hybrid ? 2 : 4;
  const int rhs_axis = ctx.input(rhs_first).rank() == 1 ? static_cast<int>(d.k_out) : -1;
  if (st.rhs.axis != -1 && st.rhs.axis != d.k_out)
    return ctx.Error("rhs_quantization_axis Attr must be -1 (per-tensor) or ",
                     "dimension_numbers.kernel_output_feature_dimension (per-channel).");
  KILN_RETURN_IF_ERROR(
      CheckScales(ctx, rhs.shape(), ctx.input(rhs_first), ctx.input(rhs_first + 1), rhs_axis));
  KILN_RETURN_IF_ERROR(CheckPositive(ctx, ctx.input(rhs_first), "rhs"));
  const int64_t out_features = out_shape.dim(static_cast<int>(d.out_feature));
  const int64_t out_batch = out_shape.dim(static_cast<int>(d.out_batch));
  const int64_t rhs_in = rhs.dim(static_cast<int>(d.k_in));
  const int64_t per_feature_group = out_features / st.feature_groups;
  const int64_t per_batch_group = out_features / st.batch_groups;
  const size_t spatial = d.in_spatial.size();
  const std::vector<int64_t> ls = RowMajorStrides(lhs.shape()), rs = RowMajorStrides(rhs.shape()),
                             os = RowMajorStrides(out_shape);
  // Per lhs batch: the quantized lhs (hybrid: each batch quantized on its own) and its zero
  // point and scale.
  const int64_t lhs_batches = lhs.dim(static_cast<int>(d.in_batch));
  std::vector<int32_t> lq(static_cast<size_t>(lhs.NumElements()));
  std::vector<int32_t> lzp(static_cast<size_t>(lhs_batches));
  std::vector<float> lscale(static_cast<size_t>(lhs_batches), 1.0f);
  if (st.hybrid) {
    std::vector<float> row;
    std::vector<int32_t> q;
    for (int64_t b = 0; b < lhs_batches; ++b) {
      row.clear();
      std::vector<int64_t> where;
      for (int64_t i = 0; i < lhs.NumElements(); ++i)
        if ((i / ls[d.in_batch]) % lhs_batches == b) {
          row.push_back(lhs.data<float>()[i]);
          where.push_back(i);
        }
      QuantizeRow(row.data(), static_cast<int64_t>(row.size()), &q, &lscale[b], &lzp[b]);
      for (size_t k = 0; k < where.size(); ++k) lq[where[k]] = q[k];
    }
  } else {
    if (ctx.input(2).rank() != 0 || ctx.input(3).rank() != 0)
      return ctx.Error("lhs scales/zero_points must be all scalar tensors.");
    KILN_RETURN_IF_ERROR(CheckPositive(ctx, ctx.input(2), "lhs"));
    for (int64_t i = 0; i < lhs.NumElements(); ++i) lq[i] = int32_t{lhs.data<QInt8>()[i].value};
    std::fill(lzp.begin(), lzp.end(), ctx.input(3).data<int32_t>()[0]);
  }
  // The output's requantization (integer form only).
  std::vector<int32_t> fixed(static_cast<size_t>(out_features));
  std::vector<int> shift(static_cast<size_t>(out_features));
  std::vector<int32_t> out_zp(static_cast<size_t>(out_features));
  const float* rscale = ctx.input(rhs_first).data<float>();
  const int32_t* rzp = ctx.input(rhs_first + 1).data<int32_t>();
  if (!st.hybrid) {
    const int out_axis = ctx.input(6).rank() == 1 ? static_cast<int>(d.out_feature) : -1;
    if (rhs_axis == -1 && out_axis != -1)
      return ctx.Error("If rhs is per-tensor quantized, output must be also per-tensor quantized.");
    KILN_RETURN_IF_ERROR(CheckScales(ctx, out_shape, ctx.input(6), ctx.input(7), out_axis));
    KILN_RETURN_IF_ERROR(CheckPositive(ctx, ctx.input(6), "output"));
    for (int64_t o = 0; o < out_features; ++o) {
      const double m = static_cast<double>(ctx.input(2).data<float>()[0]) *
                       rscale[rhs_axis >= 0 ? o : 0] /
                       ctx.input(6).data<float>()[out_axis >= 0 ? o : 0];
      QuantizeMultiplier(m, &fixed[o], &shift[o]);
      out_zp[o] = ctx.input(7).data<int32_t>()[out_axis >= 0 ? o : 0];
    }
  }
  KILN_ASSIGN_OR_RETURN(Tensor * out, ctx.AllocateOutput(0, out_shape));
  std::vector<int64_t> coord(static_cast<size_t>(out_shape.rank()), 0);
  std::vector<int64_t> kpos(spatial, 0);
  for (int64_t flat = 0; flat < out_shape.num_elements(); ++flat) {
    int64_t rem = flat;
    for (int dd = 0; dd < out_shape.rank(); ++dd) {
      coord[dd] = rem / os[dd];
      rem %= os[dd];
    }
    const int64_t b = coord[d.out_batch], o = coord[d.out_feature];
    const int64_t lhs_b = (o / per_batch_group) * out_batch + b;
    const int64_t group = o / per_feature_group;
    const int64_t rz = rzp[rhs_axis >= 0 ? o : 0];
    int32_t acc = 0;
    std::fill(kpos.begin(), kpos.end(), 0);
    bool more = true;
    while (more) {
      // The lhs position under this kernel tap, in the dilated, padded lhs.
      int64_t lhs_off = lhs_b * ls[d.in_batch];
      int64_t rhs_off = o * rs[d.k_out];
      bool inside = true;
      for (size_t i = 0; i < spatial; ++i) {
        const int64_t p = coord[d.out_spatial[i]] * strides[i] + kpos[i] * rhs_dil[i] - pads[2 * i];
        const int64_t size = lhs.dim(static_cast<int>(d.in_spatial[i]));
        if (p < 0 || p % lhs_dil[i] != 0 || p / lhs_dil[i] >= size) {
          inside = false;
          break;
        }
        lhs_off += (p / lhs_dil[i]) * ls[d.in_spatial[i]];
        rhs_off += kpos[i] * rs[d.k_spatial[i]];
      }
      if (inside) {
        for (int64_t f = 0; f < rhs_in; ++f) {
          const int64_t lv = lq[lhs_off + (group * rhs_in + f) * ls[d.in_feature]] - lzp[lhs_b];
          const int64_t rv = int64_t{rhs.data<QInt8>()[rhs_off + f * rs[d.k_in]].value} - rz;
          acc = static_cast<int32_t>(static_cast<uint32_t>(acc) + static_cast<uint32_t>(lv * rv));
        }
      }
      more = false;
      for (size_t i = spatial; i-- > 0;) {
        if (++kpos[i] < rhs.dim(static_cast<int>(d.k_spatial[i]))) {
          more = true;
          break;
        }
        kpos[i] = 0;
      }
    }
    if (st.hybrid) {
      out->data<float>()[flat] =
          static_cast<float>(acc) * lscale[lhs_b] * rscale[rhs_axis >= 0 ? o : 0];
    } else {
      out->data<QInt32>()[flat] =
          Clamped<QInt32>(MultiplyByQuantizedMultiplier(acc, fixed[o], shift[o]) + out_zp[o],
                          st.out.qmin, st.out.qmax);
    }
  }
  return OkStatus();
}

constexpr OpDefinition kDefs[] = {
    {"UniformQuantize", "output", kOpFreshOutputs, PrepareUniformConvert<true>},
    {"UniformDequantize", "output", kOpFreshOutputs, PrepareUniformConvert<false>},
    {"UniformRequantize", "output", kOpFreshOutputs, PrepareUniformRequantize},
    {"UniformQuantizedClipByValue", "output", kOpFreshOutputs, PrepareUniformClip},
    {"UniformQuantizedAdd", "output", kOpFreshOutputs, PrepareUniformAdd},
    {"UniformQuantizedDot", "output", kOpFreshOutputs, PrepareUniformDot},
    {"UniformQuantizedDotHybrid", "output", kOpFreshOutputs, PrepareUniformDot},
    {"UniformQuantizedConvolution", "output", kOpFreshOutputs, PrepareUniformConv},
    {"UniformQuantizedConvolutionHybrid", "output", kOpFreshOutputs, PrepareUniformConv},
};

constexpr KernelEntry kCpu[] = {
    {"UniformQuantize", ComputeUniformConvert<true>},
    {"UniformDequantize", ComputeUniformConvert<false>},
    {"UniformRequantize", ComputeUniformRequantize},
    {"UniformQuantizedClipByValue", ComputeUniformClip},
    {"UniformQuantizedAdd", ComputeUniformAdd},
    {"UniformQuantizedDot", ComputeUniformDot},
    {"UniformQuantizedDotHybrid", ComputeUniformDot},
    {"UniformQuantizedConvolution", ComputeUniformConv},
    {"UniformQuantizedConvolutionHybrid", ComputeUniformConv},
};

}  // namespace

std::span<const OpDefinition> UniformQuantizedOpDefs() { return kDefs; }
std::span<const KernelEntry> UniformQuantizedCpuKernels() { return kCpu; }

}  // namespace kiln::exec
