#include "kernels/elementwise.h"

#include <algorithm>

namespace kiln::exec {

Status PrepareUnary(PrepareContext& ctx, std::span<const DType> allowed,
                    std::string_view input_name, DType out) {
  KILN_RETURN_IF_ERROR(ctx.ExpectInputs(1));
  KILN_PREPARE_ASSIGN(ctx, DType t, ctx.attrs.GetType("T"));
  KILN_RETURN_IF_ERROR(ExpectAttrDTypeIn(ctx, "T", t, allowed));
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 0, input_name, t));
  ctx.outputs = {TensorSpec{out == DType::kInvalid ? t : out, ctx.inputs[0].shape}};
  return OkStatus();
}

Status PrepareBinary(PrepareContext& ctx, std::span<const DType> allowed, DType out) {
  KILN_RETURN_IF_ERROR(ctx.ExpectInputs(2));
  KILN_PREPARE_ASSIGN(ctx, DType t, ctx.attrs.GetType("T"));
  KILN_RETURN_IF_ERROR(ExpectAttrDTypeIn(ctx, "T", t, allowed));
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 0, "x", t));
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 1, "y", t));
  KILN_PREPARE_ASSIGN(ctx, PartialShape shape,
                      BroadcastPartialShapes(ctx.inputs[0].shape, ctx.inputs[1].shape));
  ctx.outputs = {TensorSpec{out == DType::kInvalid ? t : out, shape}};
  return OkStatus();
}

}  // namespace kiln::exec
