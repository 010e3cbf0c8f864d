// Row access on resource variables: ResourceGather (rows of a variable, batch_dims as TF),
// ResourceScatterUpdate/Add/Sub/Mul/Div/Min/Max (rows written or combined under the variable's
// lock; a repeated index applies in order), their N-d forms ResourceGatherNd and
// ResourceScatterNdUpdate/Add/Sub/Min/Max (index vectors into the leading dims),
// ResourceStridedSliceAssign (v[1:3, ::2].assign(x); TF 1's StridedSliceAssign on a reference
// variable, whose reference is the handle here), and DisableCopyOnRead (a no-op here:
// variables swap buffers on every write, so reads never need copying).
// The CPU kernels are in kernels/cpu/resource_scatter_ops.cc.
#include "kernels/resource_scatter_ops.h"

#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "kernels/strided_slice.h"
#include "kernels/type_lists.h"
#include "kernels/variable_util.h"

namespace kiln::exec {
namespace {

using resource_scatter::GatherState;
using resource_scatter::ScatterOp;
using resource_scatter::SliceAssignState;

// ---- ResourceGather --------------------------------------------------------------------------

Status PrepareResourceGather(PrepareContext& ctx) {
  KILN_RETURN_IF_ERROR(ctx.ExpectInputs(2));
  KILN_PREPARE_ASSIGN(ctx, DType dtype, ctx.attrs.GetType("dtype"));
  KILN_PREPARE_ASSIGN(ctx, int64_t batch_dims, ctx.attrs.GetInt("batch_dims", 0));
  KILN_PREPARE_ASSIGN(ctx, bool validate, ctx.attrs.GetBool("validate_indices", true));
  (void)validate;  // indices are always checked
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 0, "resource", DType::kResource));
  KILN_RETURN_IF_ERROR(IndexInputDType(ctx, 1, "indices", "Tindices").status());
  if (batch_dims < 0) return ctx.Error("attr 'batch_dims' must be non-negative, got ", batch_dims);
  const PartialShape& indices = ctx.inputs[1].shape;
  if (!indices.unknown_rank() && batch_dims > indices.rank())
    return ctx.Error("attr 'batch_dims' ", batch_dims, " exceeds the rank of 'indices' ",
                     indices.ToPythonString());
  PartialShape out = PartialShape::UnknownRank();
  if (VariableResource* var = ConstantVariableInput(ctx, 0)) {
    KILN_PREPARE_CHECK(ctx, ExpectVariableDType(*var, dtype));
    const PartialShape& p = var->shape();
    if (!p.unknown_rank() && p.rank() <= batch_dims)
      return ctx.Error("variable '", var->name(), "' of shape ", p.ToPythonString(),
                       " has no axis after batch_dims ", batch_dims);
    if (!p.unknown_rank() && !indices.unknown_rank()) {
      std::vector<int64_t> dims;
      for (int d = 0; d < batch_dims; ++d) dims.push_back(p.dim(d));
      for (int d = static_cast<int>(batch_dims); d < indices.rank(); ++d)
        dims.push_back(indices.dim(d));
      for (int d = static_cast<int>(batch_dims) + 1; d < p.rank(); ++d) dims.push_back(p.dim(d));
      out = *PartialShape::FromDims(dims);
    }
  }
  auto st = std::make_shared<GatherState>();
  st->batch_dims = static_cast<int>(batch_dims);
  st->dtype = dtype;
  ctx.outputs = {TensorSpec{dtype, out}};
  ctx.state = std::move(st);
  return OkStatus();
}

// ---- ResourceScatterUpdate, Add, Sub, Mul, Div, Min, Max ----------------------------------------

// The dtypes an update of `op` takes: any for an assignment, real types for min and max, every
// number type for the arithmetic, as TF registers them.
std::span<const DType> ScatterDTypes(ScatterOp op) {
  if (op == ScatterOp::kMin || op == ScatterOp::kMax) return RealTypes::kDTypes;
  return NumberTypes::kDTypes;
}

