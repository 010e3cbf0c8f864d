// The executor's memory plan: which intermediate tensors of a prepared function live in one
// arena, and where. Computed once at prepare time from the schedule; a call then hands kernels
// views into its arena instead of allocating.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "kiln/core/dtype.h"
#include "kiln/core/shape.h"

namespace kiln::exec {

// What the planner needs to know of one step.
struct PlanStep {
  std::vector<int32_t> in;
  std::vector<int32_t> out;
  bool fresh_outputs = false;  // kOpFreshOutputs: outputs never alias inputs
  int in_place_input = -1;     // output 0 may share this input's memory (kOpInPlace: 0)
};

// What the planner needs to know of one slot.
struct PlanSlot {
  DType dtype = DType::kInvalid;
  bool shape_known = false;
  Shape shape;
  bool pinned = false;  // an argument, a constant or a function output: never planned
};

struct MemoryPlanResult {
  struct Entry {
    int32_t slot;
    size_t offset;
  };
  std::vector<Entry> entries;  // planned slots and their arena offsets
  size_t arena_bytes = 0;
  size_t planned_bytes = 0;  // sum of the planned tensors' sizes
  int in_place = 0;          // entries sharing their input's memory
};

// Plans slots produced by fresh-output steps whose dtype is POD and shape is known. A slot's
// memory is reserved from its producing step to the last step that reads it or anything that
// may alias it (outputs of steps without fresh outputs may be their inputs, or views of them).
// Alias groups that reach a pinned slot are not planned. In-place steps place output 0 in
// their in-place input's memory when that input dies there, has as many elements of the same
// size (never when it is broadcast) and no other input of the step may be that memory. Offsets
// are assigned greedily, largest first, at the lowest offset that no overlapping lifetime
// occupies.
MemoryPlanResult PlanMemory(const std::vector<PlanStep>& steps, const std::vector<PlanSlot>& slots);

}  // namespace kiln::exec
