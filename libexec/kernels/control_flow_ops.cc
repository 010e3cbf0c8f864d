// Functional control flow as TensorFlow 2 stores it in graphs: If/StatelessIf pick one of two
// branch functions, While/StatelessWhile run a body function until a cond function says stop,
// TF 1's For runs a body over an int32 range, RemoteCall calls a function, MapDefun maps one over
// rows; FakeParam and DeviceIndex are what TF's branch functions hold beside them.
// The functions are prepared once (with the node's input specs) when the node is prepared;
// compute only runs the prepared schedules, and only the branch taken runs.
// The CPU kernels, and the helpers that run a prepared function from a kernel (ToBool,
// RunFunction), are in kernels/cpu/control_flow_ops.cc.
#include "kernels/control_flow_ops.h"

#include <algorithm>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "kernels/control_flow_util.h"
#include "kernels/kernel_util.h"
#include "kernels/recurrent_loop.h"
#include "kiln/exec/executor.h"

namespace kiln::exec {
namespace control_flow {
namespace {

#ifndef KILN_NO_PROTOBUF
// Branch and loop functions may themselves hold If/While nodes; a function that reaches
// itself would otherwise recurse forever while preparing.
constexpr int kMaxNesting = 64;
thread_local int prepare_depth = 0;

struct DepthGuard {
  DepthGuard() { ++prepare_depth; }
  ~DepthGuard() { --prepare_depth; }
  DepthGuard(const DepthGuard&) = delete;
  DepthGuard& operator=(const DepthGuard&) = delete;
};
#endif

}  // namespace

// The most specific shape that both `a` and `b` are compatible with: equal dims stay, other
// dims become unknown, and a rank mismatch gives unknown rank.
PartialShape MostSpecificCompatibleShape(const PartialShape& a, const PartialShape& b) {
  if (a.unknown_rank() || b.unknown_rank() || a.rank() != b.rank())
    return PartialShape::UnknownRank();
  std::vector<int64_t> dims(a.rank());
  for (int i = 0; i < a.rank(); ++i) dims[i] = a.dim(i) == b.dim(i) ? a.dim(i) : -1;
  auto s = PartialShape::FromDims(dims);
  return s.ok() ? *s : PartialShape::UnknownRank();
}

Result<PreparedPtr> PrepareNamedFunction(const PrepareContext& ctx, std::string_view attr,
                                         const std::string& name,
                                         std::span<const TensorSpec> specs) {
#ifdef KILN_NO_PROTOBUF
  // Function bodies are FunctionDefs in saved_model.pb, which this runtime does not read; a plan
  // is self-contained only when nothing calls a function (compile says so).
  (void)specs;
  return ctx.Error("attr '", attr, "' names function '", name,
                   "': the protobuf-free runtime cannot call functions; load this bundle with the "
                   "full runtime");
#else
  if (ctx.library == nullptr)
    return ctx.Error("attr '", attr, "' names function '", name,
                     "', but no function library was given to prepare with");
  const tensorflow::FunctionDef* fdef = ctx.library->Find(name);
  if (fdef == nullptr)
    return ctx.Error("attr '", attr, "' names function '", name,
                     "', which is not in the function library");
  if (prepare_depth >= kMaxNesting)
    return ctx.Error("control flow functions nest deeper than ", kMaxNesting,
                     " (recursive function '", name, "'?)");
  DepthGuard guard;
  PrepareOptions options;
  options.resources = ctx.resources;
  KILN_ASSIGN_OR_RETURN_CTX(PreparedPtr fn,
                            PreparedFunction::Prepare(*fdef, *ctx.library, specs, options),
                            "node '", ctx.node_name, "' (", ctx.op, "), attr '", attr, "'");
  return fn;
#endif
}

Result<PreparedPtr> PrepareFunctionAttr(const PrepareContext& ctx, std::string_view attr,
                                        std::span<const TensorSpec> specs) {
  KILN_PREPARE_ASSIGN(ctx, std::string name, ctx.attrs.GetFunctionName(attr));
  return PrepareNamedFunction(ctx, attr, name, specs);
}

// Checks optional list(type) attr `attr` against `specs`.
Status CheckTypeListAttr(const PrepareContext& ctx, std::string_view attr,
                         std::span<const TensorSpec> specs, std::string_view what) {
  if (!ctx.attrs.Has(attr)) return OkStatus();
  KILN_PREPARE_ASSIGN(ctx, std::vector<DType> types, ctx.attrs.GetTypeList(attr));
  if (types.size() != specs.size())
    return ctx.Error("attr '", attr, "' lists ", types.size(), " types for ", specs.size(), " ",
                     what);
  for (size_t i = 0; i < types.size(); ++i) {
    if (types[i] != specs[i].dtype)
      return ctx.Error("attr '", attr, "'[", i, "] is ", DTypeShortName(types[i]), ", but ", what,
                       " ", i, " is ", DTypeShortName(specs[i].dtype));
  }
  return OkStatus();
}

// Refines `specs` with the node's output_shapes attr where it is given and compatible.
Status ApplyOutputShapes(const PrepareContext& ctx, std::vector<TensorSpec>* specs) {
  if (!ctx.attrs.Has("output_shapes")) return OkStatus();
  KILN_PREPARE_ASSIGN(ctx, std::vector<PartialShape> shapes,
                      ctx.attrs.GetShapeList("output_shapes"));
  if (shapes.empty()) return OkStatus();
  if (shapes.size() != specs->size())
    return ctx.Error("attr 'output_shapes' lists ", shapes.size(), " shapes for ", specs->size(),
                     " outputs");
  for (size_t i = 0; i < shapes.size(); ++i) {
    auto merged = (*specs)[i].shape.MergeWith(shapes[i]);
    if (!merged.ok())
      return ctx.Error("output ", i, " has shape ", (*specs)[i].shape.ToPythonString(),
                       ", which attr 'output_shapes' contradicts with ",
                       shapes[i].ToPythonString());
    (*specs)[i].shape = *merged;
  }
  return OkStatus();
}

}  // namespace control_flow

namespace {

using control_flow::ApplyOutputShapes;
using control_flow::CheckTypeListAttr;
using control_flow::MostSpecificCompatibleShape;
using control_flow::PreparedPtr;
using control_flow::PrepareFunctionAttr;
using control_flow_ops::CallState;
using control_flow_ops::ForState;
using control_flow_ops::IfState;
using control_flow_ops::MapDefunState;
using control_flow_ops::WhileState;

// ---- If, StatelessIf -------------------------------------------------------------------------

Status PrepareIf(PrepareContext& ctx) {
  KILN_RETURN_IF_ERROR(ctx.ExpectInputsAtLeast(1));
  if (ctx.attrs.Has("Tcond")) {
    KILN_PREPARE_ASSIGN(ctx, DType tcond, ctx.attrs.GetType("Tcond"));
    if (tcond != ctx.inputs[0].dtype)
      return ctx.Error("input 'cond': expected dtype ", DTypeShortName(tcond),
                       " (attr 'Tcond'), got ", DTypeShortName(ctx.inputs[0].dtype));
  }
  std::vector<TensorSpec> in_specs(ctx.inputs.begin() + 1, ctx.inputs.end());
  KILN_RETURN_IF_ERROR(CheckTypeListAttr(ctx, "Tin", in_specs, "input"));

  auto state = std::make_shared<IfState>();
  KILN_ASSIGN_OR_RETURN(state->then_fn, PrepareFunctionAttr(ctx, "then_branch", in_specs));
  KILN_ASSIGN_OR_RETURN(state->else_fn, PrepareFunctionAttr(ctx, "else_branch", in_specs));
  auto then_out = state->then_fn->output_specs();
  auto else_out = state->else_fn->output_specs();
  if (then_out.size() != else_out.size())
    return ctx.Error("then_branch '", state->then_fn->name(), "' has ", then_out.size(),
                     " outputs, else_branch '", state->else_fn->name(), "' has ", else_out.size());
  std::vector<TensorSpec> outs;
  for (size_t i = 0; i < then_out.size(); ++i) {
    if (then_out[i].dtype != else_out[i].dtype)
      return ctx.Error("output ", i, ": then_branch gives ", DTypeShortName(then_out[i].dtype),
                       ", else_branch gives ", DTypeShortName(else_out[i].dtype));
    outs.push_back(TensorSpec{then_out[i].dtype,
                              MostSpecificCompatibleShape(then_out[i].shape, else_out[i].shape)});
  }
  KILN_RETURN_IF_ERROR(CheckTypeListAttr(ctx, "Tout", outs, "branch output"));
  KILN_RETURN_IF_ERROR(ApplyOutputShapes(ctx, &outs));
  ctx.outputs = std::move(outs);
  ctx.state = std::move(state);
  return OkStatus();
}

// ---- While, StatelessWhile -------------------------------------------------------------------

// Prepares attr "body" over `leading` (arguments the body gets before the loop variables, such as
// For's counter) and `vars`, which it must return. Like TF's shape invariants, a loop variable
// whose shape the body changes is relaxed to the most specific shape covering both and the body
// prepared again; each round makes at least one dim (or rank) unknown, so this ends.
Result<PreparedPtr> PrepareLoopBody(const PrepareContext& ctx,
                                    const std::vector<TensorSpec>& leading,
                                    std::vector<TensorSpec>* vars) {
  std::vector<TensorSpec>& loop = *vars;
  for (int round = 0;; ++round) {
    std::vector<TensorSpec> args = leading;
    args.insert(args.end(), loop.begin(), loop.end());
    KILN_ASSIGN_OR_RETURN(PreparedPtr body, PrepareFunctionAttr(ctx, "body", args));
    auto out = body->output_specs();
    if (out.size() != loop.size())
      return ctx.Error("body '", body->name(), "' returns ", out.size(), " values for ",
                       loop.size(), " loop variables");
    bool changed = false;
    for (size_t i = 0; i < loop.size(); ++i) {
      if (out[i].dtype != loop[i].dtype)
        return ctx.Error("body '", body->name(), "' changes the dtype of loop variable ", i,
                         " from ", DTypeShortName(loop[i].dtype), " to ",
                         DTypeShortName(out[i].dtype));
      PartialShape relaxed = MostSpecificCompatibleShape(loop[i].shape, out[i].shape);
      if (relaxed != loop[i].shape) {
        loop[i].shape = relaxed;
        changed = true;
      }
    }
    if (!changed) return body;
    if (round > 4 * kMaxRank)
      return ctx.Error("loop variable shapes do not settle");  // cannot happen; stay safe
  }
}

Status PrepareWhile(PrepareContext& ctx) {
  std::vector<TensorSpec> loop = ctx.inputs;
  KILN_RETURN_IF_ERROR(CheckTypeListAttr(ctx, "T", loop, "input"));
  KILN_PREPARE_ASSIGN(ctx, int64_t parallel, ctx.attrs.GetInt("parallel_iterations", 10));
  (void)parallel;  // iterations run one after another here

  auto state = std::make_shared<WhileState>();
  KILN_ASSIGN_OR_RETURN(state->body_fn, PrepareLoopBody(ctx, {}, &loop));
  KILN_ASSIGN_OR_RETURN(state->cond_fn, PrepareFunctionAttr(ctx, "cond", loop));
  auto cond_out = state->cond_fn->output_specs();
  if (cond_out.size() != 1)
    return ctx.Error("cond '", state->cond_fn->name(), "' returns ", cond_out.size(),
                     " values, expected 1");
  // The final values are the inputs or a body's outputs; the relaxed specs cover both.
  std::vector<TensorSpec> outs = loop;
  KILN_RETURN_IF_ERROR(ApplyOutputShapes(ctx, &outs));
#ifndef KILN_NO_PROTOBUF
  // A first look at the graph only wants the specs.
  if (!ctx.analysis_only) state->recurrent = MatchRecurrentLoop(ctx);
#endif
  ctx.outputs = std::move(outs);
  ctx.state = std::move(state);
  return OkStatus();
}

// ---- For -------------------------------------------------------------------------------------

// TF 1's For(start, limit, delta, input; body): body(i, vars...) -> vars for i from start by
// delta while i < limit (i > limit for a negative delta), as TF's ForOp (int32 counters).
Status PrepareFor(PrepareContext& ctx) {
  KILN_RETURN_IF_ERROR(ctx.ExpectInputsAtLeast(3));
  constexpr const char* kNames[] = {"start", "limit", "delta"};
  for (int i = 0; i < 3; ++i) {
    KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, i, kNames[i], DType::kInt32));
    KILN_RETURN_IF_ERROR(ExpectInputRank(ctx, i, kNames[i], 0));
  }
  std::vector<TensorSpec> vars(ctx.inputs.begin() + 3, ctx.inputs.end());
  KILN_RETURN_IF_ERROR(CheckTypeListAttr(ctx, "T", vars, "input"));
  auto state = std::make_shared<ForState>();
  KILN_ASSIGN_OR_RETURN(
      state->body_fn,
      PrepareLoopBody(ctx, {TensorSpec{DType::kInt32, PartialShape::Scalar()}}, &vars));
  ctx.outputs = std::move(vars);
  ctx.state = std::move(state);
  return OkStatus();
}

