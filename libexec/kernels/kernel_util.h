// Helpers shared by the kernel families: prepare-time checks with messages that name the node,
// the input and what was expected; dtype dispatch; numpy broadcasting.
#pragma once

#include <array>
#include <cstdint>
#include <initializer_list>
#include <span>
#include <string>
#include <type_traits>
#include <utility>

#include "kiln/core/dtype.h"
#include "kiln/core/shape.h"
#include "kiln/core/status.h"
#include "kiln/exec/op_table.h"

namespace kiln::exec {

// Like KILN_ASSIGN_OR_RETURN, adding "node 'n' (Op)" in front of the error (attr reads).
#define KILN_PREPARE_ASSIGN(ctx, lhs, expr) \
  KILN_ASSIGN_OR_RETURN_CTX(lhs, expr, "node '", (ctx).node_name, "' (", (ctx).op, ")")
#define KILN_PREPARE_CHECK(ctx, expr) \
  KILN_RETURN_IF_ERROR_CTX(expr, "node '", (ctx).node_name, "' (", (ctx).op, ")")

// "float32, float64, int32".
std::string DTypeListString(std::span<const DType> types);

// Fails unless `t` (the value of attr `attr`) is one of `allowed`.
Status ExpectAttrDTypeIn(const PrepareContext& ctx, std::string_view attr, DType t,
                         std::span<const DType> allowed);
inline Status ExpectAttrDTypeIn(const PrepareContext& ctx, std::string_view attr, DType t,
                                std::initializer_list<DType> allowed) {
  return ExpectAttrDTypeIn(ctx, attr, t, std::span<const DType>(allowed.begin(), allowed.size()));
}
// "input 'x': expected dtype float32, got int32".
Status ExpectInputDType(const PrepareContext& ctx, int i, std::string_view name, DType want);
// Fails when input i's rank is known and differs from `rank`.
Status ExpectInputRank(const PrepareContext& ctx, int i, std::string_view name, int rank);

// numpy broadcasting of two shapes. Unknown dims stay unknown unless the other side decides.
// Errors read "incompatible shapes for broadcasting: (2, 3) and (4,)".
Result<PartialShape> BroadcastPartialShapes(const PartialShape& a, const PartialShape& b);
Result<Shape> BroadcastShapes(const Shape& a, const Shape& b);

// Two inputs broadcast to one output, reduced to the fewest dims: size-1 output dims are
// dropped and neighbours with the same broadcast pattern merged. A stride of 0 means that
// input is repeated along the dim. Plain data, so a GPU kernel can use it as it is.
struct BroadcastPlan {
  int rank = 0;
  std::array<int64_t, kMaxRank> dims{};
  std::array<int64_t, kMaxRank> a_strides{};
  std::array<int64_t, kMaxRank> b_strides{};
  int64_t num_elements = 1;
};
// `out` must be BroadcastShapes(a, b).
BroadcastPlan MakeBroadcastPlan(const Shape& a, const Shape& b, const Shape& out);

// An OpState holding one value (a dtype, a parsed attr, a constant tensor).
template <typename V>
struct TypedOpState : OpState {
  explicit TypedOpState(V v) : value(std::move(v)) {}
  V value;
};

}  // namespace kiln::exec
