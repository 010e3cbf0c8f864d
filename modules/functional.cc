#include "kiln/modules/functional.h"

#include <algorithm>
#include <atomic>
#include <map>
#include <set>

#include "summary.h"

namespace kiln::modules {
namespace internal {

// One call of a layer in a functional graph (Keras's Node), or an Input.
struct Node {
  std::shared_ptr<Layer> layer;
  std::vector<SymbolicTensor> inputs;
  std::vector<PartialShape> shapes;  // one per output
  DType dtype = DType::kFloat;
  int node_index = 0;  // which call of the layer ("dense[1][0]" in a summary)
  uint64_t order = 0;  // creation order: a topological order of any graph
  Status status;
};

struct FunctionalAccess {
  static int NextNodeIndex(Layer& layer) { return layer.symbolic_calls_++; }
};

}  // namespace internal

namespace {

using internal::Node;

// Graphs may be built on several threads.
uint64_t NextOrder() {
  static std::atomic<uint64_t> next{0};
  return next++;
}

// Every known size of `want` equals `got`'s, the ranks agree.
bool Compatible(const PartialShape& want, const PartialShape& got) {
  if (want.unknown_rank() || got.unknown_rank()) return true;
  if (want.rank() != got.rank()) return false;
  for (int i = 0; i < want.rank(); ++i) {
    if (want.dim(i) >= 0 && got.dim(i) >= 0 && want.dim(i) != got.dim(i)) return false;
  }
  return true;
}

// "[(None, 2), (None, 8)]" for several outputs, as Keras's str() of the list without quotes.
std::string ShapesString(const std::vector<PartialShape>& shapes) {
  if (shapes.size() == 1) return shapes[0].ToPythonString();
  std::string s = "[";
  for (size_t i = 0; i < shapes.size(); ++i) {
    s += (i > 0 ? ", " : "") + shapes[i].ToPythonString();
  }
  return s + "]";
}

}  // namespace

PartialShape SymbolicTensor::shape() const {
  if (!node_ || !node_->status.ok()) return PartialShape::UnknownRank();
  return node_->shapes[static_cast<size_t>(index_)];
}

DType SymbolicTensor::dtype() const { return node_ ? node_->dtype : DType::kFloat; }

Status SymbolicTensor::status() const {
  if (!node_) return FailedPrecondition("an empty SymbolicTensor (not made by Input or a layer)");
  return node_->status;
}

SymbolicTensor Input(std::vector<int64_t> shape, DType dtype, std::string name) {
  auto node = std::make_shared<Node>();
  node->order = NextOrder();
  node->dtype = dtype;
  shape.insert(shape.begin(), -1);
  Result<PartialShape> full = PartialShape::FromDims(shape);
  if (full.ok()) {
    node->shapes = {*full};
    node->layer = std::make_shared<InputLayer>(std::move(name), *full, dtype);
  } else {
    node->status = full.status();
  }
  return SymbolicTensor(std::move(node), 0);
}

std::vector<SymbolicTensor> CallSymbolic(const std::shared_ptr<Layer>& layer,
                                         const std::vector<SymbolicTensor>& inputs) {
  auto node = std::make_shared<Node>();
  node->order = NextOrder();
  node->layer = layer;
  node->inputs = inputs;
  int outputs = 1;
  if (layer == nullptr) {
    node->status = InvalidArgument("calling a null layer");
  } else {
    outputs = std::max(layer->num_outputs(), 1);
    std::vector<PartialShape> shapes;
    for (const SymbolicTensor& x : inputs) {
      if (node->status.ok() && !x.ok()) node->status = x.status();
      shapes.push_back(x.shape());
    }
    if (node->status.ok() && inputs.empty()) {
      node->status = InvalidArgument(layer->type_name(), " '", layer->name(), "': no inputs");
    }
    // Built at once, as Keras builds a layer on its first symbolic call.
    if (node->status.ok() && shapes.size() == 1 && !layer->built()) {
      node->status = layer->Build(shapes[0]);
    }
    if (node->status.ok()) {
      Result<std::vector<PartialShape>> out = layer->OutputShapes(shapes);
      if (out.ok()) {
        node->shapes = *out;
      } else {
        node->status = out.status();
      }
    }
    if (node->status.ok()) node->node_index = internal::FunctionalAccess::NextNodeIndex(*layer);
  }
  std::shared_ptr<const Node> shared = std::move(node);
  std::vector<SymbolicTensor> result;
  for (int i = 0; i < outputs; ++i) result.push_back(SymbolicTensor(shared, i));
  return result;
}

Result<PartialShape> InputLayer::OutputShape(const PartialShape& input) const {
  if (!Compatible(shape_, input)) {
    return InvalidArgument("InputLayer '", name(), "': expected ", shape_.ToPythonString(),
                           ", got ", input.ToPythonString());
  }
  return input;
}

Model::Model(std::vector<SymbolicTensor> inputs, std::vector<SymbolicTensor> outputs,
             std::string name)
    : Layer(std::move(name)), inputs_(std::move(inputs)), outputs_(std::move(outputs)) {
  if (inputs_.empty() || outputs_.empty()) {
    RecordError(InvalidArgument("Model '", this->name(), "': needs inputs and outputs"));
    return;
  }
  std::set<const Node*> model_inputs;
  for (const SymbolicTensor& x : inputs_) {
    if (!x.ok()) {
      RecordError(x.status());
      return;
    }
    if (dynamic_cast<const InputLayer*>(x.node_->layer.get()) == nullptr) {
      RecordError(InvalidArgument("Model '", this->name(), "': an input must come from Input()"));
      return;
    }
    model_inputs.insert(x.node_.get());
  }
  // The nodes between the inputs and the outputs.
  std::set<const Node*> seen;
  std::vector<std::shared_ptr<const Node>> stack;
  for (const SymbolicTensor& y : outputs_) {
    if (!y.ok()) {
      RecordError(y.status());
      return;
    }
    stack.push_back(y.node_);
  }
  while (!stack.empty()) {
    std::shared_ptr<const Node> n = stack.back();
    stack.pop_back();
    if (!seen.insert(n.get()).second) continue;
    if (dynamic_cast<const InputLayer*>(n->layer.get()) != nullptr &&
        model_inputs.count(n.get()) == 0) {
      RecordError(InvalidArgument("Model '", this->name(), "': the graph is disconnected: input '",
                                  n->layer->name(), "' is needed but not among the inputs"));
      return;
    }
    nodes_.push_back(n);
    for (const SymbolicTensor& x : n->inputs) stack.push_back(x.node_);
  }
  // Inputs first in the model's order, then the creation order (topological).
  std::stable_sort(nodes_.begin(), nodes_.end(), [&](const auto& a, const auto& b) {
    const bool ia = model_inputs.count(a.get()) > 0;
    const bool ib = model_inputs.count(b.get()) > 0;
    if (ia != ib) return ia;
    return a->order < b->order;
  });
  std::vector<std::shared_ptr<const Node>> ordered;
  for (const SymbolicTensor& x : inputs_) {
    if (std::find(ordered.begin(), ordered.end(), x.node_) == ordered.end()) {
      ordered.push_back(x.node_);
    }
  }
  for (const auto& n : nodes_) {
    if (model_inputs.count(n.get()) == 0) ordered.push_back(n);
  }
  nodes_ = std::move(ordered);
  // Each layer once, named uniquely within the model.
  std::set<std::string> names;
  for (const auto& n : nodes_) {
    Layer* layer = n->layer.get();
    if (std::find(layers_.begin(), layers_.end(), layer) != layers_.end()) continue;
    const std::string base = layer->name();
    std::string unique = base;
    for (int k = 1; names.count(unique) > 0; ++k) unique = base + "_" + std::to_string(k);
    names.insert(unique);
    AddModule(unique, n->layer);
    layers_.push_back(layer);
  }
}

Model::~Model() = default;

PartialShape Model::built_input_shape() const {
  return inputs_.size() == 1 ? inputs_[0].shape() : PartialShape::UnknownRank();
}

Result<std::vector<PartialShape>> Model::OutputShapes(
    const std::vector<PartialShape>& inputs) const {
  KILN_RETURN_IF_ERROR(status());
  if (inputs.size() != inputs_.size()) {
    return InvalidArgument("Model '", name(), "': expected ", inputs_.size(), " inputs, got ",
                           inputs.size());
  }
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (!Compatible(inputs_[i].shape(), inputs[i])) {
      return InvalidArgument("Model '", name(), "': input ", i, " expected ",
                             inputs_[i].shape().ToPythonString(), ", got ",
                             inputs[i].ToPythonString());
    }
  }
  const int64_t batch = inputs[0].unknown_rank() || inputs[0].rank() == 0 ? -1 : inputs[0].dim(0);
  std::vector<PartialShape> out;
  for (const SymbolicTensor& y : outputs_) {
    PartialShape s = y.shape();
    if (!s.unknown_rank() && s.rank() > 0) {
      std::vector<int64_t> dims(s.dims().begin(), s.dims().end());
      dims[0] = batch;
      KILN_ASSIGN_OR_RETURN(s, PartialShape::FromDims(dims));
    }
    out.push_back(s);
  }
  return out;
}

