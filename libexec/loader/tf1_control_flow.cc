#include "loader/tf1_control_flow.h"

#include <algorithm>
#include <optional>
#include <set>
#include <string_view>
#include <utility>

namespace kiln::exec {
namespace {

using tensorflow::DataType;
using tensorflow::NodeDef;

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
bool IsControlFlow(const NodeDef& n) { return IsTf1ControlFlowOp(n.op()); }

// A function argument while a body is being assembled (MakeFunction turns it into input_arg).
constexpr char kArgOp[] = "_KilnFunctionArg";

struct Ref {
  std::string node;
  int index = 0;
  bool control = false;
};

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

// A graph being rewritten: nodes by position, looked up by name (Reindex after each rewrite).
struct Graph {
  std::vector<NodeDef> nodes;
  std::map<std::string, int> index;
  std::vector<std::vector<int>> consumers;  // by data or control edge
  const std::map<std::string, DataType>* external_dtypes = nullptr;

  void Reindex() {
    index.clear();
    for (size_t i = 0; i < nodes.size(); ++i) index[nodes[i].name()] = static_cast<int>(i);
    consumers.assign(nodes.size(), {});
    for (size_t i = 0; i < nodes.size(); ++i)
      for (const std::string& in : nodes[i].input()) {
        const int p = Find(ParseRef(in).node);
        if (p >= 0) consumers[p].push_back(static_cast<int>(i));
      }
  }
  int Find(const std::string& name) const {
    auto it = index.find(name);
    return it == index.end() ? -1 : it->second;
  }
  std::string UniqueName(const std::string& base) const {
    std::string name = base;
    for (int i = 1; index.count(name); ++i) name = base + "_" + std::to_string(i);
    return name;
  }
  // Drops the nodes marked in `drop` (by position) and appends `add`.
  void Replace(const std::vector<char>& drop, std::vector<NodeDef> add) {
    std::vector<NodeDef> kept;
    for (size_t i = 0; i < nodes.size(); ++i)
      if (!drop[i]) kept.push_back(std::move(nodes[i]));
    for (NodeDef& n : add) kept.push_back(std::move(n));
    nodes = std::move(kept);
    Reindex();
  }
};

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

// What the rewrite shares: where functions go and the names they have taken.
struct Context {
  std::string prefix;
  std::vector<std::unique_ptr<tensorflow::FunctionDef>>* functions;
  std::set<std::string> taken;

