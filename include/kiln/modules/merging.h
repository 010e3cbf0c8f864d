// Merge layers: several inputs of compatible shapes to one output (Keras's Add, Concatenate).
// They take a list, so they are called with CallMulti or, in a functional Model, on a list of
// symbolic tensors; operator() on one value is an error as in Keras.
//
//   Add          element-wise sum of inputs of one shape (the batch size may be unknown)
//   Concatenate  ConcatV2 along `axis` (default -1, the last) of inputs equal elsewhere
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "kiln/modules/layer.h"

namespace kiln::modules {

class MergeLayer : public Layer {
 public:
  // One input is an error: a merge layer takes a list (Keras: "should be called on a list").
  Result<PartialShape> OutputShape(const PartialShape& input) const override;
  // Keras's merge layers pass masks on only when given them; kiln drops masks at a merge.

 protected:
  using Layer::Layer;
  trace::Value Call(const trace::Value& input, bool training) override;
  // "Add 'add'".
  std::string Who() const { return type_name() + " '" + name() + "'"; }
  // At least two inputs, all of one rank.
  Status CheckList(const std::vector<PartialShape>& inputs) const;
};

class Add : public MergeLayer {
 public:
  Add() : MergeLayer("add") {}
  std::string type_name() const override { return "Add"; }
  Result<std::vector<PartialShape>> OutputShapes(
      const std::vector<PartialShape>& inputs) const override;

 protected:
  trace::Values CallValues(const trace::Values& inputs, bool training) override;
};

class Concatenate : public MergeLayer {
 public:
  explicit Concatenate(int64_t axis = -1) : MergeLayer("concatenate"), axis_(axis) {}
  std::string type_name() const override { return "Concatenate"; }
  int64_t axis() const { return axis_; }
  Result<std::vector<PartialShape>> OutputShapes(
      const std::vector<PartialShape>& inputs) const override;

 protected:
  trace::Values CallValues(const trace::Values& inputs, bool training) override;

 private:
  int64_t axis_;
};

}  // namespace kiln::modules
