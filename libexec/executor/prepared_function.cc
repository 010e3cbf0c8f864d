// Turns a FunctionDef into a flat schedule (see executor.h) and runs it.
#include <algorithm>
#include <queue>

#include "executor/flat_graph.h"
#include "kiln/core/proto_convert.h"
#include "kiln/exec/executor.h"
#include "tensorflow/framework.pb.h"

namespace kiln::exec {
namespace {

// Ops that forward their inputs unchanged: their outputs alias the input slots, no step runs.
bool IsForwardingOp(std::string_view op) {
  return op == "Identity" || op == "IdentityN" || op == "StopGradient" || op == "Snapshot";
}

Status CheckArg(const TensorSpec& spec, const Tensor& t, int i, const std::string& name,
                const std::string& fn) {
  if (t.dtype() != spec.dtype)
    return InvalidArgument("function '", fn, "': argument #", i, " '", name, "' expected dtype ",
                           DTypeShortName(spec.dtype), ", got ", DTypeShortName(t.dtype()));
  if (!spec.shape.IsCompatibleWith(t.shape()))
    return InvalidArgument("function '", fn, "': argument #", i, " '", name, "' expected shape ",
                           spec.shape.ToPythonString(), ", got ", t.shape().ToString());
  return OkStatus();
}

}  // namespace

class FunctionCompiler {
 public:
  static Result<std::shared_ptr<const PreparedFunction>> Compile(
      const tensorflow::FunctionDef& fdef, const FunctionLibrary& library,
      std::span<const TensorSpec> arg_specs, const PrepareOptions& options) {
    const auto& sig = fdef.signature();
    const std::string& fname = sig.name();
    if (arg_specs.size() != static_cast<size_t>(sig.input_arg_size()))
      return InvalidArgument("function '", fname, "' has ", sig.input_arg_size(),
                             " arguments; prepare was given ", arg_specs.size(), " specs");
    auto pf = std::shared_ptr<PreparedFunction>(new PreparedFunction());
    pf->name_ = fname;

    // Argument specs: the caller's, refined by the declared type and _input_shapes.
    const tensorflow::AttrValue* input_shapes = nullptr;
    if (auto it = fdef.attr().find("_input_shapes"); it != fdef.attr().end())
      input_shapes = &it->second;
    for (int i = 0; i < sig.input_arg_size(); ++i) {
      const auto& a = sig.input_arg(i);
      TensorSpec spec = arg_specs[i];
      KILN_ASSIGN_OR_RETURN(DType declared, DTypeFromProto(a.type()));
      if (declared != DType::kInvalid) {
        if (spec.dtype != DType::kInvalid && spec.dtype != declared)
          return InvalidArgument("function '", fname, "': argument '", a.name(), "' is declared ",
                                 DTypeShortName(declared), ", prepared as ",
                                 DTypeShortName(spec.dtype));
        spec.dtype = declared;
      }
      if (spec.dtype == DType::kInvalid)
        return InvalidArgument("function '", fname, "': argument '", a.name(),
                               "' has no concrete dtype");
      if (spec.shape.unknown_rank() && input_shapes && input_shapes->has_list() &&
          i < input_shapes->list().shape_size() && spec.dtype != DType::kResource) {
        auto s = PartialShapeFromProto(input_shapes->list().shape(i));
        if (s.ok()) spec.shape = *s;
      }
      pf->arg_names_.push_back(a.name());
      pf->arg_specs_.push_back(spec);
    }
    for (const auto& o : sig.output_arg()) pf->output_names_.push_back(o.name());

    KILN_ASSIGN_OR_RETURN(FlatGraph g, FlattenFunction(fdef, library));
    const int n = static_cast<int>(g.nodes.size());

    // Liveness: what outputs, kept nodes and stateful ops need (non-strict semantics).
    std::vector<char> live(n, options.prune ? 0 : 1);
    if (options.prune) {
      std::vector<int> stack;
      for (const Edge& e : g.outputs) stack.push_back(e.node);
      for (int k : g.keep) stack.push_back(k);
      for (int i = 0; i < n && options.keep_stateful; ++i)
        if (g.nodes[i].stateful) stack.push_back(i);
      while (!stack.empty()) {
        int v = stack.back();
        stack.pop_back();
        if (live[v]) continue;
        live[v] = 1;
        for (const Edge& e : g.nodes[v].inputs) stack.push_back(e.node);
        for (int c : g.nodes[v].control_inputs) stack.push_back(c);
      }
    }
    for (int i = 0; i < sig.input_arg_size(); ++i) live[i] = 1;

    // Topological order over live nodes; ties broken by creation order, which follows the
    // program order of the body.
    std::vector<int> indegree(n, 0);
    std::vector<std::vector<int>> consumers(n);
    for (int v = 0; v < n; ++v) {
      if (!live[v]) continue;
      auto add = [&](int src) {
        consumers[src].push_back(v);
        ++indegree[v];
      };
      for (const Edge& e : g.nodes[v].inputs) add(e.node);
      for (int c : g.nodes[v].control_inputs) add(c);
    }
    std::priority_queue<int, std::vector<int>, std::greater<>> ready;
    for (int v = 0; v < n; ++v)
      if (live[v] && indegree[v] == 0) ready.push(v);
    std::vector<int> order;
    while (!ready.empty()) {
      int v = ready.top();
      ready.pop();
      order.push_back(v);
      for (int c : consumers[v])
        if (--indegree[c] == 0) ready.push(c);
    }
    int live_count = static_cast<int>(std::count(live.begin(), live.end(), 1));
    if (static_cast<int>(order.size()) != live_count)
      return InvalidArgument("function '", fname, "': the body has a cycle");

    // Prepare every node in order, assigning slots.
    std::vector<std::vector<int32_t>> out_slots(n);
    std::vector<std::vector<TensorSpec>> out_specs(n);
    std::vector<std::vector<const Tensor*>> out_consts(n);
    std::vector<std::shared_ptr<Tensor>> const_storage;
    int32_t next_slot = 0;
    for (int v : order) {
      FlatNode& node = g.nodes[v];
      if (node.op == "_Arg") {
        int32_t slot = next_slot++;
        pf->arg_slots_.push_back(slot);
        out_slots[v] = {slot};
        out_specs[v] = {pf->arg_specs_[node.arg_index]};
        out_consts[v] = {nullptr};
        continue;
      }
      std::vector<TensorSpec> in_specs;
      std::vector<const Tensor*> in_consts;
      std::vector<int32_t> in_slots;
      for (const Edge& e : node.inputs) {
        if (e.output >= static_cast<int>(out_slots[e.node].size()))
          return InvalidArgument("function '", fname, "', node '", node.name, "': input from '",
                                 g.nodes[e.node].name, "' output ", e.output, ", which has only ",
                                 out_slots[e.node].size(), " outputs");
        in_specs.push_back(out_specs[e.node][e.output]);
        in_consts.push_back(out_consts[e.node][e.output]);
        in_slots.push_back(out_slots[e.node][e.output]);
      }
      if (node.op == "NoOp" && node.attrs == nullptr) continue;  // inlining sink
      if (node.def == nullptr)
        return Unimplemented("op '", node.op, "' (node '", node.name, "' in function '", fname,
                             "') is not implemented by this runtime");
      PrepareContext ctx;
      ctx.node_name = node.name;
      ctx.op = node.op;
      ctx.attrs = AttrReader(node.attrs);
      ctx.inputs = in_specs;
      ctx.constant_inputs = in_consts;
      ctx.resources = options.resources;
      ctx.library = &library;
      KILN_RETURN_IF_ERROR_CTX(node.def->prepare(ctx), "function '", fname, "'");
      out_specs[v] = ctx.outputs;
      out_consts[v].assign(ctx.outputs.size(), nullptr);
      if (IsForwardingOp(node.op)) {
        if (in_slots.size() != ctx.outputs.size())
          return Internal("forwarding op '", node.name, "' changes its arity");
        out_slots[v] = in_slots;
        out_consts[v] = in_consts;
        continue;
      }
      ComputeFn compute = FindCpuKernel(node.op);
      if (compute == nullptr)
        return Unimplemented("op '", node.op, "' (node '", node.name, "' in function '", fname,
                             "') has no CPU kernel");
      std::vector<int32_t> outs;
      for (size_t k = 0; k < ctx.outputs.size(); ++k) outs.push_back(next_slot++);
      out_slots[v] = outs;
      if (node.op == "Const" && in_slots.empty()) {
        // Materialise once; the value sits in the frame template, no step runs.
        std::vector<Tensor> tmp(1);
        int32_t zero = 0;
        RunEnv env{&DefaultPrintSink()};
        KernelContext kctx(tmp.data(), nullptr, 0, &zero, 1, ctx.state.get(), node.name, &env);
        KILN_RETURN_IF_ERROR_CTX(compute(kctx), "function '", fname, "'");
        auto stored = std::make_shared<Tensor>(tmp[0]);
        const_storage.push_back(stored);
        pf->constants_.emplace_back(outs[0], tmp[0]);
        out_consts[v] = {stored.get()};
        continue;
      }
      PreparedFunction::Step step;
      step.compute = compute;
      step.state = ctx.state;
      step.in = std::move(in_slots);
      step.out = std::move(outs);
      step.node_name = node.name;
      pf->steps_.push_back(std::move(step));
    }
    pf->num_slots_ = next_slot;

    for (size_t i = 0; i < g.outputs.size(); ++i) {
      const Edge& e = g.outputs[i];
      if (e.output >= static_cast<int>(out_slots[e.node].size()))
        return InvalidArgument("function '", fname, "': output ", i, " refers to output ", e.output,
                               " of '", g.nodes[e.node].name, "', which does not exist");
      pf->output_slots_.push_back(out_slots[e.node][e.output]);
      TensorSpec spec = out_specs[e.node][e.output];
      KILN_ASSIGN_OR_RETURN(DType declared, DTypeFromProto(sig.output_arg(i).type()));
      if (declared != DType::kInvalid && spec.dtype != DType::kInvalid && declared != spec.dtype)
        return InvalidArgument("function '", fname, "': output '", sig.output_arg(i).name(),
                               "' is declared ", DTypeShortName(declared), " but computes ",
                               DTypeShortName(spec.dtype));
      if (declared != DType::kInvalid) spec.dtype = declared;
      pf->output_specs_.push_back(spec);
    }

    // Release each intermediate slot after its last use, so memory is freed early.
    std::vector<int> last_use(pf->num_slots_, -1);
    for (int s = 0; s < static_cast<int>(pf->steps_.size()); ++s)
      for (int32_t slot : pf->steps_[s].in) last_use[slot] = s;
    std::vector<char> pinned(pf->num_slots_, 0);
    for (int32_t slot : pf->output_slots_) pinned[slot] = 1;
    for (auto& [slot, t] : pf->constants_) pinned[slot] = 1;
    for (int32_t slot = 0; slot < pf->num_slots_; ++slot)
      if (last_use[slot] >= 0 && !pinned[slot]) pf->steps_[last_use[slot]].release.push_back(slot);
    return std::shared_ptr<const PreparedFunction>(std::move(pf));
  }
};

PreparedFunction::~PreparedFunction() = default;

Result<std::shared_ptr<const PreparedFunction>> PreparedFunction::Prepare(
    const tensorflow::FunctionDef& fdef, const FunctionLibrary& library,
    std::span<const TensorSpec> arg_specs, const PrepareOptions& options) {
  return FunctionCompiler::Compile(fdef, library, arg_specs, options);
}

Status PreparedFunction::Run(std::span<const Tensor> args, std::vector<Tensor>* outputs,
                             const RunOptions& options) const {
  if (args.size() != arg_specs_.size())
    return InvalidArgument("function '", name_, "' takes ", arg_specs_.size(), " arguments, got ",
                           args.size());
  for (size_t i = 0; i < args.size(); ++i)
    KILN_RETURN_IF_ERROR(
        CheckArg(arg_specs_[i], args[i], static_cast<int>(i), arg_names_[i], name_));

  std::vector<Tensor> frame(static_cast<size_t>(num_slots_));
  for (const auto& [slot, t] : constants_) frame[slot] = t;
  for (size_t i = 0; i < args.size(); ++i) frame[arg_slots_[i]] = args[i];
  RunEnv env{options.print ? options.print : &DefaultPrintSink()};
  for (const Step& step : steps_) {
    KernelContext ctx(frame.data(), step.in.data(), static_cast<int>(step.in.size()),
                      step.out.data(), static_cast<int>(step.out.size()), step.state.get(),
                      step.node_name, &env);
    Status s = step.compute(ctx);
    if (!s.ok()) return s.WithContext("function '" + name_ + "'");
    for (int32_t slot : step.release) frame[slot] = Tensor();
  }
  outputs->resize(output_slots_.size());
  for (size_t i = 0; i < output_slots_.size(); ++i) (*outputs)[i] = frame[output_slots_[i]];
  return OkStatus();
}

}  // namespace kiln::exec
