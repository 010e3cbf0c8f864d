// Conv2D, DepthwiseConv2dNative and their fused forms on the GPU through cuDNN (NHWC data, the
// filter rearranged once at prepare time from TF's HWIO to cuDNN's KRSC; depthwise is a
// grouped convolution with a group per input channel). cuDNN pads symmetrically: where TF's
// padding is not (SAME with an even window, EXPLICIT), the input is padded by the difference
// first, as TF's own GPU kernel does. The algorithm is the one cuDNN measures fastest at a
// shape's first call, kept in the node's state and in the device's tuning records (a serving
// plan carries them, so a compiled bundle's first call measures nothing). float32 runs without TF32
// (CUDNN_FMA_MATH); float16 and bfloat16 use the tensor cores with float accumulation. The fused
// bias or batch norm, residual add and activation are one pass after the convolution (nn.cu).
// Conv2DBackpropInput (Keras's Conv2DTranspose at inference) is cuDNN's backward-data call on
// the same descriptors.
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "device/cuda/cuda_device.h"
#include "device/cuda/cudnn_api.h"
#include "device/tuning_records.h"
#include "kernels/array_util.h"
#include "kernels/conv_nd_ops.h"
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
  cudnnConvolutionBwdDataAlgo_t data_algo{};  // Conv2DBackpropInput's
  cudnnMathType_t math = CUDNN_DEFAULT_MATH;  // the chosen algorithm's
  bool tf32 = false;  // float32 may use TF32 tensor cores (Precision::kTF32)
  size_t workspace = 0;
  // Every size the descriptors hold, as text: the shape part of a tuning record's key.
  std::string sizes;
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

// Runs call(api, handle) with the device's cuDNN handle bound to the calling thread's stream (a
// recording thread's own), under the device's cuDNN lock: the handle is shared.
template <typename F>
Status WithDnn(CudaDevice& dev, F&& call) {
  KILN_ASSIGN_OR_RETURN(void* h, dev.DnnHandle());
  KILN_ASSIGN_OR_RETURN(const DnnApi* api, Dnn());
  std::lock_guard lock(dev.dnn_mutex());
  const auto handle = static_cast<cudnnHandle_t>(h);
  KILN_RETURN_IF_ERROR(CheckDnn(api->cudnnSetStream(handle, dev.stream()), "cudnnSetStream"));
  return call(api, handle);
}

// A node's plans, one per input shape (n, h, w, c), each made at its shape's first call by
// make(handle), which may measure algorithms on the handle's stream.
struct PlanCache {
  using Key = std::tuple<int64_t, int64_t, int64_t, int64_t>;
  std::mutex mu;
  std::map<Key, std::unique_ptr<ConvPlan>> plans;

  template <typename Make>
  Result<const ConvPlan*> Find(CudaDevice& dev, const Key& key, Make&& make) {
    std::lock_guard lock(mu);
    auto it = plans.find(key);
    if (it == plans.end()) {
      std::unique_ptr<ConvPlan> plan;
      KILN_RETURN_IF_ERROR(WithDnn(dev, [&](const DnnApi*, cudnnHandle_t handle) -> Status {
        KILN_ASSIGN_OR_RETURN(plan, make(handle));
        return OkStatus();
      }));
      it = plans.emplace(key, std::move(plan)).first;
    }
    return it->second.get();
  }
};

struct GpuConvState final : OpState {
  bool depthwise = false;
  WindowSpec window;
  Epilogue epilogue;
  int64_t k_h = 0, k_w = 0, filter_in_c = 0, out_c = 0;
  int64_t depthwise_c = 0;  // depthwise: the input channels the filter was made for
  Tensor filter;            // KRSC, in device memory
  bool tf32 = false;
  mutable PlanCache plans;
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
  return e.ok() && !e->has_post() && Dnn().ok();  // cuDNN has no per-channel post-op
}