// The combination a ResourceScatter[Nd]<Op> op names.
ScatterOp ScatterOpOf(std::string_view op) {
  if (op.ends_with("Add")) return ScatterOp::kAdd;
  if (op.ends_with("Sub")) return ScatterOp::kSub;
  if (op.ends_with("Mul")) return ScatterOp::kMul;
  if (op.ends_with("Div")) return ScatterOp::kDiv;
  if (op.ends_with("Min")) return ScatterOp::kMin;
  if (op.ends_with("Max")) return ScatterOp::kMax;
  return ScatterOp::kUpdate;
}

Status PrepareScatter(PrepareContext& ctx) {
  KILN_RETURN_IF_ERROR(ctx.ExpectInputs(3));
  KILN_PREPARE_ASSIGN(ctx, DType dtype, ctx.attrs.GetType("dtype"));
  const ScatterOp op = ScatterOpOf(ctx.op);
  if (op != ScatterOp::kUpdate)
    KILN_RETURN_IF_ERROR(ExpectAttrDTypeIn(ctx, "dtype", dtype, ScatterDTypes(op)));
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 0, "resource", DType::kResource));
  KILN_RETURN_IF_ERROR(IndexInputDType(ctx, 1, "indices", "Tindices").status());
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 2, "updates", dtype));
  if (VariableResource* var = ConstantVariableInput(ctx, 0))
    KILN_PREPARE_CHECK(ctx, ExpectVariableDType(*var, dtype));
  ctx.state = std::make_shared<TypedOpState<ScatterOp>>(op);
  return OkStatus();
}

// ---- ResourceGatherNd, ResourceScatterNd*
// --------------------------------------------------------

Status PrepareResourceGatherNd(PrepareContext& ctx) {
  KILN_RETURN_IF_ERROR(ctx.ExpectInputs(2));
  KILN_PREPARE_ASSIGN(ctx, DType dtype, ctx.attrs.GetType("dtype"));
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 0, "resource", DType::kResource));
  KILN_RETURN_IF_ERROR(IndexInputDType(ctx, 1, "indices", "Tindices").status());
  if (VariableResource* var = ConstantVariableInput(ctx, 0))
    KILN_PREPARE_CHECK(ctx, ExpectVariableDType(*var, dtype));
  ctx.outputs = {TensorSpec{dtype, PartialShape::UnknownRank()}};
  ctx.state = std::make_shared<TypedOpState<DType>>(dtype);
  return OkStatus();
}

// ResourceScatterNdAdd and Sub also take bool, as TF's: a sum is an or, a difference an xor.
using NdAddSubTypes =
    TypeList<float, double, Half, BFloat16, int8_t, int16_t, int32_t, int64_t, uint8_t, uint16_t,
             uint32_t, uint64_t, std::complex<float>, std::complex<double>, bool>;

Status PrepareScatterNd(PrepareContext& ctx) {
  KILN_RETURN_IF_ERROR(ctx.ExpectInputs(3));
  KILN_PREPARE_ASSIGN(ctx, DType t, ctx.attrs.GetType("T"));
  const ScatterOp op = ScatterOpOf(ctx.op);
  if (op == ScatterOp::kAdd || op == ScatterOp::kSub)
    KILN_RETURN_IF_ERROR(ExpectAttrDTypeIn(ctx, "T", t, NdAddSubTypes::kDTypes));
  else if (op != ScatterOp::kUpdate)
    KILN_RETURN_IF_ERROR(ExpectAttrDTypeIn(ctx, "T", t, ScatterDTypes(op)));
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 0, "ref", DType::kResource));
  KILN_RETURN_IF_ERROR(IndexInputDType(ctx, 1, "indices", "Tindices").status());
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 2, "updates", t));
  KILN_PREPARE_ASSIGN(ctx, std::string policy, ctx.attrs.GetString("bad_indices_policy", ""));
  if (!policy.empty() && policy != "DEFAULT" && policy != "ERROR") {
    return ctx.Error("attr 'bad_indices_policy' \"", policy,
                     "\" is not supported on variables: expected \"\", \"DEFAULT\" or \"ERROR\"");
  }
  if (VariableResource* var = ConstantVariableInput(ctx, 0))
    KILN_PREPARE_CHECK(ctx, ExpectVariableDType(*var, t));
  ctx.state = std::make_shared<TypedOpState<ScatterOp>>(op);
  return OkStatus();
}

