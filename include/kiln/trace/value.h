// Value: a tensor as an authoring body sees it. While a function is traced it is a symbolic
// output of a graph node; anywhere else it holds a concrete kiln::Tensor and ops on it run at
// once (eagerly). One body therefore serves both modes, like a Python function under
// tf.function.
//
// Errors travel inside values: an op that fails returns an error Value, and an op given an
// error Value returns that error without doing anything, so a body reads as plain expressions
// (`Relu(MatMul(x, w) + b)`). While tracing, the first failure is also recorded by the trace,
// so an error is never lost even when its value is dropped.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "kiln/core/status.h"
#include "kiln/core/tensor.h"
#include "kiln/exec/op_table.h"

namespace kiln::trace {

using exec::TensorSpec;

namespace internal {
class Graph;
struct ValueAccess;
}  // namespace internal

class Value {
 public:
  // An empty value: not a tensor; using it is an error.
  Value() = default;
  // A concrete (eager) value. Implicit so that host tensors mix with values in expressions.
  Value(Tensor tensor);  // NOLINT(google-explicit-constructor)
  static Value Error(Status status);

  bool ok() const { return kind_ == Kind::kEager || kind_ == Kind::kSymbolic; }
  // True for a default-constructed value (no tensor, no error): what a gradient that does not
  // exist is (GradientTape, UnconnectedGradients::kNone).
  bool empty() const { return kind_ == Kind::kEmpty; }
  // OK for a tensor; the error for an error value; FailedPrecondition for an empty value.
  Status status() const;
  bool is_symbolic() const { return kind_ == Kind::kSymbolic; }
  bool is_eager() const { return kind_ == Kind::kEager; }

  // The static spec: exact for an eager value, possibly partial for a symbolic one.
  // kInvalid / unknown rank for an error value.
  const TensorSpec& spec() const { return spec_; }
  DType dtype() const { return spec_.dtype; }
  const PartialShape& shape() const { return spec_.shape; }

  // The concrete tensor of an eager value. A symbolic value has none: "return it from the
  // traced function instead".
  Result<Tensor> tensor() const;

  // The C++ truth value (`if (x)`, `while (x < y)`, `!x`), defined in control_flow.cc. An eager
  // value gives TensorFlow's truth value (a scalar: non-zero; other shapes: non-empty). A
  // symbolic value has none: while tracing, this records an error in the trace that names
  // Cond / WhileLoop / ForRange (control_flow.h) and returns false, so the trace fails.
  explicit operator bool() const;

  // "Value(float32 (2, 3) eager)", "Value(float32 (None, 4) symbolic dense/MatMul:0)",
  // "Value(error: ...)".
  std::string DebugString() const;

  // Identifies this value (and its copies) for a GradientTape: every tensor made by an op or
  // converted from a host tensor gets a new id; 0 for an empty or error value.
  uint64_t id() const { return id_; }

 private:
  friend struct internal::ValueAccess;
  enum class Kind { kEmpty, kEager, kSymbolic, kError };

  Kind kind_ = Kind::kEmpty;
  TensorSpec spec_;
  Tensor tensor_;                           // kEager
  std::shared_ptr<internal::Graph> graph_;  // kSymbolic: the trace that made it
  int node_ = -1;                           // kSymbolic: node index, -1 = function argument
  int index_ = 0;                           // kSymbolic: output index (or argument index)
  Status status_;                           // kError
  uint64_t id_ = 0;                         // see id()
};

using Values = std::vector<Value>;

// Returns the first non-OK status among `values` (OK if all are tensors).
Status FirstError(const Values& values);

}  // namespace kiln::trace
