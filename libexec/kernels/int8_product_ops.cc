// Integer products for int8 SavedModels (docs/quantize.md, "int8"). The prepare-time fusion
// (graph/fusion_int8.cc) turns a Conv2D, DepthwiseConv2dNative or MatMul, plain or fused,
// whose input passes an 8-bit FakeQuantWithMinMaxArgs of a range oneDNN takes without a zero
// point ([0, max], or [-max, max] narrow) and whose weights are int8 levels into
//   _KilnInt8Conv2D, _KilnInt8DepthwiseConv2dNative, _KilnInt8MatMul:
// the attrs and inputs of _FusedConv2D / _FusedDepthwiseConv2dNative / _FusedMatMul, but input 0
// is the FakeQuant's input, and its range comes as attrs fq_min, fq_max, fq_narrow_range.
// This file holds their definitions; the CPU kernel is in kernels/cpu/int8_product_ops.cc.
#include "kernels/int8_product_ops.h"

#include <cstdint>
#include <memory>
#include <span>
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

constexpr const char* FloatOp(Kind k) {
  return k == Kind::kConv        ? "_FusedConv2D"
         : k == Kind::kDepthwise ? "_FusedDepthwiseConv2dNative"
                                 : "_FusedMatMul";
}

// The FakeQuant range of the input (attrs fq_min, fq_max, fq_narrow_range).
Status ReadRange(PrepareContext& ctx, Int8State* st) {
  KILN_PREPARE_ASSIGN(ctx, float lo, ctx.attrs.GetFloat("fq_min", 0.f));
  KILN_PREPARE_ASSIGN(ctx, float hi, ctx.attrs.GetFloat("fq_max", 0.f));
  KILN_PREPARE_ASSIGN(ctx, st->signed_levels, ctx.attrs.GetBool("fq_narrow_range", false));
  if (!(hi > 0) || lo != (st->signed_levels ? -hi : 0.f))
    return ctx.Error("attrs fq_min ", lo, ", fq_max ", hi, ", fq_narrow_range ", st->signed_levels,
                     ": expected [0, max] or a narrow [-max, max], max > 0");
  st->range = Nudge(lo, hi, QuantRange{st->signed_levels ? 1 : 0, 255});
  st->zero = NudgedZero(st->range);
  return OkStatus();
}

// A batched product of matrices by one weight matrix (BatchMatMulV2 of [..., k] by [k, n],
// Keras's EinsumDense), attr batched: the rows of every batch are one matrix product, without
// an epilogue; [..., k] in, [..., n] out.
Status PrepareBatched(PrepareContext& ctx) {
  KILN_RETURN_IF_ERROR(ctx.ExpectInputs(2));
  KILN_PREPARE_ASSIGN(ctx, DType t, ctx.attrs.GetType("T"));
  if (t != DType::kFloat) return PrepareUnimplemented(ctx, "int8 products are float32");
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 0, "x", DType::kFloat));
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 1, "y", DType::kFloat));
  KILN_RETURN_IF_ERROR(ExpectInputRank(ctx, 1, "y", 2));
  auto st = std::make_shared<Int8State>();
  st->kind = Kind::kMatMul;
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
  KILN_RETURN_IF_ERROR(ReadRange(ctx, st.get()));
  ctx.state = std::move(st);
  return OkStatus();
}

template <Kind K>
Status PrepareInt8(PrepareContext& ctx) {
  KILN_PREPARE_ASSIGN(ctx, bool batched, ctx.attrs.GetBool("batched", false));
  if (K == Kind::kMatMul && batched) return PrepareBatched(ctx);
  // The float op's Prepare checks the inputs and attrs and gives the output; then the range.
  const std::string_view op = ctx.op;
  ctx.op = FloatOp(K);
  Status prepared = FindOp(FloatOp(K))->prepare(ctx);
  Result<Epilogue> epilogue = prepared.ok() ? ReadEpilogue(ctx) : Result<Epilogue>(prepared);
  ctx.op = op;
  KILN_RETURN_IF_ERROR(prepared);
  KILN_RETURN_IF_ERROR(epilogue.status());
  auto st = std::make_shared<Int8State>();
  st->kind = K;
  st->epilogue = *epilogue;
  KILN_PREPARE_ASSIGN(ctx, DType t, ctx.attrs.GetType("T"));
  if (t != DType::kFloat || st->epilogue.batch_norm)
    return PrepareUnimplemented(ctx, "int8 products are float32 with a bias epilogue");
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
  KILN_RETURN_IF_ERROR(ReadRange(ctx, st.get()));
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
