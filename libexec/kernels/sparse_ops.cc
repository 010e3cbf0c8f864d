// Sparse tensors as (indices [N, rank] int64, values [N], dense_shape [rank]) triples:
// SparseToDense, SparseFillEmptyRows (and RaggedFillEmptyRows), SparseReshape, the set operations
// along the last dim (DenseToDense-, DenseToSparse-, SparseToSparseSetOperation; a sparse result)
// and SetSize. The CPU kernels are in kernels/cpu/sparse_ops.cc.
#include "kernels/sparse_ops.h"

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <utility>

#include "kernels/array_util.h"
#include "kernels/kernel_util.h"

namespace kiln::exec {
namespace {

using sparse::SetOp;
using sparse::SetOperands;
using sparse::SetState;
using sparse::SetTypes;
using sparse::ValidateState;

// ---- SparseToDense ---------------------------------------------------------------------------

Status PrepareSparseToDense(PrepareContext& ctx) {
  KILN_RETURN_IF_ERROR(ctx.ExpectInputs(4));
  KILN_ASSIGN_OR_RETURN(DType ti, IndexInputDType(ctx, 0, "sparse_indices", "Tindices"));
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 1, "output_shape", ti));
  KILN_ASSIGN_OR_RETURN(DType t, ValueDType(ctx, 2, "sparse_values"));
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 3, "default_value", t));
  KILN_RETURN_IF_ERROR(ExpectInputRank(ctx, 3, "default_value", 0));
  KILN_PREPARE_ASSIGN(ctx, bool validate, ctx.attrs.GetBool("validate_indices", true));
  const PartialShape& is = ctx.inputs[0].shape;
  if (!is.unknown_rank() && is.rank() > 2) {
    return ctx.Error("input 'sparse_indices' must have rank at most 2, got ", is.ToPythonString());
  }
  const PartialShape& os = ctx.inputs[1].shape;
  if (!os.unknown_rank() && os.rank() > 1) {
    return ctx.Error("input 'output_shape' must have rank at most 1, got ", os.ToPythonString());
  }
  PartialShape out = UnknownDims(os.unknown_rank() ? -1
                                 : os.rank() == 0  ? 1
                                                   : static_cast<int>(os.dim(0)));
  if (const Tensor* s = ConstantInput(ctx, 1)) {
    auto shape = Shape::FromDims(IndexValues(*s));
    if (!shape.ok()) return ctx.Error("input 'output_shape': ", shape.status().message());
    out = *shape;
  }
  ctx.outputs = {TensorSpec{t, out}};
  ctx.state = std::make_shared<ValidateState>(validate);
  return OkStatus();
}

// ---- SparseFillEmptyRows ---------------------------------------------------------------------

Status PrepareFillEmptyRows(PrepareContext& ctx) {
  KILN_RETURN_IF_ERROR(ctx.ExpectInputs(4));
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 0, "indices", DType::kInt64));
  KILN_ASSIGN_OR_RETURN(DType t, ValueDType(ctx, 1, "values"));
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 2, "dense_shape", DType::kInt64));
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 3, "default_value", t));
  KILN_RETURN_IF_ERROR(ExpectInputRank(ctx, 0, "indices", 2));
  KILN_RETURN_IF_ERROR(ExpectInputRank(ctx, 1, "values", 1));
  KILN_RETURN_IF_ERROR(ExpectInputRank(ctx, 2, "dense_shape", 1));
  KILN_RETURN_IF_ERROR(ExpectInputRank(ctx, 3, "default_value", 0));
  const PartialShape& is = ctx.inputs[0].shape;
  const int64_t rank = is.unknown_rank() ? -1 : is.dim(1);
  ctx.outputs = {TensorSpec{DType::kInt64, PartialShape{-1, rank}}, TensorSpec{t, PartialShape{-1}},
                 TensorSpec{DType::kBool, PartialShape{-1}},
                 TensorSpec{DType::kInt64, PartialShape{is.unknown_rank() ? -1 : is.dim(0)}}};
  ctx.state = std::make_shared<TypedOpState<bool>>(false);
  return OkStatus();
}

