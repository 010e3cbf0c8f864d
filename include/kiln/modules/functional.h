// Functional composition, Keras's functional API: a Model is a graph of layer calls on
// symbolic tensors, from Input()s to outputs.
//
//   auto x = Input({28, 28, 1});
//   auto conv = MakeLayer<Conv2D>(ConvOptions{.filters = 8, .kernel_size = {3}});
//   auto dense = MakeLayer<Dense>(10);
//   SymbolicTensor y = dense(MakeLayer<Flatten>()(conv(x)));
//   Model model({x}, {y}, "cnn");
//   trace::Value out = model(images);  // a Layer: eagerly or traced, like Sequential
//
// The API, and why:
// - MakeLayer<L>(args...) returns a LayerRef<L>: a shared handle that calls the layer on symbolic
//   tensors with the call syntax Python uses (`dense(h)`, `add({a, b})`) and reaches the layer
//   with `->`. Shared ownership because a layer is created before any model exists and may be
//   called at several sites (shared weights); the Model adopts each layer once as a child, so
//   the module tree and checkpoint keys read "conv2d/kernel" as Sequential's do. Names are
//   made unique within the model in the graph's order ("dense", "dense_1", ...), inputs
//   included ("input_layer").
// - A symbolic call builds the layer at once from the input's shape (as Keras does), checks the
//   shapes, and records a node; an error (a wrong shape) travels in the SymbolicTensor, like
//   trace::Value's errors, and the Model's status() reports the first one.
// - MakeModel(...) gives a Model as a LayerRef, so it can be called inside another model
//   (`encoder(x)`); a layer belongs to one model (its one parent in the module tree), so reuse a
//   trained part by calling its model, not by building a second model over its layers.
// - Masks (Embedding(mask_zero), Masking) flow along the graph to the layers that take them
//   (LSTM, GRU), as in Sequential; merge layers drop them; a Model passes its output's mask on.
// - Running a Model replays the nodes in the order they were created (a topological order)
//   with Layer::CallMasked / CallMulti, so the `training` flag is a host value here too.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "kiln/core/dtype.h"
#include "kiln/core/shape.h"
#include "kiln/core/status.h"
#include "kiln/modules/layer.h"

namespace kiln::modules {

namespace internal {
struct Node;
}  // namespace internal

class SymbolicTensor;

// Keras's keras.Input: a model input of `shape` without the batch dimension (-1: unknown).
// Its InputLayer is named `name` in the model, made unique there.
SymbolicTensor Input(std::vector<int64_t> shape, DType dtype = DType::kFloat,
                     std::string name = "input_layer");

// Calls `layer` on symbolic tensors and returns its outputs (one per num_outputs()).
std::vector<SymbolicTensor> CallSymbolic(const std::shared_ptr<Layer>& layer,
                                         const std::vector<SymbolicTensor>& inputs);

// Keras's KerasTensor: one output of a layer call (or an Input) in a functional graph.
class SymbolicTensor {
 public:
  SymbolicTensor() = default;
  // Shape with the batch dimension unknown (None); unknown rank for an error.
  PartialShape shape() const;
  DType dtype() const;
  // OK, or the error of the call that made it (or of one before it).
  Status status() const;
  bool ok() const { return status().ok(); }

 private:
  friend struct internal::Node;
  friend class Model;
  friend SymbolicTensor Input(std::vector<int64_t>, DType, std::string);
  friend std::vector<SymbolicTensor> CallSymbolic(const std::shared_ptr<Layer>&,
                                                  const std::vector<SymbolicTensor>&);
  SymbolicTensor(std::shared_ptr<const internal::Node> node, int index)
      : node_(std::move(node)), index_(index) {}
  std::shared_ptr<const internal::Node> node_;
  int index_ = 0;
};

// A shared handle to a layer that can be called on symbolic tensors.
template <typename L>
class LayerRef {
 public:
  explicit LayerRef(std::shared_ptr<L> layer) : layer_(std::move(layer)) {}
  L* operator->() const { return layer_.get(); }
  L& operator*() const { return *layer_; }
  const std::shared_ptr<L>& get() const { return layer_; }

