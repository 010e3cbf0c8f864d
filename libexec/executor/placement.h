// Placement: which device of a function's list runs a prepared node, and the copy step that
// moves a tensor between devices. The executor (prepared_function.cc) calls these while it
// builds the schedule; with the host alone every node lands on it and no copy is made.
#pragma once

#include <span>

#include "kiln/exec/device.h"
#include "kiln/exec/op_table.h"

namespace kiln::exec {

struct Placement {
  int device = 0;  // index into the function's device list
  const KernelEntry* kernel = nullptr;
};

// The first device whose table has a kernel for the node that takes it as prepared
// (KernelEntry::supports). An Unimplemented error naming the op, node and devices otherwise.
Result<Placement> PlaceNode(std::span<Device* const> devices, const PrepareContext& ctx);

// Where input i / output j of a kernel on `device` lives: the host for host-memory arguments
// and for dtypes only the host holds (strings, resource and variant handles).
int InputDevice(const KernelEntry& kernel, int device, int host, int i, DType dtype);
int OutputDevice(const KernelEntry& kernel, int device, int host, int j, DType dtype);

// The state of a copy step: the tensor moves from `from` to `to`.
struct CopyState final : OpState {
  Device* from = nullptr;
  Device* to = nullptr;
};
inline constexpr std::string_view kCopyOp = "_Copy";
// Copies input 0 into output 0, which the step allocates on `to`.
Status CopyCompute(const KernelContext& ctx);

}  // namespace kiln::exec
