// The op-tester case lists, one function per op family (cases_<family>.cc), and the list of
// them all. Adding an op means adding its cases to its family's list.
#pragma once

#include <string_view>
#include <vector>

#include "ops/op_tester.h"

namespace kiln::testing {

std::vector<OpCase> ElementwiseCases();  // cases_elementwise.cc
std::vector<OpCase> MatMulCases();       // cases_matmul.cc
std::vector<OpCase> ConvFusedCases();    // cases_conv_fused.cc

struct OpCaseFamily {
  std::string_view name;
  std::vector<OpCase> (*cases)();
};
// Every family, in one explicit list.
const std::vector<OpCaseFamily>& AllOpCaseFamilies();

// Ops the tester does not run on their own, each with the reason (tests elsewhere cover them).
struct OpTesterExemption {
  std::string_view op;
  std::string_view reason;
};
const std::vector<OpTesterExemption>& OpTesterExemptions();

// Ops that predate the op tester and still await their cases (their kernel tests in tests/exec
// cover them meanwhile). A work list that only shrinks: a test fails when an op here has cases
// or no longer exists.
const std::vector<std::string_view>& OpsAwaitingCases();

}  // namespace kiln::testing
