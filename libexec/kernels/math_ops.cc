// Element-wise arithmetic with numpy broadcasting, unary math, MatMul and Cast.
#include <string>

#include "kernels/eigen_functors.h"
#include "kernels/kernel_util.h"
#include "kernels/op_families.h"

namespace kiln::exec {
namespace {

template <typename T>
T* Data(const Tensor& t) {
  return t.data<T>();
}

// ---- binary element-wise --------------------------------------------------------------------

// x, y of dtype T (one of the real dtypes, or string where `allow_string`), broadcast.
Status PrepareBinary(PrepareContext& ctx, bool allow_string) {
  KILN_RETURN_IF_ERROR(ctx.ExpectInputs(2));
  KILN_PREPARE_ASSIGN(ctx, DType t, ctx.attrs.GetType("T"));
  if (allow_string) {
    KILN_RETURN_IF_ERROR(ExpectAttrDTypeIn(
        ctx, "T", t,
        {DType::kFloat, DType::kDouble, DType::kInt32, DType::kInt64, DType::kString}));
  } else {
    KILN_RETURN_IF_ERROR(ExpectAttrDTypeIn(ctx, "T", t, kRealDTypes));
  }
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 0, "x", t));
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 1, "y", t));
  KILN_PREPARE_ASSIGN(ctx, PartialShape shape,
                      BroadcastPartialShapes(ctx.inputs[0].shape, ctx.inputs[1].shape));
  ctx.outputs = {TensorSpec{t, shape}};
  return OkStatus();
}

Status PrepareAdd(PrepareContext& ctx) { return PrepareBinary(ctx, /*allow_string=*/true); }
Status PrepareArith(PrepareContext& ctx) { return PrepareBinary(ctx, /*allow_string=*/false); }

enum BinaryExtra { kPlain, kStringConcat, kCheckIntZero };

template <template <typename> class Fn, BinaryExtra kExtra = kPlain>
Status ComputeBinary(const KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  const Tensor& y = ctx.input(1);
  if (x.dtype() != y.dtype()) {
    return ctx.Error("x and y differ in dtype: ", DTypeShortName(x.dtype()), " vs ",
                     DTypeShortName(y.dtype()));
  }
  Result<Shape> shape = BroadcastShapes(x.shape(), y.shape());
  if (!shape.ok()) return ctx.Error(shape.status().message());
  Tensor out(x.dtype(), *shape);
  const BroadcastPlan plan = MakeBroadcastPlan(x.shape(), y.shape(), *shape);
  if constexpr (kExtra == kStringConcat) {
    if (x.dtype() == DType::kString) {
      functor::BroadcastLoop(plan, Data<std::string>(x), Data<std::string>(y),
                             Data<std::string>(out),
                             [](const std::string& a, const std::string& b) { return a + b; });
      ctx.set_output(0, std::move(out));
      return OkStatus();
    }
  }
  KILN_RETURN_IF_ERROR(DispatchDType<KILN_REAL_TYPES>(x.dtype(), [&](auto tag) -> Status {
    using T = typename decltype(tag)::type;
    if constexpr (kExtra == kCheckIntZero && std::is_integral_v<T>) {
      for (T v : y.flat<T>()) {
        if (v == 0) return ctx.Error("integer division by zero");
      }
    }
    functor::BinaryFunctor<CpuDevice, Fn<T>, T>()(Cpu(), plan, Data<T>(x), Data<T>(y),
                                                  Data<T>(out));
    return OkStatus();
  }));
  ctx.set_output(0, std::move(out));
  return OkStatus();
}

// ---- unary element-wise ---------------------------------------------------------------------

template <typename T>
using NegFn = Eigen::internal::scalar_opposite_op<T>;
template <typename T>
using AbsFn = Eigen::internal::scalar_abs_op<T>;
template <typename T>
using SquareFn = Eigen::internal::scalar_square_op<T>;
template <typename T>
using SqrtFn = Eigen::internal::scalar_sqrt_op<T>;
template <typename T>
using ExpFn = Eigen::internal::scalar_exp_op<T>;
template <typename T>
using LogFn = Eigen::internal::scalar_log_op<T>;
template <typename T>
using TanhFn = Eigen::internal::scalar_tanh_op<T>;
template <typename T>
using SigmoidFn = Eigen::internal::scalar_logistic_op<T>;

Status PrepareUnary(PrepareContext& ctx, std::initializer_list<DType> allowed) {
  KILN_RETURN_IF_ERROR(ctx.ExpectInputs(1));
  KILN_PREPARE_ASSIGN(ctx, DType t, ctx.attrs.GetType("T"));
  KILN_RETURN_IF_ERROR(ExpectAttrDTypeIn(ctx, "T", t, allowed));
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 0, "x", t));
  ctx.outputs = {TensorSpec{t, ctx.inputs[0].shape}};
  return OkStatus();
}
Status PrepareUnaryReal(PrepareContext& ctx) { return PrepareUnary(ctx, kRealDTypes); }
Status PrepareUnaryFloat(PrepareContext& ctx) { return PrepareUnary(ctx, kFloatDTypes); }