// ---- ResourceStridedSliceAssign ----------------------------------------------------------------

Status PrepareSliceAssign(PrepareContext& ctx) {
  KILN_RETURN_IF_ERROR(ctx.ExpectInputs(5));
  KILN_PREPARE_ASSIGN(ctx, DType t, ctx.attrs.GetType("T"));
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 0, "ref", DType::kResource));
  KILN_PREPARE_ASSIGN(ctx, DType index, ctx.attrs.GetType("Index"));
  KILN_RETURN_IF_ERROR(ExpectAttrDTypeIn(ctx, "Index", index, {DType::kInt32, DType::kInt64}));
  const char* names[] = {"begin", "end", "strides"};
  for (int i = 1; i < 4; ++i) {
    KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, i, names[i - 1], index));
    KILN_RETURN_IF_ERROR(ExpectInputRank(ctx, i, names[i - 1], 1));
  }
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 4, "value", t));
  if (VariableResource* var = ConstantVariableInput(ctx, 0))
    KILN_PREPARE_CHECK(ctx, ExpectVariableDType(*var, t));
  auto st = std::make_shared<SliceAssignState>();
  KILN_RETURN_IF_ERROR(ReadSliceMasks(ctx, &st->masks));
  // TF 1's StridedSliceAssign passes the reference on (here: the variable's handle).
  if (ctx.op == "StridedSliceAssign")
    ctx.outputs = {TensorSpec{DType::kResource, PartialShape::Scalar()}};
  ctx.state = std::move(st);
  return OkStatus();
}

// ---- DisableCopyOnRead -----------------------------------------------------------------------

Status PrepareDisableCopyOnRead(PrepareContext& ctx) {
  KILN_RETURN_IF_ERROR(ctx.ExpectInputs(1));
  return ExpectInputDType(ctx, 0, "resource", DType::kResource);
}

constexpr OpDefinition kDefs[] = {
    {"ResourceGather", "output", kOpStateful | kOpFreshOutputs, PrepareResourceGather},
    {"ResourceScatterUpdate", "", kOpStateful, PrepareScatter},
    {"ResourceScatterAdd", "", kOpStateful, PrepareScatter},
    {"ResourceScatterSub", "", kOpStateful, PrepareScatter},
    {"ResourceScatterMul", "", kOpStateful, PrepareScatter},
    {"ResourceScatterDiv", "", kOpStateful, PrepareScatter},
    {"ResourceScatterMin", "", kOpStateful, PrepareScatter},
    {"ResourceScatterMax", "", kOpStateful, PrepareScatter},
    {"ResourceGatherNd", "output", kOpStateful | kOpFreshOutputs, PrepareResourceGatherNd},
    {"ResourceScatterNdUpdate", "", kOpStateful, PrepareScatterNd},
    {"ResourceScatterNdAdd", "", kOpStateful, PrepareScatterNd},
    {"ResourceScatterNdSub", "", kOpStateful, PrepareScatterNd},
    {"ResourceScatterNdMin", "", kOpStateful, PrepareScatterNd},
    {"ResourceScatterNdMax", "", kOpStateful, PrepareScatterNd},
    {"ResourceStridedSliceAssign", "", kOpStateful, PrepareSliceAssign},
    {"StridedSliceAssign", "output_ref", kOpStateful, PrepareSliceAssign},
    {"DisableCopyOnRead", "", kOpStateful, PrepareDisableCopyOnRead},
};

}  // namespace

std::span<const OpDefinition> ResourceScatterOpDefs() { return kDefs; }

}  // namespace kiln::exec
