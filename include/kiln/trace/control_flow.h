// Control flow on tensors and nested traced functions (AutoGraph's and tf.cond / tf.while_loop's
// counterparts).
//
// While a function is traced:
//   - Cond traces both branches once each, into library functions "cond_true_N" /
//     "cond_false_N", and adds one functional If node (StatelessIf when neither branch holds a
//     stateful op). C++ code in a branch therefore runs once per trace, whichever branch the
//     graph later takes (seed: "Tracing fizzbuzz branch" is printed once).
//   - WhileLoop traces cond and body once into "while_cond_N" / "while_body_N" and adds one
//     While node (StatelessWhile when neither holds a stateful op). ForRange is a WhileLoop
//     over an index (tf.range's for loop). The graph's size does not depend on the number of
//     iterations; a plain C++ loop, by contrast, unrolls into the graph.
//   - Values of the enclosing trace used inside a branch or body (by a lambda capturing them)
//     become captures: extra inputs of the If / While node and extra arguments of the branch /
//     body functions (While passes them through unchanged). Variables too.
//   - CallFunction traces the callee once per signature (its own cache), puts its graph in the
//     caller's library and calls it with PartitionedCall (StatefulPartitionedCall when it is
//     stateful); its captured variables become extra call inputs.
//   - GradientTape differentiates through Cond and the loops: the If / While node's gradient
//     replays the traced branch / body (docs/training.md, "Gradients through control flow").
// Otherwise (eagerly, or under SetRunFunctionsEagerly) they run at once on concrete values:
// Cond runs one branch, the loops iterate in C++, CallFunction calls the Function.
//
// A body gives its results as Result<Values>; errors are also recorded in the trace, so a
// failure inside a branch fails the whole trace.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "kiln/core/shape.h"
#include "kiln/core/status.h"
#include "kiln/trace/function.h"
#include "kiln/trace/value.h"

namespace kiln::trace {

using BranchFn = std::function<Result<Values>()>;

// tf.cond: `pred` is a bool scalar. Both branches must give the same number of values with the
// same dtypes; shapes that differ become the most specific shape covering both.
Result<Values> Cond(const Value& pred, const BranchFn& then_fn, const BranchFn& else_fn);

using LoopCondFn = std::function<Value(const Values& vars)>;
using LoopBodyFn = std::function<Result<Values>(const Values& vars)>;

struct WhileOptions {
  // Names of the loop variables, for messages ("loop variable 'state'"); default "loop
  // variable i".
  std::vector<std::string> names;
  // Shapes the loop variables may take (tf.while_loop's shape_invariants): empty, or one per
  // loop variable (PartialShape::UnknownRank() or unknown dims to let a shape vary). Without
  // one, a body that changes a loop variable's shape is an error at trace time.
  std::vector<PartialShape> shape_invariants;
  int parallel_iterations = 10;  // recorded in the While node (TensorFlow's default)
};

// tf.while_loop: while cond(vars) is true, vars = body(vars). The body must return as many
// values as there are loop variables, each with the same dtype and a shape that fits the
// variable's (see WhileOptions::shape_invariants); the trace fails otherwise, naming the
// variable and both specs.
Result<Values> WhileLoop(const LoopCondFn& cond, const LoopBodyFn& body, const Values& loop_vars,
                         const WhileOptions& options = {});

using ForBodyFn = std::function<Result<Values>(const Value& i, const Values& vars)>;

// `for i in tf.range(start, limit, delta)` with loop-carried `vars`: a While over
// (i, vars...). start / limit / delta are int32 or int64 scalars (host numbers: Scalar<int>).
// Returns the final vars.
Result<Values> ForRange(const Value& start, const Value& limit, const Value& delta,
                        const ForBodyFn& body, const Values& loop_vars = {},
                        const WhileOptions& options = {});

// A traced function called from a body. See above.
Result<Values> CallFunction(Function& function, const Values& args);

}  // namespace kiln::trace