  std::string FunctionName(const std::string& base) {
    std::string name = prefix + "/" + base;
    for (int i = 1; !taken.insert(name).second; ++i)
      name = prefix + "/" + base + "_" + std::to_string(i);
    return name;
  }
};

// A function over `g` (argument nodes in order, then the body) returning `rets`. Nodes that
// nothing in it reads and no return names run as control outputs (a branch's side effects).
void MakeFunction(const Graph& g, const std::string& name, const std::vector<std::string>& rets,
                  const std::vector<DataType>& ret_types, Context* cx) {
  auto fdef = std::make_unique<tensorflow::FunctionDef>();
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

// ---- Conditionals ------------------------------------------------------------------------------

// Which branches a tensor is computed in: (predicate, branch) pairs, outermost first.
using CondState = std::vector<std::pair<std::string, int>>;

bool IsPrefix(const CondState& a, const CondState& b) {
  return a.size() <= b.size() && std::equal(a.begin(), a.end(), b.begin());
}

// A Switch's predicate, seen through the Identity nodes tf.cond puts in front of it.
std::string PredicateKey(const Graph& g, const std::string& input) {
  Ref r = ParseRef(input);
  for (int guard = 0; guard < 1000; ++guard) {
    const int p = g.Find(r.node);
    if (p < 0 || g.nodes[p].op() != "Identity" || g.nodes[p].input_size() == 0) break;
    r = ParseRef(g.nodes[p].input(0));
  }
  return TensorName(r.node, r.index);
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

Status FunctionalizeConds(Graph* g, Context* cx);

// The cond states of every node (a Switch: of its input side), or an error naming a node that
// joins two branches of one predicate.
struct CondAnalysis {
  std::vector<CondState> state;
  std::vector<std::string> key;  // a Switch's predicate, a cond Merge's predicate
};

Result<CondAnalysis> AnalyzeConds(const Graph& g) {
  KILN_ASSIGN_OR_RETURN(std::vector<int> order, TopologicalOrder(g, false));
  CondAnalysis a;
  a.state.resize(g.nodes.size());
  a.key.resize(g.nodes.size());
  for (size_t v = 0; v < g.nodes.size(); ++v)
    if (IsSwitch(g.nodes[v]) && g.nodes[v].input_size() >= 2)
      a.key[v] = PredicateKey(g, g.nodes[v].input(1));
  auto state_of = [&](const Ref& r) -> CondState {
    const int p = g.Find(r.node);
    if (p < 0) return {};
    CondState s = a.state[p];
    if (IsSwitch(g.nodes[p]) && !r.control) s.emplace_back(a.key[p], r.index);
    return s;
  };
  for (int v : order) {
    const NodeDef& n = g.nodes[v];
    CondState joined;
    auto join = [&](const CondState& s) -> Status {
      if (IsPrefix(s, joined)) return OkStatus();
      if (IsPrefix(joined, s)) {
        joined = s;
        return OkStatus();
      }
      return InvalidArgument("node '", n.name(), "' (", n.op(),
                             ") takes inputs from both branches of a TF1 conditional; only a "
                             "Merge may join them");
    };
    if (IsMerge(n)) {
      std::vector<CondState> ins;
      for (const std::string& in : n.input()) {
        const Ref r = ParseRef(in);
        if (!r.control) ins.push_back(state_of(r));
      }
      if (ins.empty()) return InvalidArgument("Merge '", n.name(), "' has no data input");
      CondState prefix = ins[0];
      for (const CondState& s : ins) {
        size_t k = 0;
        while (k < prefix.size() && k < s.size() && prefix[k] == s[k]) ++k;
        prefix.resize(k);
      }
      std::string key;
      for (const CondState& s : ins) {
        if (s.size() != prefix.size() + 1 || (!key.empty() && s.back().first != key))
          return InvalidArgument("Merge '", n.name(),
                                 "' does not join the two branches of one TF1 conditional");
        key = s.back().first;
      }
      a.state[v] = prefix;
      a.key[v] = key;
      continue;
    }
    for (const std::string& in : n.input()) {
      Ref r = ParseRef(in);
      KILN_RETURN_IF_ERROR(join(state_of(r)));
    }
    a.state[v] = joined;
  }
  return a;
}

// Turns the innermost conditional of `g` into an If. False when none is left.
Result<bool> FunctionalizeOneCond(Graph* g, Context* cx) {
  KILN_ASSIGN_OR_RETURN(CondAnalysis a, AnalyzeConds(*g));
  const int n = static_cast<int>(g->nodes.size());
  int seed = -1;
  for (int v = 0; v < n; ++v)
    if (IsMerge(g->nodes[v]) &&
        (seed < 0 || a.state[v].size() > a.state[static_cast<size_t>(seed)].size()))
      seed = v;
  if (seed < 0) {
    for (int v = 0; v < n; ++v)
      if (IsSwitch(g->nodes[v]))
        return InvalidArgument("Switch '", g->nodes[v].name(),
                               "' has no Merge that joins its branches");
    return false;
  }
  const CondState outer = a.state[seed];
  const size_t d = outer.size();
  const std::string pred = a.key[seed];
  auto in_branch = [&](int v) {
    const CondState& s = a.state[v];
    return !IsSwitch(g->nodes[v]) && !IsMerge(g->nodes[v]) && s.size() > d && IsPrefix(outer, s) &&
           s[d].first == pred;
  };
  auto is_entry = [&](int v) {
    return IsSwitch(g->nodes[v]) && a.key[v] == pred && a.state[v] == outer;
  };
  auto is_merge = [&](int v) {
    return IsMerge(g->nodes[v]) && a.key[v] == pred && a.state[v] == outer;
  };
  auto member = [&](int v) { return in_branch(v) || is_entry(v) || is_merge(v); };
  // The conditional: what connects to the seed Merge through its branches.
  std::vector<char> in_cluster(n, 0);
  std::vector<int> stack = {seed};
  in_cluster[seed] = 1;
  while (!stack.empty()) {
    const int v = stack.back();
    stack.pop_back();
    std::vector<int> next;
    if (!is_entry(v))
      for (const std::string& in : g->nodes[v].input()) {
        const Ref r = ParseRef(in);
        if (is_merge(v) && r.control) continue;
        next.push_back(g->Find(r.node));
      }
    if (!is_merge(v))
      for (int c : g->consumers[v]) next.push_back(c);
    for (int u : next)
      if (u >= 0 && !in_cluster[u] && member(u)) {
        in_cluster[u] = 1;
        stack.push_back(u);
      }
  }
  std::vector<int> merges, entries, branch;
  for (int v = 0; v < n; ++v) {
    if (!in_cluster[v]) continue;
    (is_merge(v) ? merges : is_entry(v) ? entries : branch).push_back(v);
  }
  if (entries.empty())
    return InvalidArgument("Merge '", g->nodes[seed].name(), "' joins branches no Switch divides");
  for (int v : branch)
    for (int c : g->consumers[v])
      if (!in_cluster[c])
        return InvalidArgument("node '", g->nodes[c].name(), "' reads '", g->nodes[v].name(),
                               "' inside a TF1 conditional other than through its Merge");

  // Arguments: the switched tensors, then what the branches read from outside directly.
  std::vector<std::string> arg_inputs;
  std::vector<DataType> arg_types;
  std::map<int, int> entry_arg;
  std::map<std::string, int> outside_arg;
  for (int s : entries) {
    entry_arg[s] = static_cast<int>(arg_inputs.size());
    arg_inputs.push_back(g->nodes[s].input(0));
    arg_types.push_back(TypeAttr(g->nodes[s], "T"));
  }
  std::vector<std::string> controls;  // of the If: what the branches wait for outside
  for (int v : branch)
    for (const std::string& in : g->nodes[v].input()) {
      const Ref r = ParseRef(in);
      const int p = g->Find(r.node);
      if (p >= 0 && in_cluster[p]) continue;
      if (r.control) {
        controls.push_back("^" + r.node);
        continue;
      }
      if (p >= 0 && IsSwitch(g->nodes[p]))
        return InvalidArgument("node '", g->nodes[v].name(), "' reads Switch '", r.node,
                               "' of another TF1 conditional");
      const std::string t = TensorName(r.node, r.index);
      if (outside_arg.count(t)) continue;
      KILN_ASSIGN_OR_RETURN(DataType dt, DTypeOf(*g, r.node, r.index));
      outside_arg[t] = static_cast<int>(arg_inputs.size());
      arg_inputs.push_back(t);
      arg_types.push_back(dt);
    }
  for (int m : merges)
    for (const std::string& in : g->nodes[m].input())
      if (Ref r = ParseRef(in); r.control) controls.push_back(in);
  std::vector<DataType> out_types;
  for (int m : merges) out_types.push_back(TypeAttr(g->nodes[m], "T"));
  for (int m : merges)
    for (int c : g->consumers[m])
      for (const std::string& in : g->nodes[c].input())
        if (Ref r = ParseRef(in); r.node == g->nodes[m].name() && !r.control && r.index != 0)
          return InvalidArgument("node '", g->nodes[c].name(), "' reads the value_index of Merge '",
                                 r.node, "', which a functional If does not have");

  const std::string if_name = g->UniqueName(g->nodes[merges[0]].name() + "/_kiln_if");
  std::string fn_names[2];
  for (int b : {1, 0}) {
    const std::string arg_prefix = "kiln_cond_arg_";
    auto arg_name = [&](int i) { return arg_prefix + std::to_string(i); };
    // A reference inside branch b, rewritten for the function.
    auto rewrite = [&](const std::string& in, int where) -> Result<std::optional<std::string>> {
      const Ref r = ParseRef(in);
      const int p = g->Find(r.node);
      if (p >= 0 && in_cluster[p] && is_entry(p)) {
        if (r.control) return std::optional<std::string>();
        if (r.index != b)
          return InvalidArgument("node '", g->nodes[where].name(), "' reads output ", r.index,
                                 " of Switch '", r.node, "' from the other branch");
        return std::optional<std::string>(arg_name(entry_arg[p]));
      }
      if (p >= 0 && in_cluster[p]) return std::optional<std::string>(in);
      if (r.control) return std::optional<std::string>();
      return std::optional<std::string>(arg_name(outside_arg.at(TensorName(r.node, r.index))));
    };
    Graph fg;
    fg.external_dtypes = g->external_dtypes;
    for (size_t i = 0; i < arg_inputs.size(); ++i)
      fg.nodes.push_back(ArgNode(arg_name(static_cast<int>(i)), arg_types[i]));
    for (int v : branch) {
      if (a.state[v][d].second != b) continue;
      NodeDef copy = g->nodes[v];
      copy.clear_input();
      for (const std::string& in : g->nodes[v].input()) {
        KILN_ASSIGN_OR_RETURN(std::optional<std::string> r, rewrite(in, v));
        if (r) copy.add_input(*r);
      }
      fg.nodes.push_back(std::move(copy));
    }
    std::vector<std::string> rets;
    for (int m : merges) {
      std::optional<std::string> ret;
      for (const std::string& in : g->nodes[m].input()) {
        const Ref r = ParseRef(in);
        if (r.control) continue;
        const int p = g->Find(r.node);
        const bool from_b = p >= 0 && (is_entry(p) ? r.index == b : a.state[p][d].second == b);
        if (!from_b) continue;
        KILN_ASSIGN_OR_RETURN(ret, rewrite(in, m));
      }
      if (!ret)
        return InvalidArgument("Merge '", g->nodes[m].name(), "' has no input from the ",
                               b == 1 ? "true" : "false", " branch");
      rets.push_back(*ret);
    }
    fg.Reindex();
    KILN_RETURN_IF_ERROR(FunctionalizeConds(&fg, cx));
    fn_names[b] = cx->FunctionName(if_name + (b == 1 ? "/then" : "/else"));
    MakeFunction(fg, fn_names[b], rets, out_types, cx);
  }

  std::vector<NodeDef> add;
  NodeDef node;
  node.set_name(if_name);
  node.set_op("If");
  node.add_input(g->nodes[entries[0]].input(1));
  for (const std::string& in : arg_inputs) node.add_input(in);
  std::sort(controls.begin(), controls.end());
  controls.erase(std::unique(controls.begin(), controls.end()), controls.end());
  for (const std::string& c : controls) node.add_input(c);
  (*node.mutable_attr())["Tcond"].set_type(tensorflow::DT_BOOL);
  SetTypes(&node, "Tin", arg_types);
  SetTypes(&node, "Tout", out_types);
  SetFunc(&node, "then_branch", fn_names[1]);
  SetFunc(&node, "else_branch", fn_names[0]);
  add.push_back(std::move(node));
  for (size_t k = 0; k < merges.size(); ++k)
    add.push_back(IdentityNode(g->nodes[merges[k]].name(), TensorName(if_name, static_cast<int>(k)),
                               out_types[k]));
  g->Replace(in_cluster, std::move(add));
  return true;
}

Status FunctionalizeConds(Graph* g, Context* cx) {
  for (;;) {
    KILN_ASSIGN_OR_RETURN(bool changed, FunctionalizeOneCond(g, cx));
    if (!changed) return OkStatus();
  }
}

// ---- Loops -------------------------------------------------------------------------------------

struct Frames {
  std::vector<std::string> of;                // each node's frame ("" outside every loop)
  std::map<std::string, std::string> parent;  // each loop frame's enclosing frame
};

Result<Frames> ComputeFrames(const Graph& g) {
  KILN_ASSIGN_OR_RETURN(std::vector<int> order, TopologicalOrder(g, true));
  Frames f;
  f.of.resize(g.nodes.size());
  auto frame_of = [&](const std::string& in) -> std::optional<std::string> {
    const int p = g.Find(ParseRef(in).node);
    if (p < 0) return std::string();
    if (IsNextIteration(g.nodes[p])) return std::nullopt;
    return f.of[p];
  };
  for (int v : order) {
    const NodeDef& n = g.nodes[v];
    std::optional<std::string> from;
    for (const std::string& in : n.input())
      if ((from = frame_of(in))) break;
    const std::string outer = from.value_or("");
    if (IsEnter(n)) {
      const tensorflow::AttrValue* a = FindAttr(n, "frame_name");
      if (a == nullptr || a->s().empty())
        return InvalidArgument("Enter '", n.name(), "' has no frame_name");
      auto [it, fresh] = f.parent.emplace(a->s(), outer);
      if (!fresh && it->second != outer)
        return InvalidArgument("loop frame '", a->s(), "' is entered from two frames ('",
                               it->second, "' and '", outer, "')");
      f.of[v] = a->s();
    } else if (IsExit(n)) {
      if (outer.empty()) return InvalidArgument("Exit '", n.name(), "' is outside every loop");
      auto it = f.parent.find(outer);
      if (it == f.parent.end())
        return InvalidArgument("Exit '", n.name(), "' leaves '", outer,
                               "', which is no loop frame");
      f.of[v] = it->second;
    } else {
      f.of[v] = outer;
    }
  }
  return f;
}

// Turns the loop of frame `frame` (which holds no other loop) into a While.
Status FunctionalizeLoop(Graph* g, const Frames& frames, const std::string& frame, Context* cx) {
  const int n = static_cast<int>(g->nodes.size());
  std::vector<int> enters, members;
  for (int v = 0; v < n; ++v) {
    if (frames.of[v] != frame) continue;
    (IsEnter(g->nodes[v]) ? enters : members).push_back(v);
  }
  std::vector<char> in_frame(n, 0);
  for (int v : members) in_frame[v] = 1;
  int loop_cond = -1;
  for (int v : members)
    if (IsLoopCond(g->nodes[v])) {
      if (loop_cond >= 0) return InvalidArgument("loop frame '", frame, "' has two LoopCond nodes");
      loop_cond = v;
    }
  if (loop_cond < 0) return InvalidArgument("loop frame '", frame, "' has no LoopCond");
  const std::string& cond_name = g->nodes[loop_cond].name();

  struct Var {
    int enter = -1, merge = -1, next = -1, sw = -1;
  };
  std::vector<Var> vars;
  std::map<int, int> var_of_merge, var_of_switch, var_of_enter;
  for (int m : members) {
    if (!IsMerge(g->nodes[m])) continue;
    Var var;
    var.merge = m;
    for (const std::string& in : g->nodes[m].input()) {
      const int p = g->Find(ParseRef(in).node);
      if (p < 0) continue;
      if (IsEnter(g->nodes[p]) && frames.of[p] == frame) var.enter = p;
      if (IsNextIteration(g->nodes[p])) var.next = p;
    }
    if (var.enter < 0 && var.next < 0) continue;  // a conditional's Merge in the body
    if (var.enter < 0 || var.next < 0)
      return InvalidArgument("Merge '", g->nodes[m].name(), "' of loop frame '", frame,
                             "' does not join an Enter and a NextIteration");
    for (int c : g->consumers[m]) {
      const NodeDef& s = g->nodes[c];
      if (IsSwitch(s) && s.input_size() >= 2 && ParseRef(s.input(1)).node == cond_name &&
          ParseRef(s.input(0)).node == g->nodes[m].name())
        var.sw = c;
    }
    vars.push_back(var);
  }
  std::sort(vars.begin(), vars.end(), [](const Var& a, const Var& b) { return a.enter < b.enter; });
  std::vector<int> invariants;
  for (size_t i = 0; i < vars.size(); ++i) {
    var_of_merge[vars[i].merge] = static_cast<int>(i);
    var_of_enter[vars[i].enter] = static_cast<int>(i);
    if (vars[i].sw >= 0) var_of_switch[vars[i].sw] = static_cast<int>(i);
  }
  for (int e : enters)
    if (!var_of_enter.count(e)) invariants.push_back(e);
  auto special = [&](int v) {
    return var_of_merge.count(v) || var_of_switch.count(v) || v == loop_cond ||
           (IsNextIteration(g->nodes[v]) && in_frame[v]);
  };

  const std::string arg_prefix = "kiln_loop_arg_";
  auto arg_name = [&](size_t i) { return arg_prefix + std::to_string(i); };
  std::vector<DataType> types;
  std::vector<std::string> inputs;
  std::vector<std::string> controls;
  for (const Var& var : vars) {
    types.push_back(TypeAttr(g->nodes[var.enter], "T"));
    inputs.push_back(g->nodes[var.enter].input(0));
  }
  std::map<int, size_t> invariant_arg;
  for (int e : invariants) {
    invariant_arg[e] = types.size();
    types.push_back(TypeAttr(g->nodes[e], "T"));
    inputs.push_back(g->nodes[e].input(0));
  }
  for (int e : enters)
    for (const std::string& in : g->nodes[e].input())
      if (ParseRef(in).control) controls.push_back(in);

  // A reference inside the cond (body = false) or the body, rewritten for the function.
  auto rewrite = [&](const std::string& in, int where,
                     bool body) -> Result<std::optional<std::string>> {
    const Ref r = ParseRef(in);
    const int p = g->Find(r.node);
    if (p >= 0 && var_of_merge.count(p)) {
      if (r.control) return std::optional<std::string>();
      return std::optional<std::string>(arg_name(var_of_merge[p]));
    }
    if (p >= 0 && var_of_switch.count(p)) {
      if (r.control) return std::optional<std::string>();
      if (!body || r.index != 1)
        return InvalidArgument("node '", g->nodes[where].name(), "' of loop frame '", frame,
                               "' reads the loop's Switch '", r.node, "' output ", r.index);
      return std::optional<std::string>(arg_name(var_of_switch[p]));
    }
    if (p >= 0 && invariant_arg.count(p)) {
      if (r.control) return std::optional<std::string>();
      return std::optional<std::string>(arg_name(invariant_arg[p]));
    }
    if (p >= 0 && (var_of_enter.count(p) || p == loop_cond)) {
      if (r.control) return std::optional<std::string>();
      return InvalidArgument("node '", g->nodes[where].name(), "' of loop frame '", frame,
                             "' reads '", r.node, "', which only the loop's own nodes read");
    }
    if (p >= 0 && in_frame[p]) return std::optional<std::string>(in);
    if (r.control) {
      controls.push_back(in);
      return std::optional<std::string>();
    }
    return InvalidArgument("node '", g->nodes[where].name(), "' of loop frame '", frame,
                           "' reads '", in, "' from outside the loop without an Enter");
  };
  // The nodes a function needs: what `roots` reach inside the frame, short of the loop's own.
  auto collect = [&](const std::vector<std::string>& roots, std::vector<char>* used) {
    std::vector<int> stack;
    for (const std::string& in : roots) stack.push_back(g->Find(ParseRef(in).node));
    while (!stack.empty()) {
      const int v = stack.back();
      stack.pop_back();
      if (v < 0 || !in_frame[v] || special(v) || (*used)[v]) continue;
      (*used)[v] = 1;
      for (const std::string& in : g->nodes[v].input()) stack.push_back(g->Find(ParseRef(in).node));
    }
  };
  std::vector<char> in_cond(n, 0), in_body(n, 0);
  collect({g->nodes[loop_cond].input(0)}, &in_cond);
  std::vector<std::string> next_values;
  for (const Var& var : vars) {
    if (g->nodes[var.next].input_size() < 1)
      return InvalidArgument("NextIteration '", g->nodes[var.next].name(), "' has no input");
    for (const std::string& in : g->nodes[var.next].input()) next_values.push_back(in);
  }
  collect(next_values, &in_body);
  for (int v : members)  // the body's side effects: what neither function reaches
    if (!special(v) && !in_cond[v] && !in_body[v]) in_body[v] = 1;

  const std::string while_name = g->UniqueName(frame + "/_kiln_while");
  std::string fn_names[2];
  for (int body : {0, 1}) {
    Graph fg;
    fg.external_dtypes = g->external_dtypes;
    for (size_t i = 0; i < types.size(); ++i) fg.nodes.push_back(ArgNode(arg_name(i), types[i]));
    const std::vector<char>& used = body ? in_body : in_cond;
    for (int v : members) {
      if (!used[v]) continue;
      NodeDef copy = g->nodes[v];
      copy.clear_input();
      for (const std::string& in : g->nodes[v].input()) {
        KILN_ASSIGN_OR_RETURN(std::optional<std::string> r, rewrite(in, v, body != 0));
        if (r) copy.add_input(*r);
      }
      fg.nodes.push_back(std::move(copy));
    }
    std::vector<std::string> rets;
    std::vector<DataType> ret_types;
    if (body) {
      for (const Var& var : vars) {
        KILN_ASSIGN_OR_RETURN(std::optional<std::string> r,
                              rewrite(g->nodes[var.next].input(0), var.next, true));
        if (!r) return Internal("NextIteration '", g->nodes[var.next].name(), "' has no value");
        rets.push_back(*r);
      }
      for (size_t i = vars.size(); i < types.size(); ++i) rets.push_back(arg_name(i));
      ret_types = types;
    } else {
      KILN_ASSIGN_OR_RETURN(std::optional<std::string> r,
                            rewrite(g->nodes[loop_cond].input(0), loop_cond, false));
      if (!r) return Internal("LoopCond '", cond_name, "' has no value");
      rets.push_back(*r);
      ret_types.push_back(tensorflow::DT_BOOL);
    }
    fg.Reindex();
    KILN_RETURN_IF_ERROR(FunctionalizeConds(&fg, cx));
    fn_names[body] = cx->FunctionName(while_name + (body ? "/body" : "/cond"));
    MakeFunction(fg, fn_names[body], rets, ret_types, cx);
  }

  // Exits become Identities of the While's outputs; nothing else may read the frame.
  std::vector<char> drop(n, 0);
  for (int v : members) drop[v] = 1;
  for (int e : enters) drop[e] = 1;
  std::vector<NodeDef> add;
  for (int v = 0; v < n; ++v) {
    if (drop[v] || !IsExit(g->nodes[v])) continue;
    const Ref r = ParseRef(g->nodes[v].input(0));
    const int p = g->Find(r.node);
    if (p < 0 || !var_of_switch.count(p) || r.index != 0) continue;
    const size_t i = static_cast<size_t>(var_of_switch[p]);
    add.push_back(
        IdentityNode(g->nodes[v].name(), TensorName(while_name, static_cast<int>(i)), types[i]));
    drop[v] = 1;
  }
  for (int v = 0; v < n; ++v) {
    if (drop[v]) continue;
    for (const std::string& in : g->nodes[v].input()) {
      const int p = g->Find(ParseRef(in).node);
      if (p >= 0 && drop[p] && (in_frame[p] || IsEnter(g->nodes[p])))
        return InvalidArgument("node '", g->nodes[v].name(), "' reads '", in,
                               "' inside loop frame '", frame, "' other than through an Exit");
    }
  }
  NodeDef node;
  node.set_name(while_name);
  node.set_op("While");
  for (const std::string& in : inputs) node.add_input(in);
  std::sort(controls.begin(), controls.end());
  controls.erase(std::unique(controls.begin(), controls.end()), controls.end());
  for (const std::string& c : controls) node.add_input(c);
  SetTypes(&node, "T", types);
  SetFunc(&node, "cond", fn_names[0]);
  SetFunc(&node, "body", fn_names[1]);
  int64_t parallel = 10;
  if (!enters.empty())
    if (const tensorflow::AttrValue* pa = FindAttr(g->nodes[enters[0]], "parallel_iterations"))
      parallel = pa->i();
  (*node.mutable_attr())["parallel_iterations"].set_i(parallel);
  add.push_back(std::move(node));
  g->Replace(drop, std::move(add));
  return OkStatus();
}

Status FunctionalizeLoops(Graph* g, Context* cx) {
  for (;;) {
    KILN_ASSIGN_OR_RETURN(Frames frames, ComputeFrames(*g));
    if (frames.parent.empty()) return OkStatus();
    std::set<std::string> outer;
    for (const auto& [f, p] : frames.parent) outer.insert(p);
    std::string innermost;
    for (const auto& [f, p] : frames.parent)
      if (!outer.count(f)) {
        innermost = f;
        break;
      }
    if (innermost.empty()) return InvalidArgument("loop frames enclose each other in a cycle");
    KILN_RETURN_IF_ERROR(FunctionalizeLoop(g, frames, innermost, cx));
  }
}

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
