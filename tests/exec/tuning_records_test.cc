// The tuning records (device/tuning_records.h): what kernels measured, per device, with bounded
// size; and serving plans that carry them and their device list.
#include "device/tuning_records.h"

#include <doctest/doctest.h>

#include "device/test_device.h"
#include "exec/test_util.h"
#include "kiln/exec/device.h"
#include "kiln/exec/plan_model.h"
#include "kiln/exec/saved_model.h"
#include "kiln/exec/serving_plan.h"

namespace kiln::exec {
namespace {

using testing::CopyFixture;
using testing::TempDir;

TEST_CASE("tuning records: kept per device, sorted on export, bounded in size") {
  const Device& test = *kiln::testing::GetTestDevice();
  const Device& host = *HostDevice();
  tuning::Clear(test);
  CHECK_FALSE(tuning::Find(test, "k").has_value());
  CHECK(tuning::Put(test, "b", "2"));
  CHECK(tuning::Put(test, "a", "1"));
  CHECK(tuning::Find(test, "a") == "1");
  CHECK_FALSE(tuning::Find(host, "a").has_value());  // another device's records are its own
  CHECK(tuning::Put(test, "a", "3"));                // a new measurement replaces the old
  CHECK(tuning::Export(test) == std::vector<tuning::Record>{{"a", "3"}, {"b", "2"}});
  // Imported records never replace what this process measured.
  const std::vector<tuning::Record> plan = {{"a", "9"}, {"c", "4"}};
  CHECK(tuning::Import(test, plan) == 1);
  CHECK(tuning::Find(test, "a") == "3");
  CHECK(tuning::Find(test, "c") == "4");
  // Too large, or empty: refused (a plan's records are checked against the same limits).
  CHECK_FALSE(tuning::Put(test, std::string(tuning::kMaxKeyBytes + 1, 'k'), "v"));
  CHECK_FALSE(tuning::Put(test, "big", std::string(tuning::kMaxValueBytes + 1, 'v')));
  CHECK_FALSE(tuning::Put(test, "", "v"));
  // A device holds at most kMaxRecords: a model whose shapes change at every call does not
  // grow memory without bound.
  tuning::Clear(test);
  for (size_t i = 0; i < tuning::kMaxRecords; ++i)
    REQUIRE(tuning::Put(test, "shape " + std::to_string(i), "v"));
  CHECK_FALSE(tuning::Put(test, "one more", "v"));
  CHECK(tuning::Put(test, "shape 0", "w"));  // replacing still works
  CHECK(tuning::Export(test).size() == tuning::kMaxRecords);
  tuning::Clear(test);
  CHECK(tuning::Export(test).empty());
}

TEST_CASE("serving plan: a plan records its devices and what their kernels measured") {
  TempDir tmp;
  const auto dir = CopyFixture("half_plus_two_v2", tmp);
  kiln::testing::TestDevice* device = kiln::testing::GetTestDevice();
  tuning::Clear(*device);
  // What a kernel of the test device measured in this process (a GPU convolution records
  // cuDNN's fastest algorithm this way).
  REQUIRE(tuning::Put(*device, "conv fwd (1, 8, 8, 3)", "algo 7"));
  const int64_t calls = device->kernel_calls();
  CompileOptions copts;
  copts.devices = {"test", "cpu"};
  copts.tune_batches = {1, 4};
  auto report = CompilePlan(dir, copts);
  REQUIRE_MESSAGE(report.ok(), report.status().ToString());
  CHECK(report->tuning_records == 1);
  // The float signatures were called at each batch size, on the device; the string ones (of
  // unknown rank) could not be, and the report says why.
  CHECK(device->kernel_calls() > calls);
  bool tuned_batch_4 = false, string_not_tuned = false;
  for (const std::string& t : report->tuned) tuned_batch_4 |= t.find("at batch 4") != t.npos;
  for (const std::string& t : report->not_tuned)
    string_not_tuned |= t == "signature 'classify_x_to_y': input 'inputs' has an unknown rank";
  CHECK(tuned_batch_4);
  CHECK_MESSAGE(string_not_tuned, report->not_tuned.size(), ": ", report->not_tuned.front());

  // A load for the same devices uses the plan and starts with the recorded choice.
  tuning::Clear(*device);
  LoadOptions same;
  same.devices = {"test", "cpu"};
  same.plan = PlanUse::kRequire;
  auto m = SavedModel::Load(dir, same);
  REQUIRE_MESSAGE(m.ok(), m.status().ToString());
  CHECK((*m)->plan_status().functions_from_plan > 0);
  CHECK(tuning::Find(*device, "conv fwd (1, 8, 8, 3)") == "algo 7");

  // A load for other devices does not use it (its nodes were placed, and fused, for the
  // device), and says why.
  std::vector<std::string> warnings;
  LoadOptions cpu;
  cpu.warn = [&](std::string_view w) { warnings.emplace_back(w); };
  auto on_cpu = SavedModel::Load(dir, cpu);
  REQUIRE(on_cpu.ok());
  CHECK((*on_cpu)->plan_status().functions_from_plan == 0);
  REQUIRE(warnings.size() == 1);
  CHECK_MESSAGE(warnings[0].find("compiled for the devices 'test:0,cpu', this load places on "
                                 "'cpu'") != std::string::npos,
                warnings[0]);
  cpu.plan = PlanUse::kRequire;
  auto required = SavedModel::Load(dir, cpu);
  REQUIRE_FALSE(required.ok());
  CHECK(required.status().message().find("--device test:0,cpu") != std::string::npos);
  tuning::Clear(*device);
}

TEST_CASE("serving plan: a CPU plan is used by CPU loads only") {
  TempDir tmp;
  const auto dir = CopyFixture("VarsAndArithmeticObjectGraph", tmp);
  kiln::testing::GetTestDevice();
  REQUIRE(CompilePlan(dir).ok());
  LoadOptions cpu;
  cpu.plan = PlanUse::kRequire;
  auto m = SavedModel::Load(dir, cpu);
  REQUIRE_MESSAGE(m.ok(), m.status().ToString());
  CHECK((*m)->plan_status().functions_from_plan > 0);
  auto pm = PlanModel::Load(dir, cpu);
  REQUIRE_MESSAGE(pm.ok(), pm.status().ToString());
  LoadOptions test = cpu;
  test.devices = {"test"};
  auto other = PlanModel::Load(dir, test);
  REQUIRE_FALSE(other.ok());
  CHECK_MESSAGE(
      other.status().message().find("compiled for the devices 'cpu'") != std::string::npos,
      other.status().message());
}

}  // namespace
}  // namespace kiln::exec

