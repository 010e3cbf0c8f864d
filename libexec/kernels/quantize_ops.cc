// Fake quantisation (quantisation-aware training graphs and the models exported from them), in
// float arithmetic exactly as TF's kernels:
//  - FakeQuantWithMinMaxArgs (range in attrs), FakeQuantWithMinMaxVars (range in scalar inputs)
//    and FakeQuantWithMinMaxVarsPerChannel (a range per last-dimension channel): the range is
//    nudged so that 0 is exactly representable, values are clamped to it and rounded to one of
//    2^num_bits (or 2^num_bits - 1, narrow_range) levels;
//  - QuantizeAndDequantizeV2/V3/V4: a scale that keeps 0 fixed and fits [min, max] (given, or
//    the tensor's own) into the signed or unsigned num_bits range, per tensor or per `axis`
//    channel, rounding half to even (or half up). float32 and float64; half-precision graphs
//    run them in float32 (executor/half_precision.h);
//  - the gradients of both (straight-through inside the range), as TF's kernels compute them.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "kernels/cpu/vector_math.h"
#include "kernels/cpu/elementwise.h"
#include "kernels/fake_quant.h"
#include "kernels/kernel_util.h"
#include "kernels/type_lists.h"

namespace kiln::exec {
namespace {

struct FakeQuantState : OpState {
  QuantRange range;
  float min = -6, max = 6;  // Args only
};

Status ReadQuantAttrs(PrepareContext& ctx, FakeQuantState* st) {
  KILN_PREPARE_ASSIGN(ctx, int64_t bits, ctx.attrs.GetInt("num_bits", 8));
  if (bits < 2 || bits > 16) {
    return ctx.Error("attr 'num_bits' is ", bits, ", expected a value in [2, 16]");
  }
  KILN_PREPARE_ASSIGN(ctx, bool narrow, ctx.attrs.GetBool("narrow_range", false));
  st->range.quant_min = narrow ? 1 : 0;
  st->range.quant_max = (1 << bits) - 1;
  return OkStatus();
}

// Args and its gradient: the range in attrs; the output has the shape of input `x`.
Status PrepareArgsRange(PrepareContext& ctx, int x) {
  auto st = std::make_shared<FakeQuantState>();
  KILN_RETURN_IF_ERROR(ReadQuantAttrs(ctx, st.get()));
  KILN_PREPARE_ASSIGN(ctx, st->min, ctx.attrs.GetFloat("min", -6.0f));
  KILN_PREPARE_ASSIGN(ctx, st->max, ctx.attrs.GetFloat("max", 6.0f));
  if (!(st->min < st->max)) {
    return ctx.Error("attrs 'min' and 'max': min must be below max, got ", st->min,
                     " >= ", st->max);
  }
  ctx.outputs = {TensorSpec{DType::kFloat, ctx.inputs[x].shape}};
  ctx.state = std::move(st);
  return OkStatus();
}

Status PrepareFakeQuantArgs(PrepareContext& ctx) {
  KILN_RETURN_IF_ERROR(ctx.ExpectInputs(1));
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 0, "inputs", DType::kFloat));
  return PrepareArgsRange(ctx, 0);
}

Status PrepareFakeQuantVars(PrepareContext& ctx) {
  KILN_RETURN_IF_ERROR(ctx.ExpectInputs(3));
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 0, "inputs", DType::kFloat));
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 1, "min", DType::kFloat));
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 2, "max", DType::kFloat));
  KILN_RETURN_IF_ERROR(ExpectInputRank(ctx, 1, "min", 0));
  KILN_RETURN_IF_ERROR(ExpectInputRank(ctx, 2, "max", 0));
  auto st = std::make_shared<FakeQuantState>();
  KILN_RETURN_IF_ERROR(ReadQuantAttrs(ctx, st.get()));
  ctx.outputs = {TensorSpec{DType::kFloat, ctx.inputs[0].shape}};
  ctx.state = std::move(st);
  return OkStatus();
}

