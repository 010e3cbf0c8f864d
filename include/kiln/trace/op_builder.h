// OpBuilder: the one place where an op is applied to values. Every op wrapper in ops.h and
// every layer goes through it, so tracing and eager execution share one path:
//
//   - while a function is traced, it adds a node to the trace (TensorFlow op name and attrs,
//     inputs wired by reference), running the op's Prepare to infer and check output specs;
//   - otherwise it runs the op's Prepare and CPU kernel right away on the concrete inputs.
//
// Attrs equal to their OpDef default should not be set (SavedModels strip them; old
// TensorFlow readers reject attrs they do not know).
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "kiln/core/dtype.h"
#include "kiln/core/shape.h"
#include "kiln/core/status.h"
#include "kiln/core/tensor.h"
#include "kiln/trace/value.h"

namespace kiln::trace {

class OpBuilder {
 public:
  // `name` is the node name's base ("add" for AddV2 as TensorFlow names it); empty = the op
  // name. Names are made unique and prefixed with the active NameScope.
  explicit OpBuilder(std::string_view op, std::string_view name = {});
  ~OpBuilder();
  OpBuilder(const OpBuilder&) = delete;
  OpBuilder& operator=(const OpBuilder&) = delete;

  OpBuilder& Input(const Value& value);
  OpBuilder& Inputs(std::span<const Value> values);

  OpBuilder& Attr(std::string_view name, DType value);
  OpBuilder& Attr(std::string_view name, std::span<const DType> value);
  OpBuilder& Attr(std::string_view name, int64_t value);
  OpBuilder& Attr(std::string_view name, int value) { return Attr(name, int64_t{value}); }
  // A list(int) attr (Conv2D's strides, MaxPool's ksize).
  OpBuilder& Attr(std::string_view name, std::span<const int64_t> value);
  OpBuilder& Attr(std::string_view name, float value);
  OpBuilder& Attr(std::string_view name, bool value);
  OpBuilder& Attr(std::string_view name, std::string_view value);
  OpBuilder& Attr(std::string_view name, const char* value) {
    return Attr(name, std::string_view(value));
  }
  OpBuilder& Attr(std::string_view name, const PartialShape& value);
  OpBuilder& Attr(std::string_view name, const Tensor& value);
  // A `func` attr naming a library function.
  OpBuilder& FuncAttr(std::string_view name, std::string_view function_name);

  // Applies the op. One value per output; on failure a single error value. The builder is
  // spent afterwards.
  Values Build();
  // For ops with exactly one output.
  Value BuildOne();
  // For ops with no outputs (side effects only).
  [[nodiscard]] Status BuildNoOutput();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// Prefixes the names of nodes added while it lives ("dense/MatMul"). No effect when not
// tracing.
class NameScope {
 public:
  explicit NameScope(std::string_view name);
  ~NameScope();
  NameScope(const NameScope&) = delete;
  NameScope& operator=(const NameScope&) = delete;

 private:
  bool active_ = false;
};

// True while the calling thread traces a function body.
bool IsTracing();

}  // namespace kiln::trace
