// Case and StatelessCase: run one of N branch functions picked by an int32 index (out of range
// picks the last branch, TF's default). Like If, every branch is prepared once when the node is
// prepared, and only the branch taken runs.
// The CPU kernel is in kernels/cpu/case_ops.cc.
#include "kernels/case_ops.h"

#include <memory>
#include <span>
#include <string>
#include <vector>

#include "kernels/control_flow_util.h"
#include "kernels/kernel_util.h"

namespace kiln::exec {
namespace {

using case_ops::CaseState;
using control_flow::PreparedPtr;

Status PrepareCase(PrepareContext& ctx) {
  KILN_RETURN_IF_ERROR(ctx.ExpectInputsAtLeast(1));
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 0, "branch_index", DType::kInt32));
  KILN_RETURN_IF_ERROR(ExpectInputRank(ctx, 0, "branch_index", 0));
  std::vector<std::string> branches;
  if (ctx.attrs.Has("branches")) {
    KILN_PREPARE_ASSIGN(ctx, branches, ctx.attrs.GetFunctionNameList("branches"));
  }
  if (branches.empty()) return ctx.Error("attr 'branches' must list at least one function");
  std::vector<TensorSpec> in_specs(ctx.inputs.begin() + 1, ctx.inputs.end());
  KILN_RETURN_IF_ERROR(control_flow::CheckTypeListAttr(ctx, "Tin", in_specs, "input"));
  auto state = std::make_shared<CaseState>();
  std::vector<TensorSpec> outs;
  for (size_t b = 0; b < branches.size(); ++b) {
    const std::string attr_name = internal::StrCat("branches[", b, "]");
    KILN_ASSIGN_OR_RETURN(
        PreparedPtr fn, control_flow::PrepareNamedFunction(ctx, attr_name, branches[b], in_specs));
    std::span<const TensorSpec> specs = fn->output_specs();
    if (b == 0) {
      outs.assign(specs.begin(), specs.end());
    } else {
      if (specs.size() != outs.size()) {
        return ctx.Error("branch 0 '", state->branches[0]->name(), "' has ", outs.size(),
                         " outputs, branch ", b, " '", fn->name(), "' has ", specs.size());
      }
      for (size_t i = 0; i < outs.size(); ++i) {
        if (specs[i].dtype != outs[i].dtype) {
          return ctx.Error("output ", i, ": branch 0 gives ", DTypeShortName(outs[i].dtype),
                           ", branch ", b, " gives ", DTypeShortName(specs[i].dtype));
        }
        outs[i].shape = control_flow::MostSpecificCompatibleShape(outs[i].shape, specs[i].shape);
      }
    }
    state->branches.push_back(std::move(fn));
  }
  KILN_RETURN_IF_ERROR(control_flow::CheckTypeListAttr(ctx, "Tout", outs, "branch output"));
  KILN_RETURN_IF_ERROR(control_flow::ApplyOutputShapes(ctx, &outs));
  ctx.outputs = std::move(outs);
  ctx.state = std::move(state);
  return OkStatus();
}

// ---- tables ----------------------------------------------------------------------------------

constexpr OpDefinition kDefs[] = {
    {"Case", "output", kOpStateful, PrepareCase},
    {"StatelessCase", "output", kOpNone, PrepareCase},
};

}  // namespace

std::span<const OpDefinition> CaseOpDefs() { return kDefs; }

}  // namespace kiln::exec
