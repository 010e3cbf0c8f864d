// Assert: fails the run with "assertion failed: [data 0] [data 1] ..." when its condition is
// false, each tensor summarised as TensorFlow's Assert kernel prints it (the first `summarize`
// elements, flattened, then "..."; floats at the shortest precision that round-trips, bools as
// 1/0, strings C-escaped).
// The CPU kernel is in kernels/cpu/assert_ops.cc.
#include <cstdint>
#include <memory>
#include <vector>

#include "kernels/kernel_util.h"

namespace kiln::exec {
namespace {

Status PrepareAssert(PrepareContext& ctx) {
  KILN_RETURN_IF_ERROR(ctx.ExpectInputsAtLeast(1));
  KILN_PREPARE_ASSIGN(ctx, std::vector<DType> types, ctx.attrs.GetTypeList("T"));
  KILN_PREPARE_ASSIGN(ctx, int64_t summarize, ctx.attrs.GetInt("summarize", 3));
  KILN_RETURN_IF_ERROR(ctx.ExpectInputs(static_cast<int>(types.size()) + 1));
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 0, "condition", DType::kBool));
  KILN_RETURN_IF_ERROR(ExpectInputRank(ctx, 0, "condition", 0));
  for (size_t i = 0; i < types.size(); ++i)
    KILN_RETURN_IF_ERROR(
        ExpectInputDType(ctx, static_cast<int>(i) + 1, internal::StrCat("data:", i), types[i]));
  ctx.state = std::make_shared<TypedOpState<int64_t>>(summarize);
  return OkStatus();
}

constexpr OpDefinition kDefs[] = {
    {"Assert", "", kOpStateful, PrepareAssert},
};

}  // namespace

std::span<const OpDefinition> AssertOpDefs() { return kDefs; }

}  // namespace kiln::exec