// TF's filter f (HWIO, with `in` and `out` channels) as cuDNN's KRSC, copied to the device.
Result<Tensor> DeviceFilter(const PrepareContext& ctx, const Tensor& f, int64_t in, int64_t out) {
  const int64_t r = f.dim(0), s = f.dim(1);
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
  KILN_ASSIGN_OR_RETURN(Tensor t,
                        Tensor::Allocate(ctx.device->allocator(), f.dtype(), host.shape()));
  KILN_RETURN_IF_ERROR(ctx.device->CopyFromHost(host, &t));
  return t;
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
  KILN_ASSIGN_OR_RETURN(st->filter, DeviceFilter(ctx, f, in, out));
  st->tf32 = AllowsTf32(ctx);
  ctx.state = st;
  return OkStatus();
}

// A convolution's filter as cuDNN sees it: k_h x k_w windows, in_c channels a group, out_c
// outputs.
struct FilterDims {
  int64_t k_h = 0, k_w = 0, in_c = 0, out_c = 0;
};

// The descriptors of a convolution of x (n, h, w, c) by `f` with the windows `dims`: x as
// padded by the difference of an asymmetric padding (plan->padded), y the output.
Status DescribeConv(ConvPlan* plan, DType dtype, int64_t n, int64_t h, int64_t w, int64_t c,
                    const FilterDims& f, const std::array<WindowDim, 3>& dims) {
  KILN_ASSIGN_OR_RETURN(const DnnApi* api, Dnn());
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
  const int64_t groups = c / f.in_c;
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
                                               i32(f.out_c), i32(dh.out), i32(dw.out)),
               "cuDNN output descriptor"));
  KILN_RETURN_IF_ERROR(
      CheckDnn(api->cudnnSetFilter4dDescriptor(plan->w, type, CUDNN_TENSOR_NHWC, i32(f.out_c),
                                               i32(f.in_c), i32(f.k_h), i32(f.k_w)),
               "cuDNN filter descriptor"));
  KILN_RETURN_IF_ERROR(CheckDnn(
      api->cudnnSetConvolution2dDescriptor(plan->conv, i32(pad_h), i32(pad_w), i32(dh.stride),
                                           i32(dw.stride), i32(dh.dilation), i32(dw.dilation),
                                           CUDNN_CROSS_CORRELATION, CUDNN_DATA_FLOAT),
      "cuDNN convolution descriptor"));
  KILN_RETURN_IF_ERROR(
      CheckDnn(api->cudnnSetConvolutionGroupCount(plan->conv, i32(groups)), "cuDNN group count"));
  // float32 stays float32 (no TF32); the half types take the tensor cores.
  const cudnnMathType_t math =
      dtype == DType::kFloat && !plan->tf32 ? CUDNN_FMA_MATH : CUDNN_TENSOR_OP_MATH;
  plan->sizes =
      DTypeShortName(dtype) + " x" + std::to_string(n) + "," + std::to_string(c) + "," +
      std::to_string(plan->padded_h) + "," + std::to_string(plan->padded_w) + " w" +
      std::to_string(f.out_c) + "," + std::to_string(f.in_c) + "," + std::to_string(f.k_h) + "," +
      std::to_string(f.k_w) + " y" + std::to_string(dh.out) + "," + std::to_string(dw.out) + " p" +
      std::to_string(pad_h) + "," + std::to_string(pad_w) + " s" + std::to_string(dh.stride) + "," +
      std::to_string(dw.stride) + " d" + std::to_string(dh.dilation) + "," +
      std::to_string(dw.dilation) + " g" + std::to_string(groups) + (plan->tf32 ? " tf32" : "");
  return CheckDnn(api->cudnnSetConvolutionMathType(plan->conv, math), "cuDNN math type");
}

// Of cuDNN's measured (or, failing that, heuristic) algorithms, the first that ran within the
// workspace limit, into *algo with its math type set on plan->conv (each result names the math
// type it was measured with; for float32 only FMA: CUDNN_DEFAULT_MATH would allow TF32 on Ampere
// and later). False when none fits.
template <typename Perf, typename Algo>
Result<bool> ChooseAlgo(ConvPlan* plan, DType dtype, const Perf* perf, int found, Algo* algo) {
  for (int i = 0; i < found; ++i) {
    if (perf[i].status != CUDNN_STATUS_SUCCESS || perf[i].memory > kMaxWorkspace) continue;
    if (dtype == DType::kFloat && !plan->tf32 && perf[i].mathType != CUDNN_FMA_MATH) continue;
    KILN_RETURN_IF_ERROR(CheckDnn(
        plan->api->cudnnSetConvolutionMathType(plan->conv, perf[i].mathType), "cuDNN math type"));
    *algo = perf[i].algo;
    plan->math = perf[i].mathType;
    plan->workspace = perf[i].memory;
    return true;
  }
  return false;
}

