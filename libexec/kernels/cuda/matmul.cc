// MatMul, _FusedMatMul and BatchMatMul(V2, V3) on the GPU through cuBLASLt, and the batched
// product the GPU's Einsum runs (einsum.cc). Row-major products run as the column-major
// product of the transposes (D^T = B^T A^T), so no operand is copied; the bias, the residual
// add (as cuBLASLt's C with beta = 1) and ReLU are cuBLASLt epilogues, other activations one
// pass after it. float32 computes in float32 (no TF32: results match the CPU within float32
// tolerance); float16 and bfloat16 accumulate in float32. A plan (descriptors, layouts, the
// algorithm cuBLASLt's heuristic picked for these shapes and pointer alignments) is made once
// per shape and kept in the node's state.
#include <cuda_runtime_api.h>

#include <algorithm>
#include <array>
#include <map>
#include <memory>
#include <mutex>
#include <tuple>

#include "device/cuda/cublaslt_api.h"
#include "device/cuda/cuda_device.h"
#include "kernels/cuda/cuda_kernels.h"
#include "kernels/cuda/epilogue.h"
#include "kernels/epilogue.h"

namespace kiln::exec::cuda {

namespace {

// cuBLASLt's workspace: what it recommends for Hopper; it wants it 256-byte aligned.
constexpr size_t kWorkspaceBytes = size_t{32} << 20;
constexpr uintptr_t kWorkspaceAlign = 256;

struct Plan {
  const BlasLtApi* api = nullptr;
  cublasLtMatmulDesc_t desc = nullptr;
  cublasLtMatrixLayout_t a = nullptr, b = nullptr, c = nullptr;
  cublasLtMatmulAlgo_t algo{};
  size_t workspace = 0;
  ~Plan() {
    if (api == nullptr) return;
    if (desc) api->cublasLtMatmulDescDestroy(desc);
    if (a) api->cublasLtMatrixLayoutDestroy(a);
    if (b) api->cublasLtMatrixLayoutDestroy(b);
    if (c) api->cublasLtMatrixLayoutDestroy(c);
  }
};

cudaDataType_t CudaType(DType t) {
  switch (t) {
    case DType::kHalf:
      return CUDA_R_16F;
    case DType::kBFloat16:
      return CUDA_R_16BF;
    default:
      return CUDA_R_32F;
  }
}

// The alignment cuBLASLt may assume of a pointer: its lowest set bit, at most 256. (Its
// default is 256; kiln's buffers are 64-byte aligned, and views may be less.)
uint32_t AlignmentOf(const void* p) {
  const uintptr_t v = reinterpret_cast<uintptr_t>(p);
  return static_cast<uint32_t>(v == 0 ? 256 : std::min<uintptr_t>(256, v & (~v + 1)));
}

using PlanKey = std::tuple<int64_t, int64_t, int64_t, int64_t, int, int, std::array<uint32_t, 4>>;

}  // namespace

struct GemmPlans {
  std::mutex mu;
  std::map<PlanKey, std::unique_ptr<Plan>> plans;
};

std::shared_ptr<GemmPlans> NewGemmPlans() { return std::make_shared<GemmPlans>(); }

namespace {

Result<std::unique_ptr<Plan>> MakePlan(const KernelContext& ctx, cublasLtHandle_t handle,
                                       const Gemm& g, const std::array<uint32_t, 4>& align) {
  KILN_ASSIGN_OR_RETURN(const BlasLtApi* api, BlasLt());
  auto plan = std::make_unique<Plan>();
  plan->api = api;
  const cudaDataType_t type = CudaType(g.dtype);
  // float32 stays float32 unless the load allowed TF32 (Precision::kTF32).
  const cublasComputeType_t compute =
      g.dtype == DType::kFloat && g.tf32 ? CUBLAS_COMPUTE_32F_FAST_TF32 : CUBLAS_COMPUTE_32F;
  KILN_RETURN_IF_ERROR(
      CheckBlas(api->cublasLtMatmulDescCreate(&plan->desc, compute, CUDA_R_32F), "matmul desc"));
  // cuBLASLt's A is our b, its B our a (see the file comment).
  const cublasOperation_t op_a = g.adj_b ? CUBLAS_OP_T : CUBLAS_OP_N;
  const cublasOperation_t op_b = g.adj_a ? CUBLAS_OP_T : CUBLAS_OP_N;
  auto set_desc = [&](cublasLtMatmulDescAttributes_t attr, const void* v, size_t size) {
    return CheckBlas(api->cublasLtMatmulDescSetAttribute(plan->desc, attr, v, size),
                     "matmul desc attribute");
  };
  KILN_RETURN_IF_ERROR(set_desc(CUBLASLT_MATMUL_DESC_TRANSA, &op_a, sizeof(op_a)));
  KILN_RETURN_IF_ERROR(set_desc(CUBLASLT_MATMUL_DESC_TRANSB, &op_b, sizeof(op_b)));
  cublasLtEpilogue_t epi = CUBLASLT_EPILOGUE_DEFAULT;
  if (g.bias != nullptr) epi = g.relu ? CUBLASLT_EPILOGUE_RELU_BIAS : CUBLASLT_EPILOGUE_BIAS;
  KILN_RETURN_IF_ERROR(set_desc(CUBLASLT_MATMUL_DESC_EPILOGUE, &epi, sizeof(epi)));
  if (g.bias != nullptr) {
    const cudaDataType_t bias_type = type;
    KILN_RETURN_IF_ERROR(
        set_desc(CUBLASLT_MATMUL_DESC_BIAS_DATA_TYPE, &bias_type, sizeof(bias_type)));
  }
  auto layout = [&](cublasLtMatrixLayout_t* l, int64_t rows, int64_t cols, bool batched) {
    KILN_RETURN_IF_ERROR(
        CheckBlas(api->cublasLtMatrixLayoutCreate(l, type, rows, cols, rows), "matmul layout"));
    if (g.batch > 1) {
      const int32_t count = static_cast<int32_t>(g.batch);
      const int64_t stride = batched ? rows * cols : 0;
      KILN_RETURN_IF_ERROR(
          CheckBlas(api->cublasLtMatrixLayoutSetAttribute(*l, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT,
                                                          &count, sizeof(count)),
                    "matmul batch count"));
      KILN_RETURN_IF_ERROR(
          CheckBlas(api->cublasLtMatrixLayoutSetAttribute(
                        *l, CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET, &stride, sizeof(stride)),
                    "matmul batch stride"));
    }
    return OkStatus();
  };
  // Stored column-major: our b is (N x K) or, transposed, (K x N); our a (K x M) or (M x K).
  const int64_t m = g.m, n = g.n, k = g.k;
  KILN_RETURN_IF_ERROR(g.adj_b ? layout(&plan->a, k, n, g.b_batched)
                               : layout(&plan->a, n, k, g.b_batched));
  KILN_RETURN_IF_ERROR(g.adj_a ? layout(&plan->b, m, k, g.a_batched)
                               : layout(&plan->b, k, m, g.a_batched));
  KILN_RETURN_IF_ERROR(layout(&plan->c, n, m, true));

  cublasLtMatmulPreference_t pref = nullptr;
  KILN_RETURN_IF_ERROR(CheckBlas(api->cublasLtMatmulPreferenceCreate(&pref), "matmul preference"));
  std::unique_ptr<void, void (*)(void*)> pref_guard(pref, [](void* p) {
    if (auto a = BlasLt(); a.ok())
      (*a)->cublasLtMatmulPreferenceDestroy(static_cast<cublasLtMatmulPreference_t>(p));
  });
  auto set_pref = [&](cublasLtMatmulPreferenceAttributes_t attr, const void* v, size_t size) {
    return CheckBlas(api->cublasLtMatmulPreferenceSetAttribute(pref, attr, v, size),
                     "matmul preference attribute");
  };
  const uint64_t ws = kWorkspaceBytes;
  KILN_RETURN_IF_ERROR(set_pref(CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &ws, sizeof(ws)));
  // Operand alignments (cuBLASLt's A = our b, B = our a, C, D).
  KILN_RETURN_IF_ERROR(
      set_pref(CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES, &align[0], sizeof(align[0])));
  KILN_RETURN_IF_ERROR(
      set_pref(CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES, &align[1], sizeof(align[1])));
  KILN_RETURN_IF_ERROR(
      set_pref(CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES, &align[2], sizeof(align[2])));
  KILN_RETURN_IF_ERROR(
      set_pref(CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES, &align[3], sizeof(align[3])));
  cublasLtMatmulHeuristicResult_t result{};
  int found = 0;
  KILN_RETURN_IF_ERROR(
      CheckBlas(api->cublasLtMatmulAlgoGetHeuristic(handle, plan->desc, plan->a, plan->b, plan->c,
                                                    plan->c, pref, 1, &result, &found),
                "matmul algorithm search"));
  if (found == 0)
    return ctx.Error("cuBLASLt has no algorithm for a ", DTypeShortName(g.dtype), " product of (",
                     m, " x ", k, ") and (", k, " x ", n, "), batch ", g.batch);
  plan->algo = result.algo;
  plan->workspace = result.workspaceSize;
  return plan;
}

}  // namespace

Status RunGemm(const KernelContext& ctx, GemmPlans& plans, const Gemm& g) {
  CudaDevice& dev = DeviceOf(ctx);
  KILN_ASSIGN_OR_RETURN(void* handle, dev.BlasLtHandle());
  KILN_ASSIGN_OR_RETURN(const BlasLtApi* api, BlasLt());
  const void* c = g.add != nullptr ? g.add : g.y;
  const std::array<uint32_t, 4> align = {AlignmentOf(g.b), AlignmentOf(g.a), AlignmentOf(c),
                                         AlignmentOf(g.y)};
  // The plan's descriptor takes this call's bias pointer: set and enqueue under the lock.
  std::lock_guard lock(plans.mu);
  const PlanKey key(g.m, g.n, g.k, g.batch,
                    (g.a_batched ? 1 : 0) | (g.b_batched ? 2 : 0) | (g.adj_a ? 4 : 0) |
                        (g.adj_b ? 8 : 0) | (g.bias != nullptr ? 16 : 0) | (g.relu ? 32 : 0) |
                        (g.add != nullptr ? 64 : 0),
                    static_cast<int>(g.dtype), align);
  auto it = plans.plans.find(key);
  if (it == plans.plans.end()) {
    KILN_ASSIGN_OR_RETURN(std::unique_ptr<Plan> p,
                          MakePlan(ctx, static_cast<cublasLtHandle_t>(handle), g, align));
    it = plans.plans.emplace(key, std::move(p)).first;
  }
  const Plan& plan = *it->second;
  if (g.bias != nullptr) {
    const void* bias_ptr = g.bias;
    KILN_RETURN_IF_ERROR(
        CheckBlas(api->cublasLtMatmulDescSetAttribute(plan.desc, CUBLASLT_MATMUL_DESC_BIAS_POINTER,
                                                      &bias_ptr, sizeof(bias_ptr)),
                  "matmul bias pointer"));
  }
  void* workspace = nullptr;
  if (plan.workspace > 0) {
    KILN_ASSIGN_OR_RETURN(void* raw, ctx.AllocateTemp(plan.workspace + kWorkspaceAlign));
    const uintptr_t misalign = reinterpret_cast<uintptr_t>(raw) % kWorkspaceAlign;
    workspace = static_cast<char*>(raw) + (misalign == 0 ? 0 : kWorkspaceAlign - misalign);
  }
  const float alpha = 1.0f, beta = g.add != nullptr ? 1.0f : 0.0f;
  const cublasStatus_t rc = api->cublasLtMatmul(
      static_cast<cublasLtHandle_t>(handle), plan.desc, &alpha, g.b, plan.a, g.a, plan.b, &beta, c,
      plan.c, g.y, plan.c, &plan.algo, workspace, plan.workspace, dev.stream());
  if (rc != CUBLAS_STATUS_SUCCESS) return ctx.Error(CheckBlas(rc, "cublasLtMatmul").message());
  return OkStatus();
}

namespace {

struct GpuMatMulState final : OpState {
  bool adj_a = false, adj_b = false;
  bool tf32 = false;
  Epilogue epilogue;
  std::shared_ptr<GemmPlans> plans = NewGemmPlans();
};

Status CreateMatMulState(PrepareContext& ctx) {
  auto st = std::make_shared<GpuMatMulState>();
  KILN_ASSIGN_OR_RETURN(st->epilogue, ReadEpilogue(ctx));
  const bool batched = ctx.op != "MatMul" && ctx.op != "_FusedMatMul";
  KILN_ASSIGN_OR_RETURN(st->adj_a, ctx.attrs.GetBool(batched ? "adj_x" : "transpose_a", false));
  KILN_ASSIGN_OR_RETURN(st->adj_b, ctx.attrs.GetBool(batched ? "adj_y" : "transpose_b", false));
  st->tf32 = AllowsTf32(ctx);
  ctx.state = st;
  return OkStatus();
}

// Batch dims the GPU product takes: each side's batch is all of the output's or one matrix
// (strided batches with a stride of 0). Unknown dims are taken (checked again at run time).
bool BatchesFit(const PartialShape& a, const PartialShape& b) {
  if (a.unknown_rank() || b.unknown_rank()) return true;
  const int rank = std::max(a.rank(), b.rank());
  bool a_all_one = true, b_all_one = true, a_full = true, b_full = true;
  for (int d = 0; d < rank - 2; ++d) {
    const int da = d - (rank - a.rank()), db = d - (rank - b.rank());
    const int64_t xa = da >= 0 ? a.dim(da) : 1, xb = db >= 0 ? b.dim(db) : 1;
    if (xa < 0 || xb < 0) return true;
    const int64_t x = std::max(xa, xb);
    a_all_one &= xa == 1;
    b_all_one &= xb == 1;
    a_full &= xa == x;
    b_full &= xb == x;
  }
  return (a_full || a_all_one) && (b_full || b_all_one);
}

bool SupportsMatMul(const PrepareContext& ctx) {
  if (ctx.inputs.size() < 2 || !IsGpuFloat(ctx.inputs[0].dtype)) return false;
  for (const TensorSpec& s : ctx.inputs)
    if (s.dtype != ctx.inputs[0].dtype) return false;
  for (const TensorSpec& s : ctx.outputs)
    if (s.dtype != ctx.inputs[0].dtype) return false;
  Result<Epilogue> e = ReadEpilogue(ctx);
  if (!e.ok() || e->batch_norm || e->has_post()) return false;  // no such cuBLASLt epilogue
  if (!BatchesFit(ctx.inputs[0].shape, ctx.inputs[1].shape)) return false;
  // cuBLASLt must be there to load; else the product stays on the CPU.
  return BlasLt().ok();
}

Status ComputeMatMul(const KernelContext& ctx) {
  CudaDevice& dev = DeviceOf(ctx);
  KILN_RETURN_IF_ERROR(dev.Activate());
  const auto& st = ctx.state<GpuMatMulState>();
  const Tensor& a = ctx.input(0);
  const Tensor& b = ctx.input(1);
  if (a.rank() < 2 || b.rank() < 2)
    return ctx.Error("operands must be matrices, got ", a.shape().ToString(), " and ",
                     b.shape().ToString());
  Gemm g;
  g.dtype = a.dtype();
  g.tf32 = st.tf32;
  g.adj_a = st.adj_a;
  g.adj_b = st.adj_b;
  g.m = a.dim(a.rank() - (st.adj_a ? 1 : 2));
  g.k = a.dim(a.rank() - (st.adj_a ? 2 : 1));
  const int64_t kb = b.dim(b.rank() - (st.adj_b ? 1 : 2));
  g.n = b.dim(b.rank() - (st.adj_b ? 2 : 1));
  if (g.k != kb)
    return ctx.Error("inner dimensions differ: ", a.shape().ToString(), " and ",
                     b.shape().ToString());
  // Batch dims: numpy broadcasting where each side's batch is either all of it or one matrix.
  const int out_rank = std::max(a.rank(), b.rank());
  Shape out;
  int64_t batch_a = 1, batch_b = 1;
  for (int d = 0; d < out_rank - 2; ++d) {
    const int da = d - (out_rank - a.rank()), db = d - (out_rank - b.rank());
    const int64_t xa = da >= 0 ? a.dim(da) : 1, xb = db >= 0 ? b.dim(db) : 1;
    if (xa != xb && xa != 1 && xb != 1)
      return ctx.Error("batch dims of ", a.shape().ToString(), " and ", b.shape().ToString(),
                       " do not broadcast");
    out.AddDim(std::max(xa, xb));
    g.batch *= std::max(xa, xb);
    batch_a *= xa;
    batch_b *= xb;
  }
  if ((batch_a != g.batch && batch_a != 1) || (batch_b != g.batch && batch_b != 1))
    return ctx.Error("the GPU matmul broadcasts a batch only when one side has a single matrix: ",
                     a.shape().ToString(), " and ", b.shape().ToString());
  g.a_batched = batch_a > 1;
  g.b_batched = batch_b > 1;
  out.AddDim(g.m);
  out.AddDim(g.n);
  KILN_ASSIGN_OR_RETURN(Tensor * y, ctx.AllocateOutput(0, out));
  if (y->NumElements() == 0) return OkStatus();

  const Epilogue& e = st.epilogue;
  const Tensor* bias = e.bias ? &ctx.input(2) : nullptr;
  const Tensor* add = e.add ? &ctx.input(3) : nullptr;
  if (bias != nullptr && bias->NumElements() != g.n)
    return ctx.Error("bias has ", bias->NumElements(), " values for ", g.n, " output columns");
  if (add != nullptr && add->shape() != out)
    return ctx.Error("the fused Add's operand ", add->shape().ToString(), " is not the output's ",
                     out.ToString());
  using Act = Epilogue::Act;
  if (g.k == 0) {
    // An empty product is zeros; the epilogue still applies (TF gives act(bias + add)).
    KILN_RETURN_IF_ERROR(
        Check(cudaMemsetAsync(y->raw_data(), 0, y->ByteSize(), dev.stream()), "matmul zeros"));
    if (e.num_args() == 0 && e.act == Act::kNone) return OkStatus();
    ChannelEpilogue ep;
    ep.bias = bias != nullptr ? bias->raw_data() : nullptr;
    ep.add = add != nullptr ? add->raw_data() : nullptr;
    ep.has_act = e.act != Act::kNone;
    ep.act = ActivationOf(e.act);
    ep.alpha = e.leakyrelu_alpha;
    return LaunchChannelEpilogue(ctx, y->dtype(), y->raw_data(), y->NumElements(), g.n, ep);
  }
  g.a = a.raw_data();
  g.b = b.raw_data();
  g.y = y->raw_data();
  g.bias = bias != nullptr ? bias->raw_data() : nullptr;
  g.add = add != nullptr ? add->raw_data() : nullptr;
  g.relu = e.act == Act::kRelu && bias != nullptr;
  KILN_RETURN_IF_ERROR(RunGemm(ctx, *st.plans, g));
  // Activations without a cuBLASLt epilogue: one pass over the output.
  if (e.act == Act::kNone || g.relu) return OkStatus();
  return LaunchActivation(ctx, ActivationOf(e.act), e.leakyrelu_alpha, y->dtype(), y->raw_data(),
                          y->NumElements());
}

const KernelEntry kRows[] = {
    {"BatchMatMul", &ComputeMatMul, 0, 0, &SupportsMatMul, &CreateMatMulState},
    {"BatchMatMulV2", &ComputeMatMul, 0, 0, &SupportsMatMul, &CreateMatMulState},
    {"BatchMatMulV3", &ComputeMatMul, 0, 0, &SupportsMatMul, &CreateMatMulState},
    {"MatMul", &ComputeMatMul, 0, 0, &SupportsMatMul, &CreateMatMulState},
    {"_FusedMatMul", &ComputeMatMul, 0, 0, &SupportsMatMul, &CreateMatMulState},
};

}  // namespace

Activation ActivationOf(Epilogue::Act act) {
  using Act = Epilogue::Act;
  switch (act) {
    case Act::kRelu6:
      return Activation::kRelu6;
    case Act::kElu:
      return Activation::kElu;
    case Act::kLeakyRelu:
      return Activation::kLeakyRelu;
    case Act::kTanh:
      return Activation::kTanh;
    case Act::kSigmoid:
      return Activation::kSigmoid;
    case Act::kGeluExact:
      return Activation::kGeluExact;
    case Act::kGeluApproximate:
      return Activation::kGeluTanh;
    case Act::kSwish:
      return Activation::kSwish;
    case Act::kHardSwish:
      return Activation::kHardSwish;
    default:
      return Activation::kRelu;
  }
}

std::span<const KernelEntry> MatMulKernels() { return kRows; }

}  // namespace kiln::exec::cuda
