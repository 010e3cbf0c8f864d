// Complex numbers taken apart and put together: Real, Imag, Angle (complex64 -> float32,
// complex128 -> float64, attr Tout) and Complex (real and imaginary parts, broadcast, to
// complex64 / complex128), Conj. ComplexAbs lives with the unary math (math_unary_ops.cc).
#include <cmath>
#include <complex>

#include "kernels/cpu/elementwise.h"
#include "kernels/kernel_util.h"
#include "kernels/type_lists.h"

namespace kiln::exec {
namespace {

// The real dtype of a complex one's parts, and back.
DType PartOf(DType complex) {
  return complex == DType::kComplex64 ? DType::kFloat : DType::kDouble;
}
DType ComplexOf(DType part) {
  return part == DType::kFloat ? DType::kComplex64 : DType::kComplex128;
}

// ---- Real, Imag, Angle -----------------------------------------------------------------------

Status PreparePart(PrepareContext& ctx) {
  KILN_RETURN_IF_ERROR(ctx.ExpectInputs(1));
  KILN_PREPARE_ASSIGN(ctx, DType t, ctx.attrs.GetType("T", DType::kComplex64));
  KILN_RETURN_IF_ERROR(ExpectAttrDTypeIn(ctx, "T", t, {DType::kComplex64, DType::kComplex128}));
  KILN_PREPARE_ASSIGN(ctx, DType tout, ctx.attrs.GetType("Tout", DType::kFloat));
  if (tout != PartOf(t)) {
    return ctx.Error("attr 'Tout': ", DTypeShortName(tout), " does not fit T=", DTypeShortName(t),
                     ", expected ", DTypeShortName(PartOf(t)));
  }
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 0, "input", t));
  ctx.outputs = {TensorSpec{tout, ctx.inputs[0].shape}};
  return OkStatus();
}

enum class Part { kReal, kImag, kAngle };

template <Part kPart>
Status ComputePart(const KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  KILN_ASSIGN_OR_RETURN(Tensor * out, ctx.AllocateOutput(0, x.shape()));
  return Dispatch<TypeList<float, double>>(out->dtype(), [&](auto tag) {
    using R = typename decltype(tag)::type;
    const std::complex<R>* in = x.data<std::complex<R>>();
    R* o = out->data<R>();
    ctx.threads().ParallelFor(x.NumElements(), 16384, [&](int64_t begin, int64_t end) {
      for (int64_t i = begin; i < end; ++i) {
        if constexpr (kPart == Part::kReal) {
          o[i] = in[i].real();
        } else if constexpr (kPart == Part::kImag) {
          o[i] = in[i].imag();
        } else {
          o[i] = std::atan2(in[i].imag(), in[i].real());
        }
      }
    });
    return OkStatus();
  });
}

// ---- Complex ---------------------------------------------------------------------------------

Status PrepareComplex(PrepareContext& ctx) {
  KILN_RETURN_IF_ERROR(ctx.ExpectInputs(2));
  KILN_PREPARE_ASSIGN(ctx, DType t, ctx.attrs.GetType("T", DType::kFloat));
  KILN_RETURN_IF_ERROR(ExpectAttrDTypeIn(ctx, "T", t, {DType::kFloat, DType::kDouble}));
  KILN_PREPARE_ASSIGN(ctx, DType tout, ctx.attrs.GetType("Tout", DType::kComplex64));
  if (tout != ComplexOf(t)) {
    return ctx.Error("attr 'Tout': ", DTypeShortName(tout), " does not fit T=", DTypeShortName(t),
                     ", expected ", DTypeShortName(ComplexOf(t)));
  }
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 0, "real", t));
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 1, "imag", t));
  KILN_PREPARE_ASSIGN(ctx, PartialShape shape,
                      BroadcastPartialShapes(ctx.inputs[0].shape, ctx.inputs[1].shape));
  ctx.outputs = {TensorSpec{tout, shape}};
  return OkStatus();
}

template <typename C>
struct MakeComplexFn {
  std::complex<C> operator()(C re, C im) const { return {re, im}; }
};

Status ComputeComplex(const KernelContext& ctx) {
  const Tensor& re = ctx.input(0);
  const Tensor& im = ctx.input(1);
  if (re.dtype() != im.dtype())
    return ctx.Error("real and imag differ in dtype: ", DTypeShortName(re.dtype()), " vs ",
                     DTypeShortName(im.dtype()));
  KILN_ASSIGN_OR_RETURN(Shape shape, BinaryOutputShape(ctx));
  KILN_ASSIGN_OR_RETURN(Tensor * out, ctx.AllocateOutput(0, shape));
  return Dispatch<TypeList<float, double>>(re.dtype(), [&](auto tag) {
    using R = typename decltype(tag)::type;
    BinaryBroadcast<MakeComplexFn<R>>(ctx, MakeBroadcastPlan<3>(shape, {re.shape(), im.shape()}),
                                      re.data<R>(), im.data<R>(), out->data<std::complex<R>>());
    return OkStatus();
  });
}

// ---- Conj ------------------------------------------------------------------------------------

Status PrepareConj(PrepareContext& ctx) {
  KILN_RETURN_IF_ERROR(ctx.ExpectInputs(1));
  KILN_PREPARE_ASSIGN(ctx, DType t, ctx.attrs.GetType("T", DType::kComplex64));
  KILN_RETURN_IF_ERROR(ExpectAttrDTypeIn(ctx, "T", t, {DType::kComplex64, DType::kComplex128}));
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 0, "input", t));
  ctx.outputs = {ctx.inputs[0]};
  return OkStatus();
}

Status ComputeConj(const KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  KILN_ASSIGN_OR_RETURN(Tensor * out, ctx.ForwardInputOrAllocateOutput(0, 0, x.shape()));
  return Dispatch<TypeList<float, double>>(PartOf(x.dtype()), [&](auto tag) {
    using R = typename decltype(tag)::type;
    const std::complex<R>* in = x.data<std::complex<R>>();
    std::complex<R>* o = out->data<std::complex<R>>();
    ctx.threads().ParallelFor(x.NumElements(), 16384, [&](int64_t begin, int64_t end) {
      for (int64_t i = begin; i < end; ++i) o[i] = std::conj(in[i]);
    });
    return OkStatus();
  });
}

// ---- tables ----------------------------------------------------------------------------------

constexpr OpDefinition kDefs[] = {
    {"Real", "output", kOpFreshOutputs, PreparePart},
    {"Imag", "output", kOpFreshOutputs, PreparePart},
    {"Angle", "output", kOpFreshOutputs, PreparePart},
    {"Complex", "out", kOpFreshOutputs, PrepareComplex},
    {"Conj", "output", kOpFreshOutputs | kOpInPlace, PrepareConj},
};

constexpr KernelEntry kCpu[] = {
    {"Real", ComputePart<Part::kReal>},
    {"Imag", ComputePart<Part::kImag>},
    {"Angle", ComputePart<Part::kAngle>},
    {"Complex", ComputeComplex},
    {"Conj", ComputeConj},
};

}  // namespace

std::span<const OpDefinition> ComplexOpDefs() { return kDefs; }
std::span<const KernelEntry> ComplexCpuKernels() { return kCpu; }

}  // namespace kiln::exec
