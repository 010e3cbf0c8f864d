#include "graph/flat_graph.h"

#include <charconv>
#include <map>
#include <string_view>

#include "kiln/core/proto_convert.h"
#include "kiln/exec/function_call.h"
#include "tensorflow/framework.pb.h"

namespace kiln::exec {
namespace {

constexpr int kMaxInlineDepth = 64;

// Imports one function body into the flat graph. Nodes are resolved on demand (depth first)
// so the order of node_def in the FunctionDef does not matter.
class FunctionImporter {
 public:
  FunctionImporter(FlatGraph* g, const FunctionLibrary& lib, const tensorflow::FunctionDef& fdef,
                   std::string prefix, std::vector<Edge> args, std::vector<int> control_deps,
                   int depth)
      : g_(g),
        lib_(lib),
        fdef_(fdef),
        prefix_(std::move(prefix)),
        args_(std::move(args)),
        control_deps_(std::move(control_deps)),
        depth_(depth),
        graph_style_(fdef.attr().count(kGraphStyleInputsAttr) != 0) {}

  // Returns the edges of the function's outputs, in output_arg order.
  Result<std::vector<Edge>> Import(std::vector<int>* all_nodes_out) {
    const auto& sig = fdef_.signature();
    if (static_cast<size_t>(sig.input_arg_size()) != args_.size())
      return InvalidArgument("function '", sig.name(), "' takes ", sig.input_arg_size(),
                             " arguments, the call passes ", args_.size());
    for (int i = 0; i < sig.input_arg_size(); ++i) arg_index_[sig.input_arg(i).name()] = i;
    for (int i = 0; i < fdef_.node_def_size(); ++i) {
      const std::string& name = fdef_.node_def(i).name();
      if (node_index_.count(name) || arg_index_.count(name))
        return InvalidArgument("function '", sig.name(), "': duplicate node name '", name, "'");
      node_index_[name] = i;
    }
    state_.assign(fdef_.node_def_size(), kUnvisited);
    imported_.resize(fdef_.node_def_size());
    for (int i = 0; i < fdef_.node_def_size(); ++i) KILN_RETURN_IF_ERROR(Visit(i));

    std::vector<Edge> outs;
    for (const auto& out_arg : sig.output_arg()) {
      auto it = fdef_.ret().find(out_arg.name());
      if (it == fdef_.ret().end())
        return InvalidArgument("function '", sig.name(), "': output '", out_arg.name(),
                               "' has no entry in ret");
      KILN_ASSIGN_OR_RETURN_CTX(Edge e, ResolveInput(it->second), "function '", sig.name(),
                                "', output '", out_arg.name(), "'");
      outs.push_back(e);
    }
    for (const auto& [name, node] : fdef_.control_ret()) {
      auto it = node_index_.find(node);
      if (it == node_index_.end())
        return InvalidArgument("function '", sig.name(), "': control_ret '", name,
                               "' names unknown node '", node, "'");
      for (int n : imported_[it->second].control_targets) g_->keep.push_back(n);
    }
    if (all_nodes_out) {
      // What "^call" waits for. TF inlines a call with its control outputs as what a control
      // edge on it waits for (its data outputs where it has none), and runs the stateful ops
      // in it whether or not anything reads them; kiln's sink waits for those and for nested
      // calls. A stateless node that none of these reads is dead code that TF prunes (Keras
      // 3's recurrent layers compute a first cell step outside the loop only for its shape),
      // and waiting for it would keep it alive.
      for (const auto& [name, node] : fdef_.control_ret())
        for (int n : imported_[node_index_.at(node)].control_targets) all_nodes_out->push_back(n);
      if (fdef_.control_ret().empty())
        for (const Edge& e : outs) all_nodes_out->push_back(e.node);
      for (const auto& imp : imported_)
        for (int n : imp.control_targets)
          if (imp.node < 0 || g_->nodes[n].stateful) all_nodes_out->push_back(n);
    }
    return outs;
  }

