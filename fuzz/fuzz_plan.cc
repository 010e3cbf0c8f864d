// libFuzzer target: serving plans (schema/kiln/plan.fbs) from memory. The plan's checksum is not
// verified, so mutated bytes reach the FlatBuffers verifier and kiln's own checks; a plan they
// accept is decoded function by function and prepared (kernel Prepare on its attrs and specs),
// and the model section's constants are decoded, as a load would.
#include <google/protobuf/stubs/logging.h>

#include <cstddef>
#include <cstdint>
#include <string_view>

#include "graph/flat_graph.h"
#include "kiln/exec/executor.h"
#include "kiln/exec/resources.h"
#include "kiln/plan_generated.h"
#include "plan/plan_reader.h"

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  google::protobuf::SetLogHandler(nullptr);
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using kiln::exec::ServingPlan;
  auto plan = ServingPlan::FromBytes(std::string_view(reinterpret_cast<const char*>(data), size),
                                     /*verify_checksum=*/false);
  if (!plan.ok()) return 0;
  const kiln::plan::Plan& root = (*plan)->root();
  if (root.functions() == nullptr) return 0;
  kiln::exec::FunctionLibrary library;
  for (const kiln::plan::Function* f : *root.functions()) {
    kiln::exec::ResourceManager resources;
    kiln::exec::PrepareOptions options;
    options.resources = &resources;
    (void)(*plan)->Prepare(*f, library, ServingPlan::PreparedSpecs(*f), options);
  }
  if (root.constants() != nullptr)
    for (size_t i = 0; i < root.constants()->size(); ++i)
      (void)(*plan)->ConstantTensor(static_cast<int32_t>(i));
  return 0;
}
