// Loading a PlanModel from a plan already opened and checked (the full runtime's SavedModel
// loader opens the plan itself, to fall back to the protobuf when it is unusable).
#pragma once

#include <filesystem>
#include <memory>
#include <optional>

#include "kiln/exec/plan_model.h"

namespace kiln::exec {

class ServingPlan;

// Prepares a model from `plan`'s model section into `core`, whose dir and threads are set.
// `restore_uncaptured`: also restore the variables no loaded function captures (SavedModel
// does, as TensorFlow's load does; PlanModel does not). Gives the number of functions prepared
// from the plan, or nullopt (core untouched) when the section does not cover the load (no model
// section, a signature it lacks, or every method wanted from a plan compiled for some
// signatures). After an error the caller clears `core` before using it again.
Result<std::optional<int>> LoadPlanModel(const ServingPlan& plan, const LoadOptions& options,
                                         bool restore_uncaptured, LoadedModel* core);

}  // namespace kiln::exec
