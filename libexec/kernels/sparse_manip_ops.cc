// Rearranging sparse tensors (indices [N, rank] int64, values [N], dense_shape [rank]):
// SparseReorder (row-major order), SparseConcat, SparseSlice, SparseSplit, and the gradients
// SparseAddGrad, SparseSliceGrad and SparseFillEmptyRowsGrad (RaggedFillEmptyRowsGrad, the
// same). Orders and messages follow TF's
// kernels (tensorflow/core/kernels/sparse_*_op.cc). Also the sparse tensors maps
// (AddSparseToTensorsMap, AddManySparseToTensorsMap, TakeManySparseFromTensorsMap; see their
// section in kernels/sparse_manip_ops.h). The CPU kernels are in kernels/cpu/sparse_manip_ops.cc.
#include "kernels/sparse_manip_ops.h"

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <utility>

#include "kernels/array_util.h"
#include "kernels/kernel_util.h"
#include "kernels/sparse_util.h"
#include "kiln/exec/resources.h"

namespace kiln::exec {
namespace {

using sparse_manip::ConcatState;
using sparse_manip::GradTypes;
using sparse_manip::MapState;
using sparse_manip::SparseTensorsMap;

// The common prepare: T, and the sparse inputs at `first` (int64 indices and shape, values of T).
Result<DType> PrepareSparseInput(PrepareContext& ctx, int first, std::string_view prefix) {
  KILN_PREPARE_ASSIGN(ctx, DType t, ctx.attrs.GetType("T"));
  KILN_RETURN_IF_ERROR(ExpectSparseInputs(ctx, first, t, prefix));
  return t;
}

// ---- SparseReorder ---------------------------------------------------------------------------

Status PrepareReorder(PrepareContext& ctx) {
  KILN_RETURN_IF_ERROR(ctx.ExpectInputs(3));
  KILN_ASSIGN_OR_RETURN(DType t, PrepareSparseInput(ctx, 0, "input_"));
  ctx.outputs = {ctx.inputs[0], ctx.inputs[1]};
  ctx.outputs[1].dtype = t;
  return OkStatus();
}

// ---- SparseConcat ----------------------------------------------------------------------------

Status PrepareSparseConcat(PrepareContext& ctx) {
  KILN_PREPARE_ASSIGN(ctx, int64_t n, ctx.attrs.GetInt("N"));
  if (n < 2) return ctx.Error("attr 'N' must be at least 2, got ", n);
  KILN_RETURN_IF_ERROR(ctx.ExpectInputs(static_cast<int>(3 * n)));
  KILN_PREPARE_ASSIGN(ctx, DType t, ctx.attrs.GetType("T"));
  for (int64_t i = 0; i < n; ++i) {
    const int k = static_cast<int>(i);
    KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, k, "indices", DType::kInt64));
    KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, static_cast<int>(n) + k, "values", t));
    KILN_RETURN_IF_ERROR(
        ExpectInputDType(ctx, static_cast<int>(2 * n) + k, "shapes", DType::kInt64));
  }
  auto st = std::make_shared<ConcatState>();
  st->n = n;
  KILN_PREPARE_ASSIGN(ctx, st->dim, ctx.attrs.GetInt("concat_dim"));
  ctx.outputs = {TensorSpec{DType::kInt64, PartialShape{-1, -1}}, TensorSpec{t, PartialShape{-1}},
                 TensorSpec{DType::kInt64, PartialShape{-1}}};
  ctx.state = std::move(st);
  return OkStatus();
}

// ---- SparseSlice -----------------------------------------------------------------------------

Status PrepareSparseSlice(PrepareContext& ctx) {
  KILN_RETURN_IF_ERROR(ctx.ExpectInputs(5));
  KILN_ASSIGN_OR_RETURN(DType t, PrepareSparseInput(ctx, 0, ""));
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 3, "start", DType::kInt64));
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 4, "size", DType::kInt64));
  ctx.outputs = {TensorSpec{DType::kInt64, PartialShape{-1, -1}}, TensorSpec{t, PartialShape{-1}},
                 TensorSpec{DType::kInt64, PartialShape{-1}}};
  return OkStatus();
}

// ---- SparseSplit -----------------------------------------------------------------------------