template <template <typename> class Fn, typename... Ts>
Status ComputeUnary(const KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  Tensor out(x.dtype(), x.shape());
  KILN_RETURN_IF_ERROR(DispatchDType<Ts...>(x.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    functor::UnaryFunctor<CpuDevice, Fn<T>, T>()(Cpu(),
                                                 functor::ConstFlat<T>(Data<T>(x), x.NumElements()),
                                                 functor::Flat<T>(Data<T>(out), out.NumElements()));
    return OkStatus();
  }));
  ctx.set_output(0, std::move(out));
  return OkStatus();
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
  Tensor out(a.dtype(), Shape{m, n});
  KILN_RETURN_IF_ERROR(DispatchDType<KILN_REAL_TYPES>(a.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    if (ka == 0 || out.NumElements() == 0)
      return OkStatus();  // an empty sum: the zeros Tensor() starts with
    functor::MatMulFunctor<CpuDevice, T>()(
        Cpu(), functor::ConstMatrix<T>(Data<T>(a), a.dim(0), a.dim(1)),
        functor::ConstMatrix<T>(Data<T>(b), b.dim(0), b.dim(1)),
        functor::Matrix<T>(Data<T>(out), m, n), st.transpose_a, st.transpose_b);
    return OkStatus();
  }));
  ctx.set_output(0, std::move(out));
  return OkStatus();
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
    ctx.set_output(0, x);
    return OkStatus();
  }
  Tensor out(dst, x.shape());
  KILN_RETURN_IF_ERROR(DispatchDType<KILN_CAST_TYPES>(x.dtype(), [&](auto src_tag) {
    using Src = typename decltype(src_tag)::type;
    return DispatchDType<KILN_CAST_TYPES>(dst, [&](auto dst_tag) {
      using Dst = typename decltype(dst_tag)::type;
      functor::CastFunctor<CpuDevice, Src, Dst>()(
          Cpu(), functor::ConstFlat<Src>(Data<Src>(x), x.NumElements()),
          functor::Flat<Dst>(Data<Dst>(out), out.NumElements()));
      return OkStatus();
    });
  }));
  ctx.set_output(0, std::move(out));
  return OkStatus();
}

// ---- tables ----------------------------------------------------------------------------------

constexpr OpDefinition kDefs[] = {
    {"Add", "z", kOpNone, PrepareAdd},
    {"AddV2", "z", kOpNone, PrepareAdd},
    {"Sub", "z", kOpNone, PrepareArith},
    {"Mul", "z", kOpNone, PrepareArith},
    {"RealDiv", "z", kOpNone, PrepareArith},
    {"Maximum", "z", kOpNone, PrepareArith},
    {"Minimum", "z", kOpNone, PrepareArith},
    {"Neg", "y", kOpNone, PrepareUnaryReal},
    {"Abs", "y", kOpNone, PrepareUnaryReal},
    {"Square", "y", kOpNone, PrepareUnaryReal},
    {"Sqrt", "y", kOpNone, PrepareUnaryFloat},
    {"Exp", "y", kOpNone, PrepareUnaryFloat},
    {"Log", "y", kOpNone, PrepareUnaryFloat},
    {"Tanh", "y", kOpNone, PrepareUnaryFloat},
    {"Sigmoid", "y", kOpNone, PrepareUnaryFloat},
    {"MatMul", "product", kOpNone, PrepareMatMul},
    {"Cast", "y", kOpNone, PrepareCast},
};

constexpr KernelEntry kCpu[] = {
    {"Add", ComputeBinary<functor::AddFn, kStringConcat>},
    {"AddV2", ComputeBinary<functor::AddFn, kStringConcat>},
    {"Sub", ComputeBinary<functor::SubFn>},
    {"Mul", ComputeBinary<functor::MulFn>},
    {"RealDiv", ComputeBinary<functor::DivFn, kCheckIntZero>},
    {"Maximum", ComputeBinary<functor::MaxFn>},
    {"Minimum", ComputeBinary<functor::MinFn>},
    {"Neg", ComputeUnary<NegFn, KILN_REAL_TYPES>},
    {"Abs", ComputeUnary<AbsFn, KILN_REAL_TYPES>},
    {"Square", ComputeUnary<SquareFn, KILN_REAL_TYPES>},
    {"Sqrt", ComputeUnary<SqrtFn, KILN_FLOAT_TYPES>},
    {"Exp", ComputeUnary<ExpFn, KILN_FLOAT_TYPES>},
    {"Log", ComputeUnary<LogFn, KILN_FLOAT_TYPES>},
    {"Tanh", ComputeUnary<TanhFn, KILN_FLOAT_TYPES>},
    {"Sigmoid", ComputeUnary<SigmoidFn, KILN_FLOAT_TYPES>},
    {"MatMul", ComputeMatMul},
    {"Cast", ComputeCast},
};

}  // namespace

std::span<const OpDefinition> MathOpDefs() { return kDefs; }
std::span<const KernelEntry> MathCpuKernels() { return kCpu; }

}  // namespace kiln::exec
