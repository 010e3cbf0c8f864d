// The CPU kernels of the ops in kernels/complex_ops.cc.
#include "kernels/complex_ops.h"

#include <cmath>
#include <complex>

#include "kernels/cpu/elementwise.h"
#include "kernels/kernel_util.h"
#include "kernels/type_lists.h"

namespace kiln::exec {
namespace {

using complex_ops::PartOf;

// ---- Real, Imag, Angle -----------------------------------------------------------------------

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

constexpr KernelEntry kCpu[] = {
    {"Real", ComputePart<Part::kReal>},
    {"Imag", ComputePart<Part::kImag>},
    {"Angle", ComputePart<Part::kAngle>},
    {"Complex", ComputeComplex},
    {"Conj", ComputeConj},
};

}  // namespace

std::span<const KernelEntry> ComplexCpuKernels() { return kCpu; }

}  // namespace kiln::exec