// kDivide: Vars divides by the scale where Args multiplies by its inverse (as TF).
template <bool kDivide>
void Quantize(const KernelContext& ctx, const float* in, float* out, int64_t n, const Nudged& q) {
  const float quant_zero = NudgedZero(q);
  // floor((clamp(x) - min) * inv_scale - zero + 0.5) * scale, vectorised (vector_math.h).
  ctx.threads().ParallelFor(n, 32768, [&](int64_t begin, int64_t end) {
    vmath::FakeQuant(in + begin, out + begin, end - begin, q.min, q.max, q.scale, q.inv_scale,
                     quant_zero, kDivide);
  });
}

Status ComputeFakeQuantArgs(const KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  const auto& st = ctx.state<FakeQuantState>();
  KILN_ASSIGN_OR_RETURN(Tensor * out, ctx.ForwardInputOrAllocateOutput(0, 0, x.shape()));
  Quantize<false>(ctx, x.data<float>(), out->data<float>(), x.NumElements(),
                  Nudge(st.min, st.max, st.range));
  return OkStatus();
}

Status ComputeFakeQuantVars(const KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  const Tensor& min_t = ctx.input(1);
  const Tensor& max_t = ctx.input(2);
  if (min_t.rank() != 0 || max_t.rank() != 0) {
    return ctx.Error("inputs 'min' and 'max' must be scalars, got shapes ",
                     min_t.shape().ToString(), " and ", max_t.shape().ToString());
  }
  const float min = min_t.scalar<float>(), max = max_t.scalar<float>();
  KILN_ASSIGN_OR_RETURN(Tensor * out, ctx.ForwardInputOrAllocateOutput(0, 0, x.shape()));
  if (min == 0.0f && max == 0.0f) {  // TF: an empty range quantises everything to 0
    std::fill_n(out->data<float>(), out->NumElements(), 0.0f);
    return OkStatus();
  }
  Quantize<true>(ctx, x.data<float>(), out->data<float>(), x.NumElements(),
                 Nudge(min, max, ctx.state<FakeQuantState>().range));
  return OkStatus();
}

// ---- FakeQuantWithMinMaxVarsPerChannel ----------------------------------------------------

Status PrepareFakeQuantPerChannel(PrepareContext& ctx) {
  KILN_RETURN_IF_ERROR(ctx.ExpectInputs(3));
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 0, "inputs", DType::kFloat));
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 1, "min", DType::kFloat));
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 2, "max", DType::kFloat));
  KILN_RETURN_IF_ERROR(ExpectInputRank(ctx, 1, "min", 1));
  KILN_RETURN_IF_ERROR(ExpectInputRank(ctx, 2, "max", 1));
  const PartialShape& x = ctx.inputs[0].shape;
  if (!x.unknown_rank() && (x.rank() < 1 || x.rank() > 4))
    return ctx.Error("input 'inputs' must have rank 1 to 4, got ", x.ToPythonString());
  auto st = std::make_shared<FakeQuantState>();
  KILN_RETURN_IF_ERROR(ReadQuantAttrs(ctx, st.get()));
  ctx.outputs = {TensorSpec{DType::kFloat, x}};
  ctx.state = std::move(st);
  return OkStatus();
}

Status ComputeFakeQuantPerChannel(const KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  const Tensor& min_t = ctx.input(1);
  const Tensor& max_t = ctx.input(2);
  const int64_t depth = x.rank() > 0 ? x.dim(x.rank() - 1) : 0;
  if (x.rank() < 1 || min_t.NumElements() != depth || max_t.NumElements() != depth)
    return ctx.Error("inputs 'min' and 'max' must have one element per channel of the last ",
                     "dimension of 'inputs' (", x.shape().ToString(), "), got ",
                     min_t.shape().ToString(), " and ", max_t.shape().ToString());
  KILN_ASSIGN_OR_RETURN(Tensor * out, ctx.ForwardInputOrAllocateOutput(0, 0, x.shape()));
  const float* in = x.data<float>();
  float* o = out->data<float>();
  const int64_t rows = depth == 0 ? 0 : x.NumElements() / depth;
  const QuantRange range = ctx.state<FakeQuantState>().range;
  std::vector<Nudged> nudged(static_cast<size_t>(depth));
  for (int64_t c = 0; c < depth; ++c)  // an empty range (0, 0) has no grid: its channel is 0
    if (min_t.data<float>()[c] != 0.0f || max_t.data<float>()[c] != 0.0f)
      nudged[c] = Nudge(min_t.data<float>()[c], max_t.data<float>()[c], range);
  ctx.threads().ParallelFor(
      rows, std::max<int64_t>(1, 32768 / std::max<int64_t>(depth, 1)),
      [&](int64_t begin, int64_t end) {
        for (int64_t r = begin; r < end; ++r)
          for (int64_t c = 0; c < depth; ++c) {
            const int64_t i = r * depth + c;
            if (min_t.data<float>()[c] == 0.0f && max_t.data<float>()[c] == 0.0f) {
              o[i] = 0.0f;
              continue;
            }
            const Nudged& q = nudged[c];
            const float shifted = std::max(std::min(in[i], q.max), q.min) - q.min;
            o[i] = std::fma(std::floor(shifted / q.scale + 0.5f), q.scale, q.min);
          }
      });
  return OkStatus();
}

