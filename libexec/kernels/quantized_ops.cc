// TensorFlow's quantized-tensor arithmetic (a qint8, quint8, qint16, quint16 or qint32 tensor
// with a float range beside it), as TF's reference CPU kernels compute them
// (TF_ENABLE_ONEDNN_OPTS=0): QuantizedRelu, QuantizedRelu6, QuantizedBiasAdd, QuantizedAdd,
// QuantizedMul and QuantizedConcat (QuantizedConcatV2 as oneDNN's build runs it).
// Each uses the conversion TF's kernel uses (the scalar or the "Eigen" one, quantized_util.h),
// a qint32 read through float, and denormals flushed, so the integers are TF's (checked against
// TF in tests/tf/test_quantized_ops_tf.py). QuantizeV2, Dequantize and the requantizing ops are
// in quantized_convert_ops.cc, the pooling, resize and normalization ops in
// quantized_image_ops.cc; QuantizedReshape lives with Reshape (shape_ops.cc).
// The CPU kernels are in kernels/cpu/quantized_ops.cc.
#include "kernels/quantized_ops.h"

#include <cstdint>
#include <memory>
#include <utility>

#include "kernels/array_util.h"
#include "kernels/kernel_util.h"
#include "kernels/quantized_util.h"

namespace kiln::exec {
namespace {

using quantized::ConcatState;
using quantized::QType;

// ---- QuantizedRelu, QuantizedRelu6 ---------------------------------------------------------

struct UnaryState : OpState {
  DType type = DType::kQUInt8;
};

Status PrepareQuantizedRelu(PrepareContext& ctx) {
  KILN_RETURN_IF_ERROR(ctx.ExpectInputs(3));
  auto st = std::make_shared<UnaryState>();
  KILN_PREPARE_ASSIGN(ctx, st->type, ctx.attrs.GetType("Tinput"));
  KILN_RETURN_IF_ERROR(ExpectAttrDTypeIn(ctx, "Tinput", st->type, QType::kDTypes));
  KILN_PREPARE_ASSIGN(ctx, DType out, ctx.attrs.GetType("out_type", DType::kQUInt8));
  if (out != st->type)
    return ctx.Error("attr 'out_type' is ", DTypeShortName(out), "; TensorFlow's kernel gives ",
                     "the input's type ", DTypeShortName(st->type));
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 0, "features", st->type));
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 1, "min_features", DType::kFloat));
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 2, "max_features", DType::kFloat));
  ctx.outputs = {TensorSpec{st->type, ctx.inputs[0].shape},
                 TensorSpec{DType::kFloat, PartialShape::Scalar()},
                 TensorSpec{DType::kFloat, PartialShape::Scalar()}};
  ctx.state = std::move(st);
  return OkStatus();
}

// ---- QuantizedBiasAdd, QuantizedAdd, QuantizedMul ------------------------------------------

struct BinaryState : OpState {
  DType x = DType::kQUInt8, y = DType::kQUInt8;
};

