// tf.math.special's element-wise integrals: Dawsn, Expint, FresnelCos, FresnelSin and Spence
// (float and double, the dtypes TF's CPU kernels register): definitions. The CPU kernels are in
// kernels/cpu/special_function_ops.cc.
#include "kernels/elementwise.h"
#include "kernels/kernel_util.h"
#include "kernels/type_lists.h"

namespace kiln::exec {
namespace {

constexpr OpDefinition kDefs[] = {
    {"Dawsn", "y", kOpElementwise, PrepareUnarySame<BasicFloatTypes>},
    {"Expint", "y", kOpElementwise, PrepareUnarySame<BasicFloatTypes>},
    {"FresnelCos", "y", kOpElementwise, PrepareUnarySame<BasicFloatTypes>},
    {"FresnelSin", "y", kOpElementwise, PrepareUnarySame<BasicFloatTypes>},
    {"Spence", "y", kOpElementwise, PrepareUnarySame<BasicFloatTypes>},
};

}  // namespace

std::span<const OpDefinition> SpecialFunctionOpDefs() { return kDefs; }

}  // namespace kiln::exec