 private:
  enum State { kUnvisited, kVisiting, kDone };
  struct Imported {
    int node = -1;                   // flat node for ordinary ops
    std::vector<Edge> call_outputs;  // for inlined calls
    // A function called by its name as the op: its outputs are read by their own names
    // ("call:out_name:0"); a PartitionedCall's are one list ("call:output:i").
    const tensorflow::FunctionDef* named_callee = nullptr;
    std::vector<int> control_targets;  // what "^this" means
  };

  std::string Where(const tensorflow::NodeDef& n) const {
    return "function '" + fdef_.signature().name() + "', node '" + n.name() + "' (" + n.op() + ")";
  }

  Status Visit(int i) {
    if (state_[i] == kDone) return OkStatus();
    const tensorflow::NodeDef& nd = fdef_.node_def(i);
    if (state_[i] == kVisiting) return InvalidArgument(Where(nd), ": cycle in the function body");
    state_[i] = kVisiting;
    // Resolve everything this node depends on first.
    std::vector<Edge> inputs;
    std::vector<int> controls = control_deps_;
    bool seen_control = false;
    for (const std::string& in : nd.input()) {
      if (!in.empty() && in[0] == '^') {
        seen_control = true;
        auto it = node_index_.find(std::string_view(in).substr(1));
        if (it == node_index_.end()) {
          if (arg_index_.count(in.substr(1))) continue;  // control dep on an arg: no-op
          return InvalidArgument(Where(nd), ": control input '", in, "' names no node");
        }
        KILN_RETURN_IF_ERROR(Visit(it->second));
        for (int t : imported_[it->second].control_targets) controls.push_back(t);
        continue;
      }
      if (seen_control)
        return InvalidArgument(Where(nd), ": data input '", in, "' after a control input");
      KILN_ASSIGN_OR_RETURN_CTX(Edge e, ResolveInput(in), Where(nd));
      inputs.push_back(e);
    }

    Imported& imp = imported_[i];
    const std::string scoped = prefix_ + nd.name();
    std::string callee;
    if (IsFunctionCallOp(nd.op())) {
      auto f = nd.attr().find("f");
      if (f == nd.attr().end() || !f->second.has_func())
        return InvalidArgument(Where(nd), ": attr 'f' (the function to call) is missing");
      callee = f->second.func().name();
    } else if (lib_.Find(nd.op()) != nullptr) {
      callee = nd.op();
    }
    if (!callee.empty()) {
      const tensorflow::FunctionDef* fn = lib_.Find(callee);
      if (fn == nullptr)
        return NotFound(Where(nd), ": calls function '", callee, "', which is not in the library");
      if (depth_ + 1 > kMaxInlineDepth)
        return InvalidArgument(Where(nd), ": function calls nest deeper than ", kMaxInlineDepth,
                               " (recursive function '", callee, "'?)");
      std::vector<int> inner_nodes;
      FunctionImporter inner(g_, lib_, *fn, scoped + "/", inputs, controls, depth_ + 1);
      KILN_ASSIGN_OR_RETURN_CTX(imp.call_outputs, inner.Import(&inner_nodes), Where(nd));
      if (!IsFunctionCallOp(nd.op())) imp.named_callee = fn;
      // "^call" waits for everything inside the call.
      FlatNode sink;
      sink.name = scoped + "/_done";
      sink.op = "NoOp";
      sink.control_inputs = inner_nodes;
      for (const Edge& e : imp.call_outputs) sink.control_inputs.push_back(e.node);
      g_->nodes.push_back(std::move(sink));
      imp.control_targets = {static_cast<int>(g_->nodes.size()) - 1};
    } else {
      FlatNode n;
      n.name = scoped;
      n.op = nd.op();
      n.attrs = &nd.attr();
      n.inputs = std::move(inputs);
      n.control_inputs = std::move(controls);
      n.def = FindOp(nd.op());
      // Unknown ops count as stateful so they are never pruned silently: prepare reports them.
      n.stateful = n.def == nullptr || (n.def->flags & kOpStateful) != 0;
      g_->nodes.push_back(std::move(n));
      imp.node = static_cast<int>(g_->nodes.size()) - 1;
      imp.control_targets = {imp.node};
    }
    state_[i] = kDone;
    return OkStatus();
  }

