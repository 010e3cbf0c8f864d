// Runs every op family's cases through the op tester, and checks that every op with a CPU
// kernel has cases (or a written exemption).
#include <doctest/doctest.h>

#include <set>
#include <string>

#include "ops/op_cases.h"

namespace kiln::testing {
namespace {

TEST_CASE("op tester: every op with a CPU kernel has cases or a written exemption") {
  std::set<std::string, std::less<>> covered;
  for (const OpCaseFamily& f : AllOpCaseFamilies())
    for (const OpCase& c : f.cases()) covered.insert(c.op);
  for (const OpTesterExemption& e : OpTesterExemptions()) covered.insert(std::string(e.op));
  for (std::string_view op : OpsAwaitingCases()) {
    CHECK_MESSAGE(!covered.count(op), "'", op, "' has cases now: take it off OpsAwaitingCases");
    CHECK_MESSAGE(exec::FindOp(op) != nullptr, "'", op, "' is not an op any more");
    covered.insert(std::string(op));
  }
  std::string missing;
  for (const exec::OpDefinition& def : exec::AllOps())
    if (exec::FindCpuKernel(def.name) != nullptr && !covered.count(def.name))
      missing += (missing.empty() ? "" : ", ") + std::string(def.name);
  CHECK_MESSAGE(missing.empty(), "ops without op-tester cases: ", missing);
}

TEST_CASE("op tester: elementwise") { RunOpCases(ElementwiseCases()); }
TEST_CASE("op tester: matmul") { RunOpCases(MatMulCases()); }
TEST_CASE("op tester: conv") { RunOpCases(ConvFusedCases()); }

}  // namespace
}  // namespace kiln::testing
