// MatMul, _FusedMatMul and BatchMatMul(V2, V3) on the GPU through cuBLASLt. Row-major products
// run as the column-major product of the transposes (D^T = B^T A^T), so no operand is copied;
// the bias, the residual add (as cuBLASLt's C with beta = 1) and ReLU are cuBLASLt
// epilogues, other activations one pass after it. float32 computes in float32 (no
// TF32: results match the CPU within float32 tolerance); float16 and bfloat16 accumulate in
// float32. A plan (descriptors, layouts, the algorithm cuBLASLt's heuristic picked) is made
// once per shape and kept in the node's state.
#include <cuda_runtime_api.h>

#include <map>
#include <memory>
#include <mutex>
#include <tuple>

#include "device/cuda/cublaslt_api.h"
#include "device/cuda/cuda_device.h"
#include "kernels/cuda/cuda_kernels.h"
#include "kernels/onednn.h"

namespace kiln::exec::cuda {
namespace {

// cuBLASLt's workspace: what it recommends for Hopper.
constexpr size_t kWorkspaceBytes = size_t{32} << 20;

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

struct GpuMatMulState final : OpState {
  bool adj_a = false, adj_b = false;
  onednn::Epilogue epilogue;
  // Plans by (m, n, k, batch, a batched, b batched): the shapes a node meets are few.
  mutable std::mutex mu;
  mutable std::map<std::tuple<int64_t, int64_t, int64_t, int64_t, bool, bool>,
                   std::unique_ptr<Plan>>
      plans;
};

Status CreateMatMulState(PrepareContext& ctx) {
  auto st = std::make_shared<GpuMatMulState>();
  KILN_ASSIGN_OR_RETURN(st->epilogue, onednn::ReadEpilogue(ctx));
  const bool batched = ctx.op != "MatMul" && ctx.op != "_FusedMatMul";
  KILN_ASSIGN_OR_RETURN(st->adj_a, ctx.attrs.GetBool(batched ? "adj_x" : "transpose_a", false));
  KILN_ASSIGN_OR_RETURN(st->adj_b, ctx.attrs.GetBool(batched ? "adj_y" : "transpose_b", false));
  ctx.state = st;
  return OkStatus();
}

bool SupportsMatMul(const PrepareContext& ctx) {
  if (!SupportsFloat(ctx) || ctx.inputs.size() < 2) return false;
  for (const TensorSpec& s : ctx.inputs)
    if (s.dtype != ctx.inputs[0].dtype) return false;
  Result<onednn::Epilogue> e = onednn::ReadEpilogue(ctx);
  if (!e.ok() || e->batch_norm) return false;
  // cuBLASLt must be there to load; else the product stays on the CPU.
  return BlasLt().ok();
}

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

Result<std::unique_ptr<Plan>> MakePlan(const KernelContext& ctx, const GpuMatMulState& st,
                                       cublasLtHandle_t handle, DType dtype, int64_t m, int64_t n,
                                       int64_t k, int64_t batch, bool a_batched, bool b_batched) {
  KILN_ASSIGN_OR_RETURN(const BlasLtApi* api, BlasLt());
  auto plan = std::make_unique<Plan>();
  plan->api = api;
  const cudaDataType_t type = CudaType(dtype);
  KILN_RETURN_IF_ERROR(CheckBlas(
      api->cublasLtMatmulDescCreate(&plan->desc, CUBLAS_COMPUTE_32F, CUDA_R_32F), "matmul desc"));
  // cuBLASLt's A is our b, its B our a (see the file comment).
  const cublasOperation_t op_a = st.adj_b ? CUBLAS_OP_T : CUBLAS_OP_N;
  const cublasOperation_t op_b = st.adj_a ? CUBLAS_OP_T : CUBLAS_OP_N;
  auto set_desc = [&](cublasLtMatmulDescAttributes_t attr, const void* v, size_t size) {
    return CheckBlas(api->cublasLtMatmulDescSetAttribute(plan->desc, attr, v, size),
                     "matmul desc attribute");
  };
  KILN_RETURN_IF_ERROR(set_desc(CUBLASLT_MATMUL_DESC_TRANSA, &op_a, sizeof(op_a)));
  KILN_RETURN_IF_ERROR(set_desc(CUBLASLT_MATMUL_DESC_TRANSB, &op_b, sizeof(op_b)));
  const onednn::Epilogue& e = st.epilogue;
  using Act = onednn::Epilogue::Act;
  cublasLtEpilogue_t epi = CUBLASLT_EPILOGUE_DEFAULT;
  if (e.bias) {
    epi = e.act == Act::kRelu ? CUBLASLT_EPILOGUE_RELU_BIAS : CUBLASLT_EPILOGUE_BIAS;
  }
  KILN_RETURN_IF_ERROR(set_desc(CUBLASLT_MATMUL_DESC_EPILOGUE, &epi, sizeof(epi)));
  if (e.bias) {
    const cudaDataType_t bias_type = type;
    KILN_RETURN_IF_ERROR(
        set_desc(CUBLASLT_MATMUL_DESC_BIAS_DATA_TYPE, &bias_type, sizeof(bias_type)));
  }
  auto layout = [&](cublasLtMatrixLayout_t* l, int64_t rows, int64_t cols, bool batched) {
    KILN_RETURN_IF_ERROR(
        CheckBlas(api->cublasLtMatrixLayoutCreate(l, type, rows, cols, rows), "matmul layout"));
    if (batch > 1) {
      const int32_t count = static_cast<int32_t>(batch);
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
  KILN_RETURN_IF_ERROR(st.adj_b ? layout(&plan->a, k, n, b_batched)
                                : layout(&plan->a, n, k, b_batched));
  KILN_RETURN_IF_ERROR(st.adj_a ? layout(&plan->b, m, k, a_batched)
                                : layout(&plan->b, k, m, a_batched));
  KILN_RETURN_IF_ERROR(layout(&plan->c, n, m, true));

  cublasLtMatmulPreference_t pref = nullptr;
  KILN_RETURN_IF_ERROR(CheckBlas(api->cublasLtMatmulPreferenceCreate(&pref), "matmul preference"));
  std::unique_ptr<void, void (*)(void*)> pref_guard(pref, [](void* p) {
    if (auto a = BlasLt(); a.ok())
      (*a)->cublasLtMatmulPreferenceDestroy(static_cast<cublasLtMatmulPreference_t>(p));
  });
  const uint64_t ws = kWorkspaceBytes;
  KILN_RETURN_IF_ERROR(
      CheckBlas(api->cublasLtMatmulPreferenceSetAttribute(
                    pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &ws, sizeof(ws)),
                "matmul workspace preference"));
  cublasLtMatmulHeuristicResult_t result{};
  int found = 0;
  KILN_RETURN_IF_ERROR(
      CheckBlas(api->cublasLtMatmulAlgoGetHeuristic(handle, plan->desc, plan->a, plan->b, plan->c,
                                                    plan->c, pref, 1, &result, &found),
                "matmul algorithm search"));
  if (found == 0)
    return ctx.Error("cuBLASLt has no algorithm for a ", DTypeShortName(dtype), " product of (", m,
                     " x ", k, ") and (", k, " x ", n, "), batch ", batch);
  plan->algo = result.algo;
  plan->workspace = result.workspaceSize;
  return plan;
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
  const int64_t m = a.dim(a.rank() - (st.adj_a ? 1 : 2));
  const int64_t k = a.dim(a.rank() - (st.adj_a ? 2 : 1));
  const int64_t kb = b.dim(b.rank() - (st.adj_b ? 1 : 2));
  const int64_t n = b.dim(b.rank() - (st.adj_b ? 2 : 1));
  if (k != kb)
    return ctx.Error("inner dimensions differ: ", a.shape().ToString(), " and ",
                     b.shape().ToString());
  // Batch dims: numpy broadcasting where each side's batch is either all of it or one matrix.
  const int out_rank = std::max(a.rank(), b.rank());
  Shape out;
  int64_t batch = 1, batch_a = 1, batch_b = 1;
  for (int d = 0; d < out_rank - 2; ++d) {
    const int da = d - (out_rank - a.rank()), db = d - (out_rank - b.rank());
    const int64_t xa = da >= 0 ? a.dim(da) : 1, xb = db >= 0 ? b.dim(db) : 1;
    if (xa != xb && xa != 1 && xb != 1)
      return ctx.Error("batch dims of ", a.shape().ToString(), " and ", b.shape().ToString(),
                       " do not broadcast");
    out.AddDim(std::max(xa, xb));
    batch *= std::max(xa, xb);
    batch_a *= xa;
    batch_b *= xb;
  }
  if ((batch_a != batch && batch_a != 1) || (batch_b != batch && batch_b != 1))
    return ctx.Error("the GPU matmul broadcasts a batch only when one side has a single matrix: ",
                     a.shape().ToString(), " and ", b.shape().ToString());
  out.AddDim(m);
  out.AddDim(n);
  KILN_ASSIGN_OR_RETURN(Tensor * y, ctx.AllocateOutput(0, out));
  if (y->NumElements() == 0) return OkStatus();
  if (k == 0)
    return Check(cudaMemsetAsync(y->raw_data(), 0, y->ByteSize(), dev.stream()), "matmul zero");

  const onednn::Epilogue& e = st.epilogue;
  const Tensor* bias = e.bias ? &ctx.input(2) : nullptr;
  const Tensor* add = e.add ? &ctx.input(3) : nullptr;
  if (bias != nullptr && bias->NumElements() != n)
    return ctx.Error("bias has ", bias->NumElements(), " values for ", n, " output columns");
  if (add != nullptr && add->shape() != out)
    return ctx.Error("the fused Add's operand ", add->shape().ToString(), " is not the output's ",
                     out.ToString());

  KILN_ASSIGN_OR_RETURN(void* handle, dev.BlasLtHandle());
  KILN_ASSIGN_OR_RETURN(const BlasLtApi* api, BlasLt());
  {
    // The plan's descriptor takes this call's bias pointer: set and enqueue under the lock.
    std::lock_guard lock(st.mu);
    auto key = std::make_tuple(m, n, k, batch, batch_a > 1, batch_b > 1);
    auto it = st.plans.find(key);
    if (it == st.plans.end()) {
      KILN_ASSIGN_OR_RETURN(std::unique_ptr<Plan> p,
                            MakePlan(ctx, st, static_cast<cublasLtHandle_t>(handle), a.dtype(), m,
                                     n, k, batch, batch_a > 1, batch_b > 1));
      it = st.plans.emplace(key, std::move(p)).first;
    }
    const Plan* plan = it->second.get();
    if (bias != nullptr) {
      const void* bias_ptr = bias->raw_data();
      KILN_RETURN_IF_ERROR(
          CheckBlas(api->cublasLtMatmulDescSetAttribute(
                        plan->desc, CUBLASLT_MATMUL_DESC_BIAS_POINTER, &bias_ptr, sizeof(bias_ptr)),
                    "matmul bias pointer"));
    }
    void* workspace = nullptr;
    if (plan->workspace > 0) {
      KILN_ASSIGN_OR_RETURN(workspace, ctx.AllocateTemp(plan->workspace));
    }
    const float alpha = 1.0f, beta = add != nullptr ? 1.0f : 0.0f;
    const void* c = add != nullptr ? add->raw_data() : y->raw_data();
    KILN_RETURN_IF_ERROR(CheckBlas(
        api->cublasLtMatmul(static_cast<cublasLtHandle_t>(handle), plan->desc, &alpha, b.raw_data(),
                            plan->a, a.raw_data(), plan->b, &beta, c, plan->c, y->raw_data(),
                            plan->c, &plan->algo, workspace, plan->workspace, dev.stream()),
        internal::StrCat("node '", ctx.node_name(), "': cublasLtMatmul")));
  }
  // Activations without a cuBLASLt epilogue: one pass over the output.
  using Act = onednn::Epilogue::Act;
  if (e.act == Act::kNone || (e.act == Act::kRelu && e.bias)) return OkStatus();
  Activation act = Activation::kRelu;
  switch (e.act) {
    case Act::kRelu6:
      act = Activation::kRelu6;
      break;
    case Act::kElu:
      act = Activation::kElu;
      break;
    case Act::kLeakyRelu:
      act = Activation::kLeakyRelu;
      break;
    case Act::kTanh:
      act = Activation::kTanh;
      break;
    case Act::kSigmoid:
      act = Activation::kSigmoid;
      break;
    case Act::kGeluExact:
      act = Activation::kGeluExact;
      break;
    case Act::kGeluApproximate:
      act = Activation::kGeluTanh;
      break;
    case Act::kSwish:
      act = Activation::kSwish;
      break;
    default:
      break;
  }
  return LaunchActivation(ctx, act, e.leakyrelu_alpha, y->dtype(), y->raw_data(), y->NumElements());
}

const KernelEntry kRows[] = {
    {"BatchMatMul", &ComputeMatMul, 0, 0, &SupportsMatMul, &CreateMatMulState},
    {"BatchMatMulV2", &ComputeMatMul, 0, 0, &SupportsMatMul, &CreateMatMulState},
    {"BatchMatMulV3", &ComputeMatMul, 0, 0, &SupportsMatMul, &CreateMatMulState},
    {"MatMul", &ComputeMatMul, 0, 0, &SupportsMatMul, &CreateMatMulState},
    {"_FusedMatMul", &ComputeMatMul, 0, 0, &SupportsMatMul, &CreateMatMulState},
};

}  // namespace

std::span<const KernelEntry> MatMulKernels() { return kRows; }

}  // namespace kiln::exec::cuda
