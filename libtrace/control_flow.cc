// Cond / WhileLoop / ForRange / CallFunction (control_flow.h) and Value's C++ truth value.
//
// While tracing, each branch or loop function is traced into a child Graph of the current
// one. Values of enclosing traces used in it become captures (Graph::CaptureValue); once both
// functions of a node are traced, their captures are merged into one list, each function gets
// an argument for every capture (unused ones too: the If / While node passes the same inputs
// to both), and the node is added to the parent with the functions in its library.
#include "kiln/trace/control_flow.h"

#include <exception>
#include <map>
#include <optional>
#include <tuple>
#include <utility>

#include "graph.h"
#include "kiln/trace/compare_ops.h"
#include "kiln/trace/op_builder.h"
#include "kiln/trace/ops.h"
#include "tape.h"
#include "trace_extras.h"

namespace kiln::trace {
namespace {

using internal::Graph;
using internal::ValueAccess;

// TensorFlow's truth value of a concrete tensor (as the If / While kernels decide it).
Result<bool> TruthValue(const Tensor& t) {
  if (t.rank() != 0) return t.NumElements() > 0;
  switch (t.dtype()) {
    case DType::kBool:
      return t.scalar<bool>();
    case DType::kFloat:
      return t.scalar<float>() != 0.0f;
    case DType::kDouble:
      return t.scalar<double>() != 0.0;
    case DType::kInt32:
      return t.scalar<int32_t>() != 0;
    case DType::kInt64:
      return t.scalar<int64_t>() != 0;
    case DType::kString:
      return !t.scalar<std::string>().empty();
    default:
      return InvalidArgument("cannot use a ", DTypeShortName(t.dtype()), " value as a condition");
  }
}

std::string SpecText(const TensorSpec& spec) {
  return "TensorSpec(shape=" + spec.shape.ToPythonString() +
         ", dtype=" + DTypeShortName(spec.dtype) + ")";
}

// Whether `shape` lies within `invariant` (every dim the invariant knows is the same).
bool FitsInvariant(const PartialShape& shape, const PartialShape& invariant) {
  if (invariant.unknown_rank()) return true;
  if (shape.unknown_rank() || shape.rank() != invariant.rank()) return false;
  for (int d = 0; d < invariant.rank(); ++d) {
    if (invariant.dim(d) >= 0 && shape.dim(d) != invariant.dim(d)) return false;
  }
  return true;
}

PartialShape MostSpecificCompatible(const PartialShape& a, const PartialShape& b) {
  if (a.unknown_rank() || b.unknown_rank() || a.rank() != b.rank()) {
    return PartialShape::UnknownRank();
  }
  std::vector<int64_t> dims(a.rank());
  for (int i = 0; i < a.rank(); ++i) dims[i] = a.dim(i) == b.dim(i) ? a.dim(i) : -1;
  Result<PartialShape> s = PartialShape::FromDims(dims);
  return s.ok() ? *s : PartialShape::UnknownRank();
}

// One traced branch / loop function.
struct SubTrace {
  std::shared_ptr<Graph> graph;
  Values outputs;
};

using SubBody = std::function<Result<Values>(const Values& args)>;

// Traces `body` into a child graph of `parent` named `name`, with one argument per spec.
// Outputs that are values of enclosing traces are captured, so every output belongs to the
// child when this returns.
Result<SubTrace> TraceInto(Graph* parent, const std::string& name,
                           const std::vector<TensorSpec>& arg_specs,
                           const std::vector<std::string>& arg_names, const SubBody& body) {
  SubTrace t;
  t.graph = std::make_shared<Graph>(name, parent->allow_variable_creation(), parent);
  std::optional<Result<Values>> result;
  {
    Graph::Activation active(t.graph.get());
    Values args;
    for (size_t i = 0; i < arg_specs.size(); ++i) {
      args.push_back(t.graph->AddArg(arg_names[i], arg_specs[i]));
    }
    try {
      result.emplace(body(args));
    } catch (...) {
      result.emplace(internal::StatusOfCurrentException());
    }
  }
  KILN_RETURN_IF_ERROR(t.graph->status());
  KILN_RETURN_IF_ERROR(result->status());
  t.outputs = *std::move(*result);
  for (size_t i = 0; i < t.outputs.size(); ++i) {
    KILN_RETURN_IF_ERROR_CTX(t.outputs[i].status(), "output ", i);
    KILN_ASSIGN_OR_RETURN_CTX(t.outputs[i], t.graph->CaptureValue(t.outputs[i]), "output ", i);
  }
  return t;
}

// The captures of several child graphs of one parent, merged in order of first appearance.
std::vector<Value> MergeCaptures(std::initializer_list<const Graph*> graphs) {
  std::vector<Value> merged;
  std::map<std::tuple<int, int>, bool> seen;
  for (const Graph* g : graphs) {
    for (const internal::CapturedValue& c : g->captured_values()) {
      auto key = std::make_tuple(ValueAccess::node(c.outer), ValueAccess::index(c.outer));
      if (seen.emplace(key, true).second) merged.push_back(c.outer);
    }
  }
  return merged;
}

// `leading` argument indices, then the argument standing for each capture (added when the
// graph did not use it).
Result<std::vector<int>> ArgOrder(Graph* g, int leading, const std::vector<Value>& captures,
                                  Values* capture_args) {
  std::vector<int> order;
  for (int i = 0; i < leading; ++i) order.push_back(i);
  for (const Value& c : captures) {
    KILN_ASSIGN_OR_RETURN(Value inner, g->CaptureValue(c));
    order.push_back(ValueAccess::index(inner));
    if (capture_args != nullptr) capture_args->push_back(inner);
  }
  return order;
}

void AddToLibrary(Graph* parent, const tensorflow::FunctionDef& fdef, const Graph& child) {
  parent->AddFunction(fdef);
  for (const auto& f : child.library().function()) parent->AddFunction(f);
}

std::vector<DType> DTypesOf(const Values& values) {
  std::vector<DType> out;
  for (const Value& v : values) out.push_back(v.dtype());
  return out;
}

std::string Uid() { return std::to_string(internal::NextFunctionUid()); }

// Adds a functional If / While node and records it on the tapes that watch one of its inputs
// (its gradient function replays the branch / body functions kept in the graph).
Result<Values> AddRecordedNode(Graph* g, std::string_view op, std::string_view name,
                               const Values& inputs, internal::AttrMap attrs) {
  std::optional<internal::AttrMap> copy;
  if (internal::AnyTapeRecording()) copy = attrs;
  Values out = g->AddNode(op, name, inputs, std::move(attrs));
  KILN_RETURN_IF_ERROR(FirstError(out));
  if (copy) internal::RecordFunctional(op, *copy, inputs, out);
  return out;
}

// ---- Cond -------------------------------------------------------------------------------------

Result<Values> TracedCond(Graph* g, const Value& pred, const BranchFn& then_fn,
                          const BranchFn& else_fn) {
  if (pred.dtype() != DType::kBool || (!pred.shape().unknown_rank() && pred.shape().rank() != 0)) {
    return InvalidArgument("Cond: pred must be a bool scalar, got ", SpecText(pred.spec()));
  }
  const std::string uid = Uid();
  auto as_body = [](const BranchFn& fn) { return [&fn](const Values&) { return fn(); }; };
  KILN_ASSIGN_OR_RETURN_CTX(SubTrace then_t,
                            TraceInto(g, "cond_true_" + uid, {}, {}, as_body(then_fn)),
                            "Cond: true branch");
  KILN_ASSIGN_OR_RETURN_CTX(SubTrace else_t,
                            TraceInto(g, "cond_false_" + uid, {}, {}, as_body(else_fn)),
                            "Cond: false branch");
  if (then_t.outputs.size() != else_t.outputs.size()) {
    return InvalidArgument("Cond: the true branch returns ", then_t.outputs.size(),
                           " values, the false branch ", else_t.outputs.size(),
                           "; both must return the same number");
  }
  std::vector<PartialShape> shapes;
  for (size_t i = 0; i < then_t.outputs.size(); ++i) {
    const TensorSpec& a = then_t.outputs[i].spec();
    const TensorSpec& b = else_t.outputs[i].spec();
    if (a.dtype != b.dtype) {
      return InvalidArgument("Cond: output ", i, " is ", SpecText(a), " in the true branch but ",
                             SpecText(b), " in the false branch; the dtypes must match");
    }
    shapes.push_back(MostSpecificCompatible(a.shape, b.shape));
  }

  const std::vector<Value> captures = MergeCaptures({then_t.graph.get(), else_t.graph.get()});
  KILN_ASSIGN_OR_RETURN(std::vector<int> then_order,
                        ArgOrder(then_t.graph.get(), 0, captures, nullptr));
  KILN_ASSIGN_OR_RETURN(std::vector<int> else_order,
                        ArgOrder(else_t.graph.get(), 0, captures, nullptr));
  std::vector<TensorSpec> specs;
  KILN_ASSIGN_OR_RETURN_CTX(tensorflow::FunctionDef then_def,
                            then_t.graph->Finish(then_t.outputs, &specs, &then_order),
                            "Cond: true branch");
  KILN_ASSIGN_OR_RETURN_CTX(tensorflow::FunctionDef else_def,
                            else_t.graph->Finish(else_t.outputs, &specs, &else_order),
                            "Cond: false branch");
  AddToLibrary(g, then_def, *then_t.graph);
  AddToLibrary(g, else_def, *else_t.graph);

  const bool stateful = then_t.graph->has_stateful_node() || else_t.graph->has_stateful_node();
  internal::AttrMap attrs;
  attrs["Tcond"] = internal::TypeAttr(DType::kBool);
  attrs["Tin"] = internal::TypeListAttr(DTypesOf(captures));
  attrs["Tout"] = internal::TypeListAttr(DTypesOf(then_t.outputs));
  attrs["then_branch"] = internal::FuncAttr(then_def.signature().name());
  attrs["else_branch"] = internal::FuncAttr(else_def.signature().name());
  attrs["output_shapes"] = internal::ShapeListAttr(shapes);
  attrs["_lower_using_switch_merge"].set_b(true);
  Values inputs = {pred};
  inputs.insert(inputs.end(), captures.begin(), captures.end());
  // Kept for the gradient, which replays the branches (gradients/control_flow_grad.cc).
  g->AddFunctionBody(then_def.signature().name(),
                     std::make_shared<internal::FunctionBody>(
                         internal::FunctionBody{then_t.graph, then_t.outputs, then_order}));
  g->AddFunctionBody(else_def.signature().name(),
                     std::make_shared<internal::FunctionBody>(
                         internal::FunctionBody{else_t.graph, else_t.outputs, else_order}));
  return AddRecordedNode(g, stateful ? "If" : "StatelessIf", "cond", inputs, std::move(attrs));
}

// ---- WhileLoop -------------------------------------------------------------------------------

struct LoopSpecs {
  std::vector<TensorSpec> specs;   // what each loop variable may be (invariant shapes)
  std::vector<std::string> names;  // for messages
};

Result<LoopSpecs> CheckLoopVars(const Values& loop_vars, const WhileOptions& options) {
  if (!options.shape_invariants.empty() && options.shape_invariants.size() != loop_vars.size()) {
    return InvalidArgument("WhileLoop: ", options.shape_invariants.size(), " shape invariants for ",
                           loop_vars.size(), " loop variables");
  }
  LoopSpecs out;
  for (size_t i = 0; i < loop_vars.size(); ++i) {
    out.names.push_back(i < options.names.size() ? "loop variable '" + options.names[i] + "'"
                                                 : "loop variable " + std::to_string(i));
    KILN_RETURN_IF_ERROR_CTX(loop_vars[i].status(), "WhileLoop: ", out.names.back());
    TensorSpec spec = loop_vars[i].spec();
    if (!options.shape_invariants.empty()) {
      const PartialShape& inv = options.shape_invariants[i];
      if (!FitsInvariant(spec.shape, inv)) {
        return InvalidArgument("WhileLoop: ", out.names.back(), " enters the loop as ",
                               SpecText(spec), ", which does not fit its shape invariant ",
                               inv.ToPythonString());
      }
      spec.shape = inv;
    }
    out.specs.push_back(spec);
  }
  return out;
}

// The body's results must keep each loop variable's dtype and fit its shape.
Status CheckBodyResults(const Values& results, const LoopSpecs& loop) {
  if (results.size() != loop.specs.size()) {
    return InvalidArgument("WhileLoop: the body returns ", results.size(), " values for ",
                           loop.specs.size(), " loop variables");
  }
  for (size_t i = 0; i < results.size(); ++i) {
    const TensorSpec& before = loop.specs[i];
    const TensorSpec& after = results[i].spec();
    if (after.dtype != before.dtype) {
      return InvalidArgument("WhileLoop: the body changes the dtype of ", loop.names[i], ": it ",
                             "enters the loop as ", SpecText(before), " and leaves the body as ",
                             SpecText(after), "; a loop variable keeps its dtype (cast it)");
    }
    if (!FitsInvariant(after.shape, before.shape)) {
      return InvalidArgument("WhileLoop: the body changes the shape of ", loop.names[i],
                             ": it enters the loop as ", SpecText(before),
                             " and leaves the body as ", SpecText(after),
                             "; to let its shape vary, give a shape invariant "
                             "(WhileOptions::shape_invariants, e.g. unknown dims)");
    }
  }
  return OkStatus();
}

Result<Values> TracedWhile(Graph* g, const LoopCondFn& cond, const LoopBodyFn& body,
                           const Values& loop_vars, const WhileOptions& options) {
  KILN_ASSIGN_OR_RETURN(LoopSpecs loop, CheckLoopVars(loop_vars, options));
  const int n = static_cast<int>(loop_vars.size());
  std::vector<std::string> arg_names;
  for (int i = 0; i < n; ++i) {
    arg_names.push_back(i < static_cast<int>(options.names.size())
                            ? options.names[i]
                            : "loop_var_" + std::to_string(i));
  }
  const std::string uid = Uid();
  KILN_ASSIGN_OR_RETURN_CTX(SubTrace cond_t,
                            TraceInto(g, "while_cond_" + uid, loop.specs, arg_names,
                                      [&cond](const Values& vars) -> Result<Values> {
                                        Value c = cond(vars);
                                        KILN_RETURN_IF_ERROR(c.status());
                                        return Values{c};
                                      }),
                            "WhileLoop: cond");
  const TensorSpec& c = cond_t.outputs[0].spec();
  if (c.dtype != DType::kBool || (!c.shape.unknown_rank() && c.shape.rank() != 0)) {
    return InvalidArgument("WhileLoop: cond must return a bool scalar, got ", SpecText(c));
  }
  KILN_ASSIGN_OR_RETURN_CTX(SubTrace body_t,
                            TraceInto(g, "while_body_" + uid, loop.specs, arg_names, body),
                            "WhileLoop: body");
  KILN_RETURN_IF_ERROR(CheckBodyResults(body_t.outputs, loop));

  const std::vector<Value> captures = MergeCaptures({cond_t.graph.get(), body_t.graph.get()});
  KILN_ASSIGN_OR_RETURN(std::vector<int> cond_order,
                        ArgOrder(cond_t.graph.get(), n, captures, nullptr));
  Values passed_through;
  KILN_ASSIGN_OR_RETURN(std::vector<int> body_order,
                        ArgOrder(body_t.graph.get(), n, captures, &passed_through));
  Values body_out = body_t.outputs;
  body_out.insert(body_out.end(), passed_through.begin(), passed_through.end());

  std::vector<TensorSpec> specs;
  KILN_ASSIGN_OR_RETURN_CTX(tensorflow::FunctionDef cond_def,
                            cond_t.graph->Finish(cond_t.outputs, &specs, &cond_order),
                            "WhileLoop: cond");
  KILN_ASSIGN_OR_RETURN_CTX(tensorflow::FunctionDef body_def,
                            body_t.graph->Finish(body_out, &specs, &body_order), "WhileLoop: body");
  AddToLibrary(g, cond_def, *cond_t.graph);
  AddToLibrary(g, body_def, *body_t.graph);

  Values inputs = loop_vars;
  inputs.insert(inputs.end(), captures.begin(), captures.end());
  std::vector<PartialShape> shapes;
  for (const TensorSpec& s : loop.specs) shapes.push_back(s.shape);
  for (const Value& v : captures) shapes.push_back(v.shape());
  const bool stateful = cond_t.graph->has_stateful_node() || body_t.graph->has_stateful_node();
  internal::AttrMap attrs;
  attrs["T"] = internal::TypeListAttr(DTypesOf(inputs));
  attrs["cond"] = internal::FuncAttr(cond_def.signature().name());
  attrs["body"] = internal::FuncAttr(body_def.signature().name());
  attrs["output_shapes"] = internal::ShapeListAttr(shapes);
  attrs["parallel_iterations"] = internal::IntAttr(options.parallel_iterations);
  attrs["_lower_using_switch_merge"].set_b(true);
  attrs["_num_original_outputs"] = internal::IntAttr(static_cast<int64_t>(inputs.size()));
  g->AddFunctionBody(cond_def.signature().name(),
                     std::make_shared<internal::FunctionBody>(
                         internal::FunctionBody{cond_t.graph, cond_t.outputs, cond_order}));
  g->AddFunctionBody(body_def.signature().name(),
                     std::make_shared<internal::FunctionBody>(
                         internal::FunctionBody{body_t.graph, body_out, body_order}));
  KILN_ASSIGN_OR_RETURN(Values out, AddRecordedNode(g, stateful ? "While" : "StatelessWhile",
                                                    "while", inputs, std::move(attrs)));
  out.resize(n);  // captures come back unchanged
  return out;
}

Result<Values> EagerWhile(const LoopCondFn& cond, const LoopBodyFn& body, const Values& loop_vars,
                          const WhileOptions& options) {
  KILN_ASSIGN_OR_RETURN(LoopSpecs loop, CheckLoopVars(loop_vars, options));
  Values vars = loop_vars;
  for (;;) {
    Value c = cond(vars);
    KILN_RETURN_IF_ERROR_CTX(c.status(), "WhileLoop: cond");
    KILN_ASSIGN_OR_RETURN_CTX(Tensor ct, c.tensor(), "WhileLoop: cond");
    if (ct.dtype() != DType::kBool || ct.rank() != 0) {
      return InvalidArgument("WhileLoop: cond must return a bool scalar, got ", SpecText(c.spec()));
    }
    if (!ct.scalar<bool>()) break;
    KILN_ASSIGN_OR_RETURN_CTX(Values next, body(vars), "WhileLoop: body");
    KILN_RETURN_IF_ERROR_CTX(FirstError(next), "WhileLoop: body");
    KILN_RETURN_IF_ERROR(CheckBodyResults(next, loop));
    vars = std::move(next);
  }
  return vars;
}

// Records a failure of a control-flow construct in the trace (if any), so that it fails the
// trace even when the caller drops the result.
template <typename T>
Result<T> Recorded(Result<T> r) {
  if (!r.ok()) {
    if (Graph* g = Graph::Current()) g->RecordError(r.status());
  }
  return r;
}

bool IsIndexType(DType t) { return t == DType::kInt32 || t == DType::kInt64; }

}  // namespace

// ---- public ----------------------------------------------------------------------------------

Result<Values> Cond(const Value& pred, const BranchFn& then_fn, const BranchFn& else_fn) {
  return Recorded([&]() -> Result<Values> {
    KILN_RETURN_IF_ERROR_CTX(pred.status(), "Cond: pred");
    if (Graph* g = Graph::Current()) return TracedCond(g, pred, then_fn, else_fn);
    KILN_ASSIGN_OR_RETURN_CTX(Tensor t, pred.tensor(), "Cond: pred");
    if (t.dtype() != DType::kBool || t.rank() != 0) {
      return InvalidArgument("Cond: pred must be a bool scalar, got ", SpecText(pred.spec()));
    }
    KILN_ASSIGN_OR_RETURN(Values out, t.scalar<bool>() ? then_fn() : else_fn());
    KILN_RETURN_IF_ERROR(FirstError(out));
    return out;
  }());
}

Result<Values> WhileLoop(const LoopCondFn& cond, const LoopBodyFn& body, const Values& loop_vars,
                         const WhileOptions& options) {
  if (Graph* g = Graph::Current()) return Recorded(TracedWhile(g, cond, body, loop_vars, options));
  return EagerWhile(cond, body, loop_vars, options);
}

Result<Values> ForRange(const Value& start, const Value& limit, const Value& delta,
                        const ForBodyFn& body, const Values& loop_vars,
                        const WhileOptions& options) {
  return Recorded([&]() -> Result<Values> {
    const Value* bounds[] = {&start, &limit, &delta};
    const char* what[] = {"start", "limit", "delta"};
    for (int k = 0; k < 3; ++k) {
      const Value& v = *bounds[k];
      KILN_RETURN_IF_ERROR_CTX(v.status(), "ForRange: ", what[k]);
      if (!IsIndexType(v.dtype()) || v.dtype() != start.dtype() ||
          (!v.shape().unknown_rank() && v.shape().rank() != 0)) {
        return InvalidArgument("ForRange: ", what[k], " must be an int32 or int64 scalar of the ",
                               "same dtype as start, got ", SpecText(v.spec()));
      }
    }
    // The sign of a constant delta is known now; otherwise the condition covers both. Constant
    // bounds are made again inside the loop functions instead of being captured.
    std::optional<bool> ascending;
    // Copies: the pointers point into the graph's nodes, which may move as it grows.
    std::optional<Tensor> const_delta, const_limit;
    if (const Tensor* t = Graph::ConstantOf(delta)) const_delta = *t;
    if (const Tensor* t = Graph::ConstantOf(limit)) const_limit = *t;
    if (const_delta) {
      const int64_t step = const_delta->dtype() == DType::kInt32 ? const_delta->scalar<int32_t>()
                                                                 : const_delta->scalar<int64_t>();
      if (step == 0) return InvalidArgument("ForRange: delta must not be zero");
      ascending = step > 0;
    }
    auto limit_here = [&]() { return const_limit ? Constant(*const_limit) : limit; };
    auto delta_here = [&]() { return const_delta ? Constant(*const_delta) : delta; };
    Values vars = {start};
    vars.insert(vars.end(), loop_vars.begin(), loop_vars.end());
    WhileOptions opts = options;
    opts.names.insert(opts.names.begin(), "i");
    if (!opts.shape_invariants.empty()) {
      opts.shape_invariants.insert(opts.shape_invariants.begin(), PartialShape::Scalar());
    }
    auto cond = [&](const Values& v) -> Value {
      if (ascending) return *ascending ? Less(v[0], limit_here()) : Greater(v[0], limit_here());
      return LogicalOr(LogicalAnd(delta > 0.0, Less(v[0], limit_here())),
                       LogicalAnd(delta < 0.0, Greater(v[0], limit_here())));
    };
    auto loop_body = [&](const Values& v) -> Result<Values> {
      Values rest(v.begin() + 1, v.end());
      KILN_ASSIGN_OR_RETURN(Values next, body(v[0], rest));
      Values out = {Add(v[0], delta_here())};
      out.insert(out.end(), next.begin(), next.end());
      return out;
    };
    KILN_ASSIGN_OR_RETURN(Values out, WhileLoop(cond, loop_body, vars, opts));
    return Values(out.begin() + 1, out.end());
  }());
}

Result<Values> CallFunction(Function& function, const Values& args) {
  return Recorded([&]() -> Result<Values> {
    const std::string who = "calling '" + function.name() + "'";
    for (size_t i = 0; i < args.size(); ++i) {
      KILN_RETURN_IF_ERROR_CTX(args[i].status(), who, ": argument ", i);
    }
    Graph* g = Graph::Current();
    if (g == nullptr) {
      std::vector<Tensor> tensors;
      for (size_t i = 0; i < args.size(); ++i) {
        KILN_ASSIGN_OR_RETURN_CTX(Tensor t, args[i].tensor(), who, ": argument ", i);
        tensors.push_back(std::move(t));
      }
      KILN_ASSIGN_OR_RETURN_CTX(std::vector<Tensor> out,
                                function.Call(std::span<const Tensor>(tensors)), who);
      return Values(out.begin(), out.end());
    }
    std::vector<TensorSpec> specs;
    for (const Value& a : args) specs.push_back(a.spec());
    // The callee's own cache: one trace per signature however many callers it has.
    KILN_ASSIGN_OR_RETURN_CTX(const ConcreteFunction* cf,
                              function.GetConcreteFunction(std::span<const TensorSpec>(specs)),
                              who);
    // A copy under a name unique in the process: two Functions may share a name.
    tensorflow::FunctionDef callee = cf->function_def();
    const std::string copy_name = cf->name() + "_" + Uid();
    callee.mutable_signature()->set_name(copy_name);
    g->AddFunction(callee);
    const auto& lib = cf->library();
    for (int i = 1; i < lib.function_size(); ++i) g->AddFunction(lib.function(i));

    Values inputs = args;
    std::vector<DType> tin = DTypesOf(args);
    for (const Variable& v : cf->captured_variables()) {
      inputs.push_back(g->CaptureVariable(internal::VariableAccess::State(v)));
      tin.push_back(DType::kResource);
    }
    std::vector<DType> tout;
    std::vector<TensorSpec> out_specs(cf->outputs().begin(), cf->outputs().end());
    for (const TensorSpec& s : out_specs) tout.push_back(s.dtype);
    internal::AttrMap attrs;
    attrs["Tin"] = internal::TypeListAttr(tin);
    attrs["Tout"] = internal::TypeListAttr(tout);
    attrs["f"] = internal::FuncAttr(copy_name);
    const bool stateful = cf->is_stateful();
    const char* op = stateful ? "StatefulPartitionedCall" : "PartitionedCall";
    Values out = g->AddCallNode(op, op, inputs, std::move(attrs), std::move(out_specs), stateful);
    KILN_RETURN_IF_ERROR(FirstError(out));
    return out;
  }());
}

// ---- Value's truth value (declared in value.h) -----------------------------------------------

Value::operator bool() const {
  Graph* g = Graph::Current();
  if (kind_ == Kind::kEager) {
    Result<bool> b = TruthValue(tensor_);
    if (b.ok()) return *b;
    if (g != nullptr) g->RecordError(b.status().WithContext("converting a value to a C++ bool"));
    return false;
  }
  Status s = status();
  if (kind_ == Kind::kSymbolic) {
    s = InvalidArgument(
        "a symbolic ", DTypeShortName(spec_.dtype), " ", spec_.shape.ToPythonString(),
        " value of the trace of '", graph_->function_name(),
        "' was used as a C++ bool (an if, while, for condition, &&, || or !): its value is known "
        "only when the graph runs. Use kiln::trace::Cond(pred, then_fn, else_fn) for if/else "
        "and kiln::trace::WhileLoop / ForRange for loops (tf.cond / tf.while_loop)");
  }
  if (g != nullptr) g->RecordError(s);
  return false;
}

}  // namespace kiln::trace