Result<PartialShape> Model::OutputShape(const PartialShape& input) const {
  KILN_ASSIGN_OR_RETURN(std::vector<PartialShape> out, OutputShapes({input}));
  if (out.size() != 1) {
    return InvalidArgument("Model '", name(), "' has ", out.size(),
                           " outputs: call it with CallMulti");
  }
  return out[0];
}

trace::Values Model::Run(const trace::Values& inputs, const trace::Value& mask, bool training) {
  std::map<const Node*, trace::Values> values;
  std::map<const Node*, trace::Values> masks;
  for (size_t i = 0; i < inputs_.size(); ++i) {
    values[inputs_[i].node_.get()] = {inputs.at(i)};
    masks[inputs_[i].node_.get()] = {i == 0 ? mask : trace::Value()};
  }
  for (const auto& n : nodes_) {
    if (values.count(n.get()) > 0) continue;  // an input
    trace::Values xs;
    trace::Values ms;
    for (const SymbolicTensor& x : n->inputs) {
      xs.push_back(values.at(x.node_.get()).at(static_cast<size_t>(x.index_)));
      ms.push_back(masks.at(x.node_.get()).at(static_cast<size_t>(x.index_)));
    }
    Layer& layer = *n->layer;
    const size_t count = n->shapes.size();
    if (xs.size() == 1 && count == 1) {
      trace::Value y = layer.CallMasked(xs[0], ms[0], training);
      masks[n.get()] = {y.ok() ? layer.ComputeMask(xs[0], ms[0]) : trace::Value()};
      values[n.get()] = {y};
    } else {
      trace::Values ys = layer.CallMulti(xs, training);
      if (ys.size() != count) ys.resize(count, ys.empty() ? trace::Value() : ys[0]);
      masks[n.get()] = trace::Values(count);
      values[n.get()] = ys;
    }
  }
  trace::Values out;
  for (const SymbolicTensor& y : outputs_) {
    out.push_back(values.at(y.node_.get()).at(static_cast<size_t>(y.index_)));
  }
  last_input_id_ = inputs.empty() ? 0 : inputs[0].id();
  last_output_mask_ = masks.at(outputs_[0].node_.get()).at(static_cast<size_t>(outputs_[0].index_));
  return out;
}

