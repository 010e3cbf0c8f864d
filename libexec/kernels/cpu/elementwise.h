// Element-wise ops on the CPU: one compute for every unary op and every binary op with
// numpy broadcasting. An op is a functor template Fn<C> over the compute type C
// (ComputeType<T>: Eigen::half for float16, ...) plus a TypeList of the dtypes it takes:
//
//   template <typename C> struct SquareFn {
//     C operator()(C x) const { return x * x; }
//   };
//   {"Square", "y", kOpElementwise, PrepareUnarySame<RealTypes>},
//   {"Square", ComputeUnary<SquareFn, RealTypes>},
//
// The result type of Fn decides the output dtype (bool for comparisons). Optional members of Fn:
//   static constexpr int kCost;   // relative cost per element (default 1) for threading
//   static Status Check(const KernelContext&, const C* y, int64_t n);  // binary: the right
//       operand; unary: the input. Rejects bad values (integer division by zero) before
//       anything is written.
// Outputs reuse a dying input's buffer when they can (ForwardInputOrAllocateOutput), large
// tensors are split across the model's threads, and the innermost loops are plain loops over
// contiguous runs that the compiler vectorises.
#pragma once

#include <algorithm>
#include <array>
#include <type_traits>

#include "kernels/cpu/vector_math.h"
#include "kernels/elementwise.h"
#include "kernels/kernel_util.h"
#include "kernels/strided_walk.h"
#include "kernels/type_lists.h"

