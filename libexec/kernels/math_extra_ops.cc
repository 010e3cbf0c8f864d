// More element-wise math: FloorMod, FloorDiv, Pow (broadcasting), Rsqrt, Reciprocal,
// ZerosLike, OnesLike, and AddN.
#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <type_traits>

#include "kernels/elementwise.h"
#include "kernels/elementwise_functors.h"
#include "kernels/kernel_util.h"
#include "kernels/op_families.h"

namespace kiln::exec {
namespace {

// ---- ZerosLike, OnesLike ---------------------------------------------------------------------

constexpr std::initializer_list<DType> kFillDTypes = {DType::kFloat, DType::kDouble, DType::kInt32,
                                                      DType::kInt64, DType::kBool};
#define KILN_FILL_TYPES float, double, int32_t, int64_t, bool

Status PrepareFillLike(PrepareContext& ctx) {
  KILN_RETURN_IF_ERROR(ctx.ExpectInputs(1));
  KILN_PREPARE_ASSIGN(ctx, DType t, ctx.attrs.GetType("T"));
  KILN_RETURN_IF_ERROR(ExpectAttrDTypeIn(ctx, "T", t, kFillDTypes));
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 0, "x", t));
  ctx.outputs = {TensorSpec{t, ctx.inputs[0].shape}};
  return OkStatus();
}

template <int kValue>
Status ComputeFillLike(const KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  KILN_ASSIGN_OR_RETURN(Tensor * out, ctx.ForwardInputOrAllocateOutput(0, 0, x.shape()));
  return DispatchDType<KILN_FILL_TYPES>(x.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    std::fill_n(out->data<T>(), out->NumElements(), T(kValue));
    return OkStatus();
  });
}

// ---- AddN ------------------------------------------------------------------------------------

Status PrepareAddN(PrepareContext& ctx) {
  KILN_PREPARE_ASSIGN(ctx, int64_t n, ctx.attrs.GetInt("N"));
  if (n < 1) return ctx.Error("attr 'N': expected at least 1, got ", n);
  KILN_PREPARE_ASSIGN(ctx, DType t, ctx.attrs.GetType("T"));
  KILN_RETURN_IF_ERROR(ExpectAttrDTypeIn(ctx, "T", t, kRealDTypes));
  KILN_RETURN_IF_ERROR(ctx.ExpectInputs(static_cast<int>(n)));
  PartialShape shape = ctx.inputs[0].shape;
  for (int i = 0; i < n; ++i) {
    KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, i, internal::StrCat("inputs:", i), t));
    Result<PartialShape> merged = shape.MergeWith(ctx.inputs[i].shape);
    if (!merged.ok()) {
      return ctx.Error("all inputs must have the same shape: input 0 has ",
                       ctx.inputs[0].shape.ToPythonString(), ", input ", i, " has ",
                       ctx.inputs[i].shape.ToPythonString());
    }
    shape = *merged;
  }
  ctx.outputs = {TensorSpec{t, shape}};
  return OkStatus();
}

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
  return DispatchDType<KILN_REAL_TYPES>(first.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    T* o = out->data<T>();
    const int64_t n = out->NumElements();
    // Block by block, every input's block is read before the output's is written, so the
    // output may share memory with any input. Summed in input order.
    constexpr int64_t kBlock = 256;
    T acc[kBlock];
    for (int64_t j0 = 0; j0 < n; j0 += kBlock) {
      const int64_t len = std::min(kBlock, n - j0);
      std::copy_n(first.data<T>() + j0, len, acc);
      for (int i = 1; i < ctx.num_inputs(); ++i) {
        const T* in = ctx.input(i).data<T>() + j0;
        for (int64_t j = 0; j < len; ++j) acc[j] += in[j];
      }
      std::copy_n(acc, len, o + j0);
    }
    return OkStatus();
  });
}

// ---- tables ----------------------------------------------------------------------------------

constexpr OpDefinition kDefs[] = {
    {"FloorMod", "z", kOpElementwise, PrepareBinarySame<RealTypes>},
    {"FloorDiv", "z", kOpElementwise, PrepareBinarySame<RealTypes>},
    {"Pow", "z", kOpElementwise, PrepareBinarySame<SignedRealTypes>},
    {"Rsqrt", "y", kOpElementwise, PrepareUnarySame<FloatTypes>},
    {"Reciprocal", "y", kOpElementwise, PrepareUnarySame<SignedRealTypes>},
    {"ZerosLike", "y", kOpElementwise, PrepareFillLike},
    {"OnesLike", "y", kOpElementwise, PrepareFillLike},
    {"AddN", "sum", kOpElementwise, PrepareAddN},
};

constexpr KernelEntry kCpu[] = {
    {"FloorMod", ComputeBinary<fn::FloorMod, RealTypes>},
    {"FloorDiv", ComputeBinary<fn::FloorDiv, RealTypes>},
    {"Pow", ComputeBinary<fn::Pow, SignedRealTypes>},
    {"Rsqrt", ComputeUnary<fn::Rsqrt, FloatTypes>},
    {"Reciprocal", ComputeUnary<fn::Reciprocal, SignedRealTypes>},
    {"ZerosLike", ComputeFillLike<0>},
    {"OnesLike", ComputeFillLike<1>},
    {"AddN", ComputeAddN},
};

}  // namespace

std::span<const OpDefinition> MathExtraOpDefs() { return kDefs; }
std::span<const KernelEntry> MathExtraCpuKernels() { return kCpu; }

}  // namespace kiln::exec