trace::Value Model::ComputeMask(const trace::Value& input, const trace::Value& /*mask*/) const {
  return input.id() != 0 && input.id() == last_input_id_ ? last_output_mask_ : trace::Value();
}

trace::Value Model::Call(const trace::Value& input, bool training) {
  return CallWithMask(input, trace::Value(), training);
}

trace::Value Model::CallWithMask(const trace::Value& input, const trace::Value& mask,
                                 bool training) {
  return Run({input}, mask, training).at(0);
}

trace::Values Model::CallValues(const trace::Values& inputs, bool training) {
  return Run(inputs, trace::Value(), training);
}

Result<std::string> Model::Summary(int line_length) const {
  KILN_RETURN_IF_ERROR(status());
  std::map<const Node*, size_t> position;
  for (size_t i = 0; i < nodes_.size(); ++i) position[nodes_[i].get()] = i;
  // Keras prints the sequential layout when each depth (from the outputs) holds one node of one
  // input and no layer is called twice.
  std::vector<int> depth(nodes_.size(), 0);
  for (size_t i = nodes_.size(); i-- > 0;) {
    for (const SymbolicTensor& x : nodes_[i]->inputs) {
      int& d = depth[position.at(x.node_.get())];
      d = std::max(d, depth[i] + 1);
    }
  }
  bool sequential_like = std::set<int>(depth.begin(), depth.end()).size() == nodes_.size();
  std::map<const Layer*, std::vector<const Node*>> calls;
  for (const auto& n : nodes_) {
    calls[n->layer.get()].push_back(n.get());
    sequential_like = sequential_like && n->inputs.size() <= 1;
  }
  for (const auto& [layer, list] : calls) sequential_like = sequential_like && list.size() == 1;

  std::vector<internal::SummaryRow> rows;
  for (const Layer* l : layers_) {
    const std::vector<const Node*>& list = calls.at(l);
    std::string connections;
    for (const Node* n : list) {
      for (const SymbolicTensor& x : n->inputs) {
        if (!connections.empty()) connections += ", ";
        connections += x.node_->layer->name() + "[" + std::to_string(x.node_->node_index) + "][" +
                       std::to_string(x.index_) + "]";
      }
    }
    rows.push_back({l->name(), l->type_name(), ShapesString(list.back()->shapes), l->CountParams(),
                    l->built(), connections.empty() ? "-" : connections});
  }
  return internal::RenderSummary(*this, rows, !sequential_like, line_length);
}

LayerRef<Model> MakeModel(std::vector<SymbolicTensor> inputs, std::vector<SymbolicTensor> outputs,
                          std::string name) {
  return MakeLayer<Model>(std::move(inputs), std::move(outputs), std::move(name));
}

}  // namespace kiln::modules