// ---- QuantizeAndDequantizeV2 / V3 / V4 ---------------------------------------------------

struct QdqState : OpState {
  DType dtype = DType::kFloat;
  bool signed_input = true, range_given = false, narrow_range = false, half_up = false;
  int num_bits = 8;  // V2/V4; V3 reads its input
  int axis = -1;
  bool bits_input = false;  // V3
};

template <bool kV3>
Status PrepareQdq(PrepareContext& ctx) {
  KILN_RETURN_IF_ERROR(ctx.ExpectInputs(kV3 ? 4 : 3));
  auto st = std::make_shared<QdqState>();
  KILN_PREPARE_ASSIGN(ctx, st->dtype, ctx.attrs.GetType("T"));
  KILN_RETURN_IF_ERROR(ExpectAttrDTypeIn(ctx, "T", st->dtype, {DType::kFloat, DType::kDouble}));
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 0, "input", st->dtype));
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 1, "input_min", st->dtype));
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 2, "input_max", st->dtype));
  KILN_PREPARE_ASSIGN(ctx, st->signed_input, ctx.attrs.GetBool("signed_input", true));
  KILN_PREPARE_ASSIGN(ctx, st->range_given, ctx.attrs.GetBool("range_given", kV3));
  KILN_PREPARE_ASSIGN(ctx, st->narrow_range, ctx.attrs.GetBool("narrow_range", false));
  KILN_PREPARE_ASSIGN(ctx, int64_t axis, ctx.attrs.GetInt("axis", -1));
  st->axis = static_cast<int>(axis);
  if constexpr (kV3) {
    KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 3, "num_bits", DType::kInt32));
    st->bits_input = true;
  } else {
    KILN_PREPARE_ASSIGN(ctx, int64_t bits, ctx.attrs.GetInt("num_bits", 8));
    st->num_bits = static_cast<int>(bits);
    KILN_PREPARE_ASSIGN(ctx, std::string mode, ctx.attrs.GetString("round_mode", "HALF_TO_EVEN"));
    if (mode != "HALF_TO_EVEN" && mode != "HALF_UP")
      return ctx.Error("attr 'round_mode' is '", mode, "', expected HALF_TO_EVEN or HALF_UP");
    st->half_up = mode == "HALF_UP";
  }
  const PartialShape& x = ctx.inputs[0].shape;
  if (st->axis < -1 || (!x.unknown_rank() && st->axis >= x.rank()))
    return ctx.Error("attr 'axis' is ", st->axis, ", expected -1 or a dimension of 'input' ",
                     x.ToPythonString());
  ctx.outputs = {TensorSpec{st->dtype, x}};
  ctx.state = std::move(st);
  return OkStatus();
}