// RaggedFillEmptyRows: the same over a ragged tensor's value_rowids (one row id per value) and
// nrows; the rows' ids come out as a vector.
Status PrepareRaggedFillEmptyRows(PrepareContext& ctx) {
  KILN_RETURN_IF_ERROR(ctx.ExpectInputs(4));
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 0, "value_rowids", DType::kInt64));
  KILN_ASSIGN_OR_RETURN(DType t, ValueDType(ctx, 1, "values"));
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 2, "nrows", DType::kInt64));
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 3, "default_value", t));
  KILN_RETURN_IF_ERROR(ExpectInputRank(ctx, 0, "value_rowids", 1));
  KILN_RETURN_IF_ERROR(ExpectInputRank(ctx, 1, "values", 1));
  KILN_RETURN_IF_ERROR(ExpectInputRank(ctx, 2, "nrows", 0));
  KILN_RETURN_IF_ERROR(ExpectInputRank(ctx, 3, "default_value", 0));
  const PartialShape& is = ctx.inputs[0].shape;
  ctx.outputs = {TensorSpec{DType::kInt64, PartialShape{-1}}, TensorSpec{t, PartialShape{-1}},
                 TensorSpec{DType::kBool, PartialShape{-1}},
                 TensorSpec{DType::kInt64, PartialShape{is.unknown_rank() ? -1 : is.dim(0)}}};
  ctx.state = std::make_shared<TypedOpState<bool>>(true);
  return OkStatus();
}

// ---- SparseReshape ---------------------------------------------------------------------------

Status PrepareSparseReshape(PrepareContext& ctx) {
  KILN_RETURN_IF_ERROR(ctx.ExpectInputs(3));
  const char* names[] = {"input_indices", "input_shape", "new_shape"};
  for (int i = 0; i < 3; ++i)
    KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, i, names[i], DType::kInt64));
  KILN_RETURN_IF_ERROR(ExpectInputRank(ctx, 0, "input_indices", 2));
  KILN_RETURN_IF_ERROR(ExpectInputRank(ctx, 1, "input_shape", 1));
  KILN_RETURN_IF_ERROR(ExpectInputRank(ctx, 2, "new_shape", 1));
  const int64_t n = ctx.inputs[0].shape.unknown_rank() ? -1 : ctx.inputs[0].shape.dim(0);
  const int64_t r = KnownLength(ctx.inputs[2].shape);
  ctx.outputs = {TensorSpec{DType::kInt64, PartialShape{n, r}},
                 TensorSpec{DType::kInt64, PartialShape{r}}};
  return OkStatus();
}

// ---- DenseToDenseSetOperation, DenseToSparseSetOperation, SparseToSparseSetOperation, SetSize --

// Set operations along the last dim: each position of the leading dims holds one set, the last
// dim's values of a dense input or the values of a sparse input's entries with that leading
// index. The result is sparse: per set its sorted elements.

SetOperands OperandsOf(std::string_view op) {
  return {op == "SparseToSparseSetOperation", op != "DenseToDenseSetOperation"};
}

Status ExpectSetInput(PrepareContext& ctx, int first, bool sparse, DType t, std::string_view name,
                      int* rank) {
  const std::string n(name);
  if (sparse) {
    KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, first, n + "_indices", DType::kInt64));
    KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, first + 1, n + "_values", t));
    KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, first + 2, n + "_shape", DType::kInt64));
    const int64_t r = KnownLength(ctx.inputs[first + 2].shape);
    if (r >= 0 && r < 2) return ctx.Error("input '", n, "_shape' has rank ", r, " < 2");
    if (r >= 0) *rank = static_cast<int>(r);
    return OkStatus();
  }
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, first, n, t));
  const PartialShape& s = ctx.inputs[first].shape;
  if (s.unknown_rank()) return OkStatus();
  if (s.rank() < 2) return ctx.Error("shape ", s.ToPythonString(), " has rank ", s.rank(), " < 2");
  *rank = s.rank();
  return OkStatus();
}

