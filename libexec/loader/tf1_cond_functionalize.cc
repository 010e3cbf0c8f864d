// TF1 conditionals (Switch/Merge) into If nodes over branch functions, as TF's
// functionalize_cond.cc: innermost first, constant-only branches by the pivot's control edge.
#include <algorithm>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "loader/tf1_functionalize.h"

namespace kiln::exec::tf1 {
namespace {

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

}  // namespace

Status FunctionalizeConds(Graph* g, Context* cx) {
  for (;;) {
    KILN_ASSIGN_OR_RETURN(bool changed, FunctionalizeOneCond(g, cx));
    if (!changed) return OkStatus();
  }
}

}  // namespace kiln::exec::tf1
