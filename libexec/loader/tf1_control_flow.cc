#include "loader/tf1_control_flow.h"

#include <algorithm>
#include <optional>
#include <set>
#include <string_view>
#include <utility>

#include "graph/flat_graph.h"
#include "loader/tf1_functionalize.h"

namespace kiln::exec {
namespace tf1 {

bool IsOp(std::string_view o, std::string_view op) {
  if (o.substr(0, 3) == "Ref") o.remove_prefix(3);
  return o == op;
}
bool IsOp(const NodeDef& n, std::string_view op) { return IsOp(n.op(), op); }
bool IsSwitch(const NodeDef& n) { return IsOp(n, "Switch"); }
bool IsMerge(const NodeDef& n) { return IsOp(n, "Merge"); }
bool IsEnter(const NodeDef& n) { return IsOp(n, "Enter"); }
bool IsExit(const NodeDef& n) { return IsOp(n, "Exit"); }
bool IsNextIteration(const NodeDef& n) { return IsOp(n, "NextIteration"); }
bool IsLoopCond(const NodeDef& n) { return n.op() == "LoopCond"; }

Ref ParseRef(const std::string& in) {
  Ref r;
  std::string_view s = in;
  if (!s.empty() && s[0] == '^') {
    r.control = true;
    r.node = std::string(s.substr(1));
    return r;
  }
  const size_t colon = s.rfind(':');
  if (colon != std::string_view::npos) {
    std::string_view idx = s.substr(colon + 1);
    if (!idx.empty() && idx.size() < 9 && idx.find_first_not_of("0123456789") == idx.npos) {
      r.node = std::string(s.substr(0, colon));
      r.index = std::stoi(std::string(idx));
      return r;
    }
  }
  r.node = in;
  return r;
}

std::string TensorName(const std::string& node, int index) {
  return index == 0 ? node : node + ":" + std::to_string(index);
}

const tensorflow::AttrValue* FindAttr(const NodeDef& n, const char* name) {
  auto it = n.attr().find(name);
  return it == n.attr().end() ? nullptr : &it->second;
}

DataType TypeAttr(const NodeDef& n, const char* name) {
  const tensorflow::AttrValue* a = FindAttr(n, name);
  return a != nullptr && a->value_case() == tensorflow::AttrValue::kType ? a->type()
                                                                         : tensorflow::DT_INVALID;
}

// The dtype of output `index` of `node`, from the attrs the producing op declares it with.
Result<DataType> DTypeOf(const Graph& g, const std::string& node, int index) {
  const int p = g.Find(node);
  if (p < 0) {
    auto it = g.external_dtypes->find(node);
    if (it != g.external_dtypes->end() && index == 0) return it->second;
    return InvalidArgument("cannot tell the dtype of tensor '", TensorName(node, index), "'");
  }
  const NodeDef& n = g.nodes[p];
  const char* list = n.op() == "If" ? "Tout" : n.op() == "While" ? "T" : nullptr;
  if (list != nullptr) {
    const tensorflow::AttrValue* a = FindAttr(n, list);
    if (a != nullptr && index < a->list().type_size()) return a->list().type(index);
  } else if (IsMerge(n) && index == 1) {
    return tensorflow::DT_INT32;
  } else if (index == 0 || IsSwitch(n)) {
    for (const char* attr : {"dtype", "out_type", "output_type", "DstT", "T"})
      if (DataType t = TypeAttr(n, attr); t != tensorflow::DT_INVALID) return t;
  }
  return InvalidArgument("cannot tell the dtype of tensor '", TensorName(node, index), "' (op ",
                         n.op(), ") that a TF1 loop or conditional takes in");
}

NodeDef ArgNode(const std::string& name, DataType dtype) {
  NodeDef n;
  n.set_name(name);
  n.set_op(kArgOp);
  (*n.mutable_attr())["T"].set_type(dtype);
  return n;
}

NodeDef IdentityNode(const std::string& name, const std::string& input, DataType dtype) {
  NodeDef n;
  n.set_name(name);
  n.set_op("Identity");
  n.add_input(input);
  (*n.mutable_attr())["T"].set_type(dtype);
  return n;
}

void SetFunc(NodeDef* n, const char* attr, const std::string& fn) {
  (*n->mutable_attr())[attr].mutable_func()->set_name(fn);
}

void SetTypes(NodeDef* n, const char* attr, const std::vector<DataType>& types) {
  auto* list = (*n->mutable_attr())[attr].mutable_list();
  for (DataType t : types) list->add_type(t);
}

// A function over `g` (argument nodes in order, then the body) returning `rets`. Nodes that
// nothing in it reads and no return names run as control outputs (a branch's side effects).
void MakeFunction(const Graph& g, const std::string& name, const std::vector<std::string>& rets,
                  const std::vector<DataType>& ret_types, Context* cx) {
  auto fdef = std::make_unique<tensorflow::FunctionDef>();
  (*fdef->mutable_attr())[kGraphStyleInputsAttr].set_b(true);  // its nodes keep GraphDef names
  auto* sig = fdef->mutable_signature();
  sig->set_name(name);
  std::set<std::string> args;
  for (const NodeDef& n : g.nodes)
    if (n.op() == kArgOp) {
      auto* a = sig->add_input_arg();
      a->set_name(n.name());
      a->set_type(TypeAttr(n, "T"));
      args.insert(n.name());
    }
  std::set<std::string> returned;
  for (size_t i = 0; i < rets.size(); ++i) {
    const std::string out = "output_" + std::to_string(i);
    auto* o = sig->add_output_arg();
    o->set_name(out);
    o->set_type(ret_types[i]);
    const Ref r = ParseRef(rets[i]);
    (*fdef->mutable_ret())[out] = args.count(r.node) ? r.node : rets[i];
    returned.insert(r.node);
  }
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    const NodeDef& n = g.nodes[i];
    if (n.op() == kArgOp) continue;
    NodeDef* copy = fdef->add_node_def();
    *copy = n;
    copy->clear_input();
    for (const std::string& in : n.input()) {
      const Ref r = ParseRef(in);
      if (!args.count(r.node)) {
        copy->add_input(in);
      } else if (!r.control) {
        copy->add_input(r.node);  // an argument has one output, named by the argument
      }
    }
    if (g.consumers[i].empty() && !returned.count(n.name())) {
      sig->add_control_output(n.name());
      (*fdef->mutable_control_ret())[n.name()] = n.name();
    }
  }
  cx->functions->push_back(std::move(fdef));
}

Result<std::vector<int>> TopologicalOrder(const Graph& g, bool skip_back_edges) {
  const int n = static_cast<int>(g.nodes.size());
  std::vector<int> indegree(n, 0);
  auto counts = [&](int producer) {
    return producer >= 0 && !(skip_back_edges && IsNextIteration(g.nodes[producer]));
  };
  for (int v = 0; v < n; ++v)
    for (const std::string& in : g.nodes[v].input())
      if (counts(g.Find(ParseRef(in).node))) ++indegree[v];
  std::vector<int> order, ready;
  for (int v = n - 1; v >= 0; --v)
    if (indegree[v] == 0) ready.push_back(v);
  while (!ready.empty()) {
    const int v = ready.back();
    ready.pop_back();
    order.push_back(v);
    if (skip_back_edges && IsNextIteration(g.nodes[v])) continue;
    for (int c : g.consumers[v])
      for (const std::string& in : g.nodes[c].input())
        if (g.Find(ParseRef(in).node) == v && --indegree[c] == 0) ready.push_back(c);
  }
  if (static_cast<int>(order.size()) != n) {
    for (int v = 0; v < n; ++v)
      if (indegree[v] > 0)
        return InvalidArgument("node '", g.nodes[v].name(), "' (", g.nodes[v].op(),
                               ") is on a cycle that does not pass through a NextIteration");
  }
  return order;
}

}  // namespace tf1

