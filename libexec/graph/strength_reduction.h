// Grappler's strength reductions, repeated so that kiln computes what TensorFlow computes. TF
// rewrites a SavedModel's functions before it runs them: a division by a constant becomes a
// product by the constant's reciprocal (constant folding's ReduceDivToReciprocalMul), and a
// power by a constant exponent a square, square root, reciprocal and so on (the arithmetic
// optimizer's ConvertPow). The two forms differ in the last bit, which matters where a result
// is floored or compared (tf.image.resize_with_pad's padding rows), and at the edges (pow of -inf
// by 0.5 is +inf, its square root NaN).
#pragma once

#include <vector>

#include "graph/flat_graph.h"
#include "graph/fusion.h"

namespace kiln::exec {

// Whether `g` has a live division or power whose divisor or exponent comes from constants
// alone (what ReduceStrength may rewrite; a cheap look at the graph, no values needed).
bool HasStrengthReductions(const FlatGraph& g, const std::vector<char>& live);

// Rewrites in place, where the divisor or exponent is known in `facts` and derives from Const
// nodes alone (a variable's value never does, as in TF) and the other operand does not:
// - RealDiv / Div of a float type by c: Mul by 1 / c, computed in c's type;
// - Pow by an exponent whose elements all equal p, where the base has the output's shape:
//   p = 2 Square, 3 x * Square(x), 1 Identity, 0.5 Sqrt, -0.5 Rsqrt, -1 Reciprocal.
// Nodes past the end of `facts` (made by an earlier rewrite) are left alone. Returns how many
// nodes it rewrote.
int ReduceStrength(FlatGraph* g, const std::vector<NodeFacts>& facts,
                   const std::vector<char>& live);

}  // namespace kiln::exec
