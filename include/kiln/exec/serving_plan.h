// Serving plans: a bundle's functions prepared once (imported, inlined, pruned, fused) and
// written as a FlatBuffer into the bundle's assets.extra/ (schema/kiln/plan.fbs), so that a
// later load skips that work. TensorFlow ignores assets.extra/, so the bundle stays a valid
// SavedModel. SavedModel::Load uses a plan when it is present, verified and fresh (see
// LoadOptions::plan); docs/serving-plan.md describes the format and the checks.
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "kiln/core/status.h"
#include "kiln/exec/executor.h"

namespace kiln::exec {

// Where a bundle's plan lives, relative to the bundle directory.
inline constexpr char kPlanPath[] = "assets.extra/kiln.plan";
// What writing a SavedModel over an existing directory replaces (export, quantize: see
// WriteDirectoryAtomically): the bundle's own files and, stale with them, its plan. Anything
// else there (a user's files, TF Serving's warm-up requests in assets.extra/) stays.
inline constexpr std::string_view kSavedModelOwnedPaths[] = {
    "saved_model.pb", "saved_model.pbtxt", "fingerprint.pb", "variables", "assets", kPlanPath};
// Bumped whenever the meaning of a plan's contents changes; a plan of another version is not
// used (the loader says so and prepares from the protobuf).
inline constexpr unsigned kPlanFormatVersion = 1;

struct CompileOptions {
  std::vector<std::string> tags = {"serve"};
  // Signatures to plan; empty: every signature and every restored function.
  std::vector<std::string> signatures;
  // Devices the plan places nodes on, in priority order (LoadOptions::devices); the host is
  // added when missing. Each node's device, and the device list, are recorded; a load with
  // another device list prepares from the protobuf instead.
  std::vector<std::string> devices = {"cpu"};
  // Where the devices include one besides the host (a GPU), compile calls each signature once
  // per batch size here, with zeros, so that what its kernels measure at a shape's first call
  // (cuDNN's fastest convolution algorithms) is recorded in the plan and a load of it measures
  // nothing for these shapes. An unknown leading dimension takes each batch size; a signature
  // with other unknown dimensions is not tuned (the report says so).
  std::vector<int64_t> tune_batches = {1};
  // The load option the plan is made for (LoadOptions::precision): a plan of another precision
  // is not used.
  Precision precision = Precision::kAsSaved;
  // The load option the plan is made for (a plan made with frozen variables has their values
  // folded into fused weights, so it is only used by loads that freeze too).
  bool freeze_variables = true;
  // Called after each function is planned (or found not plannable): its name, how many are
  // done and how many there are (savedmodel-cli compile's progress line).
  std::function<void(std::string_view function, size_t done, size_t total)> progress;
};

struct CompileReport {
  std::filesystem::path path;            // the plan written
  size_t bytes = 0;                      // its size
  std::vector<std::string> planned;      // function names in the plan
  std::vector<std::string> not_planned;  // "name: why" for functions left to the protobuf path
  // Whether loads can use the plan alone, without reading saved_model.pb; if not, why.
  bool self_contained = false;
  std::string not_self_contained;
  std::vector<std::string> tuned;      // "serving_default at batch 1"
  std::vector<std::string> not_tuned;  // "serving_default: why"
  size_t tuning_records = 0;           // measured choices the plan holds
};

// Loads the bundle at `dir` (verifying everything a load verifies), then writes its plan to
// dir/kPlanPath atomically: a reader sees the old plan or the new one, never a part.
Result<CompileReport> CompilePlan(const std::filesystem::path& dir,
                                  const CompileOptions& options = {});

}  // namespace kiln::exec