using tensorflow::NodeDef;
using tf1::Context;
using tf1::Graph;
using tf1::IsOp;

namespace {

bool IsControlFlow(const NodeDef& n) { return IsTf1ControlFlowOp(n.op()); }

}  // namespace

bool IsTf1ControlFlowOp(std::string_view op) {
  return IsOp(op, "Switch") || IsOp(op, "Merge") || IsOp(op, "Enter") || IsOp(op, "Exit") ||
         IsOp(op, "NextIteration") || op == "LoopCond";
}

bool HasTf1ControlFlow(const std::vector<tensorflow::NodeDef>& nodes) {
  return std::any_of(nodes.begin(), nodes.end(), IsControlFlow);
}

Status FunctionalizeTf1ControlFlow(
    std::vector<tensorflow::NodeDef>* nodes, const std::string& prefix,
    const std::map<std::string, tensorflow::DataType>& external_dtypes,
    std::vector<std::unique_ptr<tensorflow::FunctionDef>>* functions) {
  Graph g;
  g.nodes = std::move(*nodes);
  g.external_dtypes = &external_dtypes;
  g.Reindex();
  Context cx{prefix, functions, {}};
  Status s = FunctionalizeLoops(&g, &cx);
  if (s.ok()) s = FunctionalizeConds(&g, &cx);
  *nodes = std::move(g.nodes);
  if (!s.ok()) return s.WithContext("turning TF1 control flow into If and While");
  for (const NodeDef& n : *nodes)
    if (IsControlFlow(n))
      return InvalidArgument("TF1 control-flow node '", n.name(), "' (", n.op(),
                             ") is outside every loop and conditional");
  return OkStatus();
}

}  // namespace kiln::exec