namespace kiln::exec {
namespace {

// A plan records the precision it was compiled for; a load of another precision does not use
// it. Half precision needs an accelerator: a host-only load refuses it, naming the fix.
TEST_CASE("serving plan: a plan is used by loads of its own precision only") {
  TempDir tmp;
  const auto dir = CopyFixture("VarsAndArithmeticObjectGraph", tmp);
  CompileOptions copts;
  copts.precision = Precision::kTF32;
  REQUIRE(CompilePlan(dir, copts).ok());
  LoadOptions tf32;
  tf32.precision = Precision::kTF32;
  tf32.plan = PlanUse::kRequire;
  auto m = SavedModel::Load(dir, tf32);
  REQUIRE_MESSAGE(m.ok(), m.status().ToString());
  LoadOptions fp32;
  fp32.plan = PlanUse::kRequire;
  auto other = SavedModel::Load(dir, fp32);
  REQUIRE_FALSE(other.ok());
  CHECK_MESSAGE(other.status().message().find("compiled for precision tf32, this load asks for "
                                              "fp32") != std::string::npos,
                other.status().message());

  LoadOptions half;
  half.precision = Precision::kFloat16;
  auto refused = SavedModel::Load(dir, half);
  REQUIRE_FALSE(refused.ok());
  CHECK_MESSAGE(refused.status().message().find("only the host") != std::string::npos,
                refused.status().message());
  CHECK(ParsePrecision("bf16").value() == Precision::kBFloat16);
  CHECK_FALSE(ParsePrecision("fp8").ok());
}

}  // namespace
}  // namespace kiln::exec
