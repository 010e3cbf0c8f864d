// Matrix products: MatMul, _FusedMatMul (bias, residual add and activation fused, as TF's
// grappler emits and as our prepare-time fusion makes from MatMul + BiasAdd + activation),
// BatchMatMul, BatchMatMulV2 (broadcasting batch dims), BatchMatMulV3 and TF 1's SparseMatMul:
// definitions. The CPU kernels are in kernels/cpu/matmul_ops.cc.
#include "kernels/matmul_ops.h"

#include <cstdint>
#include <memory>
#include <span>
#include <utility>
#include <vector>

#include "kernels/epilogue.h"
#include "kernels/kernel_util.h"
#include "kernels/type_lists.h"

namespace kiln::exec {
namespace {

using matmul::BatchShape;
using matmul::BoolName;
using matmul::MatMulState;
using matmul::MatMulTypes;

// ---- Prepare ---------------------------------------------------------------------------------

bool IsByte(DType t) { return t == DType::kInt8 || t == DType::kUInt8; }

// BatchMatMulV3's dtypes as TF's CPU kernels take them: equal ones, int8/uint8 operands into
// int32, or bfloat16 with an int8/uint8 operand into bfloat16.
bool SupportedV3Types(DType ta, DType tb, DType tout) {
  if (ta == tb && ta == tout) return true;
  if (IsByte(ta) && IsByte(tb)) return tout == DType::kInt32;
  if (tout != DType::kBFloat16) return false;
  return (ta == DType::kBFloat16 && IsByte(tb)) || (IsByte(ta) && tb == DType::kBFloat16);
}

Status PrepareMatMulCommon(PrepareContext& ctx, bool batched) {
  auto st = std::make_shared<MatMulState>();
  st->batched = batched;
  KILN_ASSIGN_OR_RETURN(st->epilogue, ReadEpilogue(ctx));
  const int n_in = 2 + st->epilogue.num_args();
  KILN_RETURN_IF_ERROR(ctx.ExpectInputs(n_in));
  if (ctx.op == "BatchMatMulV3") {
    KILN_PREPARE_ASSIGN(ctx, st->a_dtype, ctx.attrs.GetType("Ta"));
    KILN_PREPARE_ASSIGN(ctx, st->b_dtype, ctx.attrs.GetType("Tb"));
    KILN_PREPARE_ASSIGN(ctx, st->dtype, ctx.attrs.GetType("Tout"));
    if (!SupportedV3Types(st->a_dtype, st->b_dtype, st->dtype))
      return Unimplemented("node '", ctx.node_name, "' (", ctx.op,
                           "): dtypes Ta=", DTypeShortName(st->a_dtype),
                           " Tb=", DTypeShortName(st->b_dtype), " Tout=", DTypeShortName(st->dtype),
                           " are not supported (TF's CPU kernels: equal ones, int8/uint8 operands "
                           "into int32, bfloat16 with int8/uint8 into bfloat16)");
  } else {
    KILN_PREPARE_ASSIGN(ctx, st->dtype, ctx.attrs.GetType("T"));
    st->a_dtype = st->b_dtype = st->dtype;
  }
  if (st->a_dtype == st->dtype && st->b_dtype == st->dtype)
    KILN_RETURN_IF_ERROR(ExpectAttrDTypeIn(ctx, "T", st->dtype, MatMulTypes::kDTypes));
  if (st->epilogue.num_args() > 0 &&
      (st->dtype != DType::kFloat || st->a_dtype != st->dtype || st->b_dtype != st->dtype))
    return Unimplemented("node '", ctx.node_name, "' (", ctx.op,
                         "): fused epilogues are supported for float32 only");
  const char* a_name = batched ? "x" : "a";
  const char* b_name = batched ? "y" : "b";
  if (batched) {
    KILN_PREPARE_ASSIGN(ctx, st->adj_a, ctx.attrs.GetBool("adj_x", false));
    KILN_PREPARE_ASSIGN(ctx, st->adj_b, ctx.attrs.GetBool("adj_y", false));
  } else {
    KILN_PREPARE_ASSIGN(ctx, st->adj_a, ctx.attrs.GetBool("transpose_a", false));
    KILN_PREPARE_ASSIGN(ctx, st->adj_b, ctx.attrs.GetBool("transpose_b", false));
    KILN_RETURN_IF_ERROR(ExpectInputRank(ctx, 0, a_name, 2));
    KILN_RETURN_IF_ERROR(ExpectInputRank(ctx, 1, b_name, 2));
  }
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 0, a_name, st->a_dtype));
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 1, b_name, st->b_dtype));
  for (int i = 2; i < n_in; ++i)
    KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, i, internal::StrCat("args:", i - 2), st->dtype));
  PartialShape a = ctx.inputs[0].shape;
  PartialShape b = ctx.inputs[1].shape;
  // MatMul's operands are matrices even when their shapes are not known.
  if (!batched && a.unknown_rank()) a = PartialShape{-1, -1};
  if (!batched && b.unknown_rank()) b = PartialShape{-1, -1};
  PartialShape out;
  if (!a.unknown_rank() && !b.unknown_rank()) {
    if (a.rank() < 2 || b.rank() < 2)
      return ctx.Error("inputs must have rank >= 2, got ", a.ToPythonString(), " and ",
                       b.ToPythonString());
    const int64_t m = a.dim(a.rank() - (st->adj_a ? 1 : 2));
    const int64_t ka = a.dim(a.rank() - (st->adj_a ? 2 : 1));
    const int64_t kb = b.dim(b.rank() - (st->adj_b ? 1 : 2));
    const int64_t n = b.dim(b.rank() - (st->adj_b ? 2 : 1));
    if (ka >= 0 && kb >= 0 && ka != kb)
      return ctx.Error("inner dimensions do not match: ", a_name, " has shape ", a.ToPythonString(),
                       ", ", b_name, " has shape ", b.ToPythonString(),
                       batched ? " (adj_x=" : " (transpose_a=", BoolName(st->adj_a),
                       batched ? ", adj_y=" : ", transpose_b=", BoolName(st->adj_b), ")");
    std::vector<int64_t> dims;
    if (!BatchShape(a.dims(), b.dims(), &dims))
      return ctx.Error("batch dimensions of ", a.ToPythonString(), " and ", b.ToPythonString(),
                       " do not broadcast");
    dims.push_back(m);
    dims.push_back(n);
    KILN_PREPARE_ASSIGN(ctx, out, PartialShape::FromDims(dims));
    if (st->epilogue.bias) {
      const PartialShape& bias = ctx.inputs[2].shape;
      if (!bias.unknown_rank() &&
          (bias.rank() != 1 || (n >= 0 && bias.dim(0) >= 0 && bias.dim(0) != n)))
        return ctx.Error("the bias must be a vector of ", n, " elements, got shape ",
                         bias.ToPythonString());
    }
  }
  ctx.outputs = {TensorSpec{st->dtype, out}};
  ctx.state = std::move(st);
  return OkStatus();
}