  // The position among a called function's outputs of its output `arg`'s element `index`
  // (each output of a function is one tensor).
  static Result<int> CalleeOutputIndex(const tensorflow::FunctionDef& fn, const std::string& in,
                                       std::string_view arg, int index) {
    const auto& outs = fn.signature().output_arg();
    for (int k = 0; k < outs.size(); ++k) {
      if (!outs[k].number_attr().empty() || !outs[k].type_list_attr().empty())
        return Unimplemented("input '", in, "': function '", fn.signature().name(),
                             "' has a list output ('", outs[k].name(), "')");
      if (outs[k].name() != arg) continue;
      if (index != 0)
        return InvalidArgument("input '", in, "': output '", arg, "' of function '",
                               fn.signature().name(), "' is one tensor");
      return k;
    }
    return InvalidArgument("input '", in, "': function '", fn.signature().name(),
                           "' has no output named '", arg, "'");
  }

  // A FunctionDef names an argument "arg" and a node's output "node:out_arg:i"; TF refuses
  // any other form at load (a KeyError), so kiln does too. Only the functions kiln makes from
  // a TF1 GraphDef (graph_style_) take GraphDef names: "node", "node:i", and a fed node (now
  // an argument) as "arg:i".
  Result<Edge> ResolveInput(const std::string& in) {
    std::string_view s = in;
    size_t c1 = s.find(':');
    std::string_view node = s.substr(0, c1);
    if (c1 == std::string_view::npos) {
      auto a = arg_index_.find(node);
      if (a != arg_index_.end()) return args_[a->second];
    }
    auto it = node_index_.find(node);
    if (it == node_index_.end()) {
      auto a = arg_index_.find(node);
      if (a != arg_index_.end() && c1 != std::string_view::npos) {
        if (graph_style_) return args_[a->second];
        return InvalidArgument("input '", in, "' names argument '", node,
                               "' with an output; inside a function an argument is named by its "
                               "bare name");
      }
      return InvalidArgument("input '", in, "' names no node or argument");
    }
    if (!graph_style_ &&
        (c1 == std::string_view::npos || s.find(':', c1 + 1) == std::string_view::npos))
      return InvalidArgument("input '", in,
                             "' is in GraphDef form; inside a function a node's output is named "
                             "'node:output_name:index' (e.g. '",
                             node, ":output:0')");
    KILN_RETURN_IF_ERROR(Visit(it->second));
    const Imported& imp = imported_[it->second];
    std::string_view arg;
    int index = 0;
    if (c1 != std::string_view::npos) {
      std::string_view rest = s.substr(c1 + 1);
      size_t c2 = rest.find(':');
      std::string_view idx_str = rest;
      if (c2 != std::string_view::npos) {
        arg = rest.substr(0, c2);
        idx_str = rest.substr(c2 + 1);
      }
      auto [p, ec] = std::from_chars(idx_str.data(), idx_str.data() + idx_str.size(), index);
      if (ec != std::errc() || p != idx_str.data() + idx_str.size() || index < 0)
        return InvalidArgument("input '", in, "' has a bad output index");
    }
    if (imp.node < 0) {  // inlined call
      if (!arg.empty() && imp.named_callee != nullptr) {
        KILN_ASSIGN_OR_RETURN(index, CalleeOutputIndex(*imp.named_callee, in, arg, index));
      }
      if (index >= static_cast<int>(imp.call_outputs.size()))
        return InvalidArgument("input '", in, "': the call has only ", imp.call_outputs.size(),
                               " outputs");
      return imp.call_outputs[index];
    }
    const FlatNode& producer = g_->nodes[imp.node];
    if (arg.empty() || producer.def == nullptr) return Edge{imp.node, index};
    KILN_ASSIGN_OR_RETURN_CTX(int flat, FlatOutputIndex(*producer.def, arg, index, producer.attrs),
                              "input '", in, "'");
    return Edge{imp.node, flat};
  }

