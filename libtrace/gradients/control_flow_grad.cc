// Gradients of the functional control-flow ops: If / StatelessIf (Cond) and While /
// StatelessWhile (WhileLoop, ForRange).
//
// Design: recompute. The forward node and its functions are left as they are; the gradient
// replays the traced branch / body (kept by the graph as a FunctionBody) on a tape of its own
// and takes the vector-Jacobian product of the replay:
//   - If: a gradient If on the same predicate whose branches replay the forward branches and
//     return one gradient per differentiable input (zeros where a branch does not use it), as
//     cond_v2 builds; the intermediates are recomputed in the gradient branch instead of being
//     added as outputs of the forward If, which keeps finished branch functions unchanged.
//   - While: while_v2's accumulators, on a recomputed forward loop: a While replays the body
//     and pushes each iteration's loop variables onto TensorLists (TensorListPushBack) and
//     counts the iterations; a backward While pops them (TensorListPopBack) and, per
//     iteration, replays the body on them and accumulates the gradients of the loop variables
//     and of the captures (tensors and variables).
// Replaying is right only when running the functions again gives the same values: a function
// that assigns a variable, or a replayed stateful op other than a variable read (random ops,
// prints the outputs need), is Unimplemented; effects the outputs do not need are not replayed.
// Variables are read again by the gradient, so they must not change between the forward op and
// tape.Gradient (they do not in a train step, where the optimizer runs after the gradient); an
// assignment in between is Unimplemented too.
#include <memory>
#include <string>
#include <vector>

#include "gradients/grad_ops.h"
#include "graph.h"
#include "kiln/trace/compare_ops.h"
#include "kiln/trace/control_flow.h"
#include "kiln/trace/op_builder.h"
#include "kiln/trace/ops.h"
#include "tape.h"

namespace kiln::trace::internal {
namespace {

bool IsFunctional(std::string_view op) {
  return op == "If" || op == "StatelessIf" || op == "While" || op == "StatelessWhile";
}

// A tape of the gradient's own, recording in the current graph while it lives.
class ScopedTape {
 public:
  ScopedTape() : state_(Graph::Current(), /*persistent=*/false, false) { PushTape(&state_); }
  ~ScopedTape() { PopTape(&state_); }
  ScopedTape(const ScopedTape&) = delete;
  ScopedTape& operator=(const ScopedTape&) = delete;
  TapeState& operator*() { return state_; }
  TapeState* operator->() { return &state_; }

