// Layer: a Module that maps one value to one value (Keras's Layer for this toolkit). Layers
// are plain C++ over kiln::trace ops, so they run eagerly or inside a traced method alike.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "kiln/core/dtype.h"
#include "kiln/core/shape.h"
#include "kiln/core/status.h"
#include "kiln/trace/module.h"
#include "kiln/trace/value.h"
#include "kiln/trace/variable.h"

namespace kiln::modules {

namespace internal {
struct FunctionalAccess;
}  // namespace internal

class Layer : public trace::Module {
 public:
  using trace::Module::Module;

  // Applies the layer under a name scope of its name ("dense/MatMul" in a graph). Builds its
  // variables first if it has not been built and the input says how, and checks the input
  // against OutputShape, so a wrong rank or channel count is an error naming the layer.
  //
  // `training` is a host value, as Keras's `training=True/False`: it selects which ops are
  // emitted (Dropout's mask, BatchNormalization's batch statistics and moving-average
  // updates), so a traced function that takes it as a host argument traces once per value
  // (seed 002's MyModel.call).
  trace::Value operator()(const trace::Value& input, bool training = false);

  // Keras's layer(x, mask=m): `mask` (bool, (batch, timesteps) for a sequence; an empty Value
  // for none) reaches the layers that take one (LSTM and GRU skip masked steps); the others
  // ignore it. Sequential and Model pass masks from layer to layer with ComputeMask.
  trace::Value CallMasked(const trace::Value& input, const trace::Value& mask,
                          bool training = false);
  // Keras's supports_masking: whether ComputeMask passes an input's mask on by default.
  virtual bool supports_masking() const { return false; }
  // Keras's compute_mask: the mask of the output (empty for none). By default the input's mask
  // when supports_masking(), else none; Embedding(mask_zero) and Masking make one.
  virtual trace::Value ComputeMask(const trace::Value& input, const trace::Value& mask) const;

  // Several inputs or outputs (Add, Concatenate, a functional Model). The defaults are the
  // one-input, one-output form on top of OutputShape and Call.
  virtual int num_outputs() const { return 1; }
  virtual Result<std::vector<PartialShape>> OutputShapes(
      const std::vector<PartialShape>& inputs) const;
  // Applies the layer to a list of inputs under its name scope, building it first from a single
  // input and checking the shapes with OutputShapes, as operator() does.
  trace::Values CallMulti(const trace::Values& inputs, bool training = false);

  // The output shape for an input shape; an error when the layer cannot take that input.
  virtual Result<PartialShape> OutputShape(const PartialShape& input) const = 0;
  // Whether its variables exist.
  virtual bool built() const { return true; }
  // Creates the variables for inputs of this shape (no-op once built).
  virtual Status Build(const PartialShape& /*input*/) { return OkStatus(); }
  // The input shape it was built for (unknown rank while not built).
  virtual PartialShape built_input_shape() const { return PartialShape::UnknownRank(); }

  // Keras's dtype policy: the dtype the layer computes in (float32 for every layer here).
  DType compute_dtype() const { return DType::kFloat; }
  // What operator(), CallMasked and CallMulti do with an input that is not of compute_dtype(),
  // as Keras's Layer.__call__ autocasts: a floating-point input (a float64 array, as NumPy
  // makes by default) is always cast to compute_dtype(); an integer or bool one is handled as
  // the layer says here (string inputs are refused by kCast too).
  enum class NonFloatInput {
    kKeep,    // passed on as it is (Flatten, Reshape, max pooling, merges, Embedding's ids)
    kCast,    // cast to compute_dtype(), as Keras's ops promote it (Dense, normalizations, ...)
    kRefuse,  // an error naming the layer (convolutions, average pooling: Keras fails there too)
  };
  virtual NonFloatInput non_float_input() const { return NonFloatInput::kKeep; }

  // Scalars in its variables (and its sublayers'), 0 while not built.
  int64_t CountParams() const;
  int64_t CountTrainableParams() const;

 protected:
  // The computation, on an input that OutputShape accepted.
  virtual trace::Value Call(const trace::Value& input, bool training) = 0;
  // The computation with the input's mask (possibly empty); layers that use masks override it.
  virtual trace::Value CallWithMask(const trace::Value& input, const trace::Value& /*mask*/,
                                    bool training) {
    return Call(input, training);
  }
  // The computation on a list of inputs that OutputShapes accepted.
  virtual trace::Values CallValues(const trace::Values& inputs, bool training);
  // A variable accessor's answer: `v` once it exists, else an invalid handle whose status says
  // which layer and why ("not built yet" and how to build it; or that the options leave it out).
  trace::Variable WeightOrError(const trace::Variable& v, std::string_view what) const;

 private:
  friend struct internal::FunctionalAccess;
  // The input as the layer takes it (compute_dtype(), non_float_input()).
  trace::Value ConvertInput(const trace::Value& input) const;
  int symbolic_calls_ = 0;  // Keras's len(layer._inbound_nodes): numbers the graph nodes
};

// A sublayer that only holds variables, so they are scoped as Keras's ("lstm/lstm_cell/kernel",
// "multi_head_attention/query/kernel"); the owning layer does the computation.
class WeightsModule : public trace::Module {
 public:
  WeightsModule(std::string name, std::string type)
      : Module(std::move(name)), type_(std::move(type)) {}
  std::string type_name() const override { return type_; }

 private:
  std::string type_;
};

}  // namespace kiln::modules