  FlatGraph* g_;
  const FunctionLibrary& lib_;
  const tensorflow::FunctionDef& fdef_;
  std::string prefix_;
  std::vector<Edge> args_;
  std::vector<int> control_deps_;
  int depth_;
  bool graph_style_;  // a function made from a TF1 GraphDef: GraphDef input names
  std::map<std::string, int, std::less<>> node_index_;
  std::map<std::string, int, std::less<>> arg_index_;
  std::vector<State> state_;
  std::vector<Imported> imported_;
};

}  // namespace

DType FlatNode::TypeAttr() const {
  if (attrs == nullptr && native_attrs == nullptr) return DType::kInvalid;
  const AttrReader r = reader();
  if (r.Has("T")) {
    const Result<DType> t = r.GetType("T");
    return t.ok() ? *t : DType::kInvalid;
  }
  // The ops whose OpDef gives T a default that graph passes look at.
  for (std::string_view o : {"LeakyRelu", "MaxPool", "MaxPoolV2", "LRN"})
    if (op == o) return DType::kFloat;
  return DType::kInvalid;
}

Result<FunctionInterface> InterfaceOf(const tensorflow::FunctionDef& fdef) {
  const auto& sig = fdef.signature();
  FunctionInterface f;
  f.name = sig.name();
  for (const auto& a : sig.input_arg()) {
    KILN_ASSIGN_OR_RETURN_CTX(DType t, DTypeFromProto(a.type()), "function '", f.name,
                              "', argument '", a.name(), "'");
    f.arg_names.push_back(a.name());
    f.arg_dtypes.push_back(t);
  }
  if (auto it = fdef.attr().find("_input_shapes"); it != fdef.attr().end() && it->second.has_list())
    for (const auto& shape : it->second.list().shape()) {
      auto s = PartialShapeFromProto(shape);
      f.input_shapes.push_back(s.ok() ? *s : PartialShape::UnknownRank());
    }
  for (const auto& o : sig.output_arg()) {
    KILN_ASSIGN_OR_RETURN_CTX(DType t, DTypeFromProto(o.type()), "function '", f.name,
                              "', output '", o.name(), "'");
    f.output_names.push_back(o.name());
    f.output_dtypes.push_back(t);
  }
  return f;
}

Result<FlatGraph> FlattenFunction(const tensorflow::FunctionDef& fdef,
                                  const FunctionLibrary& library) {
  FlatGraph g;
  std::vector<Edge> args;
  const auto& sig = fdef.signature();
  for (int i = 0; i < sig.input_arg_size(); ++i) {
    FlatNode a;
    a.name = sig.input_arg(i).name();
    a.op = "_Arg";
    a.arg_index = i;
    g.nodes.push_back(std::move(a));
    args.push_back(Edge{i, 0});
  }
  FunctionImporter importer(&g, library, fdef, "", std::move(args), {}, 0);
  KILN_ASSIGN_OR_RETURN(g.outputs, importer.Import(nullptr));
  return g;
}

Edge AddConstNode(FlatGraph* g, std::string name, Tensor value) {
  g->owned_values.push_back(std::move(value));
  FlatNode c;
  c.name = std::move(name);
  c.op = "Const";
  c.value = &g->owned_values.back();
  c.def = FindOp("Const");
  g->nodes.push_back(std::move(c));
  return Edge{static_cast<int>(g->nodes.size()) - 1, 0};
}

Edge AddCastNode(FlatGraph* g, const Edge& from, DType src, DType dst, std::string name) {
  g->owned_attrs.emplace_back();
  ProtoAttrMap& attrs = g->owned_attrs.back();
  attrs["SrcT"].set_type(static_cast<tensorflow::DataType>(DTypeToProto(src)));
  attrs["DstT"].set_type(static_cast<tensorflow::DataType>(DTypeToProto(dst)));
  attrs["Truncate"].set_b(false);
  FlatNode cast;
  cast.name = std::move(name);
  cast.op = "Cast";
  cast.attrs = &attrs;
  cast.inputs = {from};
  cast.def = FindOp("Cast");
  g->nodes.push_back(std::move(cast));
  return Edge{static_cast<int>(g->nodes.size()) - 1, 0};
}

}  // namespace kiln::exec
