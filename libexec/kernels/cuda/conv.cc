// Conv2D, DepthwiseConv2dNative and their fused forms on the GPU through cuDNN (NHWC data, the
// filter rearranged once at prepare time from TF's HWIO to cuDNN's KRSC; depthwise is a
// grouped convolution with a group per input channel). cuDNN pads symmetrically: where TF's
// padding is not (SAME with an even window, EXPLICIT), the input is padded by the difference
// first, as TF's own GPU kernel does. The algorithm is cuDNN's heuristic pick per input shape,
// kept in the node's state. float32 runs without TF32 (CUDNN_FMA_MATH); float16 and bfloat16
// use the tensor cores with float accumulation. The fused bias or batch norm, residual add and
// activation are one pass after the convolution (nn.cu).
#include <algorithm>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <tuple>

#include "device/cuda/cuda_device.h"
#include "device/cuda/cudnn_api.h"
#include "kernels/cuda/cuda_kernels.h"
#include "kernels/cuda/epilogue.h"
#include "kernels/epilogue.h"
#include "kernels/window_util.h"

namespace kiln::exec::cuda {
namespace {

// The most workspace a chosen algorithm may ask for.
constexpr size_t kMaxWorkspace = size_t{512} << 20;

struct ConvPlan {
  const DnnApi* api = nullptr;
  cudnnTensorDescriptor_t x = nullptr, y = nullptr;
  cudnnFilterDescriptor_t w = nullptr;
  cudnnConvolutionDescriptor_t conv = nullptr;
  cudnnConvolutionFwdAlgo_t algo{};
  size_t workspace = 0;
  // The input is padded first by these (asymmetric padding), to these sizes.
  int64_t extra_top = 0, extra_left = 0, padded_h = 0, padded_w = 0;
  bool padded = false;
  ~ConvPlan() {
    if (api == nullptr) return;
    if (x) api->cudnnDestroyTensorDescriptor(x);
    if (y) api->cudnnDestroyTensorDescriptor(y);
    if (w) api->cudnnDestroyFilterDescriptor(w);
    if (conv) api->cudnnDestroyConvolutionDescriptor(conv);
  }
};

struct GpuConvState final : OpState {
  bool depthwise = false;
  WindowSpec window;
  Epilogue epilogue;
  int64_t k_h = 0, k_w = 0, filter_in_c = 0, out_c = 0;
  int64_t depthwise_c = 0;  // depthwise: the input channels the filter was made for
  Tensor filter;            // KRSC, in device memory
  mutable std::mutex mu;
  mutable std::map<std::tuple<int64_t, int64_t, int64_t, int64_t>, std::unique_ptr<ConvPlan>> plans;
};

cudnnDataType_t DnnType(DType t) {
  switch (t) {
    case DType::kHalf:
      return CUDNN_DATA_HALF;
    case DType::kBFloat16:
      return CUDNN_DATA_BFLOAT16;
    default:
      return CUDNN_DATA_FLOAT;
  }
}

bool SupportsConv(const PrepareContext& ctx) {
  if (!SupportsFloat(ctx) || ctx.inputs.size() < 2 || ctx.constant_inputs.size() < 2 ||
      ctx.constant_inputs[1] == nullptr || ctx.constant_inputs[1]->rank() != 4)
    return false;
  Result<Epilogue> e = ReadEpilogue(ctx);
  return e.ok() && Dnn().ok();
}

// TF's filter (HWIO; depthwise HWCM, read as HW1(C*M)) as cuDNN's KRSC, copied to the device.
Status CreateConvState(PrepareContext& ctx) {
  auto st = std::make_shared<GpuConvState>();
  st->depthwise = ctx.op == "DepthwiseConv2dNative" || ctx.op == "_FusedDepthwiseConv2dNative";
  KILN_ASSIGN_OR_RETURN(st->epilogue, ReadEpilogue(ctx));
  WindowAttrOptions opts;
  opts.read_dilations = true;
  opts.allow_explicit = true;
  opts.legacy_2d = true;
  KILN_RETURN_IF_ERROR(ReadWindowAttrs(ctx, opts, &st->window));
  const Tensor& f = *ctx.constant_inputs[1];
  const int64_t r = f.dim(0), s = f.dim(1);
  const int64_t in = st->depthwise ? 1 : f.dim(2);
  const int64_t out = st->depthwise ? f.dim(2) * f.dim(3) : f.dim(3);
  st->k_h = r;
  st->k_w = s;
  st->filter_in_c = in;
  st->out_c = out;
  st->depthwise_c = st->depthwise ? f.dim(2) : 0;
  Tensor host(f.dtype(), Shape{out, r, s, in});
  const size_t b = DTypeSize(f.dtype());
  const char* src = static_cast<const char*>(f.raw_data());
  char* dst = static_cast<char*>(host.raw_data());
  for (int64_t o = 0; o < out; ++o)
    for (int64_t y = 0; y < r; ++y)
      for (int64_t x = 0; x < s; ++x)
        for (int64_t i = 0; i < in; ++i)
          std::memcpy(dst + (((o * r + y) * s + x) * in + i) * b,
                      src + (((y * s + x) * in + i) * out + o) * b, b);
  KILN_ASSIGN_OR_RETURN(st->filter,
                        Tensor::Allocate(ctx.device->allocator(), f.dtype(), host.shape()));
  KILN_RETURN_IF_ERROR(ctx.device->CopyFromHost(host, &st->filter));
  ctx.state = st;
  return OkStatus();
}

Result<std::unique_ptr<ConvPlan>> MakePlan(const KernelContext& ctx, const GpuConvState& st,
                                           cudnnHandle_t handle, DType dtype, int64_t n, int64_t h,
                                           int64_t w, int64_t c,
                                           const std::array<WindowDim, 3>& dims, const void* filter,
                                           void* y) {
  KILN_ASSIGN_OR_RETURN(const DnnApi* api, Dnn());
  auto plan = std::make_unique<ConvPlan>();
  plan->api = api;
  const WindowDim& dh = dims[1];
  const WindowDim& dw = dims[2];
  const int64_t pad_h = std::min(dh.pad_before, dh.pad_after);
  const int64_t pad_w = std::min(dw.pad_before, dw.pad_after);
  plan->extra_top = dh.pad_before - pad_h;
  plan->extra_left = dw.pad_before - pad_w;
  plan->padded_h = h + (dh.pad_before - pad_h) + (dh.pad_after - pad_h);
  plan->padded_w = w + (dw.pad_before - pad_w) + (dw.pad_after - pad_w);
  plan->padded = plan->padded_h != h || plan->padded_w != w;
  const int64_t groups = c / st.filter_in_c;
  const cudnnDataType_t type = DnnType(dtype);
  auto i32 = [](int64_t v) { return static_cast<int>(v); };
  KILN_RETURN_IF_ERROR(CheckDnn(api->cudnnCreateTensorDescriptor(&plan->x), "cuDNN descriptor"));
  KILN_RETURN_IF_ERROR(CheckDnn(api->cudnnCreateTensorDescriptor(&plan->y), "cuDNN descriptor"));
  KILN_RETURN_IF_ERROR(CheckDnn(api->cudnnCreateFilterDescriptor(&plan->w), "cuDNN descriptor"));
  KILN_RETURN_IF_ERROR(
      CheckDnn(api->cudnnCreateConvolutionDescriptor(&plan->conv), "cuDNN descriptor"));
  KILN_RETURN_IF_ERROR(
      CheckDnn(api->cudnnSetTensor4dDescriptor(plan->x, CUDNN_TENSOR_NHWC, type, i32(n), i32(c),
                                               i32(plan->padded_h), i32(plan->padded_w)),
               "cuDNN input descriptor"));
  KILN_RETURN_IF_ERROR(
      CheckDnn(api->cudnnSetTensor4dDescriptor(plan->y, CUDNN_TENSOR_NHWC, type, i32(n),
                                               i32(st.out_c), i32(dh.out), i32(dw.out)),
               "cuDNN output descriptor"));
  KILN_RETURN_IF_ERROR(
      CheckDnn(api->cudnnSetFilter4dDescriptor(plan->w, type, CUDNN_TENSOR_NHWC, i32(st.out_c),
                                               i32(st.filter_in_c), i32(st.k_h), i32(st.k_w)),
               "cuDNN filter descriptor"));
  KILN_RETURN_IF_ERROR(CheckDnn(
      api->cudnnSetConvolution2dDescriptor(plan->conv, i32(pad_h), i32(pad_w), i32(dh.stride),
                                           i32(dw.stride), i32(dh.dilation), i32(dw.dilation),
                                           CUDNN_CROSS_CORRELATION, CUDNN_DATA_FLOAT),
      "cuDNN convolution descriptor"));
  KILN_RETURN_IF_ERROR(
      CheckDnn(api->cudnnSetConvolutionGroupCount(plan->conv, i32(groups)), "cuDNN group count"));
  // float32 stays float32 (no TF32); the half types take the tensor cores.
  const cudnnMathType_t math = dtype == DType::kFloat ? CUDNN_FMA_MATH : CUDNN_TENSOR_OP_MATH;
  KILN_RETURN_IF_ERROR(
      CheckDnn(api->cudnnSetConvolutionMathType(plan->conv, math), "cuDNN math type"));
  cudnnConvolutionFwdAlgoPerf_t perf[8];
  int found = 0;
  // The fastest algorithm measured on these shapes: cuDNN runs each once, at the first call of
  // a shape (its heuristics pick slow float32 algorithms for NHWC: ResNet50 at batch 1 ran
  // 2.3x slower on an H200). Scratch operands from the pool stand in for the input.
  Allocator* pool = DeviceOf(ctx).allocator();
  const size_t x_bytes =
      static_cast<size_t>(n * plan->padded_h * plan->padded_w * c) * DTypeSize(dtype);
  void* x_buf = pool->Allocate(x_bytes);
  void* ws = pool->Allocate(kMaxWorkspace);
  cudnnStatus_t rc = CUDNN_STATUS_ALLOC_FAILED;
  if (x_buf != nullptr && ws != nullptr)
    rc = api->cudnnFindConvolutionForwardAlgorithmEx(handle, plan->x, x_buf, plan->w, filter,
                                                     plan->conv, plan->y, y, 8, &found, perf, ws,
                                                     kMaxWorkspace);
  pool->Deallocate(x_buf, x_bytes);
  pool->Deallocate(ws, kMaxWorkspace);
  if (rc != CUDNN_STATUS_SUCCESS || found == 0) {  // no measurement: cuDNN's heuristics
    KILN_RETURN_IF_ERROR(
        CheckDnn(api->cudnnGetConvolutionForwardAlgorithm_v7(handle, plan->x, plan->w, plan->conv,
                                                             plan->y, 8, &found, perf),
                 "cuDNN algorithm choice"));
  }
  // Each result names the math type it was measured with: use it, and for float32 only FMA
  // (CUDNN_DEFAULT_MATH would allow TF32 on Ampere and later).
  bool chosen = false;
  for (int i = 0; i < found && !chosen; ++i) {
    if (perf[i].status != CUDNN_STATUS_SUCCESS || perf[i].memory > kMaxWorkspace) continue;
    if (dtype == DType::kFloat && perf[i].mathType != CUDNN_FMA_MATH) continue;
    KILN_RETURN_IF_ERROR(CheckDnn(api->cudnnSetConvolutionMathType(plan->conv, perf[i].mathType),
                                  "cuDNN math type"));
    plan->algo = perf[i].algo;
    plan->workspace = perf[i].memory;
    chosen = true;
  }
  if (!chosen)
    return ctx.Error("cuDNN has no algorithm for this ", DTypeShortName(dtype),
                     " convolution of input (", n, ", ", h, ", ", w, ", ", c, ")");
  return plan;
}

Status ComputeConv(const KernelContext& ctx) {
  CudaDevice& dev = DeviceOf(ctx);
  KILN_RETURN_IF_ERROR(dev.Activate());
  const auto& st = ctx.state<GpuConvState>();
  const Tensor& x = ctx.input(0);
  if (x.rank() != 4) return ctx.Error("input must have rank 4, got ", x.shape().ToString());
  const int64_t n = x.dim(0), h = x.dim(1), w = x.dim(2), c = x.dim(3);
  if (st.depthwise ? c != st.depthwise_c
                   : (c % st.filter_in_c != 0 || st.out_c % (c / st.filter_in_c) != 0))
    return ctx.Error("input depth ", c, " does not fit the filter (",
                     st.depthwise ? st.depthwise_c : st.filter_in_c, " input channels)");
  std::array<WindowDim, 3> dims;
  Status s = MakeWindowDims(st.window, x.shape().dims(), {1, st.k_h, st.k_w}, &dims);
  if (!s.ok()) return ctx.Error(s.message());
  KILN_ASSIGN_OR_RETURN(Tensor * y,
                        ctx.AllocateOutput(0, Shape{n, dims[1].out, dims[2].out, st.out_c}));
  if (y->NumElements() == 0) return OkStatus();
  KILN_ASSIGN_OR_RETURN(void* handle, dev.DnnHandle());
  KILN_ASSIGN_OR_RETURN(const DnnApi* api, Dnn());
  const ConvPlan* plan = nullptr;
  {
    std::lock_guard lock(st.mu);
    auto key = std::make_tuple(n, h, w, c);
    auto it = st.plans.find(key);
    if (it == st.plans.end()) {
      std::lock_guard dnn_lock(dev.dnn_mutex());
      KILN_RETURN_IF_ERROR(CheckDnn(
          api->cudnnSetStream(static_cast<cudnnHandle_t>(handle), dev.stream()), "cudnnSetStream"));
      KILN_ASSIGN_OR_RETURN(std::unique_ptr<ConvPlan> p,
                            MakePlan(ctx, st, static_cast<cudnnHandle_t>(handle), x.dtype(), n, h,
                                     w, c, dims, st.filter.raw_data(), y->raw_data()));
      it = st.plans.emplace(key, std::move(p)).first;
    }
    plan = it->second.get();
  }
  const void* input = x.raw_data();
  if (plan->padded) {
    const size_t bytes =
        static_cast<size_t>(n * plan->padded_h * plan->padded_w * c) * DTypeSize(x.dtype());
    KILN_ASSIGN_OR_RETURN(void* padded, ctx.AllocateTemp(bytes));
    const int64_t in_dims[4] = {n, h, w, c};
    const int64_t before[4] = {0, plan->extra_top, plan->extra_left, 0};
    const int64_t out_dims[4] = {n, plan->padded_h, plan->padded_w, c};
    KILN_RETURN_IF_ERROR(
        LaunchPad(ctx, input, padded, 4, in_dims, before, out_dims, DTypeSize(x.dtype()), 0));
    input = padded;
  }
  void* workspace = nullptr;
  if (plan->workspace > 0) {
    KILN_ASSIGN_OR_RETURN(workspace, ctx.AllocateTemp(plan->workspace));
  }
  const float alpha = 1.0f, beta = 0.0f;
  {
    std::lock_guard dnn_lock(dev.dnn_mutex());
    // The handle is shared: its stream is the calling thread's (a recording one's own).
    KILN_RETURN_IF_ERROR(CheckDnn(
        api->cudnnSetStream(static_cast<cudnnHandle_t>(handle), dev.stream()), "cudnnSetStream"));
    const cudnnStatus_t rc = api->cudnnConvolutionForward(
        static_cast<cudnnHandle_t>(handle), &alpha, plan->x, input, plan->w, st.filter.raw_data(),
        plan->conv, plan->algo, workspace, plan->workspace, &beta, plan->y, y->raw_data());
    if (rc != CUDNN_STATUS_SUCCESS)
      return ctx.Error(CheckDnn(rc, "cudnnConvolutionForward").message());
  }
  const Epilogue& e = st.epilogue;
  if (e.num_args() == 0 && e.act == Epilogue::Act::kNone) return OkStatus();
  ChannelEpilogue ep;
  int arg = 2;
  if (e.bias) ep.bias = ctx.input(arg++).raw_data();
  if (e.batch_norm) {
    ep.scale = ctx.input(arg++).raw_data();
    ep.offset = ctx.input(arg++).raw_data();
    ep.mean = ctx.input(arg++).raw_data();
    ep.variance = ctx.input(arg++).raw_data();
    ep.epsilon = e.epsilon;
  }
  if (e.add) {
    const Tensor& add = ctx.input(arg);
    if (add.shape() != y->shape())
      return ctx.Error("the fused Add's operand ", add.shape().ToString(), " is not the output's ",
                       y->shape().ToString());
    ep.add = add.raw_data();
  }
  using Act = Epilogue::Act;
  ep.has_act = e.act != Act::kNone;
  ep.alpha = e.leakyrelu_alpha;
  ep.act = ActivationOf(e.act);
  return LaunchChannelEpilogue(ctx, y->dtype(), y->raw_data(), y->NumElements(), st.out_c, ep);
}

// The filter stays on the host: the state holds its rearranged device copy.
constexpr uint32_t kFilter = 1u << 1;
const KernelEntry kRows[] = {
    {"Conv2D", &ComputeConv, kFilter, 0, &SupportsConv, &CreateConvState},
    {"DepthwiseConv2dNative", &ComputeConv, kFilter, 0, &SupportsConv, &CreateConvState},
    {"_FusedConv2D", &ComputeConv, kFilter, 0, &SupportsConv, &CreateConvState},
    {"_FusedDepthwiseConv2dNative", &ComputeConv, kFilter, 0, &SupportsConv, &CreateConvState},
};

}  // namespace

std::span<const KernelEntry> ConvKernels() { return kRows; }

}  // namespace kiln::exec::cuda
