// More element-wise math: FloorMod, FloorDiv, Pow (broadcasting), Rsqrt, Reciprocal,
// ZerosLike, OnesLike, AddN and Bucketize.
#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <type_traits>
#include <vector>

#include "kernels/cpu/elementwise.h"
#include "kernels/elementwise_functors.h"
#include "kernels/kernel_util.h"

namespace kiln::exec {
namespace {

// ---- ZerosLike, OnesLike ---------------------------------------------------------------------

// TF's CPU kernels: every real type and bool; ZerosLike also strings (empty ones).
using ZerosLikeTypes = NumberBoolStringTypes;
using OnesLikeTypes =
    TypeList<float, double, Half, BFloat16, int8_t, int16_t, int32_t, int64_t, uint8_t, uint16_t,
             uint32_t, uint64_t, bool, std::complex<float>, std::complex<double>>;

template <typename List>
Status PrepareFillLike(PrepareContext& ctx) {
  KILN_RETURN_IF_ERROR(ctx.ExpectInputs(1));
  KILN_PREPARE_ASSIGN(ctx, DType t, ctx.attrs.GetType("T"));
  KILN_RETURN_IF_ERROR(ExpectAttrDTypeIn(ctx, "T", t, List::kDTypes));
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 0, "x", t));
  ctx.outputs = {TensorSpec{t, ctx.inputs[0].shape}};
  return OkStatus();
}

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

Status PrepareAddN(PrepareContext& ctx) {
  KILN_PREPARE_ASSIGN(ctx, int64_t n, ctx.attrs.GetInt("N"));
  if (n < 1) return ctx.Error("attr 'N': expected at least 1, got ", n);
  KILN_PREPARE_ASSIGN(ctx, DType t, ctx.attrs.GetType("T"));
  KILN_RETURN_IF_ERROR(ExpectAttrDTypeIn(ctx, "T", t, NumberTypes::kDTypes));
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

using BucketizeTypes = TypeList<int32_t, int64_t, float, double>;

struct BucketizeState : OpState {
  std::vector<float> boundaries;
};

Status PrepareBucketize(PrepareContext& ctx) {
  KILN_RETURN_IF_ERROR(ctx.ExpectInputs(1));
  KILN_PREPARE_ASSIGN(ctx, DType t, ctx.attrs.GetType("T"));
  KILN_RETURN_IF_ERROR(ExpectAttrDTypeIn(ctx, "T", t, BucketizeTypes::kDTypes));
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 0, "input", t));
  auto state = std::make_shared<BucketizeState>();
  KILN_PREPARE_ASSIGN(ctx, state->boundaries, ctx.attrs.GetFloatList("boundaries"));
  if (!std::is_sorted(state->boundaries.begin(), state->boundaries.end()))
    return ctx.Error("attr 'boundaries': expected sorted boundaries");
  ctx.outputs = {TensorSpec{DType::kInt32, ctx.inputs[0].shape}};
  ctx.state = std::move(state);
  return OkStatus();
}

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

constexpr OpDefinition kDefs[] = {
    {"FloorMod", "z", kOpElementwise, PrepareBinarySame<RealTypes>},
    {"FloorDiv", "z", kOpElementwise, PrepareBinarySame<RealTypes>},
    {"Pow", "z", kOpElementwise, PrepareBinarySame<SignedNumberTypes>},
    {"Rsqrt", "y", kOpElementwise, PrepareUnarySame<FloatAndComplexTypes>},
    {"Reciprocal", "y", kOpElementwise, PrepareUnarySame<SignedNumberTypes>},
    {"Inv", "y", kOpElementwise, PrepareUnarySame<SignedNumberTypes>},  // Reciprocal's old name
    {"ZerosLike", "y", kOpElementwise, PrepareFillLike<ZerosLikeTypes>},
    {"OnesLike", "y", kOpElementwise, PrepareFillLike<OnesLikeTypes>},
    {"AddN", "sum", kOpElementwise, PrepareAddN},
    {"Bucketize", "output", kOpFreshOutputs, PrepareBucketize},
};

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

std::span<const OpDefinition> MathArithOpDefs() { return kDefs; }
std::span<const KernelEntry> MathArithCpuKernels() { return kCpu; }

}  // namespace kiln::exec