// One channel: TF's ComputeQuantizationRange, then clamp (range given), scale and round.
template <typename T>
void QdqChannel(const QdqState& st, int bits, T min_range, T max_range, const T* in, T* out,
                int64_t outer, int64_t stride, int64_t inner) {
  const int64_t min_q = st.signed_input ? (st.narrow_range ? -(int64_t{1} << (bits - 1)) + 1
                                                           : -(int64_t{1} << (bits - 1)))
                                        : 0;
  const int64_t max_q = st.signed_input ? (int64_t{1} << (bits - 1)) - 1 : (int64_t{1} << bits) - 1;
  const T from_min = static_cast<T>(min_q) * min_range > 0 ? static_cast<T>(min_q) / min_range
                                                           : std::numeric_limits<T>::max();
  const T from_max = static_cast<T>(max_q) * max_range > 0 ? static_cast<T>(max_q) / max_range
                                                           : std::numeric_limits<T>::max();
  T scale, inverse;
  if (from_min < from_max) {
    scale = from_min;
    inverse = min_range / static_cast<T>(min_q);
    max_range = static_cast<T>(max_q) * inverse;
  } else {
    scale = from_max;
    inverse = max_range / static_cast<T>(max_q);
    min_range = static_cast<T>(min_q) * inverse;
  }
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t i = 0; i < inner; ++i) {
      const int64_t k = o * stride + i;
      T v = in[k];
      if (st.range_given) v = std::max(std::min(v, max_range), min_range);
      const T scaled = v * scale;
      const T rounded = st.half_up ? std::floor(scaled + T(0.5)) : std::nearbyint(scaled);
      out[k] = rounded * inverse;
    }
}

Status ComputeQdq(const KernelContext& ctx) {
  const auto& st = ctx.state<QdqState>();
  const Tensor& x = ctx.input(0);
  int bits = st.num_bits;
  if (st.bits_input) {
    if (ctx.input(3).NumElements() != 1)
      return ctx.Error("input 'num_bits' must be a scalar, got ", ctx.input(3).DebugString());
    bits = ctx.input(3).data<int32_t>()[0];
  }
  const int64_t max_bits = st.signed_input ? 63 : 62;
  if (bits < 1 || bits > max_bits || (st.signed_input && bits < 2))
    return ctx.Error("num_bits is ", bits, ", out of range for ",
                     st.signed_input ? "signed" : "unsigned", " input");
  const int axis = st.axis;
  if (axis >= x.rank()) return ctx.Error("attr 'axis' is ", axis, " for input ", x.DebugString());
  const int64_t depth = axis < 0 ? 1 : x.dim(axis);
  int64_t inner = 1;
  for (int d = axis + 1; d < x.rank() && axis >= 0; ++d) inner *= x.dim(d);
  const int64_t outer = depth == 0 || inner == 0 ? 0 : x.NumElements() / (depth * inner);
  const Tensor& min_t = ctx.input(1);
  const Tensor& max_t = ctx.input(2);
  if (st.range_given && (min_t.NumElements() != depth || max_t.NumElements() != depth))
    return ctx.Error("inputs 'input_min' and 'input_max' must have ", depth,
                     " element(s), got shapes ", min_t.shape().ToString(), " and ",
                     max_t.shape().ToString());
  KILN_ASSIGN_OR_RETURN(Tensor * out, ctx.AllocateOutput(0, x.shape()));
  return Dispatch<TypeList<float, double>>(st.dtype, [&](auto tag) -> Status {
    using T = typename decltype(tag)::type;
    const T* in = x.data<T>();
    T* o = out->data<T>();
    for (int64_t c = 0; c < depth; ++c) {
      const T* cin = in + c * inner;
      T lo, hi;
      if (st.range_given) {
        lo = min_t.data<T>()[c];
        hi = max_t.data<T>()[c];
        if (lo > hi) return ctx.Error("invalid range: input_min ", lo, " > input_max ", hi);
      } else {
        lo = std::numeric_limits<T>::max();
        hi = std::numeric_limits<T>::lowest();
        for (int64_t q = 0; q < outer; ++q)
          for (int64_t i = 0; i < inner; ++i) {
            lo = std::min(lo, cin[q * depth * inner + i]);
            hi = std::max(hi, cin[q * depth * inner + i]);
          }
      }
      QdqChannel<T>(st, bits, lo, hi, cin, o + c * inner, outer, depth * inner, inner);
    }
    return OkStatus();
  });
}

// ---- Gradients: straight-through inside the (nudged) range -------------------------------

