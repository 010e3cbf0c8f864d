// Loading a PlanModel from a plan already opened and checked (the full runtime's SavedModel
// loader opens the plan itself, to fall back to the protobuf when it is unusable).
#pragma once

#include <filesystem>
#include <memory>

#include "kiln/exec/plan_model.h"

namespace kiln::exec {

class ServingPlan;

// Prepares a model from `plan`'s model section; the model owns no thread pool (its runs use
// `threads`). `restore_uncaptured`: also restore the variables no loaded function captures
// (SavedModel does, as TensorFlow's load does; PlanModel does not). Null when the section does
// not cover the load (no model section, a signature it lacks, or every method wanted from a
// plan compiled for some signatures).
Result<std::unique_ptr<PlanModel>> LoadPlanModel(const ServingPlan& plan,
                                                 const std::filesystem::path& dir,
                                                 const LoadOptions& options,
                                                 const ThreadPool* threads,
                                                 bool restore_uncaptured);

}  // namespace kiln::exec
