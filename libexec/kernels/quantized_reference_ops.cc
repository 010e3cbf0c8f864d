// TF's reference quantized products, quint8 x quint8 -> qint32 with zero points (the offset of
// real 0 in each range): QuantizedMatMul, QuantizedConv2D; the integers are
// sum((a - a0) * (b - b0)), exact and wrapping as TF's gemmlowp path, and the range is one level
// of a times one of b. The forms TensorFlow's oneDNN build runs, with no zero points, are in
// quantized_product_ops.cc.
// The CPU kernels are in kernels/cpu/quantized_reference_ops.cc.
#include "kernels/quantized_reference_ops.h"

#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "kernels/array_util.h"
#include "kernels/kernel_util.h"
#include "kernels/quantized_util.h"
#include "kernels/window_util.h"

namespace kiln::exec {
namespace {

using quantized_reference::ClassicState;

// ---- QuantizedMatMul, QuantizedConv2D (reference kernels, with zero points) ----------------

Status PrepareClassic(PrepareContext& ctx) {
  const bool conv = ctx.op == "QuantizedConv2D";
  KILN_RETURN_IF_ERROR(ctx.ExpectInputs(6));
  const char* a_attr = conv ? "Tinput" : "T1";
  const char* b_attr = conv ? "Tfilter" : "T2";
  KILN_PREPARE_ASSIGN(ctx, DType a_type, ctx.attrs.GetType(a_attr));
  KILN_PREPARE_ASSIGN(ctx, DType b_type, ctx.attrs.GetType(b_attr));
  KILN_RETURN_IF_ERROR(ExpectAttrDTypeIn(ctx, a_attr, a_type, {DType::kQUInt8}));
  KILN_RETURN_IF_ERROR(ExpectAttrDTypeIn(ctx, b_attr, b_type, {DType::kQUInt8}));
  KILN_PREPARE_ASSIGN(ctx, DType out,
                      ctx.attrs.GetType(conv ? "out_type" : "Toutput", DType::kQInt32));
  KILN_RETURN_IF_ERROR(
      ExpectAttrDTypeIn(ctx, conv ? "out_type" : "Toutput", out, {DType::kQInt32}));
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 0, conv ? "input" : "a", DType::kQUInt8));
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 1, conv ? "filter" : "b", DType::kQUInt8));
  for (int i = 2; i < 6; ++i)
    KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, i, "range", DType::kFloat));
  auto st = std::make_shared<ClassicState>();
  const PartialShape& a = ctx.inputs[0].shape;
  const PartialShape& b = ctx.inputs[1].shape;
  PartialShape out_shape = UnknownDims(conv ? 4 : 2);
  if (conv) {
    KILN_PREPARE_ASSIGN(ctx, std::vector<int64_t> strides, ctx.attrs.GetIntList("strides"));
    std::array<int64_t, 2> s{};
    KILN_RETURN_IF_ERROR(ReadSpatialList(ctx, "strides", strides, &s));
    if (s[0] != s[1])
      return ctx.Error("Current implementation only supports equal length strides in the row ",
                       "and column dimensions.");
    st->stride = s[0];
    KILN_PREPARE_ASSIGN(ctx, std::vector<int64_t> dilations,
                        ctx.attrs.GetIntList("dilations", {1, 1, 1, 1}));
    std::array<int64_t, 2> d{};
    KILN_RETURN_IF_ERROR(ReadSpatialList(ctx, "dilations", dilations, &d));
    if (d[0] != 1 || d[1] != 1)
      return ctx.Error("Current implementation only supports dilated rate as 1 in the row and ",
                       "column dimensions.");
    KILN_PREPARE_ASSIGN(ctx, std::string padding, ctx.attrs.GetString("padding"));
    if (padding != "SAME" && padding != "VALID")
      return ctx.Error("attr 'padding' is '", padding, "', expected SAME or VALID");
    st->padding = padding == "SAME" ? WindowPadding::kSame : WindowPadding::kValid;
  } else {
    KILN_PREPARE_ASSIGN(ctx, st->transpose_a, ctx.attrs.GetBool("transpose_a", false));
    KILN_PREPARE_ASSIGN(ctx, st->transpose_b, ctx.attrs.GetBool("transpose_b", false));
    if (!a.unknown_rank() && !b.unknown_rank() && a.rank() == 2 && b.rank() == 2)
      out_shape = PartialShape{a.dim(st->transpose_a ? 1 : 0), b.dim(st->transpose_b ? 0 : 1)};
  }
  ctx.outputs = {TensorSpec{DType::kQInt32, out_shape},
                 TensorSpec{DType::kFloat, PartialShape::Scalar()},
                 TensorSpec{DType::kFloat, PartialShape::Scalar()}};
  ctx.state = std::move(st);
  return OkStatus();
}

constexpr OpDefinition kDefs[] = {
    {"QuantizedMatMul", "out,min_out,max_out", kOpFreshOutputs, PrepareClassic},
    {"QuantizedConv2D", "output,min_output,max_output", kOpFreshOutputs, PrepareClassic},
};

}  // namespace

std::span<const OpDefinition> QuantizedReferenceOpDefs() { return kDefs; }
}  // namespace kiln::exec