Status PrepareSparseSplit(PrepareContext& ctx) {
  KILN_RETURN_IF_ERROR(ctx.ExpectInputs(4));
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 0, "split_dim", DType::kInt64));
  KILN_ASSIGN_OR_RETURN(DType t, PrepareSparseInput(ctx, 1, ""));
  KILN_PREPARE_ASSIGN(ctx, int64_t n, ctx.attrs.GetInt("num_split"));
  if (n < 1) return ctx.Error("attr 'num_split' must be at least 1, got ", n);
  for (int64_t i = 0; i < n; ++i)
    ctx.outputs.push_back(TensorSpec{DType::kInt64, PartialShape{-1, -1}});
  for (int64_t i = 0; i < n; ++i) ctx.outputs.push_back(TensorSpec{t, PartialShape{-1}});
  for (int64_t i = 0; i < n; ++i)
    ctx.outputs.push_back(TensorSpec{DType::kInt64, PartialShape{-1}});
  return OkStatus();
}

// ---- SparseSliceGrad, SparseAddGrad, SparseFillEmptyRowsGrad
// --------------------------------------

Status PrepareSliceGrad(PrepareContext& ctx) {
  KILN_RETURN_IF_ERROR(ctx.ExpectInputs(4));
  KILN_ASSIGN_OR_RETURN(DType t, ValueDType(ctx, 0, "backprop_val_grad"));
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 1, "input_indices", DType::kInt64));
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 2, "input_start", DType::kInt64));
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 3, "output_indices", DType::kInt64));
  ctx.outputs = {TensorSpec{t, PartialShape{-1}}};
  return OkStatus();
}

Status PrepareAddGrad(PrepareContext& ctx) {
  KILN_RETURN_IF_ERROR(ctx.ExpectInputs(4));
  KILN_ASSIGN_OR_RETURN(DType t, ValueDType(ctx, 0, "backprop_val_grad"));
  for (int i = 1; i < 4; ++i) {
    KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, i, "indices", DType::kInt64));
    KILN_RETURN_IF_ERROR(ExpectInputRank(ctx, i, "indices", 2));
  }
  ctx.outputs = {TensorSpec{t, PartialShape{-1}}, TensorSpec{t, PartialShape{-1}}};
  return OkStatus();
}

Status PrepareFillEmptyRowsGrad(PrepareContext& ctx) {
  KILN_RETURN_IF_ERROR(ctx.ExpectInputs(2));
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 0, "reverse_index_map", DType::kInt64));
  KILN_ASSIGN_OR_RETURN(DType t, ValueDType(ctx, 1, "grad_values"));
  KILN_RETURN_IF_ERROR(ExpectAttrDTypeIn(ctx, "T", t, GradTypes::kDTypes));
  ctx.outputs = {TensorSpec{t, ctx.inputs[0].shape}, TensorSpec{t, PartialShape::Scalar()}};
  return OkStatus();
}

// ---- Sparse tensors maps ---------------------------------------------------------------------

using Handle = std::shared_ptr<ResourceBase>;

// The map of the node's container and shared_name attrs (an Add's default name is the node's;
// a TakeMany without one gets a map of its own).
Status PrepareMap(PrepareContext& ctx, bool add, MapState* st) {
  KILN_PREPARE_ASSIGN(ctx, std::string container, ctx.attrs.GetString("container", ""));
  KILN_PREPARE_ASSIGN(ctx, std::string name, ctx.attrs.GetString("shared_name", ""));
  const bool own = name.empty() && !add;
  if (name.empty()) name = std::string(ctx.node_name);
  if (own || ctx.resources == nullptr) {
    st->map = std::make_shared<SparseTensorsMap>(name);
    return OkStatus();
  }
  // Keyed by type too, as TF's resource manager is.
  const std::string key = "SparseTensorsMap:" + container + "/" + name;
  Handle r =
      ctx.resources->LookupOrCreate(key, [&] { return std::make_shared<SparseTensorsMap>(name); });
  if (r == nullptr || r->TypeTag() != &SparseTensorsMap::kTypeTag)
    return ctx.Error("resource '", key, "' exists and is not a sparse tensors map");
  st->map = std::static_pointer_cast<SparseTensorsMap>(r);
  return OkStatus();
}

