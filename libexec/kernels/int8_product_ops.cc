// Integer products for int8 SavedModels (docs/quantize.md, "int8"). The prepare-time fusion
// (graph/fusion_int8.cc) turns a Conv2D, DepthwiseConv2dNative or MatMul, plain or fused,
// whose input passes an 8-bit FakeQuantWithMinMaxArgs of a range oneDNN takes without a zero
// point ([0, max], or [-max, max] narrow) and whose weights are int8 levels into
//   _KilnInt8Conv2D, _KilnInt8DepthwiseConv2dNative, _KilnInt8MatMul:
// the attrs and inputs of _FusedConv2D / _FusedDepthwiseConv2dNative / _FusedMatMul, but input 0
// is the FakeQuant's input, and its range comes as attrs fq_min, fq_max, fq_narrow_range.
// Chained products (one's output read only through the next ones' FakeQuant) pass the levels
// as bytes: attrs out_fq_* on the producer, input_levels on its readers.
// This file holds their definitions; the CPU kernel is in kernels/cpu/int8_product_ops.cc.
#include "kernels/int8_product_ops.h"

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "kernels/array_util.h"
#include "kernels/epilogue.h"
#include "kernels/fake_quant.h"
#include "kernels/kernel_util.h"
#include "kernels/window_util.h"

