// The CPU kernels of the ops in kernels/math_arith_ops.cc.
#include "kernels/math_arith_ops.h"

#include <algorithm>
#include <string>
#include <type_traits>
#include <vector>

#include "kernels/cpu/elementwise.h"
#include "kernels/elementwise_functors.h"
#include "kernels/kernel_util.h"
#include "kernels/type_lists.h"

namespace kiln::exec {
namespace {

using math_arith::BucketizeState;
using math_arith::BucketizeTypes;
using math_arith::OnesLikeTypes;
using math_arith::ZerosLikeTypes;

// ---- ZerosLike, OnesLike ---------------------------------------------------------------------

template <int kValue, typename List>
Status ComputeFillLike(const KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  KILN_ASSIGN_OR_RETURN(Tensor * out, ctx.ForwardInputOrAllocateOutput(0, 0, x.shape()));
  return Dispatch<List>(x.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (std::is_same_v<T, std::string>) {
      std::fill_n(out->data<T>(), out->NumElements(), std::string());
    } else {
      using C = ComputeType<T>;
      std::fill_n(MutableComputeData<T>(out), out->NumElements(), static_cast<C>(kValue));
    }
    return OkStatus();
  });
}

// ---- AddN ------------------------------------------------------------------------------------

Status ComputeAddN(const KernelContext& ctx) {
  const Tensor& first = ctx.input(0);
  for (int i = 1; i < ctx.num_inputs(); ++i) {
    if (ctx.input(i).shape() != first.shape()) {
      return ctx.Error("all inputs must have the same shape: input 0 has ",
                       first.shape().ToString(), ", input ", i, " has ",
                       ctx.input(i).shape().ToString());
    }
  }
  KILN_ASSIGN_OR_RETURN(Tensor * out, ctx.ForwardInputOrAllocateOutput(0, 0, first.shape()));
  return Dispatch<NumberTypes>(first.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    using C = ComputeType<T>;
    // half and bfloat16 sum in float and round once; integers wrap.
    using Acc = std::conditional_t<kIsFloating<C> && !std::is_same_v<C, double>, float, C>;
    C* o = MutableComputeData<T>(out);
    const int64_t n = out->NumElements();
    // Block by block, every input's block is read before the output's is written, so the
    // output may share memory with any input. Summed in input order.
    constexpr int64_t kBlock = 256;
    Acc acc[kBlock];
    for (int64_t j0 = 0; j0 < n; j0 += kBlock) {
      const int64_t len = std::min(kBlock, n - j0);
      const C* in0 = ComputeData<T>(first) + j0;
      for (int64_t j = 0; j < len; ++j) acc[j] = static_cast<Acc>(in0[j]);
      for (int i = 1; i < ctx.num_inputs(); ++i) {
        const C* in = ComputeData<T>(ctx.input(i)) + j0;
        for (int64_t j = 0; j < len; ++j) acc[j] = fn::Add<Acc>()(acc[j], static_cast<Acc>(in[j]));
      }
      for (int64_t j = 0; j < len; ++j) o[j0 + j] = static_cast<C>(acc[j]);
    }
    return OkStatus();
  });
}

// ---- Bucketize -------------------------------------------------------------------------------

// The index of the first boundary above each value (values equal to a boundary go right), as
// TF's std::upper_bound over the float boundaries.
Status ComputeBucketize(const KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  const std::vector<float>& bounds = ctx.state<BucketizeState>().boundaries;
  KILN_ASSIGN_OR_RETURN(Tensor * out, ctx.AllocateOutput(0, x.shape()));
  return Dispatch<BucketizeTypes>(x.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T* in = x.data<T>();
    int32_t* o = out->data<int32_t>();
    ctx.threads().ParallelFor(x.NumElements(), 4096, [&](int64_t begin, int64_t end) {
      for (int64_t i = begin; i < end; ++i) {
        const T value = in[i];
        o[i] = static_cast<int32_t>(std::upper_bound(bounds.begin(), bounds.end(), value,
                                                     [](const T& a, float b) { return a < b; }) -
                                    bounds.begin());
      }
    });
    return OkStatus();
  });
}

// ---- tables ----------------------------------------------------------------------------------

constexpr KernelEntry kCpu[] = {
    {"FloorMod", ComputeBinary<fn::FloorMod, RealTypes>},
    {"FloorDiv", ComputeBinary<fn::FloorDiv, RealTypes>},
    {"Pow", ComputeBinary<fn::Pow, SignedNumberTypes>},
    {"Rsqrt", ComputeUnary<fn::Rsqrt, FloatAndComplexTypes>},
    {"Reciprocal", ComputeUnary<fn::Reciprocal, SignedNumberTypes>},
    {"Inv", ComputeUnary<fn::Reciprocal, SignedNumberTypes>},
    {"ZerosLike", ComputeFillLike<0, ZerosLikeTypes>},
    {"OnesLike", ComputeFillLike<1, OnesLikeTypes>},
    {"AddN", ComputeAddN},
    {"Bucketize", ComputeBucketize},
};

}  // namespace

std::span<const KernelEntry> MathArithCpuKernels() { return kCpu; }

}  // namespace kiln::exec