// TF multiplies the gradient by a 0/1 mask (so a NaN gradient outside the range stays NaN) and
// sums what falls below and above the range into min's and max's gradients.
struct RangeGrad {
  float below = 0, above = 0;
};
RangeGrad MaskedGrad(const float* g, const float* in, float* out, int64_t n, int64_t stride,
                     float lo, float hi) {
  RangeGrad r;
  for (int64_t k = 0; k < n; ++k) {
    const int64_t i = k * stride;
    out[i] = g[i] * (in[i] >= lo && in[i] <= hi ? 1.0f : 0.0f);
    r.below += g[i] * (in[i] < lo ? 1.0f : 0.0f);
    r.above += g[i] * (in[i] > hi ? 1.0f : 0.0f);
  }
  return r;
}

Status ExpectSameShapes(PrepareContext& ctx) {
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 0, "gradients", DType::kFloat));
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 1, "inputs", DType::kFloat));
  if (!ctx.inputs[0].shape.IsCompatibleWith(ctx.inputs[1].shape))
    return ctx.Error("inputs 'gradients' ", ctx.inputs[0].shape.ToPythonString(), " and 'inputs' ",
                     ctx.inputs[1].shape.ToPythonString(), " must have the same shape");
  return OkStatus();
}

Status CheckSameShapes(const KernelContext& ctx) {
  if (ctx.input(0).shape() != ctx.input(1).shape())
    return ctx.Error("inputs 'gradients' ", ctx.input(0).shape().ToString(), " and 'inputs' ",
                     ctx.input(1).shape().ToString(), " must have the same shape");
  return OkStatus();
}

Status PrepareFakeQuantArgsGrad(PrepareContext& ctx) {
  KILN_RETURN_IF_ERROR(ctx.ExpectInputs(2));
  KILN_RETURN_IF_ERROR(ExpectSameShapes(ctx));
  return PrepareArgsRange(ctx, 1);
}

Status ComputeFakeQuantArgsGrad(const KernelContext& ctx) {
  KILN_RETURN_IF_ERROR(CheckSameShapes(ctx));
  const auto& st = ctx.state<FakeQuantState>();
  const Nudged q = Nudge(st.min, st.max, st.range);
  const Tensor& g = ctx.input(0);
  KILN_ASSIGN_OR_RETURN(Tensor * out, ctx.AllocateOutput(0, g.shape()));
  MaskedGrad(g.data<float>(), ctx.input(1).data<float>(), out->data<float>(), g.NumElements(), 1,
             q.min, q.max);
  return OkStatus();
}

// Vars (scalar min/max) and PerChannel (a min/max per last-dimension channel).
template <bool kPerChannel>
Status PrepareFakeQuantVarsGrad(PrepareContext& ctx) {
  KILN_RETURN_IF_ERROR(ctx.ExpectInputs(4));
  KILN_RETURN_IF_ERROR(ExpectSameShapes(ctx));
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 2, "min", DType::kFloat));
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 3, "max", DType::kFloat));
  KILN_RETURN_IF_ERROR(ExpectInputRank(ctx, 2, "min", kPerChannel ? 1 : 0));
  KILN_RETURN_IF_ERROR(ExpectInputRank(ctx, 3, "max", kPerChannel ? 1 : 0));
  auto st = std::make_shared<FakeQuantState>();
  KILN_RETURN_IF_ERROR(ReadQuantAttrs(ctx, st.get()));
  const PartialShape& x = ctx.inputs[1].shape;
  ctx.outputs = {TensorSpec{DType::kFloat, x}, TensorSpec{DType::kFloat, ctx.inputs[2].shape},
                 TensorSpec{DType::kFloat, ctx.inputs[3].shape}};
  ctx.state = std::move(st);
  return OkStatus();
}

