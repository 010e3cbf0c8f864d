// A two-operand einsum as one batched matrix product, for devices whose kernel is a product
// library call between permutations (the GPU's, cuda/einsum.cc): the operands permuted into
// [batch, m, k] and [batch, k, n], the product [batch, m, n] permuted into the output's order.
// The equation's parsing is Einsum's definition's (einsum_ops.h).
#pragma once

#include <string>
#include <vector>

#include "kiln/core/shape.h"
#include "kiln/core/status.h"

namespace kiln::exec {

struct EinsumProduct {
  std::vector<int> perm_a, perm_b;  // operand dims in [batch, m, k] / [batch, k, n] order
  int64_t batch = 1, m = 1, k = 1, n = 1;
  std::vector<int64_t> product_dims;  // sizes of the product's labels: batch, free a, free b
  std::vector<int> out_perm;          // output dim i is product dim out_perm[i]
  Shape out_shape;
};

// Unimplemented for what one product cannot do: one operand, a label summed within an
// operand, a batch label of size 1 on one side only (broadcast), a repeated label.
Result<EinsumProduct> PlanEinsumProduct(const std::string& equation, const Shape& a,
                                        const Shape& b);

}  // namespace kiln::exec