namespace kiln::exec {

namespace elementwise_internal {

template <typename F>
constexpr int64_t MinPerThread() {
  if constexpr (requires { F::kCost; }) {
    return std::max<int64_t>(1024, 32768 / F::kCost);
  } else {
    return 32768;
  }
}

template <typename F, typename C>
Status Check(const KernelContext& ctx, const C* data, int64_t n) {
  if constexpr (requires { F::Check(ctx, data, n); }) {
    return F::Check(ctx, data, n);
  } else {
    return OkStatus();
  }
}

}  // namespace elementwise_internal

template <template <typename> class Fn, typename List>
Status ComputeUnary(const KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  return Dispatch<List>(x.dtype(), [&](auto tag) -> Status {
    using T = typename decltype(tag)::type;
    using C = ComputeType<T>;
    using F = Fn<C>;
    using Out = std::invoke_result_t<F, C>;
    const int64_t n = x.NumElements();
    const C* in = ComputeData<T>(x);
    KILN_RETURN_IF_ERROR(elementwise_internal::Check<F>(ctx, in, n));
    KILN_ASSIGN_OR_RETURN(Tensor * out, ctx.ForwardInputOrAllocateOutput(0, 0, x.shape()));
    Out* o = reinterpret_cast<Out*>(out->raw_data());
    const F f;
    ctx.threads().ParallelFor(
        n, elementwise_internal::MinPerThread<F>(), [&](int64_t begin, int64_t end) {
          if constexpr (std::is_same_v<C, float> && requires { F::VectorF32(in, o, n); }) {
            F::VectorF32(in + begin, o + begin, end - begin);
          } else {
            for (int64_t i = begin; i < end; ++i) o[i] = f(in[i]);
          }
        });
    return OkStatus();
  });
}

namespace elementwise_internal {

// A per-channel operand of few channels (an RGB image's mean and std in a Keras
// Normalization): the walk's runs are `inner` elements long, and one vector call per pixel
// costs more than its arithmetic. The repeating operand tiled to ~1K elements is walked
// against the other one in long runs instead. False where the plan is not of that form.
template <typename F>
bool ShortRunBroadcast(const KernelContext& ctx, const StridedPlan<3>& plan, const float* a,
                       const float* b, float* out) {
  constexpr int64_t kTile = 1024;
  if (plan.rank != 2 || plan.dims[1] >= 64) return false;
  const int64_t inner = plan.dims[1], rows = plan.dims[0];
  const auto& outer = plan.strides[0];
  if (plan.strides[1] != StridedPlan<3>::Offsets{1, 1, 1} || outer[0] != inner) return false;
  const bool b_repeats = outer[1] == inner && outer[2] == 0;
  if (!b_repeats && !(outer[1] == 0 && outer[2] == inner)) return false;
  const int64_t reps = kTile / inner;  // rows per tile
  std::array<float, kTile> tile;
  const float* repeated = (b_repeats ? b : a) + plan.offset[b_repeats ? 2 : 1];
  for (int64_t r = 0; r < reps; ++r) std::copy_n(repeated, inner, tile.data() + r * inner);
  const float* full = (b_repeats ? a : b) + plan.offset[b_repeats ? 1 : 2];
  float* dst = out + plan.offset[0];
  ctx.threads().ParallelFor(rows, std::max<int64_t>(1, MinPerThread<F>() / inner),
                            [&](int64_t begin, int64_t end) {
                              for (int64_t r = begin; r < end; r += reps) {
                                const int64_t at = r * inner, n = std::min(reps, end - r) * inner;
                                if (b_repeats) {
                                  vmath::Binary(F::kVecOp, full + at, tile.data(), dst + at, n);
                                } else {
                                  vmath::Binary(F::kVecOp, tile.data(), full + at, dst + at, n);
                                }
                              }
                            });
  return true;
}

}  // namespace elementwise_internal

// out = f(a, b) for contiguous a and b broadcast as `plan` says (operands: out, a, b).
template <typename F, typename C, typename Out>
void BinaryBroadcast(const KernelContext& ctx, const StridedPlan<3>& plan, const C* a, const C* b,
                     Out* out) {
  if constexpr (std::is_same_v<C, float> && std::is_same_v<Out, float> && requires { F::kVecOp; }) {
    if (elementwise_internal::ShortRunBroadcast<F>(ctx, plan, a, b, out)) return;
  }
  const F f;
  ParallelWalk(plan, ctx.threads(), elementwise_internal::MinPerThread<F>(),
               [&](const auto& off, int64_t n, const auto& s) {
                 Out* dst = out + off[0];
                 const C* ar = a + off[1];
                 const C* br = b + off[2];
                 if constexpr (std::is_same_v<C, float> && std::is_same_v<Out, float> &&
                               requires { F::kVecOp; }) {
                   // The CPU-dispatched vector loops (vector_math.h).
                   if (s[1] != 0 && s[2] != 0) {
                     vmath::Binary(F::kVecOp, ar, br, dst, n);
                   } else if (s[1] != 0) {
                     vmath::BinaryScalarRight(F::kVecOp, ar, br[0], dst, n);
                   } else if (s[2] != 0) {
                     vmath::BinaryScalarLeft(F::kVecOp, ar[0], br, dst, n);
                   } else {
                     const float v = f(ar[0], br[0]);
                     for (int64_t j = 0; j < n; ++j) dst[j] = v;
                   }
                   return;
                 }
                 if (s[1] != 0 && s[2] != 0) {
                   for (int64_t j = 0; j < n; ++j) dst[j] = f(ar[j], br[j]);
                 } else if (s[1] != 0) {
                   const C bv = br[0];
                   for (int64_t j = 0; j < n; ++j) dst[j] = f(ar[j], bv);
                 } else if (s[2] != 0) {
                   const C av = ar[0];
                   for (int64_t j = 0; j < n; ++j) dst[j] = f(av, br[j]);
                 } else {
                   const Out v = f(ar[0], br[0]);
                   for (int64_t j = 0; j < n; ++j) dst[j] = v;
                 }
               });
}

// The broadcast output shape of the step's two inputs, or an error naming both shapes.
Result<Shape> BinaryOutputShape(const KernelContext& ctx);

template <template <typename> class Fn, typename List>
Status ComputeBinary(const KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  const Tensor& y = ctx.input(1);
  if (x.dtype() != y.dtype())
    return ctx.Error("x and y differ in dtype: ", DTypeShortName(x.dtype()), " vs ",
                     DTypeShortName(y.dtype()));
  KILN_ASSIGN_OR_RETURN(Shape shape, BinaryOutputShape(ctx));
  return Dispatch<List>(x.dtype(), [&](auto tag) -> Status {
    using T = typename decltype(tag)::type;
    using C = ComputeType<T>;
    using F = Fn<C>;
    using Out = std::invoke_result_t<F, C, C>;
    const C* a = ComputeData<T>(x);
    const C* b = ComputeData<T>(y);
    KILN_RETURN_IF_ERROR(elementwise_internal::Check<F>(ctx, b, y.NumElements()));
    Tensor* out = nullptr;
    if (x.shape() == shape) {
      KILN_ASSIGN_OR_RETURN(out, ctx.ForwardInputOrAllocateOutput(0, 0, shape));
    } else if (y.shape() == shape) {
      KILN_ASSIGN_OR_RETURN(out, ctx.ForwardInputOrAllocateOutput(1, 0, shape));
    } else {
      KILN_ASSIGN_OR_RETURN(out, ctx.AllocateOutput(0, shape));
    }
    Out* o = reinterpret_cast<Out*>(out->raw_data());
    BinaryBroadcast<F>(ctx, MakeBroadcastPlan<3>(shape, {x.shape(), y.shape()}), a, b, o);
    return OkStatus();
  });
}

}  // namespace kiln::exec