Status PrepareQuantizedBinary(PrepareContext& ctx) {
  KILN_RETURN_IF_ERROR(ctx.ExpectInputs(6));
  auto st = std::make_shared<BinaryState>();
  const bool bias_add = ctx.op == "QuantizedBiasAdd";
  KILN_PREPARE_ASSIGN(ctx, st->x, ctx.attrs.GetType("T1"));
  KILN_PREPARE_ASSIGN(ctx, st->y, ctx.attrs.GetType("T2"));
  if (bias_add) {
    KILN_RETURN_IF_ERROR(ExpectAttrDTypeIn(ctx, "T1", st->x, {DType::kQUInt8, DType::kQInt8}));
    if (st->y != st->x)
      return ctx.Error("attrs T1 and T2 must be equal (quint8 or qint8), got ",
                       DTypeShortName(st->x), " and ", DTypeShortName(st->y));
  } else {
    KILN_RETURN_IF_ERROR(ExpectAttrDTypeIn(ctx, "T1", st->x, {DType::kQUInt8}));
    KILN_RETURN_IF_ERROR(ExpectAttrDTypeIn(ctx, "T2", st->y, {DType::kQUInt8}));
  }
  KILN_PREPARE_ASSIGN(ctx, DType out,
                      ctx.attrs.GetType(bias_add ? "out_type" : "Toutput", DType::kQInt32));
  KILN_RETURN_IF_ERROR(
      ExpectAttrDTypeIn(ctx, bias_add ? "out_type" : "Toutput", out, {DType::kQInt32}));
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 0, bias_add ? "input" : "x", st->x));
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 1, bias_add ? "bias" : "y", st->y));
  for (int i = 2; i < 6; ++i)
    KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, i, "range", DType::kFloat));
  PartialShape shape = ctx.inputs[0].shape;
  if (!bias_add) {
    auto b = BroadcastPartialShapes(ctx.inputs[0].shape, ctx.inputs[1].shape);
    if (!b.ok()) return ctx.Error(b.status().message());
    shape = *b;
  }
  ctx.outputs = {TensorSpec{DType::kQInt32, shape},
                 TensorSpec{DType::kFloat, PartialShape::Scalar()},
                 TensorSpec{DType::kFloat, PartialShape::Scalar()}};
  ctx.state = std::move(st);
  return OkStatus();
}

// ---- QuantizedConcat, QuantizedConcatV2 ----------------------------------------------------

Status PrepareQuantizedConcat(PrepareContext& ctx) {
  auto st = std::make_shared<ConcatState>();
  st->v2 = ctx.op == "QuantizedConcatV2";
  KILN_PREPARE_ASSIGN(ctx, int64_t n, ctx.attrs.GetInt("N"));
  if (n < 2) return ctx.Error("attr 'N' is ", n, ", expected at least 2");
  st->n = static_cast<int>(n);
  KILN_RETURN_IF_ERROR(ctx.ExpectInputs(3 * st->n + 1));
  KILN_PREPARE_ASSIGN(ctx, st->type, ctx.attrs.GetType("T"));
  KILN_RETURN_IF_ERROR(ExpectAttrDTypeIn(ctx, "T", st->type, QType::kDTypes));
  const int first = st->v2 ? 0 : 1;
  const int axis_input = st->v2 ? st->n : 0;
  KILN_RETURN_IF_ERROR(ExpectInputRank(ctx, axis_input, st->v2 ? "axis" : "concat_dim", 0));
  for (int i = 0; i < st->n; ++i) {
    KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, first + i, "values", st->type));
    KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, st->n + 1 + i, "input_mins", DType::kFloat));
    KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 2 * st->n + 1 + i, "input_maxes", DType::kFloat));
  }
  const PartialShape& s0 = ctx.inputs[first].shape;
  ctx.outputs = {TensorSpec{st->type, s0.unknown_rank() ? s0 : UnknownDims(s0.rank())},
                 TensorSpec{DType::kFloat, PartialShape::Scalar()},
                 TensorSpec{DType::kFloat, PartialShape::Scalar()}};
  ctx.state = std::move(st);
  return OkStatus();
}

constexpr OpDefinition kDefs[] = {
    {"QuantizedRelu", "activations,min_activations,max_activations", kOpFreshOutputs,
     PrepareQuantizedRelu},
    {"QuantizedRelu6", "activations,min_activations,max_activations", kOpFreshOutputs,
     PrepareQuantizedRelu},
    {"QuantizedBiasAdd", "output,min_out,max_out", kOpFreshOutputs, PrepareQuantizedBinary},
    {"QuantizedAdd", "z,min_z,max_z", kOpFreshOutputs, PrepareQuantizedBinary},
    {"QuantizedMul", "z,min_z,max_z", kOpFreshOutputs, PrepareQuantizedBinary},
    {"QuantizedConcat", kQOut, kOpFreshOutputs, PrepareQuantizedConcat},
    {"QuantizedConcatV2", kQOut, kOpFreshOutputs, PrepareQuantizedConcat},
};

}  // namespace

std::span<const OpDefinition> QuantizedOpDefs() { return kDefs; }
}  // namespace kiln::exec
