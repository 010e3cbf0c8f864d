// Fake quantisation of float32 tensors (quantisation-aware training graphs and the models
// exported from them): FakeQuantWithMinMaxArgs (range in attrs) and FakeQuantWithMinMaxVars
// (range in scalar inputs). The range is nudged so that 0 is exactly representable, values
// are clamped to it and rounded to one of 2^num_bits (or 2^num_bits - 1, narrow_range) levels,
// in float arithmetic exactly as TF's kernel.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>

#include "kernels/elementwise.h"
#include "kernels/kernel_util.h"
#include "kernels/op_families.h"

namespace kiln::exec {
namespace {

struct QuantRange {
  int quant_min = 0;
  int quant_max = 255;
};

struct FakeQuantState : OpState {
  QuantRange range;
  float min = -6, max = 6;  // Args only
};

// TF's Nudge: the zero point rounded to a level, the range moved to keep the step.
struct Nudged {
  float min, max, scale, inv_scale;
};
Nudged Nudge(float min, float max, QuantRange q) {
  const float qmin = static_cast<float>(q.quant_min), qmax = static_cast<float>(q.quant_max);
  Nudged n;
  n.scale = (max - min) / (qmax - qmin);
  n.inv_scale = (qmax - qmin) / (max - min);
  const float zero_from_min = qmin - min / n.scale;
  uint16_t zero;
  if (zero_from_min < qmin) {
    zero = static_cast<uint16_t>(q.quant_min);
  } else if (zero_from_min > qmax) {
    zero = static_cast<uint16_t>(q.quant_max);
  } else {
    zero = static_cast<uint16_t>(std::round(zero_from_min));
  }
  n.min = (qmin - zero) * n.scale;
  n.max = (qmax - zero) * n.scale;
  return n;
}

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

Status PrepareFakeQuantArgs(PrepareContext& ctx) {
  KILN_RETURN_IF_ERROR(ctx.ExpectInputs(1));
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 0, "inputs", DType::kFloat));
  auto st = std::make_shared<FakeQuantState>();
  KILN_RETURN_IF_ERROR(ReadQuantAttrs(ctx, st.get()));
  KILN_PREPARE_ASSIGN(ctx, st->min, ctx.attrs.GetFloat("min", -6.0f));
  KILN_PREPARE_ASSIGN(ctx, st->max, ctx.attrs.GetFloat("max", 6.0f));
  if (!(st->min < st->max)) {
    return ctx.Error("attrs 'min' and 'max': min must be below max, got ", st->min,
                     " >= ", st->max);
  }
  ctx.outputs = {TensorSpec{DType::kFloat, ctx.inputs[0].shape}};
  ctx.state = std::move(st);
  return OkStatus();
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
  const float quant_zero = std::floor(-q.min * q.inv_scale + 0.5f);
  ctx.threads().ParallelFor(n, 32768, [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) {
      const float clamped = std::max(std::min(in[i], q.max), q.min) - q.min;
      const float level = kDivide ? clamped / q.scale : clamped * q.inv_scale;
      out[i] = std::floor(level - quant_zero + 0.5f) * q.scale;
    }
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

constexpr OpDefinition kDefs[] = {
    {"FakeQuantWithMinMaxArgs", "outputs", kOpElementwise, PrepareFakeQuantArgs},
    {"FakeQuantWithMinMaxVars", "outputs", kOpElementwise, PrepareFakeQuantVars},
};

constexpr KernelEntry kCpu[] = {
    {"FakeQuantWithMinMaxArgs", ComputeFakeQuantArgs},
    {"FakeQuantWithMinMaxVars", ComputeFakeQuantVars},
};

}  // namespace

std::span<const OpDefinition> QuantizeOpDefs() { return kDefs; }
std::span<const KernelEntry> QuantizeCpuKernels() { return kCpu; }

}  // namespace kiln::exec
