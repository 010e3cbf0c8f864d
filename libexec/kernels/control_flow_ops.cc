// Functional control flow as TensorFlow 2 stores it in graphs: If/StatelessIf pick one of two
// branch functions, While/StatelessWhile run a body function until a cond function says stop,
// TF 1's For runs a body over an int32 range, RemoteCall calls a function, MapDefun maps one over
// rows; FakeParam and DeviceIndex are what TF's branch functions hold beside them.
// The functions are prepared once (with the node's input specs) when the node is prepared;
// compute only runs the prepared schedules, and only the branch taken runs.
#include <algorithm>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "kernels/array_util.h"
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

// TF's truth value of a tensor: a scalar is true when non-zero (non-empty for strings), any
// other tensor when it has elements.
Result<bool> ToBool(const Tensor& t) {
  if (t.rank() != 0) return t.NumElements() > 0;
  switch (t.dtype()) {
#define KILN_CASE(e, T) \
  case DType::e:        \
    return t.scalar<T>() != T(0);
    KILN_CASE(kBool, bool)
    KILN_CASE(kFloat, float)
    KILN_CASE(kDouble, double)
    KILN_CASE(kInt32, int32_t)
    KILN_CASE(kInt64, int64_t)
    KILN_CASE(kInt16, int16_t)
    KILN_CASE(kInt8, int8_t)
    KILN_CASE(kUInt8, uint8_t)
    KILN_CASE(kUInt16, uint16_t)
    KILN_CASE(kUInt32, uint32_t)
    KILN_CASE(kUInt64, uint64_t)
#undef KILN_CASE
    case DType::kString:
      return !t.scalar<std::string>().empty();
    default:
      return InvalidArgument("cannot use a ", DTypeShortName(t.dtype()), " scalar as a condition");
  }
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

// Runs `fn` on `args` with the caller's print sink, naming the node on failure.
Status RunFunction(const KernelContext& ctx, const PreparedFunction& fn,
                   std::span<const Tensor> args, std::vector<Tensor>* outs) {
  RunOptions options;
  options.print = ctx.env().print;
  options.threads = &ctx.threads();
  options.deadline = ctx.env().deadline;
  Status s = fn.Run(args, outs, options);
  if (!s.ok()) return s.WithContext(internal::StrCat("node '", ctx.node_name(), "'"));
  return OkStatus();
}

}  // namespace control_flow