template <bool kPerChannel>
Status ComputeFakeQuantVarsGrad(const KernelContext& ctx) {
  KILN_RETURN_IF_ERROR(CheckSameShapes(ctx));
  const Tensor& g = ctx.input(0);
  const Tensor& x = ctx.input(1);
  const Tensor& min_t = ctx.input(2);
  const Tensor& max_t = ctx.input(3);
  const int64_t depth = !kPerChannel ? 1 : (x.rank() > 0 ? x.dim(x.rank() - 1) : 0);
  if (kPerChannel && (x.rank() < 1 || x.rank() > 4 || min_t.NumElements() != depth ||
                      max_t.NumElements() != depth))
    return ctx.Error("inputs 'min' and 'max' must have one element per channel of the last ",
                     "dimension of 'inputs' (", x.shape().ToString(), ", rank 1 to 4), got ",
                     min_t.shape().ToString(), " and ", max_t.shape().ToString());
  KILN_ASSIGN_OR_RETURN(Tensor * out, ctx.AllocateOutput(0, x.shape()));
  KILN_ASSIGN_OR_RETURN(Tensor * dmin, ctx.AllocateOutput(1, min_t.shape()));
  KILN_ASSIGN_OR_RETURN(Tensor * dmax, ctx.AllocateOutput(2, max_t.shape()));
  const int64_t rows = depth == 0 ? 0 : x.NumElements() / depth;
  const QuantRange range = ctx.state<FakeQuantState>().range;
  for (int64_t c = 0; c < depth; ++c) {
    const float lo = min_t.data<float>()[c], hi = max_t.data<float>()[c];
    const float* gc = g.data<float>() + c;
    float* oc = out->data<float>() + c;
    RangeGrad r;
    if (lo == 0.0f && hi == 0.0f) {  // no grid: everything passes to the input
      for (int64_t k = 0; k < rows; ++k) oc[k * depth] = gc[k * depth];
    } else {
      const Nudged q = Nudge(lo, hi, range);
      r = MaskedGrad(gc, x.data<float>() + c, oc, rows, depth, q.min, q.max);
    }
    dmin->data<float>()[c] = r.below;
    dmax->data<float>()[c] = r.above;
  }
  return OkStatus();
}

// QuantizeAndDequantizeV4Grad: the gradient inside [input_min, input_max] (per `axis` channel
// or for the whole tensor); TF gives the range's own gradients as zeros.
Status PrepareQdqGrad(PrepareContext& ctx) {
  KILN_RETURN_IF_ERROR(ctx.ExpectInputs(4));
  auto st = std::make_shared<QdqState>();
  KILN_PREPARE_ASSIGN(ctx, st->dtype, ctx.attrs.GetType("T"));
  KILN_RETURN_IF_ERROR(ExpectAttrDTypeIn(ctx, "T", st->dtype, {DType::kFloat, DType::kDouble}));
  constexpr const char* kNames[] = {"gradients", "input", "input_min", "input_max"};
  for (int i = 0; i < 4; ++i) KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, i, kNames[i], st->dtype));
  KILN_PREPARE_ASSIGN(ctx, int64_t axis, ctx.attrs.GetInt("axis", -1));
  st->axis = static_cast<int>(axis);
  const PartialShape& x = ctx.inputs[1].shape;
  if (st->axis < -1 || (!x.unknown_rank() && st->axis >= x.rank()))
    return ctx.Error("attr 'axis' is ", st->axis, ", expected -1 or a dimension of 'input' ",
                     x.ToPythonString());
  ctx.outputs = {TensorSpec{st->dtype, x}, TensorSpec{st->dtype, ctx.inputs[2].shape},
                 TensorSpec{st->dtype, ctx.inputs[3].shape}};
  ctx.state = std::move(st);
  return OkStatus();
}

