// tf.math.special's element-wise integrals: Dawsn, Expint, FresnelCos, FresnelSin and Spence
// (float and double, the dtypes TF's CPU kernels register), over special_functions.h.
#include "kernels/cpu/elementwise.h"
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

constexpr OpDefinition kDefs[] = {
    {"Dawsn", "y", kOpElementwise, PrepareUnarySame<BasicFloatTypes>},
    {"Expint", "y", kOpElementwise, PrepareUnarySame<BasicFloatTypes>},
    {"FresnelCos", "y", kOpElementwise, PrepareUnarySame<BasicFloatTypes>},
    {"FresnelSin", "y", kOpElementwise, PrepareUnarySame<BasicFloatTypes>},
    {"Spence", "y", kOpElementwise, PrepareUnarySame<BasicFloatTypes>},
};

constexpr KernelEntry kCpu[] = {
    {"Dawsn", ComputeUnary<DawsnFn, BasicFloatTypes>},
    {"Expint", ComputeUnary<ExpintFn, BasicFloatTypes>},
    {"FresnelCos", ComputeUnary<FresnelCosFn, BasicFloatTypes>},
    {"FresnelSin", ComputeUnary<FresnelSinFn, BasicFloatTypes>},
    {"Spence", ComputeUnary<SpenceFn, BasicFloatTypes>},
};

}  // namespace

std::span<const OpDefinition> SpecialFunctionOpDefs() { return kDefs; }
std::span<const KernelEntry> SpecialFunctionCpuKernels() { return kCpu; }

}  // namespace kiln::exec