namespace {

using control_flow::ApplyOutputShapes;
using control_flow::CheckTypeListAttr;
using control_flow::MostSpecificCompatibleShape;
using control_flow::PreparedPtr;
using control_flow::PrepareFunctionAttr;
using control_flow::RunFunction;
using control_flow::ToBool;

// ---- If, StatelessIf -------------------------------------------------------------------------

struct IfState : OpState {
  PreparedPtr then_fn;
  PreparedPtr else_fn;
};

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

Status ComputeIf(const KernelContext& ctx) {
  const auto& st = ctx.state<IfState>();
  KILN_ASSIGN_OR_RETURN_CTX(bool cond, ToBool(ctx.input(0)), "node '", ctx.node_name(),
                            "': input 'cond'");
  std::vector<Tensor> args;
  args.reserve(ctx.num_inputs() - 1);
  for (int i = 1; i < ctx.num_inputs(); ++i) args.push_back(ctx.input(i));
  std::vector<Tensor> outs;
  KILN_RETURN_IF_ERROR(RunFunction(ctx, cond ? *st.then_fn : *st.else_fn, args, &outs));
  if (static_cast<int>(outs.size()) != ctx.num_outputs())
    return Internal("node '", ctx.node_name(), "': branch gave ", outs.size(),
                    " outputs, expected ", ctx.num_outputs());
  for (int i = 0; i < ctx.num_outputs(); ++i) ctx.SetOutput(i, std::move(outs[i]));
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

struct WhileState : OpState {
  PreparedPtr cond_fn;
  PreparedPtr body_fn;
  // Set when the loop is a recognised recurrent layer (recurrent_loop.h).
  std::shared_ptr<const RecurrentLoop> recurrent;
};

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

Status ComputeWhile(const KernelContext& ctx) {
  const auto& st = ctx.state<WhileState>();
#ifndef KILN_NO_PROTOBUF
  if (st.recurrent != nullptr) {
    bool ran = false;
    KILN_RETURN_IF_ERROR(RunRecurrentLoop(*st.recurrent, ctx, &ran));
    if (ran) return OkStatus();
  }
#endif
  std::vector<Tensor> vars;
  vars.reserve(ctx.num_inputs());
  for (int i = 0; i < ctx.num_inputs(); ++i) vars.push_back(ctx.input(i));
  std::vector<Tensor> cond_out;
  std::vector<Tensor> next;
  for (;;) {
    KILN_RETURN_IF_ERROR(RunFunction(ctx, *st.cond_fn, vars, &cond_out));
    KILN_ASSIGN_OR_RETURN_CTX(bool go, ToBool(cond_out[0]), "node '", ctx.node_name(),
                              "': output of cond '", st.cond_fn->name(), "'");
    if (!go) break;
    KILN_RETURN_IF_ERROR(RunFunction(ctx, *st.body_fn, vars, &next));
    vars.swap(next);
  }
  for (int i = 0; i < ctx.num_outputs(); ++i) ctx.SetOutput(i, std::move(vars[i]));
  return OkStatus();
}

// ---- For -------------------------------------------------------------------------------------

// TF 1's For(start, limit, delta, input; body): body(i, vars...) -> vars for i from start by
// delta while i < limit (i > limit for a negative delta), as TF's ForOp (int32 counters).
struct ForState : OpState {
  PreparedPtr body_fn;
};

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

Status ComputeFor(const KernelContext& ctx) {
  const auto& st = ctx.state<ForState>();
  int32_t range[3];
  for (int i = 0; i < 3; ++i) {
    if (ctx.input(i).NumElements() != 1)
      return ctx.Error("input ", i, " must be a scalar, got ", ctx.input(i).shape().ToString());
    range[i] = ctx.input(i).data<int32_t>()[0];
  }
  const int32_t limit = range[1], delta = range[2];
  int64_t i = range[0];
  if (!((delta > 0 && i <= limit) || (delta < 0 && i >= limit) || (delta == 0 && i == limit)))
    return ctx.Error("Invalid start/limit/delta: ", i, " ", limit, " ", delta);
  std::vector<Tensor> args(ctx.num_inputs() - 2);
  for (int k = 3; k < ctx.num_inputs(); ++k) args[k - 2] = ctx.input(k);
  std::vector<Tensor> next;
  while (delta > 0 ? i < limit : i > limit) {
    args[0] = Tensor::Scalar<int32_t>(static_cast<int32_t>(i));
    KILN_RETURN_IF_ERROR(RunFunction(ctx, *st.body_fn, args, &next));
    for (size_t k = 0; k < next.size(); ++k) args[k + 1] = std::move(next[k]);
    i += delta;
  }
  for (int k = 0; k < ctx.num_outputs(); ++k) ctx.SetOutput(k, std::move(args[k + 1]));
  return OkStatus();
}

// ---- RemoteCall ------------------------------------------------------------------------------

// RemoteCall(target, args; f) runs f on the device `target` names; one process has one place
// to run it, so it is a call of f here (target is read, not used).
struct CallState : OpState {
  PreparedPtr fn;
};

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

Status ComputeRemoteCall(const KernelContext& ctx) {
  std::vector<Tensor> args;
  for (int i = 1; i < ctx.num_inputs(); ++i) args.push_back(ctx.input(i));
  std::vector<Tensor> outs;
  KILN_RETURN_IF_ERROR(RunFunction(ctx, *ctx.state<CallState>().fn, args, &outs));
  for (int i = 0; i < ctx.num_outputs(); ++i) ctx.SetOutput(i, std::move(outs[i]));
  return OkStatus();
}

// ---- MapDefun ---------------------------------------------------------------------------------

// MapDefun(arguments, captured_inputs; f): f over the rows (dim 0) of every argument, with the
// captured inputs whole, its outputs stacked along a new dim 0 (tf.data's vectorised map
// fallback), one row after another.
struct MapDefunState : OpState {
  PreparedPtr fn;
  int num_args = 0;
  std::vector<PartialShape> out_shapes;  // per row, for an empty map
};

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

Status ComputeMapDefun(const KernelContext& ctx) {
  const auto& st = ctx.state<MapDefunState>();
  const int64_t rows = ctx.input(0).rank() > 0 ? ctx.input(0).dim(0) : 0;
  for (int k = 0; k < st.num_args; ++k)
    if (ctx.input(k).rank() < 1 || ctx.input(k).dim(0) != rows)
      return ctx.Error("All inputs must have the same dimension 0.");
  std::vector<Tensor> args(ctx.num_inputs());
  for (int k = st.num_args; k < ctx.num_inputs(); ++k) args[k] = ctx.input(k);
  std::vector<std::vector<Tensor>> results(ctx.num_outputs());
  std::vector<Tensor> outs;
  for (int64_t i = 0; i < rows; ++i) {
    for (int k = 0; k < st.num_args; ++k) {
      const Tensor& in = ctx.input(k);
      std::vector<int64_t> dims(in.shape().dims().begin() + 1, in.shape().dims().end());
      KILN_ASSIGN_OR_RETURN(Shape elem, Shape::FromDims(dims));
      Tensor e(in.dtype(), elem);
      CopyElementRange(in, i * elem.num_elements(), &e, 0, elem.num_elements());
      args[k] = std::move(e);
    }
    KILN_RETURN_IF_ERROR(RunFunction(ctx, *st.fn, args, &outs));
    for (int j = 0; j < ctx.num_outputs(); ++j) {
      if (i > 0 && outs[j].shape() != results[j][0].shape())
        return ctx.Error("function output ", j, " has shape ", outs[j].shape().ToString(),
                         " for row ", i, " and ", results[j][0].shape().ToString(), " for row 0");
      results[j].push_back(std::move(outs[j]));
    }
  }
  for (int j = 0; j < ctx.num_outputs(); ++j) {
    Shape shape{rows};
    if (rows > 0) {
      for (int64_t d : results[j][0].shape().dims()) shape.AddDim(d);
    } else if (!st.out_shapes[j].unknown_rank()) {  // no rows: the declared shape, unknown 0
      for (int64_t d : st.out_shapes[j].dims()) shape.AddDim(std::max<int64_t>(d, 0));
    }
    KILN_ASSIGN_OR_RETURN(Tensor * out, ctx.AllocateOutput(j, shape));
    const int64_t per = rows > 0 ? results[j][0].NumElements() : 0;
    for (int64_t i = 0; i < rows; ++i) CopyElementRange(results[j][i], 0, out, i * per, per);
  }
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

Status ComputeFakeParam(const KernelContext& ctx) {
  KILN_ASSIGN_OR_RETURN(Tensor * out,
                        ctx.AllocateOutput(0, ctx.state<TypedOpState<Shape>>().value));
  if (DTypeIsPod(out->dtype())) std::memset(out->raw_data(), 0, out->ByteSize());
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

Status ComputeDeviceIndex(const KernelContext& ctx) {
  ctx.SetOutput(0, Tensor::Scalar<int32_t>(ctx.state<TypedOpState<int32_t>>().value));
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

constexpr KernelEntry kCpu[] = {
    {"If", ComputeIf},
    {"StatelessIf", ComputeIf},
    {"While", ComputeWhile},
    {"StatelessWhile", ComputeWhile},
    {"For", ComputeFor},
    {"RemoteCall", ComputeRemoteCall},
    {"MapDefun", ComputeMapDefun},
    {"FakeParam", ComputeFakeParam},
    {"DeviceIndex", ComputeDeviceIndex},
};

}  // namespace

std::span<const OpDefinition> ControlFlowOpDefs() { return kDefs; }
std::span<const KernelEntry> ControlFlowCpuKernels() { return kCpu; }

}  // namespace kiln::exec
