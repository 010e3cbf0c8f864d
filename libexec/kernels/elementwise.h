// Element-wise ops' definitions: the Prepare of every unary op and every binary op with numpy
// broadcasting, and their flags. The compute side (ComputeUnary, ComputeBinary over functors) is
// the CPU's, in kernels/cpu/elementwise.h, whose comment shows how an op is written.
#pragma once

#include <span>
#include <string_view>

#include "kernels/kernel_util.h"
#include "kernels/type_lists.h"

namespace kiln::exec {

// Flags of an element-wise op whose output has its input's size: fresh outputs, in place.
inline constexpr uint32_t kOpElementwise = kOpFreshOutputs | kOpInPlace;

// One input `input_name` whose dtype (attr T) is in `allowed`; the output has the input's shape
// and dtype `out` (kInvalid: the input's).
Status PrepareUnary(PrepareContext& ctx, std::span<const DType> allowed,
                    std::string_view input_name = "x", DType out = DType::kInvalid);
// Inputs x and y of dtype T in `allowed`, broadcast; output dtype `out` (kInvalid: T).
Status PrepareBinary(PrepareContext& ctx, std::span<const DType> allowed,
                     DType out = DType::kInvalid);

template <typename List>
Status PrepareUnarySame(PrepareContext& ctx) {
  return PrepareUnary(ctx, List::kDTypes);
}
template <typename List>
Status PrepareUnaryPredicate(PrepareContext& ctx) {
  return PrepareUnary(ctx, List::kDTypes, "x", DType::kBool);
}
template <typename List>
Status PrepareBinarySame(PrepareContext& ctx) {
  return PrepareBinary(ctx, List::kDTypes);
}
template <typename List>
Status PrepareBinaryPredicate(PrepareContext& ctx) {
  return PrepareBinary(ctx, List::kDTypes, DType::kBool);
}

}  // namespace kiln::exec
