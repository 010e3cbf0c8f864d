// Scans and sequences: Cumsum, Cumprod, CumulativeLogsumexp (exclusive / reverse) and LinSpace:
// definitions. The CPU kernels are in kernels/cpu/scan_ops.cc.
#include "kernels/scan_ops.h"

#include <initializer_list>
#include <memory>
#include <utility>

#include "kernels/array_util.h"
#include "kernels/elementwise.h"
#include "kernels/kernel_util.h"
#include "kernels/type_lists.h"

namespace kiln::exec {
namespace {

using scan::ScanState;

constexpr std::initializer_list<DType> kIndexDTypes = {DType::kInt32, DType::kInt64};

// ---- Cumsum, Cumprod -------------------------------------------------------------------------

template <typename List>
Status PrepareScan(PrepareContext& ctx) {
  KILN_RETURN_IF_ERROR(ctx.ExpectInputs(2));
  KILN_PREPARE_ASSIGN(ctx, DType t, ctx.attrs.GetType("T"));
  KILN_RETURN_IF_ERROR(ExpectAttrDTypeIn(ctx, "T", t, List::kDTypes));
  KILN_PREPARE_ASSIGN(ctx, DType tidx, ctx.attrs.GetType("Tidx", DType::kInt32));
  KILN_RETURN_IF_ERROR(ExpectAttrDTypeIn(ctx, "Tidx", tidx, kIndexDTypes));
  auto state = std::make_shared<ScanState>();
  KILN_PREPARE_ASSIGN(ctx, state->exclusive, ctx.attrs.GetBool("exclusive", false));
  KILN_PREPARE_ASSIGN(ctx, state->reverse, ctx.attrs.GetBool("reverse", false));
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 0, "x", t));
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 1, "axis", tidx));
  KILN_RETURN_IF_ERROR(ExpectInputRank(ctx, 1, "axis", 0));
  const PartialShape& x = ctx.inputs[0].shape;
  const Tensor* axis = ConstantInput(ctx, 1);
  if (axis != nullptr && !x.unknown_rank()) {
    KILN_PREPARE_CHECK(ctx, CanonicalAxis(IndexValues(*axis)[0], x.rank(), "axis").status());
  }
  ctx.outputs = {TensorSpec{t, x}};
  ctx.state = std::move(state);
  return OkStatus();
}

// ---- LinSpace --------------------------------------------------------------------------------

Status PrepareLinSpace(PrepareContext& ctx) {
  KILN_RETURN_IF_ERROR(ctx.ExpectInputs(3));
  KILN_PREPARE_ASSIGN(ctx, DType t, ctx.attrs.GetType("T"));
  KILN_RETURN_IF_ERROR(ExpectAttrDTypeIn(ctx, "T", t, FloatTypes::kDTypes));
  KILN_PREPARE_ASSIGN(ctx, DType tidx, ctx.attrs.GetType("Tidx", DType::kInt32));
  KILN_RETURN_IF_ERROR(ExpectAttrDTypeIn(ctx, "Tidx", tidx, kIndexDTypes));
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 0, "start", t));
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 1, "stop", t));
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 2, "num", tidx));
  KILN_RETURN_IF_ERROR(ExpectInputRank(ctx, 0, "start", 0));
  KILN_RETURN_IF_ERROR(ExpectInputRank(ctx, 1, "stop", 0));
  KILN_RETURN_IF_ERROR(ExpectInputRank(ctx, 2, "num", 0));
  int64_t length = -1;
  if (const Tensor* num = ConstantInput(ctx, 2); num != nullptr) {
    length = IndexValues(*num)[0];
    if (length <= 0) return ctx.Error("input 'num' must be positive, got ", length);
  }
  ctx.outputs = {TensorSpec{t, PartialShape{length}}};
  return OkStatus();
}

// ---- tables ----------------------------------------------------------------------------------

constexpr OpDefinition kDefs[] = {
    {"Cumsum", "out", kOpElementwise, PrepareScan<NumberTypes>},
    {"Cumprod", "out", kOpElementwise, PrepareScan<NumberTypes>},
    {"CumulativeLogsumexp", "out", kOpElementwise, PrepareScan<FloatTypes>},
    {"LinSpace", "output", kOpFreshOutputs, PrepareLinSpace},
};

}  // namespace

std::span<const OpDefinition> ScanOpDefs() { return kDefs; }

}  // namespace kiln::exec
