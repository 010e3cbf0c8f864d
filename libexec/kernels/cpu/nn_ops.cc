// The CPU kernels of the ops in kernels/nn_ops.cc.
#include "kernels/nn_ops.h"

#include <algorithm>
#include <type_traits>

#include "kernels/cpu/elementwise.h"
#include "kernels/cpu/vector_math.h"
#include "kernels/eigen_functors.h"
#include "kernels/elementwise_functors.h"
#include "kernels/kernel_util.h"
#include "kernels/type_lists.h"

namespace kiln::exec {
namespace {

using nn::BiasAddState;

// ---- BiasAdd ---------------------------------------------------------------------------------

Status ComputeBiasAdd(const KernelContext& ctx) {
  const bool nchw = ctx.state<BiasAddState>().nchw;
  const Tensor& value = ctx.input(0);
  const Tensor& bias = ctx.input(1);
  if (value.rank() < 2 || bias.rank() != 1) {
    return ctx.Error("BiasAdd needs value of rank >= 2 and a 1-D bias, got ",
                     value.shape().ToString(), " and ", bias.shape().ToString());
  }
  const int channel_dim = nchw ? 1 : value.rank() - 1;
  const int64_t channels = value.dim(channel_dim);
  if (bias.dim(0) != channels) {
    return ctx.Error("input 'bias' has ", bias.dim(0), " elements but the channel dimension of ",
                     "'value' ", value.shape().ToString(), " is ", channels);
  }
  int64_t outer = 1, inner = 1;
  for (int i = 0; i < channel_dim; ++i) outer *= value.dim(i);
  for (int i = channel_dim + 1; i < value.rank(); ++i) inner *= value.dim(i);
  KILN_ASSIGN_OR_RETURN(Tensor * out, ctx.ForwardInputOrAllocateOutput(0, 0, value.shape()));
  // Every number type TF takes; half precision adds in float and rounds once, narrow integers
  // wrap.
  return Dispatch<NumberTypes>(value.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    using C = ComputeType<T>;
    const C* v = ComputeData<T>(value);
    const C* b = ComputeData<T>(bias);
    C* o = MutableComputeData<T>(out);
    if (inner == 1) {
      // NHWC: each row of `channels` values adds the whole bias vector (vectorised for float).
      ctx.threads().ParallelFor(outer, std::max<int64_t>(1, 32768 / std::max<int64_t>(1, channels)),
                                [&](int64_t begin, int64_t end) {
                                  for (int64_t r = begin; r < end; ++r) {
                                    const C* vr = v + r * channels;
                                    C* orow = o + r * channels;
                                    if constexpr (std::is_same_v<C, float>) {
                                      vmath::Binary(vmath::BinOp::kAdd, vr, b, orow, channels);
                                    } else {
                                      for (int64_t j = 0; j < channels; ++j)
                                        orow[j] = static_cast<C>(vr[j] + b[j]);
                                    }
                                  }
                                });
      return OkStatus();
    }
    // NCHW: rows of `inner` elements share one bias value.
    ctx.threads().ParallelFor(outer * channels,
                              std::max<int64_t>(1, 32768 / std::max<int64_t>(1, inner)),
                              [&](int64_t begin, int64_t end) {
                                for (int64_t r = begin; r < end; ++r) {
                                  const C bv = b[r % channels];
                                  const int64_t base = r * inner;
                                  for (int64_t j = 0; j < inner; ++j)
                                    o[base + j] = static_cast<C>(v[base + j] + bv);
                                }
                              });
    return OkStatus();
  });
}

// ---- Softmax, LogSoftmax ---------------------------------------------------------------------

template <bool kLog>
Status ComputeSoftmax(const KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  if (x.rank() < 1) return ctx.Error("input 'logits' must have rank >= 1, got a scalar");
  KILN_ASSIGN_OR_RETURN(Tensor * out, ctx.AllocateOutput(0, x.shape()));
  const int64_t depth = x.dim(x.rank() - 1);
  if (x.NumElements() == 0) return OkStatus();
  const int64_t batch = x.NumElements() / depth;
  if (x.dtype() == DType::kFloat) {
    const float* in = x.data<float>();
    float* o = out->data<float>();
    ctx.threads().ParallelFor(
        batch, std::max<int64_t>(1, 16384 / depth), [&](int64_t begin, int64_t end) {
          vmath::SoftmaxRows(in + begin * depth, o + begin * depth, end - begin, depth, kLog);
        });
    return OkStatus();
  }
  return Dispatch<BasicFloatTypes>(x.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    functor::SoftmaxFunctor<EigenCpuDevice, T>()(
        Cpu(), functor::ConstMatrix<T>(x.data<T>(), batch, depth),
        functor::Matrix<T>(out->data<T>(), batch, depth), kLog);
    return OkStatus();
  });
}

// ---- tables ----------------------------------------------------------------------------------

constexpr KernelEntry kCpu[] = {
    {"BiasAdd", ComputeBiasAdd},
    {"Relu", ComputeUnary<fn::Relu, RealTypes>},
    {"Relu6", ComputeUnary<fn::Relu6, RealTypes>},
    {"Elu", ComputeUnary<fn::Elu, FloatTypes>},
    {"Softmax", ComputeSoftmax<false>},
    {"LogSoftmax", ComputeSoftmax<true>},
};

}  // namespace

std::span<const KernelEntry> NnCpuKernels() { return kCpu; }

}  // namespace kiln::exec
