// Element-wise arithmetic with numpy broadcasting, unary math, MatMul and Cast.
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

// ---- MatMul ----------------------------------------------------------------------------------

struct MatMulState : OpState {
  bool transpose_a = false;
  bool transpose_b = false;
};

std::string BoolName(bool b) { return b ? "true" : "false"; }

Status PrepareMatMul(PrepareContext& ctx) {
  KILN_RETURN_IF_ERROR(ctx.ExpectInputs(2));
  KILN_PREPARE_ASSIGN(ctx, DType t, ctx.attrs.GetType("T"));
  KILN_RETURN_IF_ERROR(ExpectAttrDTypeIn(ctx, "T", t, kRealDTypes));
  auto state = std::make_shared<MatMulState>();
  KILN_PREPARE_ASSIGN(ctx, state->transpose_a, ctx.attrs.GetBool("transpose_a", false));
  KILN_PREPARE_ASSIGN(ctx, state->transpose_b, ctx.attrs.GetBool("transpose_b", false));
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 0, "a", t));
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 1, "b", t));
  KILN_RETURN_IF_ERROR(ExpectInputRank(ctx, 0, "a", 2));
  KILN_RETURN_IF_ERROR(ExpectInputRank(ctx, 1, "b", 2));
  const PartialShape& a = ctx.inputs[0].shape;
  const PartialShape& b = ctx.inputs[1].shape;
  int64_t m = -1, n = -1, ka = -1, kb = -1;
  if (!a.unknown_rank()) {
    m = a.dim(state->transpose_a ? 1 : 0);
    ka = a.dim(state->transpose_a ? 0 : 1);
  }
  if (!b.unknown_rank()) {
    kb = b.dim(state->transpose_b ? 1 : 0);
    n = b.dim(state->transpose_b ? 0 : 1);
  }
  if (ka >= 0 && kb >= 0 && ka != kb) {
    return ctx.Error("inner dimensions do not match: a has shape ", a.ToPythonString(),
                     ", b has shape ", b.ToPythonString(),
                     " (transpose_a=", BoolName(state->transpose_a),
                     ", transpose_b=", BoolName(state->transpose_b), ")");
  }
  ctx.outputs = {TensorSpec{t, PartialShape{m, n}}};
  ctx.state = std::move(state);
  return OkStatus();
}

Status ComputeMatMul(const KernelContext& ctx) {
  const auto& st = ctx.state<MatMulState>();
  const Tensor& a = ctx.input(0);
  const Tensor& b = ctx.input(1);
  if (a.rank() != 2 || b.rank() != 2) {
    return ctx.Error("MatMul needs 2-D inputs, got a ", a.shape().ToString(), " and b ",
                     b.shape().ToString());
  }
  const int64_t m = a.dim(st.transpose_a ? 1 : 0), ka = a.dim(st.transpose_a ? 0 : 1);
  const int64_t kb = b.dim(st.transpose_b ? 1 : 0), n = b.dim(st.transpose_b ? 0 : 1);
  if (ka != kb) {
    return ctx.Error("inner dimensions do not match: a has shape ", a.shape().ToString(),
                     ", b has shape ", b.shape().ToString(),
                     " (transpose_a=", BoolName(st.transpose_a),
                     ", transpose_b=", BoolName(st.transpose_b), ")");
  }
  KILN_ASSIGN_OR_RETURN(Tensor * out, ctx.AllocateOutput(0, Shape{m, n}));
  return DispatchDType<KILN_REAL_TYPES>(a.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    if (out->NumElements() == 0) return OkStatus();
    if (ka == 0) {  // an empty sum
      std::fill_n(Data<T>(*out), out->NumElements(), T(0));
      return OkStatus();
    }
    functor::MatMulFunctor<EigenCpuDevice, T>()(
        Cpu(), functor::ConstMatrix<T>(Data<T>(a), a.dim(0), a.dim(1)),
        functor::ConstMatrix<T>(Data<T>(b), b.dim(0), b.dim(1)),
        functor::Matrix<T>(Data<T>(*out), m, n), st.transpose_a, st.transpose_b);
    return OkStatus();
  });
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
    {"MatMul", "product", kOpFreshOutputs, PrepareMatMul},
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
    {"MatMul", ComputeMatMul},
    {"Cast", ComputeCast},
};

}  // namespace

std::span<const OpDefinition> MathOpDefs() { return kDefs; }
std::span<const KernelEntry> MathCpuKernels() { return kCpu; }

}  // namespace kiln::exec