 private:
  TapeState state_;
};

bool WritesVariable(std::string_view op) {
  return op.starts_with("Assign") || op.starts_with("ResourceApply") ||
         op.starts_with("ResourceSparseApply") || op.starts_with("ResourceScatter") ||
         op == "StatefulPartitionedCall";  // a called function may assign
}

enum class Effects {
  kWrites,  // only assignments count (the replay skips other effects the outputs do not need)
  kAny,     // any stateful op but a variable read (a nested If / While is replayed whole)
};

Status CheckEffects(const FunctionBody& body, Effects which, std::string_view who);

// The functions an If / While node `n` of `g` runs.
Status CheckFunctionsOf(const Graph& g, const GraphNode& n, Effects which, std::string_view who) {
  for (const auto& [attr, value] : n.attrs) {
    if (!value.has_func()) continue;
    if (std::shared_ptr<const FunctionBody> f = g.FindFunctionBody(value.func().name())) {
      KILN_RETURN_IF_ERROR(CheckEffects(*f, which, who));
    }
  }
  return OkStatus();
}

// Replaying is wrong when the function assigns a variable (a read replayed after the forward
// op sees the last assignment, not the one before it), and repeats any other side effect the
// replay runs.
Status CheckEffects(const FunctionBody& body, Effects which, std::string_view who) {
  const Graph& g = *body.graph;
  for (int i = 0; i < g.num_nodes(); ++i) {
    const GraphNode& n = g.node(i);
    if (IsFunctional(n.op)) {
      KILN_RETURN_IF_ERROR(CheckFunctionsOf(g, n, which, who));
      continue;
    }
    const bool bad =
        which == Effects::kWrites ? WritesVariable(n.op) : n.stateful && n.op != "ReadVariableOp";
    if (bad) {
      return Unimplemented("the gradient of ", who, " recomputes '", g.function_name(),
                           "', which holds the stateful op '", n.op, "' (node '", n.name,
                           "'); only variable reads can be recomputed. Move it out of the "
                           "control flow or stop the gradient before it (StopGradient)");
    }
  }
  return OkStatus();
}

// Adds to the current graph the nodes of `body` that its outputs depend on, with args[k] for
// the function's input k, recording them on the tapes of this graph. Returns the outputs.
Result<Values> Replay(const FunctionBody& body, const Values& args, std::string_view who) {
  Graph* here = Graph::Current();
  const Graph& b = *body.graph;
  if (args.size() != body.arg_order.size()) {
    return Internal("replaying '", b.function_name(), "': ", args.size(), " inputs for ",
                    body.arg_order.size(), " arguments");
  }
  std::vector<Value> arg_values(b.args().size());
  for (size_t k = 0; k < args.size(); ++k) {
    const GraphArg& a = b.args()[body.arg_order[k]];
    Value v = a.variable != nullptr ? here->CaptureVariable(a.variable) : args[k];
    if (v.is_symbolic()) ValueAccess::RefineShape(&v, a.spec.shape);
    arg_values[body.arg_order[k]] = v;
  }
  // The nodes the outputs depend on (data inputs only: side effects are not replayed).
  std::vector<bool> needed(b.num_nodes(), false);
  std::vector<int> stack;
  for (const Value& o : body.outputs) {
    if (ValueAccess::node(o) >= 0) stack.push_back(ValueAccess::node(o));
  }
  while (!stack.empty()) {
    const int n = stack.back();
    stack.pop_back();
    if (needed[n]) continue;
    needed[n] = true;
    for (const Ref& r : b.node(n).inputs) {
      if (r.node >= 0) stack.push_back(r.node);
    }
  }
  std::vector<Values> node_values(b.num_nodes());
  auto value_of = [&](const Ref& r) -> const Value& {
    return r.node < 0 ? arg_values[r.index] : node_values[r.node][r.index];
  };
  for (int i = 0; i < b.num_nodes(); ++i) {
    if (!needed[i]) continue;
    const GraphNode& n = b.node(i);
    const std::string where = "replaying node '" + n.name + "' of '" + b.function_name() + "'";
    Values inputs;
    for (const Ref& r : n.inputs) inputs.push_back(value_of(r));
    if (n.op == "ReadVariableOp" && n.inputs.size() == 1 && n.inputs[0].node < 0 &&
        b.args()[n.inputs[0].index].variable != nullptr) {
      // A read of a captured variable: through Variable so that tapes see the variable.
      Value read = VariableAccess::Make(b.args()[n.inputs[0].index].variable).Read();
      KILN_RETURN_IF_ERROR_CTX(read.status(), where);
      node_values[i] = Values{read};
      continue;
    }
    if (n.stateful && !IsFunctional(n.op) && n.op != "ReadVariableOp") {
      return Unimplemented("the gradient of ", who, " recomputes '", b.function_name(),
                           "', which holds the stateful op '", n.op, "' (node '", n.name,
                           "'); only variable reads can be recomputed. Move it out of the "
                           "control flow or stop the gradient before it (StopGradient)");
    }
    if (IsFunctional(n.op)) {
      KILN_RETURN_IF_ERROR(CheckFunctionsOf(b, n, Effects::kAny, who));
    }
    // Nested functions (branches, bodies, called functions) come along with their bodies.
    for (const auto& f : b.library().function()) here->AddFunction(f);
    for (const auto& [name, nested] : b.function_bodies()) here->AddFunctionBody(name, nested);
    const std::string base = n.name.substr(n.name.rfind('/') + 1);
    Values out;
    if (n.def == nullptr) {
      out = here->AddCallNode(n.op, base, inputs, n.attrs, n.outputs, n.stateful);
    } else {
      out = here->AddNode(n.op, base, inputs, n.attrs);
    }
    KILN_RETURN_IF_ERROR_CTX(FirstError(out), where);
    for (size_t k = 0; k < out.size() && k < n.outputs.size(); ++k) {
      ValueAccess::RefineShape(&out[k], n.outputs[k].shape);
    }
    if (AnyTapeRecording()) {
      if (IsFunctional(n.op)) {
        RecordFunctional(n.op, n.attrs, inputs, out);
      } else {
        RecordOperation(n.op, n.attrs, inputs, out);
      }
    }
    node_values[i] = std::move(out);
  }
  Values outputs;
  for (const Value& o : body.outputs) {
    outputs.push_back(value_of(Ref{ValueAccess::node(o), ValueAccess::index(o)}));
  }
  return outputs;
}

Result<std::shared_ptr<const FunctionBody>> BodyOf(const GradContext& ctx, std::string_view attr) {
  const tensorflow::AttrValue* a = ctx.Find(attr);
  if (a == nullptr || !a->has_func()) return Internal(ctx.op, ": no '", attr, "' function");
  Graph* g = ValueAccess::graph(ctx.output(0));
  std::shared_ptr<const FunctionBody> body =
      g != nullptr ? g->FindFunctionBody(a->func().name()) : nullptr;
  if (body == nullptr) {
    return Unimplemented("the gradient of ", ctx.op, " node '", ctx.node_name,
                         "' needs the traced function '", a->func().name(),
                         "', which was not traced by Cond / WhileLoop in this trace");
  }
  return body;
}

// The gradient reads the node's variables again: none may have been assigned since the node
// (that would give the gradient at the new value).
Status CheckVariablesUnchanged(const GradContext& ctx, std::string_view who) {
  const Value& out = ctx.output(0);
  const Graph* g = ValueAccess::graph(out);
  if (g == nullptr) return OkStatus();
  for (int i = ValueAccess::node(out) + 1; i < g->num_nodes(); ++i) {
    const GraphNode& n = g->node(i);
    // An assignment, or an If / While / call that assigns in its functions.
    const bool writes =
        WritesVariable(n.op) ||
        (IsFunctional(n.op) && !CheckFunctionsOf(*g, n, Effects::kWrites, who).ok());
    if (!writes) continue;
    for (const Ref& r : n.inputs) {
      if (r.node >= 0) continue;
      for (const Value& in : *ctx.inputs) {
        if (in.dtype() != DType::kResource || ValueAccess::graph(in) != g ||
            ValueAccess::node(in) >= 0 || ValueAccess::index(in) != r.index) {
          continue;
        }
        const std::shared_ptr<VariableState> var = CapturedVariableOf(in);
        return Unimplemented("the gradient of ", who, " reads variable '",
                             var != nullptr ? var->name : "?", "' again, but node '", n.name, "' (",
                             n.op, ") may assign it after the ", ctx.op,
                             "; compute the gradient before assigning it");
      }
    }
  }
  return OkStatus();
}

// Zeros standing for the gradient of an input no gradient reached (a variable: its value's).
Value ZerosFor(const Value& input) {
  if (std::shared_ptr<VariableState> var = CapturedVariableOf(input)) {
    return ZerosLike(VariableAccess::Make(var).Read());
  }
  return ZerosLike(input);
}

// The source id a tape gives an input: a captured variable's, else the value's.
uint64_t WatchInput(TapeState& tape, const Value& input) {
  if (std::shared_ptr<VariableState> var = CapturedVariableOf(input)) {
    return tape.WatchVariable(var);
  }
  tape.WatchValue(input);
  return input.id();
}

// ---- If ----------------------------------------------------------------------------------

Result<Values> IfGrad(const GradContext& ctx, const Values& grads) {
  std::vector<size_t> wrt;  // inputs (after the predicate) that need a gradient
  for (size_t i = 1; i < ctx.num_inputs(); ++i) {
    if (ctx.need(i)) wrt.push_back(i);
  }
  Values out(ctx.num_inputs());
  if (wrt.empty()) return out;
  const std::string who = std::string(ctx.op) + " node '" + std::string(ctx.node_name) + "'";
  KILN_RETURN_IF_ERROR(CheckVariablesUnchanged(ctx, who));
  KILN_ASSIGN_OR_RETURN(std::shared_ptr<const FunctionBody> then_body, BodyOf(ctx, "then_branch"));
  KILN_ASSIGN_OR_RETURN(std::shared_ptr<const FunctionBody> else_body, BodyOf(ctx, "else_branch"));
  KILN_RETURN_IF_ERROR(CheckEffects(*then_body, Effects::kWrites, who));
  KILN_RETURN_IF_ERROR(CheckEffects(*else_body, Effects::kWrites, who));
  const Values captures(ctx.inputs->begin() + 1, ctx.inputs->end());
  auto branch_grad = [&](const FunctionBody* body) -> BranchFn {
    return [&, body]() -> Result<Values> {
      ScopedTape tape;
      std::vector<uint64_t> ids;
      for (size_t i : wrt) ids.push_back(WatchInput(*tape, ctx.input(i)));
      KILN_ASSIGN_OR_RETURN(Values outs, Replay(*body, captures, who));
      KILN_ASSIGN_OR_RETURN(Values g, tape->Backprop(outs, grads, ids));
      // Both branches return one gradient per input: zeros where none flows.
      for (size_t k = 0; k < wrt.size(); ++k) {
        if (g[k].empty()) g[k] = ZerosFor(ctx.input(wrt[k]));
      }
      return g;
    };
  };
  KILN_ASSIGN_OR_RETURN(Values in_grads, Cond(ctx.input(0), branch_grad(then_body.get()),
                                              branch_grad(else_body.get())));
  for (size_t k = 0; k < wrt.size(); ++k) out[wrt[k]] = in_grads[k];
  return out;
}

// ---- While -------------------------------------------------------------------------------

// An int32 element shape for a TensorList: -1 for an unknown rank, -1 for unknown dims.
Value ElementShape(const PartialShape& s) {
  if (s.unknown_rank()) return Constant(Tensor::Scalar(int32_t{-1}));
  std::vector<int64_t> dims;
  for (int d = 0; d < s.rank(); ++d) dims.push_back(s.dim(d));
  return Int32s(dims);
}

Result<Values> WhileGrad(const GradContext& ctx, const Values& grads) {
  const std::string who = std::string(ctx.op) + " node '" + std::string(ctx.node_name) + "'";
  KILN_ASSIGN_OR_RETURN(std::shared_ptr<const FunctionBody> cond_body, BodyOf(ctx, "cond"));
  KILN_ASSIGN_OR_RETURN(std::shared_ptr<const FunctionBody> body, BodyOf(ctx, "body"));
  const size_t m = ctx.num_inputs();
  if (body->outputs.size() != m || body->arg_order.size() != m) {
    return Internal(who, ": the body has ", body->outputs.size(), " outputs for ", m, " inputs");
  }
  KILN_RETURN_IF_ERROR(CheckVariablesUnchanged(ctx, who));
  KILN_RETURN_IF_ERROR(CheckEffects(*cond_body, Effects::kWrites, who));
  KILN_RETURN_IF_ERROR(CheckEffects(*body, Effects::kWrites, who));
  const Graph& bg = *body->graph;
  // Inputs the body passes through unchanged are captures: constant over the iterations.
  std::vector<size_t> carried, captured;
  for (size_t j = 0; j < m; ++j) {
    const Value& o = body->outputs[j];
    const bool through = ValueAccess::graph(o) == &bg && ValueAccess::node(o) < 0 &&
                         ValueAccess::index(o) == body->arg_order[j];
    (through ? captured : carried).push_back(j);
  }
  std::vector<TensorSpec> specs;  // each input's spec inside the body (shape invariants)
  for (size_t j = 0; j < m; ++j) specs.push_back(bg.args()[body->arg_order[j]].spec);
  for (size_t j : carried) {
    if (specs[j].dtype == DType::kVariant || specs[j].dtype == DType::kResource) {
      return Unimplemented("the gradient of ", who, ": loop variable ", j, " is a ",
                           DTypeShortName(specs[j].dtype),
                           " (a TensorArray / TensorList): only loops over tensors are "
                           "differentiable");
    }
  }
  // Gradients: every float loop variable, and the captures that need one.
  std::vector<size_t> diff_carried, diff_captured;
  for (size_t j : carried) {
    if (IsDifferentiable(specs[j].dtype)) diff_carried.push_back(j);
  }
  for (size_t j : captured) {
    if (ctx.need(j)) diff_captured.push_back(j);
  }
  Values out(m);
  if (diff_carried.empty() && diff_captured.empty()) return out;
  // The body's inputs for one iteration: carried values from `vars`, captures as they are.
  auto body_args = [&](const Values& carried_now) {
    Values args(ctx.inputs->begin(), ctx.inputs->end());
    for (size_t k = 0; k < carried.size(); ++k) args[carried[k]] = carried_now[k];
    return args;
  };
  const size_t nc = carried.size();

  // 1. The forward loop again, pushing each iteration's carried values and counting.
  Values fwd_vars = {Constant(Tensor::Scalar(int32_t{0}))};
  WhileOptions fwd_opts;
  fwd_opts.shape_invariants.push_back(PartialShape::Scalar());
  for (size_t j : carried) {
    fwd_vars.push_back(ctx.input(j));
    fwd_opts.shape_invariants.push_back(specs[j].shape);
  }
  for (size_t j : carried) {
    fwd_vars.push_back(OpBuilder("EmptyTensorList")
                           .Input(ElementShape(specs[j].shape))
                           .Input(Constant(Tensor::Scalar(int32_t{-1})))
                           .Attr("element_dtype", specs[j].dtype)
                           .Attr("shape_type", DType::kInt32)
                           .BuildOne());
    fwd_opts.shape_invariants.push_back(PartialShape::Scalar());
  }
  auto fwd_cond = [&](const Values& v) -> Value {
    Result<Values> c =
        Replay(*cond_body, body_args(Values(v.begin() + 1, v.begin() + 1 + nc)), who);
    return c.ok() ? (*c)[0] : Value::Error(c.status());
  };
  auto fwd_body = [&](const Values& v) -> Result<Values> {
    const Values now(v.begin() + 1, v.begin() + 1 + nc);
    KILN_ASSIGN_OR_RETURN(Values next, Replay(*body, body_args(now), who));
    Values res = {Add(v[0], Constant(Tensor::Scalar(int32_t{1})))};
    for (size_t j : carried) res.push_back(next[j]);
    for (size_t k = 0; k < nc; ++k) {
      res.push_back(OpBuilder("TensorListPushBack")
                        .Input(v[1 + nc + k])
                        .Input(now[k])
                        .Attr("element_dtype", now[k].dtype())
                        .BuildOne());
    }
    return res;
  };
  KILN_ASSIGN_OR_RETURN_CTX(Values fwd, WhileLoop(fwd_cond, fwd_body, fwd_vars, fwd_opts),
                            "the forward loop of the gradient of ", who);

  // 2. The backward loop: pop an iteration, replay the body on it, take its vector-Jacobian
  // product. Loop variables: count, d(carried float), d(captures), the lists.
  Values bwd_vars = {fwd[0]};
  WhileOptions bwd_opts;
  bwd_opts.shape_invariants.push_back(PartialShape::Scalar());
  for (size_t j : diff_carried) {
    bwd_vars.push_back(grads[j].empty() ? ZerosLike(ctx.output(j)) : grads[j]);
    bwd_opts.shape_invariants.push_back(specs[j].shape);
  }
  for (size_t j : diff_captured) {
    bwd_vars.push_back(ZerosFor(ctx.input(j)));
    bwd_opts.shape_invariants.push_back(bwd_vars.back().shape());
  }
  for (size_t k = 0; k < nc; ++k) {
    bwd_vars.push_back(fwd[1 + nc + k]);
    bwd_opts.shape_invariants.push_back(PartialShape::Scalar());
  }
  const size_t nd = diff_carried.size();
  const size_t np = diff_captured.size();
  auto bwd_cond = [](const Values& v) -> Value {
    return Greater(v[0], Constant(Tensor::Scalar(int32_t{0})));
  };
  auto bwd_body = [&](const Values& v) -> Result<Values> {
    Values lists, now;
    for (size_t k = 0; k < nc; ++k) {
      const size_t j = carried[k];
      Values popped = OpBuilder("TensorListPopBack")
                          .Input(v[1 + nd + np + k])
                          .Input(ElementShape(specs[j].shape))
                          .Attr("element_dtype", specs[j].dtype)
                          .Build();
      KILN_RETURN_IF_ERROR(FirstError(popped));
      lists.push_back(popped[0]);
      now.push_back(popped[1]);
    }
    ScopedTape tape;
    std::vector<uint64_t> ids;
    Values args = body_args(now);
    for (size_t j : diff_carried) ids.push_back(WatchInput(*tape, args[j]));
    for (size_t j : diff_captured) ids.push_back(WatchInput(*tape, args[j]));
    KILN_ASSIGN_OR_RETURN(Values next, Replay(*body, args, who));
    Values targets, seeds;
    for (size_t k = 0; k < nd; ++k) {
      targets.push_back(next[diff_carried[k]]);
      seeds.push_back(v[1 + k]);
    }
    KILN_ASSIGN_OR_RETURN(Values g, tape->Backprop(targets, seeds, ids));
    Values res = {Sub(v[0], Constant(Tensor::Scalar(int32_t{1})))};
    for (size_t k = 0; k < nd; ++k) {
      res.push_back(g[k].empty() ? ZerosLike(args[diff_carried[k]]) : g[k]);
    }
    for (size_t k = 0; k < np; ++k) {
      res.push_back(g[nd + k].empty() ? v[1 + nd + k] : Add(v[1 + nd + k], g[nd + k]));
    }
    res.insert(res.end(), lists.begin(), lists.end());
    return res;
  };
  KILN_ASSIGN_OR_RETURN_CTX(Values bwd, WhileLoop(bwd_cond, bwd_body, bwd_vars, bwd_opts),
                            "the backward loop of the gradient of ", who);
  for (size_t k = 0; k < nd; ++k) out[diff_carried[k]] = bwd[1 + k];
  for (size_t k = 0; k < np; ++k) {
    const size_t j = diff_captured[k];
    // A gradient reaching the (hidden) pass-through output adds to the capture's.
    out[j] = grads[j].empty() ? bwd[1 + nd + k] : Add(bwd[1 + nd + k], grads[j]);
  }
  return out;
}

constexpr GradientDef kGradients[] = {
    {"If", IfGrad},
    {"StatelessIf", IfGrad},
    {"While", WhileGrad},
    {"StatelessWhile", WhileGrad},
};

}  // namespace

std::span<const GradientDef> ControlFlowGradients() { return kGradients; }

}  // namespace kiln::trace::internal