// ---- RemoteCall ------------------------------------------------------------------------------

// RemoteCall(target, args; f) runs f on the device `target` names; one process has one place
// to run it, so it is a call of f here (target is read, not used).
Status PrepareRemoteCall(PrepareContext& ctx) {
  KILN_RETURN_IF_ERROR(ctx.ExpectInputsAtLeast(1));
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 0, "target", DType::kString));
  KILN_RETURN_IF_ERROR(ExpectInputRank(ctx, 0, "target", 0));
  std::vector<TensorSpec> args(ctx.inputs.begin() + 1, ctx.inputs.end());
  KILN_RETURN_IF_ERROR(CheckTypeListAttr(ctx, "Tin", args, "input"));
  auto state = std::make_shared<CallState>();
  KILN_ASSIGN_OR_RETURN(state->fn, PrepareFunctionAttr(ctx, "f", args));
  std::vector<TensorSpec> outs(state->fn->output_specs().begin(), state->fn->output_specs().end());
  KILN_RETURN_IF_ERROR(CheckTypeListAttr(ctx, "Tout", outs, "function output"));
  ctx.outputs = std::move(outs);
  ctx.state = std::move(state);
  return OkStatus();
}

// ---- MapDefun ---------------------------------------------------------------------------------

// MapDefun(arguments, captured_inputs; f): f over the rows (dim 0) of every argument, with the
// captured inputs whole, its outputs stacked along a new dim 0 (tf.data's vectorised map
// fallback), one row after another.
Status PrepareMapDefun(PrepareContext& ctx) {
  KILN_PREPARE_ASSIGN(ctx, std::vector<DType> targs, ctx.attrs.GetTypeList("Targuments"));
  std::vector<DType> tcap;
  if (ctx.attrs.Has("Tcaptured")) {
    KILN_PREPARE_ASSIGN(ctx, tcap, ctx.attrs.GetTypeList("Tcaptured"));
  }
  KILN_PREPARE_ASSIGN(ctx, std::vector<DType> out_types, ctx.attrs.GetTypeList("output_types"));
  KILN_PREPARE_ASSIGN(ctx, std::vector<PartialShape> out_shapes,
                      ctx.attrs.GetShapeList("output_shapes"));
  KILN_RETURN_IF_ERROR(ctx.ExpectInputs(static_cast<int>(targs.size() + tcap.size())));
  if (targs.empty()) return ctx.Error("MapDefun needs at least one argument to map over");
  if (out_shapes.size() != out_types.size())
    return ctx.Error("attrs 'output_types' and 'output_shapes' list ", out_types.size(), " and ",
                     out_shapes.size(), " entries");
  std::vector<TensorSpec> specs;
  int64_t rows = -1;
  for (size_t i = 0; i < targs.size() + tcap.size(); ++i) {
    const bool arg = i < targs.size();
    const DType want = arg ? targs[i] : tcap[i - targs.size()];
    if (ctx.inputs[i].dtype != want)
      return ctx.Error("input ", i, " is ", DTypeShortName(ctx.inputs[i].dtype), ", attr says ",
                       DTypeShortName(want));
    const PartialShape& s = ctx.inputs[i].shape;
    if (!arg || s.unknown_rank()) {
      specs.push_back(ctx.inputs[i]);
      continue;
    }
    if (s.rank() < 1) return ctx.Error("argument ", i, " must have rank >= 1 to be mapped over");
    if (rows < 0) rows = s.dim(0);
    std::vector<int64_t> dims(s.dims().begin() + 1, s.dims().end());
    KILN_PREPARE_ASSIGN(ctx, PartialShape elem, PartialShape::FromDims(dims));
    specs.push_back(TensorSpec{want, elem});
  }
  auto st = std::make_shared<MapDefunState>();
  st->num_args = static_cast<int>(targs.size());
  st->out_shapes = out_shapes;
  KILN_ASSIGN_OR_RETURN(st->fn, PrepareFunctionAttr(ctx, "f", specs));
  const auto fn_out = st->fn->output_specs();
  if (fn_out.size() != out_types.size())
    return ctx.Error("function '", st->fn->name(), "' returns ", fn_out.size(),
                     " values, attr "
                     "'output_types' lists ",
                     out_types.size());
  for (size_t j = 0; j < out_types.size(); ++j) {
    if (fn_out[j].dtype != out_types[j])
      return ctx.Error("function output ", j, " is ", DTypeShortName(fn_out[j].dtype),
                       ", attr 'output_types' says ", DTypeShortName(out_types[j]));
    std::vector<int64_t> dims = {rows};
    if (out_shapes[j].unknown_rank()) {
      ctx.outputs.push_back(TensorSpec{out_types[j], PartialShape::UnknownRank()});
      continue;
    }
    dims.insert(dims.end(), out_shapes[j].dims().begin(), out_shapes[j].dims().end());
    KILN_PREPARE_ASSIGN(ctx, PartialShape out, PartialShape::FromDims(dims));
    ctx.outputs.push_back(TensorSpec{out_types[j], out});
  }
  ctx.state = std::move(st);
  return OkStatus();
}