Status PrepareMatMul(PrepareContext& ctx) { return PrepareMatMulCommon(ctx, false); }
Status PrepareBatchMatMul(PrepareContext& ctx) { return PrepareMatMulCommon(ctx, true); }

// ---- SparseMatMul ----------------------------------------------------------------------------

// TF 1's MatMul with sparsity hints (a_is_sparse, b_is_sparse) over float32 or bfloat16 operands,
// into float32. The hints only choose TF's algorithm; the product is the dense one, here oneDNN's
// sgemm over float32 copies of bfloat16 operands.
Status PrepareSparseMatMul(PrepareContext& ctx) {
  KILN_RETURN_IF_ERROR(ctx.ExpectInputs(2));
  PartialShape dims[2];
  bool transpose[2];
  for (int i = 0; i < 2; ++i) {
    const char* name = i == 0 ? "a" : "b";
    const char* type_attr = i == 0 ? "Ta" : "Tb";
    KILN_PREPARE_ASSIGN(ctx, DType t, ctx.attrs.GetType(type_attr, DType::kFloat));
    KILN_RETURN_IF_ERROR(ExpectAttrDTypeIn(ctx, type_attr, t, {DType::kFloat, DType::kBFloat16}));
    KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, i, name, t));
    KILN_RETURN_IF_ERROR(ExpectInputRank(ctx, i, name, 2));
    KILN_PREPARE_ASSIGN(ctx, transpose[i],
                        ctx.attrs.GetBool(i == 0 ? "transpose_a" : "transpose_b", false));
    dims[i] = ctx.inputs[i].shape.unknown_rank() ? PartialShape{-1, -1} : ctx.inputs[i].shape;
  }
  const int64_t ka = dims[0].dim(transpose[0] ? 0 : 1), kb = dims[1].dim(transpose[1] ? 1 : 0);
  if (ka >= 0 && kb >= 0 && ka != kb)
    return ctx.Error("inputs 'a' ", dims[0].ToPythonString(), " and 'b' ", dims[1].ToPythonString(),
                     " do not multiply (inner dimensions ", ka, " and ", kb, ")");
  ctx.outputs = {TensorSpec{DType::kFloat, PartialShape{dims[0].dim(transpose[0] ? 1 : 0),
                                                        dims[1].dim(transpose[1] ? 0 : 1)}}};
  ctx.state = std::make_shared<TypedOpState<std::pair<bool, bool>>>(
      std::pair<bool, bool>{transpose[0], transpose[1]});
  return OkStatus();
}

constexpr OpDefinition kDefs[] = {
    {"MatMul", "product", kOpFreshOutputs, PrepareMatMul},
    {"_FusedMatMul", "product", kOpFreshOutputs, PrepareMatMul},
    {"BatchMatMul", "output", kOpFreshOutputs, PrepareBatchMatMul},
    {"BatchMatMulV2", "output", kOpFreshOutputs, PrepareBatchMatMul},
    {"BatchMatMulV3", "output", kOpFreshOutputs, PrepareBatchMatMul},
    {"SparseMatMul", "product", kOpFreshOutputs, PrepareSparseMatMul},
};

}  // namespace

std::span<const OpDefinition> MatMulOpDefs() { return kDefs; }

}  // namespace kiln::exec
