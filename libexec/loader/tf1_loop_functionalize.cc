// TF1 loops (Enter/Merge/Switch/NextIteration/Exit frames) into While nodes over cond and body
// functions, as TF's functionalize_while.cc: the innermost frame first.
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

}  // namespace

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

}  // namespace kiln::exec::tf1
