// More element-wise math: FloorMod, FloorDiv, Pow (broadcasting), Rsqrt, Reciprocal,
// ZerosLike, OnesLike, and AddN.
#include <cmath>
#include <limits>
#include <string>
#include <type_traits>

#include "kernels/eigen_functors.h"
#include "kernels/kernel_util.h"
#include "kernels/op_families.h"

namespace kiln::exec {
namespace {

// ---- element functors ------------------------------------------------------------------------

// Python's %: the result takes the sign of the divisor. Integer divisors are checked for zero
// before this runs.
template <typename T>
struct FloorModFn {
  T operator()(T x, T y) const {
    if constexpr (std::is_integral_v<T>) {
      if (y == T(-1)) return T(0);  // x % -1 overflows for the lowest x
      T r = x % y;
      return (r != 0 && ((r < 0) != (y < 0))) ? T(r + y) : r;
    } else {
      T r = std::fmod(x, y);
      return (r != T(0) && ((r < T(0)) != (y < T(0)))) ? T(r + y) : r;
    }
  }
};

// Python's //: rounds towards negative infinity.
template <typename T>
struct FloorDivFn {
  T operator()(T x, T y) const {
    if constexpr (std::is_integral_v<T>) {
      using U = std::make_unsigned_t<T>;
      if (y == T(-1)) return static_cast<T>(U(0) - static_cast<U>(x));  // wraps like TF
      T q = x / y;
      return (x % y != 0 && ((x < 0) != (y < 0))) ? T(q - 1) : q;
    } else {
      return std::floor(x / y);
    }
  }
};

// Integer powers by squaring (negative exponents are rejected before this runs).
template <typename T>
struct PowFn {
  T operator()(T x, T y) const {
    if constexpr (std::is_integral_v<T>) {
      using U = std::make_unsigned_t<T>;
      U result = 1, base = static_cast<U>(x);  // unsigned: overflow wraps, no UB
      for (T e = y; e > 0; e >>= 1) {
        if (e & 1) result *= base;
        base *= base;
      }
      return static_cast<T>(result);
    } else {
      return std::pow(x, y);
    }
  }
};

template <typename T>
using RsqrtFn = Eigen::internal::scalar_rsqrt_op<T>;
template <typename T>
using ReciprocalFn = Eigen::internal::scalar_inverse_op<T>;

// ---- binary ----------------------------------------------------------------------------------

Status PrepareBinary(PrepareContext& ctx) {
  KILN_RETURN_IF_ERROR(ctx.ExpectInputs(2));
  KILN_PREPARE_ASSIGN(ctx, DType t, ctx.attrs.GetType("T"));
  KILN_RETURN_IF_ERROR(ExpectAttrDTypeIn(ctx, "T", t, kRealDTypes));
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 0, "x", t));
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 1, "y", t));
  KILN_PREPARE_ASSIGN(ctx, PartialShape shape,
                      BroadcastPartialShapes(ctx.inputs[0].shape, ctx.inputs[1].shape));
  ctx.outputs = {TensorSpec{t, shape}};
  return OkStatus();
}

enum IntCheck { kNoCheck, kNonZeroDivisor, kNonNegativeExponent };

template <template <typename> class Fn, IntCheck kCheck>
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
  KILN_RETURN_IF_ERROR(DispatchDType<KILN_REAL_TYPES>(x.dtype(), [&](auto tag) -> Status {
    using T = typename decltype(tag)::type;
    if constexpr (std::is_integral_v<T> && kCheck == kNonZeroDivisor) {
      for (T v : y.flat<T>()) {
        if (v == 0) return ctx.Error("integer division by zero");
      }
    }
    if constexpr (std::is_integral_v<T> && kCheck == kNonNegativeExponent) {
      for (T v : y.flat<T>()) {
        if (v < 0) return ctx.Error("integers to negative integer powers are not allowed");
      }
    }
    functor::BinaryFunctor<CpuDevice, Fn<T>, T>()(Cpu(), plan, x.data<T>(), y.data<T>(),
                                                  out.data<T>());
    return OkStatus();
  }));
  ctx.set_output(0, std::move(out));
  return OkStatus();
}

// ---- unary -----------------------------------------------------------------------------------