Status ComputeQdqGrad(const KernelContext& ctx) {
  const auto& st = ctx.state<QdqState>();
  const Tensor& g = ctx.input(0);
  const Tensor& x = ctx.input(1);
  const Tensor& min_t = ctx.input(2);
  const Tensor& max_t = ctx.input(3);
  if (g.shape() != x.shape())
    return ctx.Error("inputs 'gradients' ", g.shape().ToString(), " and 'input' ",
                     x.shape().ToString(), " must have the same shape");
  if (st.axis >= x.rank())
    return ctx.Error("attr 'axis' is ", st.axis, " for input ", x.DebugString());
  const int64_t depth = st.axis < 0 ? 1 : x.dim(st.axis);
  if (min_t.rank() > 1 || max_t.rank() > 1 || min_t.NumElements() != depth ||
      max_t.NumElements() != depth)
    return ctx.Error("inputs 'input_min' and 'input_max' must have ", depth,
                     " element(s) (a scalar or a vector), got shapes ", min_t.shape().ToString(),
                     " and ", max_t.shape().ToString());
  int64_t inner = 1;
  for (int d = st.axis + 1; d < x.rank() && st.axis >= 0; ++d) inner *= x.dim(d);
  const int64_t outer = depth == 0 || inner == 0 ? 0 : x.NumElements() / (depth * inner);
  KILN_ASSIGN_OR_RETURN(Tensor * out, ctx.AllocateOutput(0, x.shape()));
  KILN_ASSIGN_OR_RETURN(Tensor * dmin, ctx.AllocateOutput(1, min_t.shape()));
  KILN_ASSIGN_OR_RETURN(Tensor * dmax, ctx.AllocateOutput(2, max_t.shape()));
  return Dispatch<TypeList<float, double>>(st.dtype, [&](auto tag) -> Status {
    using T = typename decltype(tag)::type;
    for (int64_t c = 0; c < depth; ++c) {
      const T lo = min_t.data<T>()[c], hi = max_t.data<T>()[c];
      for (int64_t o = 0; o < outer; ++o)
        for (int64_t i = 0; i < inner; ++i) {
          const int64_t k = (o * depth + c) * inner + i;
          const T v = x.data<T>()[k];
          out->data<T>()[k] = g.data<T>()[k] * (v >= lo && v <= hi ? T(1) : T(0));
        }
      dmin->data<T>()[c] = T(0);
      dmax->data<T>()[c] = T(0);
    }
    return OkStatus();
  });
}

constexpr OpDefinition kDefs[] = {
    {"FakeQuantWithMinMaxArgs", "outputs", kOpElementwise, PrepareFakeQuantArgs},
    {"FakeQuantWithMinMaxVars", "outputs", kOpElementwise, PrepareFakeQuantVars},
    {"FakeQuantWithMinMaxVarsPerChannel", "outputs", kOpElementwise, PrepareFakeQuantPerChannel},
    {"QuantizeAndDequantizeV2", "output", kOpFreshOutputs, PrepareQdq<false>},
    {"QuantizeAndDequantizeV3", "output", kOpFreshOutputs, PrepareQdq<true>},
    {"QuantizeAndDequantizeV4", "output", kOpFreshOutputs, PrepareQdq<false>},
    {"FakeQuantWithMinMaxArgsGradient", "backprops", kOpFreshOutputs, PrepareFakeQuantArgsGrad},
    {"FakeQuantWithMinMaxVarsGradient", "backprops_wrt_input,backprop_wrt_min,backprop_wrt_max",
     kOpFreshOutputs, PrepareFakeQuantVarsGrad<false>},
    {"FakeQuantWithMinMaxVarsPerChannelGradient",
     "backprops_wrt_input,backprop_wrt_min,backprop_wrt_max", kOpFreshOutputs,
     PrepareFakeQuantVarsGrad<true>},
    {"QuantizeAndDequantizeV4Grad", "input_backprop,input_min_backprop,input_max_backprop",
     kOpFreshOutputs, PrepareQdqGrad},
};

constexpr KernelEntry kCpu[] = {
    {"FakeQuantWithMinMaxArgs", ComputeFakeQuantArgs},
    {"FakeQuantWithMinMaxVars", ComputeFakeQuantVars},
    {"FakeQuantWithMinMaxVarsPerChannel", ComputeFakeQuantPerChannel},
    {"QuantizeAndDequantizeV2", ComputeQdq},
    {"QuantizeAndDequantizeV3", ComputeQdq},
    {"QuantizeAndDequantizeV4", ComputeQdq},
    {"FakeQuantWithMinMaxArgsGradient", ComputeFakeQuantArgsGrad},
    {"FakeQuantWithMinMaxVarsGradient", ComputeFakeQuantVarsGrad<false>},
    {"FakeQuantWithMinMaxVarsPerChannelGradient", ComputeFakeQuantVarsGrad<true>},
    {"QuantizeAndDequantizeV4Grad", ComputeQdqGrad},
};

}  // namespace

std::span<const OpDefinition> QuantizeOpDefs() { return kDefs; }
std::span<const KernelEntry> QuantizeCpuKernels() { return kCpu; }

}  // namespace kiln::exec
