// Element-wise arithmetic with numpy broadcasting, unary math, and Cast.
#include <string>

#include "kernels/eigen_functors.h"
#include "kernels/elementwise.h"
#include "kernels/elementwise_functors.h"
#include "kernels/kernel_util.h"
#include "kernels/op_families.h"

namespace kiln::exec {
namespace {

template <typename T>
T* Data(const Tensor& t) {
  return t.data<T>();
}

// ---- Cast ------------------------------------------------------------------------------------

#define KILN_CAST_TYPES float, double, int8_t, int16_t, int32_t, int64_t, uint8_t, uint16_t, bool
constexpr std::initializer_list<DType> kCastDTypes = {DType::kFloat, DType::kDouble, DType::kInt8,
                                                      DType::kInt16, DType::kInt32,  DType::kInt64,
                                                      DType::kUInt8, DType::kUInt16, DType::kBool};

Status PrepareCast(PrepareContext& ctx) {
  KILN_RETURN_IF_ERROR(ctx.ExpectInputs(1));
  KILN_PREPARE_ASSIGN(ctx, DType src, ctx.attrs.GetType("SrcT"));
  KILN_PREPARE_ASSIGN(ctx, DType dst, ctx.attrs.GetType("DstT"));
  if (src != dst) {
    KILN_RETURN_IF_ERROR(ExpectAttrDTypeIn(ctx, "SrcT", src, kCastDTypes));
    KILN_RETURN_IF_ERROR(ExpectAttrDTypeIn(ctx, "DstT", dst, kCastDTypes));
  }
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 0, "x", src));
  ctx.outputs = {TensorSpec{dst, ctx.inputs[0].shape}};
  ctx.state = std::make_shared<TypedOpState<DType>>(dst);
  return OkStatus();
}

Status ComputeCast(const KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  const DType dst = ctx.state<TypedOpState<DType>>().value;
  if (x.dtype() == dst) {
    ctx.SetOutput(0, x);
    return OkStatus();
  }
  KILN_ASSIGN_OR_RETURN(Tensor * out, ctx.ForwardInputOrAllocateOutput(0, 0, x.shape()));
  return DispatchDType<KILN_CAST_TYPES>(x.dtype(), [&](auto src_tag) {
    using Src = typename decltype(src_tag)::type;
    return DispatchDType<KILN_CAST_TYPES>(dst, [&](auto dst_tag) {
      using Dst = typename decltype(dst_tag)::type;
      functor::CastFunctor<EigenCpuDevice, Src, Dst>()(
          Cpu(), functor::ConstFlat<Src>(Data<Src>(x), x.NumElements()),
          functor::Flat<Dst>(Data<Dst>(*out), out->NumElements()));
      return OkStatus();
    });
  });
}

// ---- tables ----------------------------------------------------------------------------------

using AddTypes = RealAndStringTypes;

constexpr OpDefinition kDefs[] = {
    {"Add", "z", kOpElementwise, PrepareBinarySame<AddTypes>},
    {"AddV2", "z", kOpElementwise, PrepareBinarySame<AddTypes>},
    {"Sub", "z", kOpElementwise, PrepareBinarySame<RealTypes>},
    {"Mul", "z", kOpElementwise, PrepareBinarySame<RealTypes>},
    {"RealDiv", "z", kOpElementwise, PrepareBinarySame<RealTypes>},
    {"Maximum", "z", kOpElementwise, PrepareBinarySame<RealTypes>},
    {"Minimum", "z", kOpElementwise, PrepareBinarySame<RealTypes>},
    {"Neg", "y", kOpElementwise, PrepareUnarySame<SignedRealTypes>},
    {"Abs", "y", kOpElementwise, PrepareUnarySame<SignedRealTypes>},
    {"Square", "y", kOpElementwise, PrepareUnarySame<RealTypes>},
    {"Sqrt", "y", kOpElementwise, PrepareUnarySame<FloatTypes>},
    {"Exp", "y", kOpElementwise, PrepareUnarySame<FloatTypes>},
    {"Log", "y", kOpElementwise, PrepareUnarySame<FloatTypes>},
    {"Tanh", "y", kOpElementwise, PrepareUnarySame<FloatTypes>},
    {"Sigmoid", "y", kOpElementwise, PrepareUnarySame<FloatTypes>},
    {"Cast", "y", kOpNone, PrepareCast},
};

constexpr KernelEntry kCpu[] = {
    {"Add", ComputeBinary<fn::Add, AddTypes>},
    {"AddV2", ComputeBinary<fn::Add, AddTypes>},
    {"Sub", ComputeBinary<fn::Sub, RealTypes>},
    {"Mul", ComputeBinary<fn::Mul, RealTypes>},
    {"RealDiv", ComputeBinary<fn::Div, RealTypes>},
    {"Maximum", ComputeBinary<fn::Maximum, RealTypes>},
    {"Minimum", ComputeBinary<fn::Minimum, RealTypes>},
    {"Neg", ComputeUnary<fn::Neg, SignedRealTypes>},
    {"Abs", ComputeUnary<fn::Abs, SignedRealTypes>},
    {"Square", ComputeUnary<fn::Square, RealTypes>},
    {"Sqrt", ComputeUnary<fn::Sqrt, FloatTypes>},
    {"Exp", ComputeUnary<fn::Exp, FloatTypes>},
    {"Log", ComputeUnary<fn::Log, FloatTypes>},
    {"Tanh", ComputeUnary<fn::Tanh, FloatTypes>},
    {"Sigmoid", ComputeUnary<fn::Sigmoid, FloatTypes>},
    {"Cast", ComputeCast},
};

}  // namespace

std::span<const OpDefinition> MathOpDefs() { return kDefs; }
std::span<const KernelEntry> MathCpuKernels() { return kCpu; }

}  // namespace kiln::exec