  // One input; the first output.
  SymbolicTensor operator()(const SymbolicTensor& x) const { return CallSymbolic(layer_, {x})[0]; }
  // A list of inputs (merge layers, models with several inputs); the first output.
  SymbolicTensor operator()(const std::vector<SymbolicTensor>& xs) const {
    return CallSymbolic(layer_, xs)[0];
  }
  // Every output (a model with several outputs).
  std::vector<SymbolicTensor> CallAll(const std::vector<SymbolicTensor>& xs) const {
    return CallSymbolic(layer_, xs);
  }

 private:
  std::shared_ptr<L> layer_;
};

template <typename L, typename... Args>
LayerRef<L> MakeLayer(Args&&... args) {
  return LayerRef<L>(std::make_shared<L>(std::forward<Args>(args)...));
}

// The layer behind an Input: in a model's layers and summary, as Keras's.
class InputLayer : public Layer {
 public:
  InputLayer(std::string name, const PartialShape& shape, DType dtype)
      : Layer(std::move(name)), shape_(shape), dtype_(dtype) {}
  std::string type_name() const override { return "InputLayer"; }
  const PartialShape& shape() const { return shape_; }
  DType dtype() const { return dtype_; }
  Result<PartialShape> OutputShape(const PartialShape& input) const override;

 protected:
  trace::Value Call(const trace::Value& input, bool /*training*/) override { return input; }

 private:
  PartialShape shape_;
  DType dtype_;
};

// Keras's functional Model: a Layer that runs the graph from `inputs` to `outputs`.
class Model : public Layer {
 public:
  Model(std::vector<SymbolicTensor> inputs, std::vector<SymbolicTensor> outputs,
        std::string name = "functional");
  ~Model() override;

  std::string type_name() const override { return "Functional"; }
  // Every layer once, in graph order, InputLayers included (Keras's model.layers).
  const std::vector<Layer*>& layers() const { return layers_; }
  const std::vector<SymbolicTensor>& inputs() const { return inputs_; }
  const std::vector<SymbolicTensor>& outputs() const { return outputs_; }

  int num_outputs() const override { return static_cast<int>(outputs_.size()); }
  // The mask of its (first) output from the call just made on `input`, as Keras's functional
  // compute_mask: a model ending in Embedding(mask_zero) or an LSTM with return_sequences
  // passes its mask on. None for another input.
  trace::Value ComputeMask(const trace::Value& input, const trace::Value& mask) const override;
  PartialShape built_input_shape() const override;
  // One input and one output; see OutputShapes otherwise.
  Result<PartialShape> OutputShape(const PartialShape& input) const override;
  // The output shapes for inputs compatible with the Inputs' (the batch size is the first
  // input's).
  Result<std::vector<PartialShape>> OutputShapes(
      const std::vector<PartialShape>& inputs) const override;

  // Keras 3's model.summary(): the sequential layout when the graph is a chain, else the
  // functional one with a "Connected to" column. `line_length` <= 0: Keras's default (88 or
  // 108). An error when the graph is (status()).
  Result<std::string> Summary(int line_length = 0) const;

 protected:
  trace::Value Call(const trace::Value& input, bool training) override;
  trace::Value CallWithMask(const trace::Value& input, const trace::Value& mask,
                            bool training) override;
  trace::Values CallValues(const trace::Values& inputs, bool training) override;

 private:
  trace::Values Run(const trace::Values& inputs, const trace::Value& mask, bool training);

  std::vector<SymbolicTensor> inputs_;
  std::vector<SymbolicTensor> outputs_;
  std::vector<std::shared_ptr<const internal::Node>> nodes_;  // graph order, inputs first
  std::vector<Layer*> layers_;
  // The last call's input and output mask, for ComputeMask right after it.
  uint64_t last_input_id_ = 0;
  trace::Value last_output_mask_;
};

// A Model as a LayerRef, to call inside another model.
LayerRef<Model> MakeModel(std::vector<SymbolicTensor> inputs, std::vector<SymbolicTensor> outputs,
                          std::string name = "functional");

}  // namespace kiln::modules
