// The CPU kernels of the functional control-flow ops in kernels/control_flow_ops.cc, and the
// helpers that run a prepared function from a kernel (control_flow_util.h). Compute only runs
// the functions the definitions prepared, and only the branch taken runs.
#include "kernels/control_flow_ops.h"

#include <algorithm>
#include <cstring>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "kernels/array_util.h"
#include "kernels/control_flow_util.h"
#include "kernels/kernel_util.h"
#include "kernels/recurrent_loop.h"
#include "kiln/exec/executor.h"

namespace kiln::exec {
namespace control_flow {

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

using control_flow::RunFunction;
using control_flow::ToBool;
using control_flow_ops::CallState;
using control_flow_ops::ForState;
using control_flow_ops::IfState;
using control_flow_ops::MapDefunState;
using control_flow_ops::WhileState;

// ---- If, StatelessIf -------------------------------------------------------------------------

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

Status ComputeWhile(const KernelContext& ctx) {
  const auto& st = ctx.state<WhileState>();
#ifndef KILN_NO_PROTOBUF
  if (st.recurrent != nullptr) {
    bool ran = false;
    KILN_RETURN_IF_ERROR(RunRecurrentLoop(*st.recurrent, *st.recurrent_cache, ctx, &ran));
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

Status ComputeRemoteCall(const KernelContext& ctx) {
  std::vector<Tensor> args;
  for (int i = 1; i < ctx.num_inputs(); ++i) args.push_back(ctx.input(i));
  std::vector<Tensor> outs;
  KILN_RETURN_IF_ERROR(RunFunction(ctx, *ctx.state<CallState>().fn, args, &outs));
  for (int i = 0; i < ctx.num_outputs(); ++i) ctx.SetOutput(i, std::move(outs[i]));
  return OkStatus();
}

// ---- MapDefun ---------------------------------------------------------------------------------

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

Status ComputeFakeParam(const KernelContext& ctx) {
  KILN_ASSIGN_OR_RETURN(Tensor * out,
                        ctx.AllocateOutput(0, ctx.state<TypedOpState<Shape>>().value));
  if (DTypeIsPod(out->dtype())) std::memset(out->raw_data(), 0, out->ByteSize());
  return OkStatus();
}

Status ComputeDeviceIndex(const KernelContext& ctx) {
  ctx.SetOutput(0, Tensor::Scalar<int32_t>(ctx.state<TypedOpState<int32_t>>().value));
  return OkStatus();
}

// ---- tables ----------------------------------------------------------------------------------

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

std::span<const KernelEntry> ControlFlowCpuKernels() { return kCpu; }

}  // namespace kiln::exec
