// The op families that make up the op table. Each family lists its definitions and its CPU
// kernels as plain arrays; op_table.cc concatenates them. Adding a family means adding its
// pair here and one line in op_table.cc.
#pragma once

#include <span>

#include "kiln/exec/op_registry.h"

namespace kiln::exec {

// Const, Placeholder, Identity, IdentityN, NoOp, StopGradient, Snapshot (basic_ops.cc).
std::span<const OpDefinition> BasicOpDefs();
std::span<const KernelEntry> BasicCpuKernels();

// Element-wise arithmetic, MatMul, Cast (math_ops.cc).
std::span<const OpDefinition> MathOpDefs();
std::span<const KernelEntry> MathCpuKernels();

// BiasAdd, activations, softmax (nn_ops.cc).
std::span<const OpDefinition> NnOpDefs();
std::span<const KernelEntry> NnCpuKernels();

// StringFormat, PrintV2, StringJoin (string_ops.cc).
std::span<const OpDefinition> StringOpDefs();
std::span<const KernelEntry> StringCpuKernels();

// Resource variables (resource_ops.cc).
std::span<const OpDefinition> ResourceOpDefs();
std::span<const KernelEntry> ResourceCpuKernels();

// RestoreV2 and other checkpoint I/O (io_ops.cc).
std::span<const OpDefinition> IoOpDefs();
std::span<const KernelEntry> IoCpuKernels();

}  // namespace kiln::exec
