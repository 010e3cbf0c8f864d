// The CPU kernel of Case and StatelessCase (kernels/case_ops.cc): runs the branch the index
// picks, one of those the definition prepared.
#include "kernels/case_ops.h"

#include <cstdint>
#include <utility>
#include <vector>

#include "kernels/control_flow_util.h"
#include "kernels/kernel_util.h"

namespace kiln::exec {
namespace {

using case_ops::CaseState;

Status ComputeCase(const KernelContext& ctx) {
  const auto& st = ctx.state<CaseState>();
  const Tensor& index_t = ctx.input(0);
  if (index_t.NumElements() != 1) {
    return ctx.Error("input 'branch_index' must be a scalar, got shape ",
                     index_t.shape().ToString());
  }
  const int64_t n = static_cast<int64_t>(st.branches.size());
  int64_t b = index_t.data<int32_t>()[0];
  if (b < 0 || b >= n) b = n - 1;  // TF: an index out of range runs the last branch
  std::vector<Tensor> args;
  args.reserve(ctx.num_inputs() - 1);
  for (int i = 1; i < ctx.num_inputs(); ++i) args.push_back(ctx.input(i));
  std::vector<Tensor> outs;
  KILN_RETURN_IF_ERROR(control_flow::RunFunction(ctx, *st.branches[b], args, &outs));
  if (static_cast<int>(outs.size()) != ctx.num_outputs()) {
    return Internal("node '", ctx.node_name(), "': branch gave ", outs.size(),
                    " outputs, expected ", ctx.num_outputs());
  }
  for (int i = 0; i < ctx.num_outputs(); ++i) ctx.SetOutput(i, std::move(outs[i]));
  return OkStatus();
}

constexpr KernelEntry kCpu[] = {
    {"Case", ComputeCase},
    {"StatelessCase", ComputeCase},
};

}  // namespace

std::span<const KernelEntry> CaseCpuKernels() { return kCpu; }

}  // namespace kiln::exec