// ---- AddSparseToTensorsMap, AddManySparseToTensorsMap ----------------------------------------

template <bool kMany>
Status PrepareAdd(PrepareContext& ctx) {
  KILN_RETURN_IF_ERROR(ctx.ExpectInputs(3));
  auto st = std::make_shared<MapState>();
  KILN_ASSIGN_OR_RETURN(st->dtype, ValueDType(ctx, 1, "sparse_values"));
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 0, "sparse_indices", DType::kInt64));
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 2, "sparse_shape", DType::kInt64));
  KILN_RETURN_IF_ERROR(ExpectInputRank(ctx, 0, "sparse_indices", 2));
  KILN_RETURN_IF_ERROR(ExpectInputRank(ctx, 1, "sparse_values", 1));
  KILN_RETURN_IF_ERROR(ExpectInputRank(ctx, 2, "sparse_shape", 1));
  KILN_RETURN_IF_ERROR(PrepareMap(ctx, /*add=*/true, st.get()));
  int64_t n = -1;  // AddMany: one handle per row of the first dim
  if (const Tensor* shape = ConstantInput(ctx, 2); shape != nullptr && shape->NumElements() > 0)
    n = shape->data<int64_t>()[0];
  ctx.outputs = {TensorSpec{DType::kInt64, kMany ? PartialShape{n} : PartialShape::Scalar()}};
  ctx.state = std::move(st);
  return OkStatus();
}

// ---- TakeManySparseFromTensorsMap ------------------------------------------------------------

Status PrepareTakeMany(PrepareContext& ctx) {
  KILN_RETURN_IF_ERROR(ctx.ExpectInputs(1));
  auto st = std::make_shared<MapState>();
  KILN_PREPARE_ASSIGN(ctx, st->dtype, ctx.attrs.GetType("dtype"));
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 0, "sparse_handles", DType::kInt64));
  KILN_RETURN_IF_ERROR(ExpectInputRank(ctx, 0, "sparse_handles", 1));
  KILN_RETURN_IF_ERROR(PrepareMap(ctx, /*add=*/false, st.get()));
  ctx.outputs = {TensorSpec{DType::kInt64, PartialShape{-1, -1}},
                 TensorSpec{st->dtype, PartialShape{-1}},
                 TensorSpec{DType::kInt64, PartialShape{-1}}};
  ctx.state = std::move(st);
  return OkStatus();
}

// ---- tables ----------------------------------------------------------------------------------

constexpr uint32_t kStatefulFresh = kOpStateful | kOpFreshOutputs;

constexpr OpDefinition kDefs[] = {
    {"SparseReorder", "output_indices,output_values", kOpFreshOutputs, PrepareReorder},
    {"SparseConcat", "output_indices,output_values,output_shape", kOpFreshOutputs,
     PrepareSparseConcat},
    {"SparseSlice", "output_indices,output_values,output_shape", kOpFreshOutputs,
     PrepareSparseSlice},
    {"SparseSplit", "output_indices*num_split,output_values*num_split,output_shape*num_split",
     kOpFreshOutputs, PrepareSparseSplit},
    {"SparseSliceGrad", "val_grad", kOpFreshOutputs, PrepareSliceGrad},
    {"SparseAddGrad", "a_val_grad,b_val_grad", kOpFreshOutputs, PrepareAddGrad},
    {"SparseFillEmptyRowsGrad", "d_values,d_default_value", kOpFreshOutputs,
     PrepareFillEmptyRowsGrad},
    {"RaggedFillEmptyRowsGrad", "d_values,d_default_value", kOpFreshOutputs,
     PrepareFillEmptyRowsGrad},
    {"AddSparseToTensorsMap", "sparse_handle", kStatefulFresh, PrepareAdd<false>},
    {"AddManySparseToTensorsMap", "sparse_handles", kStatefulFresh, PrepareAdd<true>},
    {"TakeManySparseFromTensorsMap", "sparse_indices,sparse_values,sparse_shape", kStatefulFresh,
     PrepareTakeMany},
};

}  // namespace

std::span<const OpDefinition> SparseManipOpDefs() { return kDefs; }

}  // namespace kiln::exec
