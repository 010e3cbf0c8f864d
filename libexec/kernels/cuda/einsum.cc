// Einsum on the GPU: two operands as one batched product (the plan is einsum_plan.h's, from
// the op definition's parsing), permuted in and out on the device around cuBLASLt. What one
// product cannot do (sums within an operand, broadcast labels, one operand) stays on the CPU.
#include <numeric>
#include <string>
#include <vector>

#include "device/cuda/cublaslt_api.h"
#include "device/cuda/cuda_device.h"
#include "kernels/cuda/cuda_kernels.h"
#include "kernels/einsum_plan.h"

namespace kiln::exec::cuda {
namespace {

struct GpuEinsumState final : OpState {
  std::string equation;
  bool tf32 = false;
  std::shared_ptr<GemmPlans> plans = NewGemmPlans();
};

Status CreateEinsumState(PrepareContext& ctx) {
  auto st = std::make_shared<GpuEinsumState>();
  KILN_ASSIGN_OR_RETURN(st->equation, ctx.attrs.GetString("equation"));
  st->tf32 = AllowsTf32(ctx);
  ctx.state = st;
  return OkStatus();
}

// Two float operands whose known dims make one product (unknown dims stand in as equal).
bool SupportsEinsum(const PrepareContext& ctx) {
  if (ctx.inputs.size() != 2 || !SupportsFloat(ctx) || ctx.inputs[1].dtype != ctx.inputs[0].dtype)
    return false;
  auto eq = ctx.attrs.GetString("equation");
  if (!eq.ok() || ctx.inputs[0].shape.unknown_rank() || ctx.inputs[1].shape.unknown_rank())
    return false;
  Shape shapes[2];
  for (int i = 0; i < 2; ++i)
    for (int64_t d : ctx.inputs[i].shape.dims()) shapes[i].AddDim(d < 0 ? 7 : d);
  return PlanEinsumProduct(*eq, shapes[0], shapes[1]).ok() && BlasLt().ok();
}

bool IsIdentity(const std::vector<int>& perm) {
  for (size_t i = 0; i < perm.size(); ++i)
    if (perm[i] != static_cast<int>(i)) return false;
  return true;
}

Status ComputeEinsum(const KernelContext& ctx) {
  CudaDevice& dev = DeviceOf(ctx);
  KILN_RETURN_IF_ERROR(dev.Activate());
  const auto& st = ctx.state<GpuEinsumState>();
  const Tensor& a = ctx.input(0);
  const Tensor& b = ctx.input(1);
  Result<EinsumProduct> plan = PlanEinsumProduct(st.equation, a.shape(), b.shape());
  if (!plan.ok()) return ctx.Error(plan.status().message());
  const EinsumProduct& p = *plan;
  KILN_ASSIGN_OR_RETURN(Tensor * y, ctx.AllocateOutput(0, p.out_shape));
  if (y->NumElements() == 0) return OkStatus();
  const size_t elem = DTypeSize(a.dtype());
  auto arranged = [&](const Tensor& t, const std::vector<int>& perm) -> Result<const void*> {
    if (IsIdentity(perm)) return t.raw_data();
    KILN_ASSIGN_OR_RETURN(void* buf, ctx.AllocateTemp(t.ByteSize()));
    KILN_RETURN_IF_ERROR(LaunchPermute(ctx, t.raw_data(), buf, t.shape().dims(), perm, elem));
    return buf;
  };
  Gemm g;
  g.dtype = a.dtype();
  g.tf32 = st.tf32;
  KILN_ASSIGN_OR_RETURN(g.a, arranged(a, p.perm_a));
  KILN_ASSIGN_OR_RETURN(g.b, arranged(b, p.perm_b));
  g.batch = p.batch;
  g.m = p.m;
  g.n = p.n;
  g.k = p.k;
  const bool direct = IsIdentity(p.out_perm);
  void* product = y->raw_data();
  if (!direct) {
    KILN_ASSIGN_OR_RETURN(product, ctx.AllocateTemp(y->ByteSize()));
  }
  g.y = product;
  if (g.k == 0) {
    KILN_RETURN_IF_ERROR(
        Check(cudaMemsetAsync(product, 0, y->ByteSize(), dev.stream()), "einsum zeros"));
  } else {
    KILN_RETURN_IF_ERROR(RunGemm(ctx, *st.plans, g));
  }
  if (direct) return OkStatus();
  return LaunchPermute(ctx, product, y->raw_data(), p.product_dims, p.out_perm, elem);
}

const KernelEntry kRows[] = {
    {"Einsum", &ComputeEinsum, 0, 0, &SupportsEinsum, &CreateEinsumState},
};

}  // namespace

std::span<const KernelEntry> EinsumKernels() { return kRows; }

}  // namespace kiln::exec::cuda
