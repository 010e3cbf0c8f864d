// The CPU kernels of the ops in kernels/loss_ops.cc.
// Half and bfloat16 compute in float.
#include <algorithm>
#include <cmath>

#include "kernels/kernel_util.h"
#include "kernels/math_functors.h"
#include "kernels/strided_walk.h"
#include "kernels/type_lists.h"

namespace kiln::exec {
namespace {

// Row r's loss and backprop; label(j) gives the label of class j.
template <typename C, typename Label>
void XentRow(const C* logits, int64_t logit_stride, int64_t classes, const Label& label, C* loss,
             C* backprop) {
  using W = fn::Wide<C>;
  W max = W(logits[0]);
  for (int64_t j = 1; j < classes; ++j) max = std::max(max, W(logits[j * logit_stride]));
  W sum = 0;
  for (int64_t j = 0; j < classes; ++j) sum += std::exp(W(logits[j * logit_stride]) - max);
  const W lse = std::log(sum);
  W l = 0;
  for (int64_t j = 0; j < classes; ++j) {
    const W shifted = W(logits[j * logit_stride]) - max;
    const W y = label(j);
    l += y * (lse - shifted);
    backprop[j] = static_cast<C>(std::exp(shifted) / sum - y);
  }
  *loss = static_cast<C>(l);
}

Status ComputeSoftmaxXent(const KernelContext& ctx) {
  const Tensor& features = ctx.input(0);
  const Tensor& labels = ctx.input(1);
  Result<Shape> s = BroadcastShapes(features.shape(), labels.shape());
  if (!s.ok() || s->rank() != 2) {
    return ctx.Error("features ", features.shape().ToString(), " and labels ",
                     labels.shape().ToString(),
                     " must be 2-D or broadcast to a 2-D shape [batch, classes]");
  }
  const int64_t batch = s->dim(0), classes = s->dim(1);
  KILN_ASSIGN_OR_RETURN(Tensor * loss, ctx.AllocateOutput(0, Shape{batch}));
  KILN_ASSIGN_OR_RETURN(Tensor * backprop, ctx.AllocateOutput(1, *s));
  if (classes == 0) {
    return Dispatch<FloatTypes>(features.dtype(), [&](auto tag) {
      using T = typename decltype(tag)::type;
      std::fill_n(MutableComputeData<T>(loss), batch, ComputeType<T>(0));
      return OkStatus();
    });
  }
  // Strides of the broadcast operands over [batch, classes] (0 where one repeats).
  const auto fs = BroadcastStrides(features.shape(), *s);
  const auto ls = BroadcastStrides(labels.shape(), *s);
  return Dispatch<FloatTypes>(features.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    using C = ComputeType<T>;
    const C* f = ComputeData<T>(features);
    const C* y = ComputeData<T>(labels);
    C* lo = MutableComputeData<T>(loss);
    C* bp = MutableComputeData<T>(backprop);
    ctx.threads().ParallelFor(
        batch, std::max<int64_t>(1, 4096 / classes), [&](int64_t b, int64_t e) {
          for (int64_t r = b; r < e; ++r) {
            const C* yr = y + r * ls[0];
            XentRow(
                f + r * fs[0], fs[1], classes,
                [&](int64_t j) { return fn::Wide<C>(yr[j * ls[1]]); }, lo + r, bp + r * classes);
          }
        });
    return OkStatus();
  });
}

Status ComputeSparseSoftmaxXent(const KernelContext& ctx) {
  const Tensor& features = ctx.input(0);
  const Tensor& labels = ctx.input(1);
  if (features.rank() != 2 || labels.rank() != 1 || labels.dim(0) != features.dim(0)) {
    return ctx.Error("features must be [batch, classes] and labels [batch], got ",
                     features.shape().ToString(), " and ", labels.shape().ToString());
  }
  const int64_t batch = features.dim(0), classes = features.dim(1);
  if (classes == 0 && batch > 0) {
    return ctx.Error("features ", features.shape().ToString(), " must have at least one class");
  }
  for (int64_t r = 0; r < batch; ++r) {
    const int64_t label =
        labels.dtype() == DType::kInt32 ? labels.data<int32_t>()[r] : labels.data<int64_t>()[r];
    if (label < 0 || label >= classes) {
      return ctx.Error("labels[", r, "] = ", label, " is outside the valid range of [0, ", classes,
                       ")");
    }
  }
  KILN_ASSIGN_OR_RETURN(Tensor * loss, ctx.AllocateOutput(0, Shape{batch}));
  KILN_ASSIGN_OR_RETURN(Tensor * backprop, ctx.AllocateOutput(1, features.shape()));
  return Dispatch<FloatTypes>(features.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    using C = ComputeType<T>;
    const C* f = ComputeData<T>(features);
    C* lo = MutableComputeData<T>(loss);
    C* bp = MutableComputeData<T>(backprop);
    ctx.threads().ParallelFor(
        batch, std::max<int64_t>(1, 4096 / std::max<int64_t>(1, classes)),
        [&](int64_t b, int64_t e) {
          for (int64_t r = b; r < e; ++r) {
            const int64_t label = labels.dtype() == DType::kInt32 ? labels.data<int32_t>()[r]
                                                                  : labels.data<int64_t>()[r];
            XentRow(
                f + r * classes, 1, classes,
                [label](int64_t j) { return fn::Wide<C>(j == label ? 1 : 0); }, lo + r,
                bp + r * classes);
          }
        });
    return OkStatus();
  });
}

// L2Loss: sum(t^2) / 2 as a scalar (tf.nn.l2_loss); float accumulation for half types.
Status ComputeL2Loss(const KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  return Dispatch<FloatTypes>(x.dtype(), [&](auto tag) -> Status {
    using T = typename decltype(tag)::type;
    using C = ComputeType<T>;
    using W = fn::Wide<C>;
    const C* p = ComputeData<T>(x);
    W sum = 0;
    for (int64_t i = 0, n = x.NumElements(); i < n; ++i) sum += W(p[i]) * W(p[i]);
    KILN_ASSIGN_OR_RETURN(Tensor * out, ctx.AllocateOutput(0, Shape()));
    *MutableComputeData<T>(out) = static_cast<C>(sum / W(2));
    return OkStatus();
  });
}

constexpr KernelEntry kCpu[] = {
    {"SoftmaxCrossEntropyWithLogits", ComputeSoftmaxXent},
    {"SparseSoftmaxCrossEntropyWithLogits", ComputeSparseSoftmaxXent},
    {"L2Loss", ComputeL2Loss},
};

}  // namespace

std::span<const KernelEntry> LossCpuKernels() { return kCpu; }

}  // namespace kiln::exec
