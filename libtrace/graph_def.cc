// ConcreteFunction::graph_def(): the traced FunctionDef as the GraphDef tf.Graph.as_graph_def()
// shows. FunctionDef inputs "node:outarg:i" become GraphDef inputs "node:k" (k the flat
// output index, ":0" left out); every argument becomes a Placeholder, captured variables
// included (TensorFlow shows captures as placeholders too).
#include <google/protobuf/text_format.h>

#include <string>

#include "kiln/core/proto_convert.h"
#include "kiln/exec/op_table.h"
#include "kiln/trace/function.h"
#include "tensorflow/framework.pb.h"

namespace kiln::trace {
namespace {

// "node:outarg:i" -> "node:k"; arguments and control inputs are kept.
std::string GraphInput(const std::string& in, const tensorflow::FunctionDef& fdef) {
  if (in.empty() || in[0] == '^') return in;
  const size_t c1 = in.find(':');
  if (c1 == std::string::npos) return in;  // an argument
  const size_t c2 = in.find(':', c1 + 1);
  const std::string node = in.substr(0, c1);
  if (c2 == std::string::npos) return in;
  const std::string arg = in.substr(c1 + 1, c2 - c1 - 1);
  const int index = std::stoi(in.substr(c2 + 1));
  int flat = index;
  for (const auto& n : fdef.node_def()) {
    if (n.name() != node) continue;
    if (const exec::OpDefinition* def = exec::FindOp(n.op())) {
      Result<int> k = exec::FlatOutputIndex(*def, arg, index);
      if (k.ok()) flat = *k;
    }
    break;
  }
  return flat == 0 ? node : node + ":" + std::to_string(flat);
}

}  // namespace

tensorflow::GraphDef ConcreteFunction::graph_def() const {
  const tensorflow::FunctionDef& fdef = function_def();
  tensorflow::GraphDef graph;
  const auto& sig = fdef.signature();
  for (int i = 0; i < sig.input_arg_size(); ++i) {
    const auto& arg = sig.input_arg(i);
    auto* n = graph.add_node();
    n->set_name(arg.name());
    n->set_op("Placeholder");
    auto& attrs = *n->mutable_attr();
    auto it = fdef.arg_attr().find(static_cast<uint32_t>(i));
    if (it != fdef.arg_attr().end()) {
      auto user = it->second.attr().find("_user_specified_name");
      if (user != it->second.attr().end()) attrs["_user_specified_name"] = user->second;
    }
    attrs["dtype"].set_type(arg.type());
    PartialShape shape = PartialShape::Scalar();
    if (static_cast<size_t>(i) < inputs_.size()) shape = inputs_[i].shape;
    PartialShapeToProto(shape, attrs["shape"].mutable_shape());
  }
  for (const auto& nd : fdef.node_def()) {
    auto* n = graph.add_node();
    *n = nd;
    n->clear_input();
    for (const auto& in : nd.input()) n->add_input(GraphInput(in, fdef));
  }
  for (int i = 1; i < library_->function_size(); ++i) {
    *graph.mutable_library()->add_function() = library_->function(i);
  }
  graph.mutable_versions()->set_producer(1205);
  graph.mutable_versions()->set_min_consumer(12);
  return graph;
}

int ConcreteFunction::graph_num_nodes() const { return graph_def().node_size(); }

std::string ConcreteFunction::GraphDefText() const {
  std::string text;
  google::protobuf::TextFormat::Printer printer;
  printer.PrintToString(graph_def(), &text);
  return text;
}

}  // namespace kiln::trace