Status PrepareUnary(PrepareContext& ctx, std::initializer_list<DType> allowed) {
  KILN_RETURN_IF_ERROR(ctx.ExpectInputs(1));
  KILN_PREPARE_ASSIGN(ctx, DType t, ctx.attrs.GetType("T"));
  KILN_RETURN_IF_ERROR(ExpectAttrDTypeIn(ctx, "T", t, allowed));
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 0, "x", t));
  ctx.outputs = {TensorSpec{t, ctx.inputs[0].shape}};
  return OkStatus();
}
Status PrepareUnaryFloat(PrepareContext& ctx) { return PrepareUnary(ctx, kFloatDTypes); }
Status PrepareUnaryReal(PrepareContext& ctx) { return PrepareUnary(ctx, kRealDTypes); }

template <template <typename> class Fn, bool kCheckIntZero, typename... Ts>
Status ComputeUnary(const KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  Tensor out(x.dtype(), x.shape());
  KILN_RETURN_IF_ERROR(DispatchDType<Ts...>(x.dtype(), [&](auto tag) -> Status {
    using T = typename decltype(tag)::type;
    if constexpr (kCheckIntZero && std::is_integral_v<T>) {
      for (T v : x.flat<T>()) {
        if (v == 0) return ctx.Error("integer division by zero");
      }
    }
    functor::UnaryFunctor<CpuDevice, Fn<T>, T>()(
        Cpu(), functor::ConstFlat<T>(x.data<T>(), x.NumElements()),
        functor::Flat<T>(out.data<T>(), out.NumElements()));
    return OkStatus();
  }));
  ctx.set_output(0, std::move(out));
  return OkStatus();
}

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
  Tensor out(x.dtype(), x.shape());  // starts zeroed
  if constexpr (kValue != 0) {
    KILN_RETURN_IF_ERROR(DispatchDType<KILN_FILL_TYPES>(x.dtype(), [&](auto tag) {
      using T = typename decltype(tag)::type;
      functor::Flat<T>(out.data<T>(), out.NumElements()).device(Cpu()) =
          functor::Flat<T>(out.data<T>(), out.NumElements()).constant(T(kValue));
      return OkStatus();
    }));
  }
  ctx.set_output(0, std::move(out));
  return OkStatus();
}

// ---- AddN ------------------------------------------------------------------------------------

template <typename Device, typename T>
struct AddNFunctor {
  // out = sum of ins, accumulated in input order.
  void operator()(const Device& d, const std::vector<const T*>& ins, functor::Flat<T> out) const {
    const functor::Index n = out.size();
    out.device(d) = functor::ConstFlat<T>(ins[0], n);
    for (size_t i = 1; i < ins.size(); ++i) out.device(d) = out + functor::ConstFlat<T>(ins[i], n);
  }
};

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
  Tensor out(first.dtype(), first.shape());
  KILN_RETURN_IF_ERROR(DispatchDType<KILN_REAL_TYPES>(first.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    std::vector<const T*> ins;
    for (int i = 0; i < ctx.num_inputs(); ++i) ins.push_back(ctx.input(i).data<T>());
    AddNFunctor<CpuDevice, T>()(Cpu(), ins, functor::Flat<T>(out.data<T>(), out.NumElements()));
    return OkStatus();
  }));
  ctx.set_output(0, std::move(out));
  return OkStatus();
}

// ---- tables ----------------------------------------------------------------------------------

constexpr OpDefinition kDefs[] = {
    {"FloorMod", "z", kOpNone, PrepareBinary},      {"FloorDiv", "z", kOpNone, PrepareBinary},
    {"Pow", "z", kOpNone, PrepareBinary},           {"Rsqrt", "y", kOpNone, PrepareUnaryFloat},
    {"Reciprocal", "y", kOpNone, PrepareUnaryReal}, {"ZerosLike", "y", kOpNone, PrepareFillLike},
    {"OnesLike", "y", kOpNone, PrepareFillLike},    {"AddN", "sum", kOpNone, PrepareAddN},
};

constexpr KernelEntry kCpu[] = {
    {"FloorMod", ComputeBinary<FloorModFn, kNonZeroDivisor>},
    {"FloorDiv", ComputeBinary<FloorDivFn, kNonZeroDivisor>},
    {"Pow", ComputeBinary<PowFn, kNonNegativeExponent>},
    {"Rsqrt", ComputeUnary<RsqrtFn, false, KILN_FLOAT_TYPES>},
    {"Reciprocal", ComputeUnary<ReciprocalFn, true, KILN_REAL_TYPES>},
    {"ZerosLike", ComputeFillLike<0>},
    {"OnesLike", ComputeFillLike<1>},
    {"AddN", ComputeAddN},
};

}  // namespace

std::span<const OpDefinition> MathExtraOpDefs() { return kDefs; }
std::span<const KernelEntry> MathExtraCpuKernels() { return kCpu; }

}  // namespace kiln::exec
