// Non-finite values through every float op (issue 24): each case with a reference whose first
// float32 input has four or more elements runs again with NaN, +Inf, -Inf and -0 as its first
// four values. The reference computes what TensorFlow gives from the inputs, so the kernels,
// every path the tester checks and every device must propagate them as TensorFlow does (NaN
// matching NaN). Ops where that is undefined are exempt, each with its reason (an exemption
// names an op, or the start of the names of the cases it covers).
#pragma once

#include <vector>

#include "ops/op_cases.h"

namespace kiln::testing {

std::vector<OpCase> NonFiniteVariants(const std::vector<OpCase>& cases);
const std::vector<OpTesterExemption>& NonFiniteExemptions();
// Families left out as a whole (OpTesterExemption::op names the family), with the reason.
const std::vector<OpTesterExemption>& NonFiniteExemptFamilies();

}  // namespace kiln::testing