// ---- FakeParam, DeviceIndex ------------------------------------------------------------------

// FakeParam stands in, inside a branch function, for a value the branch never uses (TF's
// control-flow gradients put it in If branches): its contents are unspecified; here zeros of
// `shape`, unknown dims 0, as TF's kernel sizes it.
Status PrepareFakeParam(PrepareContext& ctx) {
  KILN_RETURN_IF_ERROR(ctx.ExpectInputs(0));
  KILN_PREPARE_ASSIGN(ctx, DType dtype, ctx.attrs.GetType("dtype"));
  if (!HoldsData(dtype))
    return ctx.Error("attr 'dtype' is ", DTypeShortName(dtype), ", expected a data dtype");
  KILN_PREPARE_ASSIGN(ctx, PartialShape shape, ctx.attrs.GetShape("shape"));
  std::vector<int64_t> dims;
  for (int i = 0; !shape.unknown_rank() && i < shape.rank(); ++i)
    dims.push_back(std::max<int64_t>(shape.dim(i), 0));
  KILN_PREPARE_ASSIGN(ctx, Shape out, Shape::FromDims(dims));
  ctx.outputs = {TensorSpec{dtype, PartialShape(out)}};
  ctx.state = std::make_shared<TypedOpState<Shape>>(out);
  return OkStatus();
}