namespace kiln::exec {
namespace {

using int8_product::Int8State;
using int8_product::Kind;
using int8_product::LevelsType;

constexpr const char* FloatOp(Kind k) {
  return k == Kind::kConv        ? "_FusedConv2D"
         : k == Kind::kDepthwise ? "_FusedDepthwiseConv2dNative"
                                 : "_FusedMatMul";
}

// One 8-bit FakeQuant range from attrs <prefix>min, <prefix>max, <prefix>narrow_range: [0, max]
// or a narrow [-max, max], as the integer kernels take it (no zero point).
Status ReadLevels(PrepareContext& ctx, std::string_view prefix, Nudged* range, bool* narrow) {
  const std::string p(prefix);
  KILN_PREPARE_ASSIGN(ctx, float lo, ctx.attrs.GetFloat(p + "min", 0.f));
  KILN_PREPARE_ASSIGN(ctx, float hi, ctx.attrs.GetFloat(p + "max", 0.f));
  KILN_PREPARE_ASSIGN(ctx, *narrow, ctx.attrs.GetBool(p + "narrow_range", false));
  if (!(hi > 0) || lo != (*narrow ? -hi : 0.f))
    return ctx.Error("attrs ", p, "min ", lo, ", ", p, "max ", hi, ", ", p, "narrow_range ",
                     *narrow, ": expected [0, max] or a narrow [-max, max], max > 0");
  *range = Nudge(lo, hi, QuantRange{*narrow ? 1 : 0, 255});
  return OkStatus();
}

// The FakeQuant range of the input (attrs fq_*), whether the input is its levels already
// (input_levels), and the range of output levels (attrs out_fq_*) where there is one.
Status ReadRange(PrepareContext& ctx, Int8State* st) {
  KILN_RETURN_IF_ERROR(ReadLevels(ctx, "fq_", &st->range, &st->signed_levels));
  st->zero = NudgedZero(st->range);
  KILN_PREPARE_ASSIGN(ctx, st->input_levels, ctx.attrs.GetBool("input_levels", false));
  st->output_levels = ctx.attrs.Has("out_fq_max");
  if (st->output_levels)
    KILN_RETURN_IF_ERROR(ReadLevels(ctx, "out_fq_", &st->out_range, &st->out_signed));
  return OkStatus();
}

// Input 0's dtype: the levels' where they are given as bytes, else float32.
Status ExpectX(PrepareContext& ctx, const Int8State& st) {
  return ExpectInputDType(ctx, 0, "x",
                          st.input_levels ? LevelsType(st.signed_levels) : DType::kFloat);
}

// The weights (input 1): float32 int8 levels times per-channel scales, or the levels as int8
// with their scales in attr weight_scales (a serving plan stores them so, a quarter the bytes).
Status ExpectWeights(PrepareContext& ctx, const char* name, bool* levels) {
  *levels = ctx.attrs.Has("weight_scales");
  return ExpectInputDType(ctx, 1, name, *levels ? DType::kInt8 : DType::kFloat);
}

// A batched product of matrices by one weight matrix (BatchMatMulV2 of [..., k] by [k, n],
// Keras's EinsumDense), attr batched: the rows of every batch are one matrix product, without
// an epilogue; [..., k] in, [..., n] out.
Status PrepareBatched(PrepareContext& ctx) {
  KILN_RETURN_IF_ERROR(ctx.ExpectInputs(2));
  KILN_PREPARE_ASSIGN(ctx, DType t, ctx.attrs.GetType("T"));
  if (t != DType::kFloat) return PrepareUnimplemented(ctx, "int8 products are float32");
  auto st = std::make_shared<Int8State>();
  st->kind = Kind::kMatMul;
  KILN_RETURN_IF_ERROR(ReadRange(ctx, st.get()));
  KILN_RETURN_IF_ERROR(ExpectX(ctx, *st));
  bool levels = false;
  KILN_RETURN_IF_ERROR(ExpectWeights(ctx, "y", &levels));
  KILN_RETURN_IF_ERROR(ExpectInputRank(ctx, 1, "y", 2));
  KILN_PREPARE_ASSIGN(ctx, st->transpose_b, ctx.attrs.GetBool("transpose_b", false));
  const PartialShape& x = ctx.inputs[0].shape;
  const PartialShape& w = ctx.inputs[1].shape;
  const int64_t k = w.unknown_rank() ? -1 : w.dim(st->transpose_b ? 1 : 0);
  const int64_t n = w.unknown_rank() ? -1 : w.dim(st->transpose_b ? 0 : 1);
  if (x.unknown_rank()) {
    ctx.outputs = {TensorSpec{DType::kFloat, PartialShape::UnknownRank()}};
  } else {
    if (x.rank() < 2 || (k >= 0 && x.dim(x.rank() - 1) >= 0 && x.dim(x.rank() - 1) != k))
      return ctx.Error("x of shape ", x.ToPythonString(), " does not match y of shape ",
                       w.ToPythonString());
    std::vector<int64_t> dims(x.dims().begin(), x.dims().end());
    dims.back() = n;
    KILN_ASSIGN_OR_RETURN(PartialShape out, PartialShape::FromDims(dims));
    ctx.outputs = {TensorSpec{DType::kFloat, out}};
  }
  if (st->output_levels) ctx.outputs[0].dtype = LevelsType(st->out_signed);
  ctx.state = std::move(st);
  return OkStatus();
}

template <Kind K>
Status PrepareInt8(PrepareContext& ctx) {
  KILN_PREPARE_ASSIGN(ctx, bool batched, ctx.attrs.GetBool("batched", false));
  if (K == Kind::kMatMul && batched) return PrepareBatched(ctx);
  auto st = std::make_shared<Int8State>();
  st->kind = K;
  KILN_RETURN_IF_ERROR(ReadRange(ctx, st.get()));
  KILN_RETURN_IF_ERROR(ctx.ExpectInputsAtLeast(2));
  KILN_RETURN_IF_ERROR(ExpectX(ctx, *st));
  bool levels = false;
  KILN_RETURN_IF_ERROR(ExpectWeights(ctx, "filter", &levels));
  // The float op's Prepare checks the inputs and attrs and gives the output (levels given as
  // bytes stand for the floats they are).
  const std::string_view op = ctx.op;
  const DType x_type = ctx.inputs[0].dtype, w_type = ctx.inputs[1].dtype;
  const Tensor* w_value = ctx.constant_inputs[1];
  ctx.inputs[0].dtype = ctx.inputs[1].dtype = DType::kFloat;
  if (levels) ctx.constant_inputs[1] = nullptr;
  ctx.op = FloatOp(K);
  Status prepared = FindOp(FloatOp(K))->prepare(ctx);
  Result<Epilogue> epilogue = prepared.ok() ? ReadEpilogue(ctx) : Result<Epilogue>(prepared);
  ctx.op = op;
  ctx.inputs[0].dtype = x_type;
  ctx.inputs[1].dtype = w_type;
  ctx.constant_inputs[1] = w_value;
  KILN_RETURN_IF_ERROR(prepared);
  KILN_RETURN_IF_ERROR(epilogue.status());
  st->epilogue = *epilogue;
  KILN_PREPARE_ASSIGN(ctx, DType t, ctx.attrs.GetType("T"));
  if (t != DType::kFloat || st->epilogue.batch_norm || st->epilogue.has_post())
    return PrepareUnimplemented(ctx, "int8 products are float32 with a bias epilogue");
  if (st->output_levels && st->epilogue.add)
    return ctx.Error("output levels (attrs out_fq_*) with a fused Add: expected no addend");
  if constexpr (K == Kind::kMatMul) {
    KILN_PREPARE_ASSIGN(ctx, bool ta, ctx.attrs.GetBool("transpose_a", false));
    KILN_PREPARE_ASSIGN(ctx, st->transpose_b, ctx.attrs.GetBool("transpose_b", false));
    if (ta) return PrepareUnimplemented(ctx, "int8 products take an untransposed input");
  } else {
    WindowAttrOptions opts;
    opts.read_dilations = true;
    opts.allow_explicit = true;
    opts.legacy_2d = true;
    KILN_RETURN_IF_ERROR(ReadWindowAttrs(ctx, opts, &st->window));
  }
  if (st->output_levels) ctx.outputs[0].dtype = LevelsType(st->out_signed);
  ctx.state = std::move(st);
  return OkStatus();
}

constexpr OpDefinition kDefs[] = {
    {"_KilnInt8Conv2D", "output", kOpFreshOutputs, PrepareInt8<Kind::kConv>},
    {"_KilnInt8DepthwiseConv2dNative", "output", kOpFreshOutputs, PrepareInt8<Kind::kDepthwise>},
    {"_KilnInt8MatMul", "product", kOpFreshOutputs, PrepareInt8<Kind::kMatMul>},
};

}  // namespace

std::span<const OpDefinition> Int8ProductOpDefs() { return kDefs; }

}  // namespace kiln::exec