Status PrepareSetOperation(PrepareContext& ctx) {
  const SetOperands k = OperandsOf(ctx.op);
  KILN_RETURN_IF_ERROR(ctx.ExpectInputs(k.b_first() + (k.b_sparse ? 3 : 1)));
  KILN_PREPARE_ASSIGN(ctx, DType t, ctx.attrs.GetType("T"));
  KILN_RETURN_IF_ERROR(ExpectAttrDTypeIn(ctx, "T", t, SetTypes::kDTypes));
  int rank_a = -1, rank_b = -1;
  KILN_RETURN_IF_ERROR(ExpectSetInput(ctx, 0, k.a_sparse, t, "set1", &rank_a));
  KILN_RETURN_IF_ERROR(ExpectSetInput(ctx, k.b_first(), k.b_sparse, t, "set2", &rank_b));
  KILN_PREPARE_ASSIGN(ctx, std::string op, ctx.attrs.GetString("set_operation"));
  KILN_PREPARE_ASSIGN(ctx, bool validate, ctx.attrs.GetBool("validate_indices", true));
  (void)validate;  // sparse inputs are always validated
  SetOp kind;
  if (op == "a-b") {
    kind = SetOp::kAMinusB;
  } else if (op == "b-a") {
    kind = SetOp::kBMinusA;
  } else if (op == "intersection") {
    kind = SetOp::kIntersection;
  } else if (op == "union") {
    kind = SetOp::kUnion;
  } else {
    return ctx.Error("invalid set_operation \"", op,
                     "\": expected \"a-b\", \"b-a\", \"intersection\" or \"union\"");
  }
  if (rank_a >= 0 && rank_b >= 0 && rank_a != rank_b) {
    return ctx.Error("set1 and set2 must have the same rank, got ", rank_a, " and ", rank_b);
  }
  const int rank = rank_a >= 0 ? rank_a : rank_b;
  ctx.outputs = {TensorSpec{DType::kInt64, PartialShape{-1, rank}}, TensorSpec{t, PartialShape{-1}},
                 TensorSpec{DType::kInt64, PartialShape{rank}}};
  auto st = std::make_shared<SetState>();
  st->op = kind;
  st->operands = k;
  ctx.state = std::move(st);
  return OkStatus();
}

Status PrepareSetSize(PrepareContext& ctx) {
  KILN_RETURN_IF_ERROR(ctx.ExpectInputs(3));
  KILN_PREPARE_ASSIGN(ctx, DType t, ctx.attrs.GetType("T"));
  KILN_RETURN_IF_ERROR(ExpectAttrDTypeIn(ctx, "T", t, SetTypes::kDTypes));
  int rank = -1;
  KILN_RETURN_IF_ERROR(ExpectSetInput(ctx, 0, true, t, "set", &rank));
  ctx.outputs = {
      TensorSpec{DType::kInt32, rank >= 0 ? UnknownDims(rank - 1) : PartialShape::UnknownRank()}};
  return OkStatus();
}

// ---- tables ----------------------------------------------------------------------------------

constexpr OpDefinition kDefs[] = {
    {"SparseToDense", "dense", kOpFreshOutputs, PrepareSparseToDense},
    {"SparseFillEmptyRows", "output_indices,output_values,empty_row_indicator,reverse_index_map",
     kOpFreshOutputs, PrepareFillEmptyRows},
    {"RaggedFillEmptyRows",
     "output_value_rowids,output_values,empty_row_indicator,reverse_index_map", kOpFreshOutputs,
     PrepareRaggedFillEmptyRows},
    {"SparseReshape", "output_indices,output_shape", kOpFreshOutputs, PrepareSparseReshape},
    {"DenseToSparseSetOperation", "result_indices,result_values,result_shape", kOpFreshOutputs,
     PrepareSetOperation},
    {"SparseToSparseSetOperation", "result_indices,result_values,result_shape", kOpFreshOutputs,
     PrepareSetOperation},
    {"SetSize", "size", kOpFreshOutputs, PrepareSetSize},
    {"DenseToDenseSetOperation", "result_indices,result_values,result_shape", kOpFreshOutputs,
     PrepareSetOperation},
};

}  // namespace

std::span<const OpDefinition> SparseOpDefs() { return kDefs; }

}  // namespace kiln::exec
