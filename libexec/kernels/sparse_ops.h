// The state and type lists the sparse ops' definitions and CPU kernels (sparse_ops.cc) share.
#pragma once

#include <cstdint>
#include <string>

#include "kernels/kernel_util.h"
#include "kernels/type_lists.h"

namespace kiln::exec::sparse {

// SparseToDense: validate_indices.
using ValidateState = TypedOpState<bool>;

// The set operations (DenseToDense-, DenseToSparse-, SparseToSparseSetOperation) and SetSize.
enum class SetOp { kAMinusB, kBMinusA, kIntersection, kUnion };

using SetTypes = TypeList<int8_t, int16_t, int32_t, int64_t, uint8_t, uint16_t, std::string>;

// The operand kinds of the three ops: dense (1 input) or sparse (3 inputs).
struct SetOperands {
  bool a_sparse = false, b_sparse = false;
  int b_first() const { return a_sparse ? 3 : 1; }
};

struct SetState : OpState {
  SetOp op = SetOp::kUnion;
  SetOperands operands;
};

}  // namespace kiln::exec::sparse