// DeviceIndex: the position of the running device's type in `device_names` (their count when it
// is not there), which Keras's device-dependent layers switch on (a Case over the index). Kernels
// here run on the CPU.
Status PrepareDeviceIndex(PrepareContext& ctx) {
  KILN_RETURN_IF_ERROR(ctx.ExpectInputs(0));
  KILN_PREPARE_ASSIGN(ctx, std::vector<std::string> names, ctx.attrs.GetStringList("device_names"));
  const auto it = std::find(names.begin(), names.end(), "CPU");
  ctx.outputs = {TensorSpec{DType::kInt32, PartialShape::Scalar()}};
  ctx.state = std::make_shared<TypedOpState<int32_t>>(static_cast<int32_t>(it - names.begin()));
  return OkStatus();
}

// ---- tables ----------------------------------------------------------------------------------

constexpr OpDefinition kDefs[] = {
    {"If", "output", kOpStateful, PrepareIf},
    {"StatelessIf", "output", kOpNone, PrepareIf},
    {"While", "output", kOpStateful, PrepareWhile},
    {"StatelessWhile", "output", kOpNone, PrepareWhile},
    {"For", "output", kOpStateful, PrepareFor},
    {"RemoteCall", "output", kOpStateful, PrepareRemoteCall},
    {"MapDefun", "output", kOpStateful, PrepareMapDefun},
    {"FakeParam", "output", kOpFreshOutputs, PrepareFakeParam},
    {"DeviceIndex", "index", kOpNone, PrepareDeviceIndex},
};

}  // namespace

std::span<const OpDefinition> ControlFlowOpDefs() { return kDefs; }

}  // namespace kiln::exec
