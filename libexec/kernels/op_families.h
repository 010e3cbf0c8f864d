// The op families that make up the op table. Each family lists its definitions and its CPU
// kernels as plain arrays; op_table.cc concatenates them. Adding a family means adding its
// pair here and one line in op_table.cc.
#pragma once

#include <span>

#include "kiln/exec/op_table.h"

namespace kiln::exec {

// Const, Placeholder, Identity, IdentityN, NoOp, StopGradient, Snapshot (basic_ops.cc).
std::span<const OpDefinition> BasicOpDefs();
std::span<const KernelEntry> BasicCpuKernels();

// Element-wise arithmetic, MatMul, Cast (math_ops.cc).
std::span<const OpDefinition> MathOpDefs();
std::span<const KernelEntry> MathCpuKernels();

// MatMul, _FusedMatMul, BatchMatMul, BatchMatMulV2, BatchMatMulV3 (matmul_ops.cc).
std::span<const OpDefinition> MatMulOpDefs();
std::span<const KernelEntry> MatMulCpuKernels();

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

// Shapes and views: Shape, Size, Rank, Reshape, ExpandDims, Squeeze (shape_ops.cc).
std::span<const OpDefinition> ShapeOpDefs();
std::span<const KernelEntry> ShapeCpuKernels();

// Joining and splitting: Pack, Unpack, ConcatV2 (concat_ops.cc).
std::span<const OpDefinition> ConcatOpDefs();
std::span<const KernelEntry> ConcatCpuKernels();

// Selecting elements: Transpose, StridedSlice, GatherV2 (slice_ops.cc).
std::span<const OpDefinition> SliceOpDefs();
std::span<const KernelEntry> SliceCpuKernels();

// Making tensors from values: Fill, Range, Tile, BroadcastTo (fill_ops.cc).
std::span<const OpDefinition> FillOpDefs();
std::span<const KernelEntry> FillCpuKernels();

// Conv2D, DepthwiseConv2dNative, MaxPool, AvgPool over NHWC (conv_ops.cc).
std::span<const OpDefinition> ConvOpDefs();
std::span<const KernelEntry> ConvCpuKernels();

// If, StatelessIf, While, StatelessWhile (control_flow_ops.cc).
std::span<const OpDefinition> ControlFlowOpDefs();
std::span<const KernelEntry> ControlFlowCpuKernels();

// TensorList ops: TF 2's form of tf.TensorArray (tensor_list_ops.cc).
std::span<const OpDefinition> TensorListOpDefs();
std::span<const KernelEntry> TensorListCpuKernels();

// Comparisons, logical ops, Select, SelectV2 (compare_ops.cc).
std::span<const OpDefinition> CompareOpDefs();
std::span<const KernelEntry> CompareCpuKernels();

// FloorMod, FloorDiv, Pow, Rsqrt, Reciprocal, ZerosLike, OnesLike, AddN (math_extra_ops.cc).
std::span<const OpDefinition> MathExtraOpDefs();
std::span<const KernelEntry> MathExtraCpuKernels();

// Sum, Mean, Max, Min, Prod, ArgMax, ArgMin (reduction_ops.cc).
std::span<const OpDefinition> ReductionOpDefs();
std::span<const KernelEntry> ReductionCpuKernels();

// Stateful and stateless random ops (random_ops.cc).
std::span<const OpDefinition> RandomOpDefs();
std::span<const KernelEntry> RandomCpuKernels();

// EagerPyFunc: host callbacks registered in this process (host_callback_ops.cc).
std::span<const OpDefinition> HostCallbackOpDefs();
std::span<const KernelEntry> HostCallbackCpuKernels();

}  // namespace kiln::exec
