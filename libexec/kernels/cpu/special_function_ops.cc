// The CPU kernels of the ops in kernels/special_function_ops.cc, over special_functions.h.
#include "kernels/cpu/elementwise.h"
#include "kernels/kernel_util.h"
#include "kernels/special_functions.h"
#include "kernels/type_lists.h"

namespace kiln::exec {
namespace {

#define KILN_SPECIAL_UNARY(Name)                                    \
  template <typename C>                                             \
  struct Name##Fn {                                                 \
    static constexpr int kCost = 32;                                \
    KILN_HD C operator()(C x) const { return special::Name<C>(x); } \
  };
KILN_SPECIAL_UNARY(Dawsn)
KILN_SPECIAL_UNARY(Expint)
KILN_SPECIAL_UNARY(FresnelCos)
KILN_SPECIAL_UNARY(FresnelSin)
KILN_SPECIAL_UNARY(Spence)
#undef KILN_SPECIAL_UNARY

constexpr KernelEntry kCpu[] = {
    {"Dawsn", ComputeUnary<DawsnFn, BasicFloatTypes>},
    {"Expint", ComputeUnary<ExpintFn, BasicFloatTypes>},
    {"FresnelCos", ComputeUnary<FresnelCosFn, BasicFloatTypes>},
    {"FresnelSin", ComputeUnary<FresnelSinFn, BasicFloatTypes>},
    {"Spence", ComputeUnary<SpenceFn, BasicFloatTypes>},
};

}  // namespace

std::span<const KernelEntry> SpecialFunctionCpuKernels() { return kCpu; }

}  // namespace kiln::exec
