// Counting ops over sparse or ragged inputs, or with sparse outputs: SparseBincount (the dense
// bins of a SparseTensor's values, tf.sparse.bincount's dense path) and the
// {Dense,Sparse,Ragged}CountSparseOutput ops behind tf.sparse.bincount and Keras'
// CategoryEncoding, which return the counts as a SparseTensor. The CPU kernels are in
// kernels/cpu/count_sparse_ops.cc.
#include "kernels/count_sparse_ops.h"

#include <cstdint>
#include <initializer_list>
#include <memory>
#include <utility>

#include "kernels/array_util.h"
#include "kernels/kernel_util.h"
#include "kernels/sparse_util.h"
#include "kernels/type_lists.h"

namespace kiln::exec {
namespace {

using count_sparse::CountInput;
using count_sparse::CountSparseState;
using count_sparse::CountTypes;
using count_sparse::SparseBincountState;

constexpr std::initializer_list<DType> kIndexDTypes = {DType::kInt32, DType::kInt64};

// ---- SparseBincount --------------------------------------------------------------------------

// SparseBincount(indices int64, values Tidx, dense_shape int64, size Tidx, weights T): [size]
// for a 1-D sparse input, [dense_shape[0], size] (one row of bins per row) for a 2-D one.
Status PrepareSparseBincount(PrepareContext& ctx) {
  KILN_RETURN_IF_ERROR(ctx.ExpectInputs(5));
  KILN_PREPARE_ASSIGN(ctx, DType t, ctx.attrs.GetType("T"));
  KILN_RETURN_IF_ERROR(ExpectAttrDTypeIn(ctx, "T", t, NumberTypes::kDTypes));
  KILN_PREPARE_ASSIGN(ctx, DType tidx, ctx.attrs.GetType("Tidx"));
  KILN_RETURN_IF_ERROR(ExpectAttrDTypeIn(ctx, "Tidx", tidx, kIndexDTypes));
  auto state = std::make_shared<SparseBincountState>();
  KILN_PREPARE_ASSIGN(ctx, state->binary_output, ctx.attrs.GetBool("binary_output", false));
  KILN_RETURN_IF_ERROR(ExpectSparseInputs(ctx, 0, tidx, ""));
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 3, "size", tidx));
  KILN_RETURN_IF_ERROR(ExpectInputRank(ctx, 3, "size", 0));
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 4, "weights", t));
  int64_t size = -1;
  if (const Tensor* s = ConstantInput(ctx, 3); s != nullptr) {
    size = IndexValues(*s)[0];
    if (size < 0) return ctx.Error("input 'size' must be non-negative, got ", size);
  }
  PartialShape out = PartialShape::UnknownRank();
  if (const Tensor* d = ConstantInput(ctx, 2); d != nullptr && d->rank() == 1) {
    if (d->NumElements() == 1) out = PartialShape{size};
    if (d->NumElements() >= 2) out = PartialShape{d->data<int64_t>()[0], size};
  }
  ctx.outputs = {TensorSpec{t, out}};
  ctx.state = std::move(state);
  return OkStatus();
}

// ---- {Dense,Sparse,Ragged}CountSparseOutput --------------------------------------------------

// Dense(values T, weights W), Sparse(indices, values T, dense_shape, weights W),
// Ragged(splits int64, values T, weights W) -> output_indices, output_values, output_dense_shape.
template <CountInput kIn>
Status PrepareCountSparseOutput(PrepareContext& ctx) {
  constexpr int kValues = kIn == CountInput::kDense ? 0 : 1;
  constexpr int kWeights = kIn == CountInput::kSparse ? 3 : kValues + 1;
  KILN_RETURN_IF_ERROR(ctx.ExpectInputs(kWeights + 1));
  KILN_PREPARE_ASSIGN(ctx, DType t, ctx.attrs.GetType("T"));
  KILN_RETURN_IF_ERROR(ExpectAttrDTypeIn(ctx, "T", t, kIndexDTypes));
  KILN_PREPARE_ASSIGN(ctx, DType w, ctx.attrs.GetType("output_type"));
  KILN_RETURN_IF_ERROR(ExpectAttrDTypeIn(ctx, "output_type", w, CountTypes::kDTypes));
  auto state = std::make_shared<CountSparseState>();
  state->out_type = w;
  KILN_PREPARE_ASSIGN(ctx, state->minlength, ctx.attrs.GetInt("minlength", -1));
  KILN_PREPARE_ASSIGN(ctx, state->maxlength, ctx.attrs.GetInt("maxlength", -1));
  KILN_PREPARE_ASSIGN(ctx, state->binary_output, ctx.attrs.GetBool("binary_output", false));
  if (state->minlength < -1) {
    return ctx.Error("attr 'minlength' must be at least -1, got ", state->minlength);
  }
  if (state->maxlength < -1) {
    return ctx.Error("attr 'maxlength' must be at least -1, got ", state->maxlength);
  }
  int64_t out_rank = 2;  // the rank of the counts' dense shape
  if (kIn == CountInput::kSparse) {
    KILN_RETURN_IF_ERROR(ExpectSparseInputs(ctx, 0, t, ""));
    out_rank = KnownLength(ctx.inputs[2].shape);
    if (out_rank > 2) out_rank = 2;
  } else {
    if (kIn == CountInput::kRagged) {
      KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 0, "splits", DType::kInt64));
      KILN_RETURN_IF_ERROR(ExpectInputRank(ctx, 0, "splits", 1));
    }
    KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, kValues, "values", t));
    const PartialShape& v = ctx.inputs[kValues].shape;
    if (kIn == CountInput::kDense) {
      if (!v.unknown_rank() && v.rank() != 1 && v.rank() != 2) {
        return ctx.Error("input 'values' must have rank 1 or 2, got shape ", v.ToPythonString());
      }
      out_rank = v.unknown_rank() ? -1 : v.rank();
    }
  }
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, kWeights, "weights", w));
  ctx.outputs = {TensorSpec{DType::kInt64, PartialShape{-1, out_rank}},
                 TensorSpec{w, PartialShape{-1}},
                 TensorSpec{DType::kInt64, PartialShape{out_rank}}};
  ctx.state = std::move(state);
  return OkStatus();
}

constexpr OpDefinition kDefs[] = {
    {"SparseBincount", "output", kOpFreshOutputs, PrepareSparseBincount},
    {"DenseCountSparseOutput", "output_indices,output_values,output_dense_shape", kOpFreshOutputs,
     PrepareCountSparseOutput<CountInput::kDense>},
    {"SparseCountSparseOutput", "output_indices,output_values,output_dense_shape", kOpFreshOutputs,
     PrepareCountSparseOutput<CountInput::kSparse>},
    {"RaggedCountSparseOutput", "output_indices,output_values,output_dense_shape", kOpFreshOutputs,
     PrepareCountSparseOutput<CountInput::kRagged>},
};

}  // namespace

std::span<const OpDefinition> CountSparseOpDefs() { return kDefs; }

}  // namespace kiln::exec
