// Scattering slices by N-d index: ScatterNd (into zeros, duplicates add up) and
// TensorScatterUpdate/Add/Sub/Max/Min (into a copy of a tensor). The TF 1 row updates
// InplaceUpdate/Add/Sub (rows i of a copy of x set to, or added with, rows of v). The CPU kernels
// are in kernels/cpu/scatter_ops.cc.
#include "kernels/scatter_ops.h"

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "kernels/array_util.h"
#include "kernels/nd_index.h"
#include "kernels/type_lists.h"

namespace kiln::exec {
namespace {

using scatter::ArithmeticTypes;
using scatter::CheckScatterShapes;
using scatter::Combine;
using scatter::NonAliasingAddTypes;
using scatter::ScatterAddTypes;
using scatter::ScatterState;

struct ScatterKind {
  std::string_view op;
  Combine combine;
  std::span<const DType> types;  // empty: any dtype
};

constexpr ScatterKind kKinds[] = {
    {"ScatterNd", Combine::kAdd, ScatterAddTypes::kDTypes},
    {"TensorScatterUpdate", Combine::kUpdate, {}},
    {"TensorScatterAdd", Combine::kAdd, ArithmeticTypes::kDTypes},
    // TF 1's name for TensorScatterAdd (tf.compat.v1.scatter_nd_non_aliasing_add).
    {"ScatterNdNonAliasingAdd", Combine::kAdd, NonAliasingAddTypes::kDTypes},
    {"TensorScatterSub", Combine::kSub, ArithmeticTypes::kDTypes},
    {"TensorScatterMax", Combine::kMax, RealTypes::kDTypes},
    {"TensorScatterMin", Combine::kMin, RealTypes::kDTypes},
};

Status PrepareScatter(PrepareContext& ctx) {
  KILN_RETURN_IF_ERROR(ctx.ExpectInputs(3));
  auto state = std::make_shared<ScatterState>();
  const ScatterKind* kind = nullptr;
  for (const ScatterKind& k : kKinds)
    if (k.op == ctx.op) kind = &k;
  if (kind == nullptr) return ctx.Error("not a scatter op");
  state->combine = kind->combine;
  state->into_zeros = ctx.op == "ScatterNd";
  // ScatterNd(indices, updates, shape); TensorScatter*(tensor, indices, updates).
  const int indices_in = state->into_zeros ? 0 : 1;
  const int updates_in = state->into_zeros ? 1 : 2;
  KILN_PREPARE_ASSIGN(ctx, DType t, ctx.attrs.GetType("T"));
  if (!kind->types.empty()) KILN_RETURN_IF_ERROR(ExpectAttrDTypeIn(ctx, "T", t, kind->types));
  KILN_PREPARE_ASSIGN(ctx, DType ti, ctx.attrs.GetType("Tindices"));
  static constexpr DType kUpdateIndex[] = {DType::kInt16, DType::kInt32, DType::kInt64,
                                           DType::kUInt16};
  static constexpr DType kScatterNdIndex[] = {DType::kInt16, DType::kInt32, DType::kInt64};
  static constexpr DType kTensorScatterIndex[] = {DType::kInt32, DType::kInt64};
  const std::span<const DType> index_types = ctx.op == "TensorScatterUpdate" ? kUpdateIndex
                                             : state->into_zeros
                                                 ? std::span<const DType>(kScatterNdIndex)
                                                 : kTensorScatterIndex;
  KILN_RETURN_IF_ERROR(ExpectAttrDTypeIn(ctx, "Tindices", ti, index_types));
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, indices_in, "indices", ti));
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, updates_in, "updates", t));
  KILN_PREPARE_ASSIGN(ctx, std::string policy, ctx.attrs.GetString("bad_indices_policy", ""));
  if (policy == "IGNORE") {
    state->ignore_bad = true;
  } else if (!policy.empty() && policy != "DEFAULT" && policy != "ERROR") {
    return ctx.Error(
        "attr 'bad_indices_policy' must be \"\", \"DEFAULT\", \"ERROR\" or "
        "\"IGNORE\", got \"",
        policy, "\"");
  }
  PartialShape out;
  if (state->into_zeros) {
    KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 2, "shape", ti));
    KILN_RETURN_IF_ERROR(ExpectInputRank(ctx, 2, "shape", 1));
    out = UnknownDims(static_cast<int>(KnownLength(ctx.inputs[2].shape)));
    if (const Tensor* s = ConstantInput(ctx, 2)) {
      std::vector<int64_t> dims;
      KILN_RETURN_IF_ERROR(DispatchIndex(s->dtype(), [&](auto tag) {
        using I = typename decltype(tag)::type;
        for (int64_t i = 0; i < s->NumElements(); ++i) dims.push_back(IndexAt(s->data<I>(), i));
        return OkStatus();
      }));
      auto shape = PartialShape::FromDims(dims);
      if (!shape.ok() || !shape->IsFullyDefined()) {
        return ctx.Error("input 'shape' ", DimsString(dims), " is not a valid shape");
      }
      out = *shape;
    }
  } else {
    KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 0, "tensor", t));
    out = ctx.inputs[0].shape;
  }
  const PartialShape& ind = ctx.inputs[indices_in].shape;
  const PartialShape& upd = ctx.inputs[updates_in].shape;
  if (!out.unknown_rank() && !ind.unknown_rank() && !upd.unknown_rank()) {
    Status s = CheckScatterShapes(out.dims(), ind.dims(), upd.dims());
    if (!s.ok()) return ctx.Error(s.message());
  }
  ctx.outputs = {TensorSpec{t, out}};
  ctx.state = std::move(state);
  return OkStatus();
}