// A chosen algorithm as a tuning record's value.
struct AlgoRecord {
  int32_t algo = 0;
  int32_t math = 0;
  uint64_t workspace = 0;
};

// The tuning record key of a plan's algorithm: the GPU model, cuDNN's version, the direction
// and every size of the descriptors.
std::string AlgoKey(const CudaDevice& dev, const char* direction, const ConvPlan& plan) {
  const cudaDeviceProp& p = dev.properties();
  return std::string("cudnn-conv ") + direction + " " + p.name + " sm" + std::to_string(p.major) +
         std::to_string(p.minor) + " v" + std::to_string(plan.api->cudnnGetVersion()) + " " +
         plan.sizes;
}

// The algorithm of `plan` for `direction`, into *algo: the one recorded for this GPU and these
// sizes (from a serving plan, or an earlier node of this process) when cuDNN still takes it,
// else the fastest cuDNN measures (`measure`, recorded for next time), else its heuristics
// (`guess`). `workspace_of` asks cuDNN what an algorithm needs. False when none fits.
template <typename Perf, typename Algo, typename Measure, typename Guess, typename WorkspaceOf>
Result<bool> PickAlgo(const CudaDevice& dev, ConvPlan* plan, DType dtype, const char* direction,
                      int algo_count, Algo* algo, Measure&& measure, Guess&& guess,
                      WorkspaceOf&& workspace_of) {
  const std::string key = AlgoKey(dev, direction, *plan);
  Perf perf[8] = {};
  int found = 0;
  if (std::optional<std::string> v = tuning::Find(dev, key); v && v->size() == sizeof(AlgoRecord)) {
    AlgoRecord r;
    std::memcpy(&r, v->data(), sizeof r);
    if (r.algo >= 0 && r.algo < algo_count && r.math >= 0 && r.math <= CUDNN_FMA_MATH &&
        r.workspace <= kMaxWorkspace) {
      perf[0].algo = static_cast<Algo>(r.algo);
      perf[0].status = CUDNN_STATUS_SUCCESS;
      perf[0].memory = r.workspace;
      perf[0].mathType = static_cast<cudnnMathType_t>(r.math);
      KILN_ASSIGN_OR_RETURN(const bool chosen, ChooseAlgo(plan, dtype, perf, 1, algo));
      size_t need = 0;
      if (chosen && workspace_of(*algo, &need) == CUDNN_STATUS_SUCCESS && need <= plan->workspace)
        return true;
    }
  }
  const bool measured = measure(perf, &found) == CUDNN_STATUS_SUCCESS && found > 0;
  if (!measured) KILN_RETURN_IF_ERROR(CheckDnn(guess(perf, &found), "cuDNN algorithm choice"));
  KILN_ASSIGN_OR_RETURN(const bool chosen, ChooseAlgo(plan, dtype, perf, found, algo));
  if (chosen && measured) {
    const AlgoRecord r{static_cast<int32_t>(*algo), static_cast<int32_t>(plan->math),
                       plan->workspace};
    tuning::Put(dev, key, std::string_view(reinterpret_cast<const char*>(&r), sizeof r));
  }
  return chosen;
}

