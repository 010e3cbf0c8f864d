// Recording a trace and turning it into a FunctionDef.
#include "graph.h"

#include <algorithm>
#include <atomic>
#include <numeric>
#include <set>
#include <utility>

#include "kiln/core/proto_convert.h"
#include "kiln/exec/executor.h"
#include "kiln/exec/op_runner.h"

namespace kiln::trace::internal {
namespace {

thread_local Graph* g_current = nullptr;

bool IsLowerAlnum(char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'); }

TensorSpec ResourceSpec() { return TensorSpec{DType::kResource, PartialShape::Scalar()}; }

tensorflow::DataType ProtoType(DType t) {
  return static_cast<tensorflow::DataType>(DTypeToProto(t));
}

}  // namespace

// ---- access helpers ---------------------------------------------------------------------------

Value ValueAccess::Symbolic(std::shared_ptr<Graph> graph, int node, int index, TensorSpec spec) {
  Value v;
  v.kind_ = Value::Kind::kSymbolic;
  v.graph_ = std::move(graph);
  v.node_ = node;
  v.index_ = index;
  v.spec_ = spec;
  v.id_ = NextValueId();
  return v;
}

void ValueAccess::RefineShape(Value* v, const PartialShape& shape) {
  Result<PartialShape> merged = v->spec_.shape.MergeWith(shape);
  if (merged.ok()) v->spec_.shape = *merged;
}

std::string ArgNameFrom(std::string_view name) {
  std::string out;
  out.reserve(name.size());
  for (char c : name) {
    if (c >= 'A' && c <= 'Z') {
      out += static_cast<char>(c - 'A' + 'a');
    } else if (IsLowerAlnum(c) || c == '_') {
      out += c;
    } else {
      out += '_';
    }
  }
  // OpDef arg names must match [a-z][a-z0-9_]*.
  if (out.empty() || !(out[0] >= 'a' && out[0] <= 'z')) out = "arg" + out;
  return out;
}

// ---- attrs --------------------------------------------------------------------------------

tensorflow::AttrValue TypeAttr(DType t) {
  tensorflow::AttrValue v;
  v.set_type(ProtoType(t));
  return v;
}

tensorflow::AttrValue TypeListAttr(std::span<const DType> types) {
  tensorflow::AttrValue v;
  auto* list = v.mutable_list();  // present even when empty: `list {}`
  for (DType t : types) list->add_type(ProtoType(t));
  return v;
}

tensorflow::AttrValue ShapeAttr(const PartialShape& shape) {
  tensorflow::AttrValue v;
  PartialShapeToProto(shape, v.mutable_shape());
  return v;
}

tensorflow::AttrValue ShapeListAttr(std::span<const PartialShape> shapes) {
  tensorflow::AttrValue v;
  auto* list = v.mutable_list();
  for (const PartialShape& s : shapes) PartialShapeToProto(s, list->add_shape());
  return v;
}

tensorflow::AttrValue StringAttr(std::string_view s) {
  tensorflow::AttrValue v;
  v.set_s(std::string(s));
  return v;
}

tensorflow::AttrValue IntAttr(int64_t i) {
  tensorflow::AttrValue v;
  v.set_i(i);
  return v;
}

tensorflow::AttrValue FuncAttr(std::string_view name) {
  tensorflow::AttrValue v;
  v.mutable_func()->set_name(std::string(name));
  return v;
}

// ---- Graph --------------------------------------------------------------------------------

Graph::Graph(std::string function_name, bool allow_variable_creation, Graph* parent)
    : function_name_(std::move(function_name)),
      allow_variable_creation_(allow_variable_creation),
      parent_(parent) {}

bool Graph::IsAncestor(const Graph* g) const {
  for (const Graph* p = parent_; p != nullptr; p = p->parent_) {
    if (p == g) return true;
  }
  return false;
}

int64_t NextFunctionUid() {
  static std::atomic<int64_t> next{0};
  return next++;
}

Graph* Graph::Current() { return g_current; }

Graph::Activation::Activation(Graph* graph) : previous_(g_current) { g_current = graph; }
Graph::Activation::~Activation() { g_current = previous_; }

std::string Graph::UniqueName(std::string_view base) {
  std::string name(base);
  auto it = name_counts_.find(name);
  if (it == name_counts_.end()) {
    name_counts_.emplace(name, 1);
    return name;
  }
  for (int k = it->second;; ++k) {
    std::string candidate = name + "_" + std::to_string(k);
    if (name_counts_.count(candidate) == 0) {
      it->second = k + 1;
      name_counts_.emplace(candidate, 1);
      return candidate;
    }
  }
}

void Graph::PushScope(std::string_view name) { scopes_.emplace_back(name); }
void Graph::PopScope() {
  if (!scopes_.empty()) scopes_.pop_back();
}

void Graph::RecordError(const Status& status) {
  if (status_.ok() && !status.ok()) status_ = status;
}

Value Graph::AddArg(const std::string& user_name, const TensorSpec& spec) {
  GraphArg arg;
  arg.user_name = user_name;
  arg.name = UniqueName(ArgNameFrom(user_name));
  arg.spec = spec;
  args_.push_back(std::move(arg));
  return ValueAccess::Symbolic(shared_from_this(), -1, static_cast<int>(args_.size()) - 1, spec);
}

Value Graph::CaptureVariable(const std::shared_ptr<VariableState>& var) {
  auto it = capture_index_.find(var.get());
  if (it != capture_index_.end()) {
    return ValueAccess::Symbolic(shared_from_this(), -1, it->second, ResourceSpec());
  }
  if (parent_ != nullptr) {
    // The handle comes from the parent (which captures it from its own parent, up to the
    // function), so the control-flow node passes it in.
    Value outer = parent_->CaptureVariable(var);
    Result<Value> inner = CaptureValue(outer);
    if (!inner.ok()) {
      RecordError(inner.status());
      return Value::Error(inner.status());
    }
    const int index = ValueAccess::index(*inner);
    args_[index].variable = var;
    capture_index_.emplace(var.get(), index);
    return *inner;
  }
  GraphArg arg;
  arg.spec = ResourceSpec();
  arg.variable = var;
  args_.push_back(std::move(arg));
  const int index = static_cast<int>(args_.size()) - 1;
  capture_index_.emplace(var.get(), index);
  return ValueAccess::Symbolic(shared_from_this(), -1, index, ResourceSpec());
}

Result<Value> Graph::CaptureValue(const Value& outer) {
  if (!outer.is_symbolic() || ValueAccess::graph(outer) == this) return outer;
  Graph* g = ValueAccess::graph(outer);
  if (!IsAncestor(g)) {
    return InvalidArgument("a symbolic value of the trace of '", g->function_name(),
                           "' was used while tracing '", function_name_,
                           "'; values do not cross traces: pass it as an argument");
  }
  Value in_parent = outer;
  if (g != parent_) {
    KILN_ASSIGN_OR_RETURN(in_parent, parent_->CaptureValue(outer));
  }
  const auto key = std::make_tuple(static_cast<const Graph*>(parent_), ValueAccess::node(in_parent),
                                   ValueAccess::index(in_parent));
  auto it = capture_value_index_.find(key);
  if (it != capture_value_index_.end()) {
    return ValueAccess::Symbolic(shared_from_this(), -1, it->second, in_parent.spec());
  }
  const int node = ValueAccess::node(in_parent);
  const int out = ValueAccess::index(in_parent);
  std::string base;
  if (node >= 0) {
    base = parent_->nodes_[node].name;
  } else {
    const GraphArg& pa = parent_->args_[out];
    base = !pa.name.empty() ? pa.name : pa.variable != nullptr ? pa.variable->name : "capture";
  }
  GraphArg arg;
  arg.name = UniqueName(ArgNameFrom(base));
  arg.spec = in_parent.spec();
  arg.is_capture = true;
  args_.push_back(std::move(arg));
  const int index = static_cast<int>(args_.size()) - 1;
  capture_value_index_.emplace(key, index);
  captured_values_.push_back(CapturedValue{in_parent, index});
  return ValueAccess::Symbolic(shared_from_this(), -1, index, in_parent.spec());
}

const Tensor* Graph::ConstantOf(const Value& v) {
  if (v.is_eager()) return &ValueAccess::tensor(v);
  if (!v.is_symbolic() || ValueAccess::node(v) < 0) return nullptr;
  const GraphNode& n = ValueAccess::graph(v)->nodes_[ValueAccess::node(v)];
  return n.constant.has_value() ? &*n.constant : nullptr;
}

void Graph::AddFunction(const tensorflow::FunctionDef& fdef) {
  for (const auto& f : library_.function()) {
    if (f.signature().name() == fdef.signature().name()) return;
  }
  *library_.add_function() = fdef;
}

void Graph::AddFunctionBody(const std::string& name, std::shared_ptr<const FunctionBody> body) {
  bodies_.emplace(name, std::move(body));
}

void Graph::ReleaseFunctionBodies() {
  // Moved out first, so a body reached twice (or a cycle) is visited once.
  auto bodies = std::move(bodies_);
  bodies_.clear();
  for (auto& [name, body] : bodies)
    if (body != nullptr && body->graph != nullptr) body->graph->ReleaseFunctionBodies();
}

std::shared_ptr<const FunctionBody> Graph::FindFunctionBody(const std::string& name) const {
  auto it = bodies_.find(name);
  return it == bodies_.end() ? nullptr : it->second;
}

Result<Ref> Graph::Resolve(const Value& v) {
  if (v.is_symbolic()) {
    Graph* g = ValueAccess::graph(v);
    if (g != this && IsAncestor(g)) {
      KILN_ASSIGN_OR_RETURN(Value inner, CaptureValue(v));
      return Ref{ValueAccess::node(inner), ValueAccess::index(inner)};
    }
    if (g != this) {
      return InvalidArgument("a symbolic value of the trace of '", g->function_name(),
                             "' was used while tracing '", function_name_,
                             "'; values do not cross traces: pass it as an argument");
    }
    return Ref{ValueAccess::node(v), ValueAccess::index(v)};
  }
  if (!v.is_eager()) return v.status();
  // A host tensor used in the body is frozen into the graph as a constant.
  const Tensor& t = ValueAccess::tensor(v);
  if (!HoldsData(t.dtype())) {
    return InvalidArgument("a ", DTypeShortName(t.dtype()),
                           " tensor cannot be frozen into a graph; use variables through "
                           "kiln::trace::Variable");
  }
  GraphNode node;
  node.name = UniqueName(ScopePrefix() + "Const");
  node.op = "Const";
  node.def = exec::FindOp("Const");
  node.attrs["dtype"] = TypeAttr(t.dtype());
  KILN_RETURN_IF_ERROR(TensorToProto(t, node.attrs["value"].mutable_tensor()));
  node.outputs = {TensorSpec{t.dtype(), PartialShape(t.shape())}};
  node.constant = t;
  nodes_.push_back(std::move(node));
  return Ref{static_cast<int>(nodes_.size()) - 1, 0};
}

std::string Graph::ScopePrefix() const {
  std::string prefix;
  for (const std::string& s : scopes_) prefix += s + "/";
  return prefix;
}

Values Graph::AddNode(std::string_view op, std::string_view base_name,
                      std::span<const Value> inputs, AttrMap attrs) {
  auto fail = [this](Status s) {
    RecordError(s);
    return Values{Value::Error(std::move(s))};
  };
  const exec::OpDefinition* def = exec::FindOp(op);
  if (def == nullptr) return fail(Unimplemented("op '", op, "' is not in kiln's op table"));

  std::vector<Ref> refs;
  std::vector<TensorSpec> specs;
  for (const Value& v : inputs) {
    Result<Ref> ref = Resolve(v);
    if (!ref.ok()) return fail(ref.status());
    refs.push_back(*ref);
    specs.push_back(v.spec());
  }
  // Pointers into nodes_ are taken only now: resolving may have added Const nodes.
  std::vector<const Tensor*> constants;
  for (const Ref& r : refs) {
    const bool is_const = r.node >= 0 && nodes_[r.node].constant.has_value();
    constants.push_back(is_const ? &*nodes_[r.node].constant : nullptr);
  }

  std::string name = UniqueName(ScopePrefix() + std::string(base_name.empty() ? op : base_name));
  exec::PrepareContext ctx;
  ctx.node_name = name;
  ctx.op = def->name;
  ctx.attrs = exec::AttrReader(&attrs);
  ctx.inputs = specs;
  ctx.constant_inputs = constants;
  // Control-flow ops prepare their branch / body functions, found in this graph's library.
  exec::FunctionLibrary library(library_);
  ctx.library = &library;
  Status prepared = def->prepare(ctx);
  if (!prepared.ok()) return fail(prepared);

  GraphNode node;
  node.name = std::move(name);
  node.op = std::string(op);
  node.def = def;
  node.inputs = refs;
  node.outputs = ctx.outputs;
  if (node.op == "Const") {
    // Known values feed later nodes' Prepare (shapes from a Transpose perm, a Reshape shape).
    auto value = attrs.find("value");
    if (value != attrs.end() && value->second.has_tensor()) {
      Result<Tensor> t = TensorFromProto(value->second.tensor());
      if (t.ok()) node.constant = *std::move(t);
    }
  }
  node.stateful = (def->flags & exec::kOpStateful) != 0;
  const int index = static_cast<int>(nodes_.size());
  if (node.stateful) {
    // Automatic control dependencies: side effects run in program order.
    const bool is_data_input = std::any_of(refs.begin(), refs.end(),
                                           [&](const Ref& r) { return r.node == last_stateful_; });
    // TensorFlow lowers an If / While to switch/merge dataflow whose outputs come one by one:
    // using one of them does not wait for the rest of its side effects (variable reads in a
    // loop body), the control edge does.
    const bool lowered = last_stateful_ >= 0 && (nodes_[last_stateful_].op == "If" ||
                                                 nodes_[last_stateful_].op == "While");
    if (last_stateful_ >= 0 && (!is_data_input || lowered)) {
      node.control_inputs.push_back(last_stateful_);
    }
    last_stateful_ = index;
  }
  for (const Ref& r : refs) {
    if (r.node < 0 && args_[r.index].variable != nullptr && args_[r.index].first_consumer < 0) {
      args_[r.index].first_consumer = index;
    }
  }
  node.attrs = std::move(attrs);
  nodes_.push_back(std::move(node));

  Values out;
  const auto& specs_out = nodes_.back().outputs;
  for (size_t i = 0; i < specs_out.size(); ++i) {
    out.push_back(
        ValueAccess::Symbolic(shared_from_this(), index, static_cast<int>(i), specs_out[i]));
  }
  return out;
}

Values Graph::AddCallNode(std::string_view op, std::string_view base_name,
                          std::span<const Value> inputs, AttrMap attrs,
                          std::vector<TensorSpec> output_specs, bool stateful) {
  std::vector<Ref> refs;
  for (const Value& v : inputs) {
    Result<Ref> ref = Resolve(v);
    if (!ref.ok()) {
      RecordError(ref.status());
      return Values{Value::Error(ref.status())};
    }
    refs.push_back(*ref);
  }
  GraphNode node;
  node.name = UniqueName(ScopePrefix() + std::string(base_name.empty() ? op : base_name));
  node.op = std::string(op);
  node.inputs = refs;
  node.outputs = std::move(output_specs);
  node.stateful = stateful;
  node.attrs = std::move(attrs);
  const int index = static_cast<int>(nodes_.size());
  if (stateful) {
    if (last_stateful_ >= 0) node.control_inputs.push_back(last_stateful_);
    last_stateful_ = index;
  }
  for (const Ref& r : refs) {
    if (r.node < 0 && args_[r.index].variable != nullptr && args_[r.index].first_consumer < 0) {
      args_[r.index].first_consumer = index;
    }
  }
  nodes_.push_back(std::move(node));
  Values out;
  const auto& specs_out = nodes_.back().outputs;
  for (size_t i = 0; i < specs_out.size(); ++i) {
    out.push_back(
        ValueAccess::Symbolic(shared_from_this(), index, static_cast<int>(i), specs_out[i]));
  }
  return out;
}

std::string Graph::InputString(const Ref& ref) const {
  if (ref.node < 0) return args_[ref.index].name;
  const GraphNode& n = nodes_[ref.node];
  std::string_view arg = "output";
  int index = ref.index;
  if (n.def != nullptr) {
    auto [name, i] = exec::OutputArgOf(*n.def, ref.index);
    if (!name.empty()) {
      arg = name;
      index = i;
    }
  }
  return n.name + ":" + std::string(arg) + ":" + std::to_string(index);
}

std::vector<std::shared_ptr<VariableState>> Graph::captures() const {
  std::vector<std::shared_ptr<VariableState>> out;
  for (const GraphArg& a : args_) {
    if (a.variable != nullptr) out.push_back(a.variable);
  }
  return out;
}

Result<tensorflow::FunctionDef> Graph::Finish(const Values& outputs,
                                              std::vector<TensorSpec>* output_specs,
                                              const std::vector<int>* arg_order) {
  KILN_RETURN_IF_ERROR(status_);
  std::vector<Ref> refs;
  output_specs->clear();
  for (size_t i = 0; i < outputs.size(); ++i) {
    KILN_RETURN_IF_ERROR_CTX(outputs[i].status(), "output ", i);
    KILN_ASSIGN_OR_RETURN_CTX(Ref r, Resolve(outputs[i]), "output ", i);
    refs.push_back(r);
    output_specs->push_back(outputs[i].spec());
  }

  std::vector<int> stateful;
  for (int i = 0; i < static_cast<int>(nodes_.size()); ++i) {
    if (nodes_[i].stateful) stateful.push_back(i);
  }

  // Outputs go through Identity nodes that wait for every side effect, as TensorFlow's
  // automatic control dependencies make them.
  std::set<std::string> arg_names;
  for (const GraphArg& a : args_) {
    if (!a.name.empty()) arg_names.insert(a.name);
  }
  std::vector<std::pair<std::string, std::string>> rets;  // output arg -> node
  for (size_t i = 0; i < refs.size(); ++i) {
    GraphNode node;
    node.name = UniqueName("Identity");
    node.op = "Identity";
    node.def = exec::FindOp("Identity");
    node.attrs["T"] = TypeAttr((*output_specs)[i].dtype);
    node.inputs = {refs[i]};
    node.control_inputs = stateful;
    node.outputs = {(*output_specs)[i]};
    std::string out_name = ArgNameFrom(node.name);
    for (int k = 1; arg_names.count(out_name) != 0; ++k) {
      out_name = ArgNameFrom(node.name) + "_" + std::to_string(k);
    }
    arg_names.insert(out_name);
    rets.emplace_back(out_name, node.name);
    nodes_.push_back(std::move(node));
  }

  // Captured variables are named after their first consumer ("readvariableop_resource").
  for (GraphArg& a : args_) {
    if (a.variable == nullptr) continue;
    std::string base = a.first_consumer >= 0 ? ArgNameFrom(nodes_[a.first_consumer].name)
                                             : ArgNameFrom(a.variable->name);
    a.name = UniqueName(base + "_resource");
  }

  tensorflow::FunctionDef fdef;
  auto* sig = fdef.mutable_signature();
  sig->set_name(function_name_);
  std::vector<PartialShape> input_shapes;
  std::vector<int> order(args_.size());
  std::iota(order.begin(), order.end(), 0);
  if (arg_order != nullptr) {
    std::vector<int> sorted = *arg_order;
    std::sort(sorted.begin(), sorted.end());
    if (sorted != order) {
      return Internal("function '", function_name_, "': the argument order is not a permutation");
    }
    order = *arg_order;
  }
  for (size_t i = 0; i < order.size(); ++i) {
    const GraphArg& a = args_[order[i]];
    auto* in = sig->add_input_arg();
    in->set_name(a.name);
    in->set_type(ProtoType(a.spec.dtype));
    input_shapes.push_back(a.variable || a.spec.dtype == DType::kResource
                               ? PartialShape::UnknownRank()
                               : a.spec.shape);
    if (a.variable == nullptr && !a.is_capture) {
      (*(*fdef.mutable_arg_attr())[static_cast<uint32_t>(i)]
            .mutable_attr())["_user_specified_name"] = StringAttr(a.user_name);
    }
  }
  for (size_t i = 0; i < rets.size(); ++i) {
    auto* out = sig->add_output_arg();
    out->set_name(rets[i].first);
    out->set_type(ProtoType((*output_specs)[i].dtype));
    (*fdef.mutable_ret())[rets[i].first] = rets[i].second + ":output:0";
  }
  std::vector<std::string> control_names;
  for (int i : stateful) control_names.push_back(nodes_[i].name);
  std::sort(control_names.begin(), control_names.end());
  for (const std::string& n : control_names) {
    sig->add_control_output(n);
    (*fdef.mutable_control_ret())[n] = n;
  }
  sig->set_is_stateful(!stateful.empty());

  for (const GraphNode& n : nodes_) {
    auto* nd = fdef.add_node_def();
    nd->set_name(n.name);
    nd->set_op(n.op);
    for (const Ref& r : n.inputs) nd->add_input(InputString(r));
    for (int c : n.control_inputs) nd->add_input("^" + nodes_[c].name);
    *nd->mutable_attr() = n.attrs;
  }
  (*fdef.mutable_attr())["_input_shapes"] = ShapeListAttr(input_shapes);
  return fdef;
}

// ---- eager --------------------------------------------------------------------------------

Result<std::vector<Tensor>> RunEagerOp(std::string_view op, std::string_view node_name,
                                       const AttrMap& attrs, std::span<const Tensor> inputs) {
  return exec::RunSingleOp(op, node_name, attrs, inputs);
}

}  // namespace kiln::trace::internal