// ---- InplaceUpdate, InplaceAdd, InplaceSub ---------------------------------------------------

// (x, i, v): a copy of x whose rows i[j] are set to (or added with, or minus) v[j], in order.
Status PrepareInplace(PrepareContext& ctx) {
  KILN_RETURN_IF_ERROR(ctx.ExpectInputs(3));
  KILN_PREPARE_ASSIGN(ctx, DType t, ctx.attrs.GetType("T"));
  const bool update = ctx.op == "InplaceUpdate";
  if (!update) KILN_RETURN_IF_ERROR(ExpectAttrDTypeIn(ctx, "T", t, ArithmeticTypes::kDTypes));
  if (!HoldsData(t)) return ctx.Error("attr 'T': ", DTypeShortName(t), " holds no data");
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 0, "x", t));
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 1, "i", DType::kInt32));
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 2, "v", t));
  ctx.outputs = {ctx.inputs[0]};
  auto st = std::make_shared<ScatterState>();
  st->combine = update ? Combine::kUpdate : ctx.op == "InplaceAdd" ? Combine::kAdd : Combine::kSub;
  ctx.state = std::move(st);
  return OkStatus();
}

// ---- tables ----------------------------------------------------------------------------------

constexpr uint32_t kInPlace = kOpFreshOutputs | kOpInPlace;

constexpr OpDefinition kDefs[] = {
    {"ScatterNd", "output", kOpFreshOutputs, PrepareScatter},
    {"TensorScatterUpdate", "output", kInPlace, PrepareScatter},
    {"TensorScatterAdd", "output", kInPlace, PrepareScatter},
    {"ScatterNdNonAliasingAdd", "output", kInPlace, PrepareScatter},
    {"InplaceUpdate", "y", kOpFreshOutputs, PrepareInplace},
    {"InplaceAdd", "y", kOpFreshOutputs, PrepareInplace},
    {"InplaceSub", "y", kOpFreshOutputs, PrepareInplace},
    {"TensorScatterSub", "output", kInPlace, PrepareScatter},
    {"TensorScatterMax", "output", kInPlace, PrepareScatter},
    {"TensorScatterMin", "output", kInPlace, PrepareScatter},
};

}  // namespace

std::span<const OpDefinition> ScatterOpDefs() { return kDefs; }

}  // namespace kiln::exec