Result<std::unique_ptr<ConvPlan>> MakePlan(const KernelContext& ctx, const GpuConvState& st,
                                           cudnnHandle_t handle, DType dtype, int64_t n, int64_t h,
                                           int64_t w, int64_t c,
                                           const std::array<WindowDim, 3>& dims, const void* filter,
                                           void* y) {
  auto plan = std::make_unique<ConvPlan>();
  plan->tf32 = st.tf32;
  KILN_RETURN_IF_ERROR(DescribeConv(plan.get(), dtype, n, h, w, c,
                                    {st.k_h, st.k_w, st.filter_in_c, st.out_c}, dims));
  const DnnApi* api = plan->api;
  // The fastest algorithm measured on these shapes: cuDNN runs each once, at the first call of
  // a shape (its heuristics pick slow float32 algorithms for NHWC: ResNet50 at batch 1 ran
  // 2.3x slower on an H200). Scratch operands from the pool stand in for the input.
  auto measure = [&](cudnnConvolutionFwdAlgoPerf_t* perf, int* found) {
    Allocator* pool = DeviceOf(ctx).allocator();
    const size_t x_bytes =
        static_cast<size_t>(n * plan->padded_h * plan->padded_w * c) * DTypeSize(dtype);
    void* x_buf = pool->Allocate(x_bytes);
    void* ws = pool->Allocate(kMaxWorkspace);
    cudnnStatus_t rc = CUDNN_STATUS_ALLOC_FAILED;
    if (x_buf != nullptr && ws != nullptr)
      rc = api->cudnnFindConvolutionForwardAlgorithmEx(handle, plan->x, x_buf, plan->w, filter,
                                                       plan->conv, plan->y, y, 8, found, perf, ws,
                                                       kMaxWorkspace);
    pool->Deallocate(x_buf, x_bytes);
    pool->Deallocate(ws, kMaxWorkspace);
    return rc;
  };
  auto guess = [&](cudnnConvolutionFwdAlgoPerf_t* perf, int* found) {
    return api->cudnnGetConvolutionForwardAlgorithm_v7(handle, plan->x, plan->w, plan->conv,
                                                       plan->y, 8, found, perf);
  };
  auto workspace_of = [&](cudnnConvolutionFwdAlgo_t algo, size_t* bytes) {
    return api->cudnnGetConvolutionForwardWorkspaceSize(handle, plan->x, plan->w, plan->conv,
                                                        plan->y, algo, bytes);
  };
  KILN_ASSIGN_OR_RETURN(const bool chosen, PickAlgo<cudnnConvolutionFwdAlgoPerf_t>(
                                               DeviceOf(ctx), plan.get(), dtype, "fwd",
                                               CUDNN_CONVOLUTION_FWD_ALGO_COUNT, &plan->algo,
                                               measure, guess, workspace_of));
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
  KILN_ASSIGN_OR_RETURN(const ConvPlan* plan,
                        st.plans.Find(dev, {n, h, w, c}, [&](cudnnHandle_t handle) {
                          return MakePlan(ctx, st, handle, x.dtype(), n, h, w, c, dims,
                                          st.filter.raw_data(), y->raw_data());
                        }));
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
  KILN_RETURN_IF_ERROR(WithDnn(dev, [&](const DnnApi* api, cudnnHandle_t handle) -> Status {
    const float alpha = 1.0f, beta = 0.0f;
    const cudnnStatus_t rc = api->cudnnConvolutionForward(
        handle, &alpha, plan->x, input, plan->w, st.filter.raw_data(), plan->conv, plan->algo,
        workspace, plan->workspace, &beta, plan->y, y->raw_data());
    if (rc != CUDNN_STATUS_SUCCESS)
      return ctx.Error(CheckDnn(rc, "cudnnConvolutionForward").message());
    return OkStatus();
  }));
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

// ---- Conv2DBackpropInput (Keras's Conv2DTranspose) --------------------------------------------
// The gradient of the forward convolution's input, through cuDNN's backward-data call on the
// forward convolution's descriptors. Where TF's padding is asymmetric, the forward kernel pads
// the input by the difference (above); here the gradient of that padded input is computed and
// the input's part cut out of it.

struct GpuBackpropInputState final : OpState {
  WindowSpec window;
  std::vector<int64_t> filter_dims;  // TF's HWIO
  FilterDims f;
  Tensor filter;  // KRSC, in device memory
  bool tf32 = false;
  mutable PlanCache plans;
};

// input_sizes (host), filter (a constant), out_backprop: the output and out_backprop of a GPU
// float type.
bool SupportsBackpropInput(const PrepareContext& ctx) {
  if (ctx.inputs.size() != 3 || ctx.constant_inputs.size() < 2 ||
      ctx.constant_inputs[1] == nullptr || ctx.constant_inputs[1]->rank() != 4 ||
      !IsGpuFloat(ctx.inputs[2].dtype))
    return false;
  for (const TensorSpec& s : ctx.outputs)
    if (!IsGpuFloat(s.dtype)) return false;
  return Dnn().ok();
}

Status CreateBackpropInputState(PrepareContext& ctx) {
  if (ctx.state == nullptr) return ctx.Error("Conv2DBackpropInput was not prepared");
  const auto& prepared = static_cast<const conv_nd_ops::ConvState&>(*ctx.state);
  auto st = std::make_shared<GpuBackpropInputState>();
  st->window = prepared.attrs;
  const Tensor& f = *ctx.constant_inputs[1];
  st->filter_dims.assign(f.shape().dims().begin(), f.shape().dims().end());
  st->f = {f.dim(0), f.dim(1), f.dim(2), f.dim(3)};
  KILN_ASSIGN_OR_RETURN(st->filter, DeviceFilter(ctx, f, st->f.in_c, st->f.out_c));
  st->tf32 = AllowsTf32(ctx);
  ctx.state = st;
  return OkStatus();
}

Result<std::unique_ptr<ConvPlan>> MakeBackpropPlan(
    const KernelContext& ctx, const GpuBackpropInputState& st, cudnnHandle_t handle, DType dtype,
    const std::vector<int64_t>& in, const std::array<WindowDim, 3>& dims, const void* dy) {
  auto plan = std::make_unique<ConvPlan>();
  plan->tf32 = st.tf32;
  const int64_t n = in[0], h = in[1], w = in[2], c = in[3];
  KILN_RETURN_IF_ERROR(DescribeConv(plan.get(), dtype, n, h, w, c, st.f, dims));
  const DnnApi* api = plan->api;
  // Measured on these shapes as the forward's are: a scratch gradient from the pool.
  auto measure = [&](cudnnConvolutionBwdDataAlgoPerf_t* perf, int* found) {
    Allocator* pool = DeviceOf(ctx).allocator();
    const size_t dx_bytes =
        static_cast<size_t>(n * plan->padded_h * plan->padded_w * c) * DTypeSize(dtype);
    void* dx_buf = pool->Allocate(dx_bytes);
    void* ws = pool->Allocate(kMaxWorkspace);
    cudnnStatus_t rc = CUDNN_STATUS_ALLOC_FAILED;
    if (dx_buf != nullptr && ws != nullptr)
      rc = api->cudnnFindConvolutionBackwardDataAlgorithmEx(
          handle, plan->w, st.filter.raw_data(), plan->y, dy, plan->conv, plan->x, dx_buf, 8, found,
          perf, ws, kMaxWorkspace);
    pool->Deallocate(dx_buf, dx_bytes);
    pool->Deallocate(ws, kMaxWorkspace);
    return rc;
  };
  auto guess = [&](cudnnConvolutionBwdDataAlgoPerf_t* perf, int* found) {
    return api->cudnnGetConvolutionBackwardDataAlgorithm_v7(handle, plan->w, plan->y, plan->conv,
                                                            plan->x, 8, found, perf);
  };
  auto workspace_of = [&](cudnnConvolutionBwdDataAlgo_t algo, size_t* bytes) {
    return api->cudnnGetConvolutionBackwardDataWorkspaceSize(handle, plan->w, plan->y, plan->conv,
                                                             plan->x, algo, bytes);
  };
  KILN_ASSIGN_OR_RETURN(const bool chosen, PickAlgo<cudnnConvolutionBwdDataAlgoPerf_t>(
                                               DeviceOf(ctx), plan.get(), dtype, "bwd-data",
                                               CUDNN_CONVOLUTION_BWD_DATA_ALGO_COUNT,
                                               &plan->data_algo, measure, guess, workspace_of));
  if (!chosen)
    return ctx.Error("cuDNN has no algorithm for this ", DTypeShortName(dtype),
                     " input gradient of shape (", n, ", ", h, ", ", w, ", ", c, ")");
  return plan;
}

Status ComputeBackpropInput(const KernelContext& ctx) {
  using conv_nd_ops::ConvKind;
  CudaDevice& dev = DeviceOf(ctx);
  KILN_RETURN_IF_ERROR(dev.Activate());
  const auto& st = ctx.state<GpuBackpropInputState>();
  const Tensor& dy = ctx.input(2);
  auto in = conv_nd_ops::SizesFromValues(ConvKind::kBackpropInput, 2, IndexValues(ctx.input(0)),
                                         st.filter_dims, dy.shape().dims());
  if (!in.ok()) return ctx.Error(in.status().message());
  conv_nd::ConvGeom g;
  Status s = conv_nd_ops::MakeGeom(ConvKind::kBackpropInput, st.window, *in, st.filter_dims,
                                   dy.shape().dims(), &g);
  if (!s.ok()) return ctx.Error(s.message());
  const int64_t n = (*in)[0], h = (*in)[1], w = (*in)[2], c = (*in)[3];
  KILN_ASSIGN_OR_RETURN(Tensor * dx, ctx.AllocateOutput(0, Shape{n, h, w, c}));
  if (dx->NumElements() == 0) return OkStatus();
  const size_t elem = DTypeSize(dx->dtype());
  if (dy.NumElements() == 0) {  // an empty window sum: zeros
    if (cudaMemsetAsync(dx->raw_data(), 0, dx->NumElements() * elem, dev.stream()) != cudaSuccess)
      return LaunchStatus(ctx, "Conv2DBackpropInput's zeros");
    return OkStatus();
  }
  KILN_ASSIGN_OR_RETURN(
      const ConvPlan* plan, st.plans.Find(dev, {n, h, w, c}, [&](cudnnHandle_t handle) {
        return MakeBackpropPlan(ctx, st, handle, dx->dtype(), *in, g.d, dy.raw_data());
      }));
  void* out = dx->raw_data();
  if (plan->padded) {
    KILN_ASSIGN_OR_RETURN(
        out, ctx.AllocateTemp(static_cast<size_t>(n * plan->padded_h * plan->padded_w * c) * elem));
  }
  void* workspace = nullptr;
  if (plan->workspace > 0) {
    KILN_ASSIGN_OR_RETURN(workspace, ctx.AllocateTemp(plan->workspace));
  }
  KILN_RETURN_IF_ERROR(WithDnn(dev, [&](const DnnApi* api, cudnnHandle_t handle) -> Status {
    const float alpha = 1.0f, beta = 0.0f;
    const cudnnStatus_t rc = api->cudnnConvolutionBackwardData(
        handle, &alpha, plan->w, st.filter.raw_data(), plan->y, dy.raw_data(), plan->conv,
        plan->data_algo, workspace, plan->workspace, &beta, plan->x, out);
    if (rc != CUDNN_STATUS_SUCCESS)
      return ctx.Error(CheckDnn(rc, "cudnnConvolutionBackwardData").message());
    return OkStatus();
  }));
  if (!plan->padded) return OkStatus();
  // The input's part of the padded input's gradient: a "pad" by minus the extra rows and columns.
  const int64_t padded_dims[4] = {n, plan->padded_h, plan->padded_w, c};
  const int64_t before[4] = {0, -plan->extra_top, -plan->extra_left, 0};
  const int64_t out_dims[4] = {n, h, w, c};
  return LaunchPad(ctx, out, dx->raw_data(), 4, padded_dims, before, out_dims, elem, 0);
}

// The filter stays on the host: the state holds its rearranged device copy.
constexpr uint32_t kFilter = 1u << 1;
constexpr uint32_t kSizes = 1u << 0;
const KernelEntry kRows[] = {
    {"Conv2D", &ComputeConv, kFilter, 0, &SupportsConv, &CreateConvState},
    {"Conv2DBackpropInput", &ComputeBackpropInput, kSizes | kFilter, 0, &SupportsBackpropInput,
     &CreateBackpropInputState},
    {"DepthwiseConv2dNative", &ComputeConv, kFilter, 0, &SupportsConv, &CreateConvState},
    {"_FusedConv2D", &ComputeConv, kFilter, 0, &SupportsConv, &CreateConvState},
    {"_FusedDepthwiseConv2dNative", &ComputeConv, kFilter, 0, &SupportsConv, &CreateConvState},
};

}  // namespace

std::span<const KernelEntry> ConvKernels() { return kRows; }

}  // namespace kiln::exec::cuda
