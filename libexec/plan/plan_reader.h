// Reading a serving plan (schema/kiln/plan.fbs): mapped, verified once, then decoded per
// function into the executor's graph form. Nothing in a plan is trusted before Open has run the
// FlatBuffers verifier and VerifyContents; a plan that fails either is never used.
#pragma once

#include <filesystem>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "graph/flat_graph.h"
#include "kiln/core/status.h"
#include "kiln/exec/executor.h"

namespace kiln::plan {
struct Plan;
struct Function;
struct Shape;
}  // namespace kiln::plan

namespace kiln::exec {

class Device;
class MappedFile;

// A plan names at most this many devices.
inline constexpr size_t kMaxPlanDevices = 16;

// Constants' bytes are aligned to this in the file, so a mapped plan's constants are used in
// place.
inline constexpr size_t kPlanConstantAlignment = 64;
// The runtime that wrote a plan; a plan from another runtime is not used.
inline constexpr char kPlanRuntime[] = "kiln 0.1.0";
// The bundle's files a plan is made from, relative to the bundle directory.
inline constexpr const char* kPlanSourceFiles[] = {"saved_model.pb", "variables/variables.index"};

// A plan file is the FlatBuffer followed by a trailer: the masked CRC32C of the FlatBuffer's
// bytes (little-endian) and the magic "KPL1". A bit flipped anywhere (a constant's bytes
// included, which no structural check could notice) makes the plan refused.
inline constexpr size_t kPlanTrailerSize = 8;
inline constexpr char kPlanTrailerMagic[] = "KPL1";
void AppendPlanTrailer(std::string* flatbuffer);

struct SourceHash {
  uint64_t size = 0;
  uint32_t crc32c = 0;
};
Result<SourceHash> HashSourceFile(const std::filesystem::path& path);

// A plan function decoded: what PreparedFunction::PrepareGraph takes.
struct PlanGraph {
  std::shared_ptr<const FlatGraph> graph;
  std::shared_ptr<const FunctionInterface> iface;
};

class ServingPlan {
 public:
  // Maps the file and verifies it. Errors name the file and the field at fault.
  // `verify_checksum` false skips the CRC32C of the plan's bytes (LoadOptions::verify_checksums,
  // for trusted bundles); the structural checks always run.
  static Result<std::shared_ptr<const ServingPlan>> Open(const std::filesystem::path& path,
                                                         bool verify_checksum = true);
  // The same on bytes held in memory (copied), for fuzzing and tests.
  static Result<std::shared_ptr<const ServingPlan>> FromBytes(std::string_view bytes,
                                                              bool verify_checksum = true);

  // Why the plan must not be used for the bundle at `dir` loaded with these options; empty
  // when it is fresh (same format, runtime, tags and option, and every source file unchanged).
  // `devices` is the load's device list, resolved (ResolveDevices): a plan compiled for other
  // devices placed its nodes, and chose its fusions, for those.
  std::string StaleReason(const std::filesystem::path& dir, std::span<const std::string> tags,
                          bool freeze_variables, std::span<Device* const> devices,
                          Precision precision) const;
  // The devices the plan was compiled for ("gpu:0", "cpu"; "cpu" for plans older than the list),
  // and why a load on `devices` must not use it ("" when they are the same). plan_devices.cc.
  std::vector<std::string> DeviceNames() const;
  std::string DeviceMismatch(std::span<Device* const> devices) const;
  // Puts the plan's measured choices for `devices` into the process's tuning store (existing
  // records win); how many were added.
  size_t ImportTuning(std::span<Device* const> devices) const;
  // The plan's function `name` prepared for `arg_specs` with the variables of `frozen_args`
  // frozen (PreparedFunction::frozen_args); null when the plan has none.
  const plan::Function* Find(std::string_view name, std::span<const TensorSpec> arg_specs,
                             std::span<const int32_t> frozen_args) const;
  // The graph of a function of this plan. Constants alias the plan's bytes when aligned; the
  // result keeps the plan alive.
  Result<PlanGraph> Decode(const plan::Function& function) const;
  // After PrepareGraph of `function`: the schedule and memory plan must be the ones the plan
  // recorded (a different runtime build, or a plan edited by hand, would differ).
  static Status CheckPrepared(const plan::Function& function, const PreparedFunction& prepared);
  // Decode, PreparedFunction::PrepareGraph for `specs`, then CheckPrepared: how a load prepares
  // a function from its plan.
  Result<std::shared_ptr<const PreparedFunction>> Prepare(const plan::Function& function,
                                                          const FunctionLibrary& library,
                                                          std::span<const TensorSpec> specs,
                                                          const PrepareOptions& options) const;
  const plan::Plan& root() const { return *root_; }
  // Plan.constants[index] as a tensor (aliasing the plan's bytes when aligned).
  Result<Tensor> ConstantTensor(int32_t index) const;
  // The argument specs a plan function was prepared for.
  static std::vector<TensorSpec> PreparedSpecs(const plan::Function& function);
  static PartialShape ShapeOf(const plan::Shape* shape);

 private:
  ServingPlan() = default;
  static Result<std::shared_ptr<const ServingPlan>> Verify(std::shared_ptr<ServingPlan> plan,
                                                           std::string_view name,
                                                           bool verify_checksum);
  std::shared_ptr<const MappedFile> file_;
  std::shared_ptr<std::string> copy_;
  const uint8_t* data_ = nullptr;
  size_t size_ = 0;
  const plan::Plan* root_ = nullptr;
  std::shared_ptr<const void> Owner() const;
};

}  // namespace kiln::exec
