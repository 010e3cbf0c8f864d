// Turns a FunctionDef into a flat schedule (see executor.h). The phases, in order:
//   ResolveArgSpecs   the caller's specs refined by the declared types and _input_shapes
//   FlattenFunction   calls inlined into one graph (flat_graph.cc)
//   MarkLive          what outputs, control outputs and side effects need
//   TopologicalOrder  program order where no edge decides
//   PrepareNodes      every node's Prepare; constants materialised and folded; steps built
//   BindOutputs       output slots and their specs
//   DropUnreadConstants  constants no step reads and no output is
//   PlanReleases      each slot released after its last use; dying inputs marked
//   PlanArena         the memory plan (memory_plan.cc)
// FunctionCompiler is declared in function_compiler.h; this file holds the phases up to
// PrepareNodes and the steps they build, prepared_function_finish.cc those after it.
#include <algorithm>
#include <map>
#include <numeric>
#include <optional>
#include <queue>

#include "device/denormals.h"
#include "executor/execution_state.h"
#include "executor/function_compiler.h"
#include "executor/half_precision.h"
#include "executor/memory_plan.h"
#include "executor/placement.h"
#include "graph/dilated_convolution.h"
#include "graph/flat_graph.h"
#include "graph/float_to_half.h"
#include "graph/fusion.h"
#include "graph/half_in_float.h"
#include "graph/strength_reduction.h"
#include "kernels/op_table_builder.h"
#include "kiln/exec/executor.h"
#include "kiln/exec/resources.h"
#ifndef KILN_NO_PROTOBUF
#include "tensorflow/framework.pb.h"
#endif

namespace kiln::exec {
namespace {

// Ops that forward their inputs unchanged: their outputs alias the input slots, no step runs.
bool IsForwardingOp(std::string_view op) {
  return op == "Identity" || op == "IdentityN" || op == "StopGradient" || op == "Snapshot";
}

// Folded values larger than this stay computed at run time: memory over a cheap op.
constexpr size_t kMaxFoldedBytes = 1 << 18;

}  // namespace

std::vector<int32_t> FrozenVariableArgs(std::span<const Tensor> known_args) {
  std::vector<int32_t> frozen;
  for (size_t i = 0; i < known_args.size(); ++i) {
    const Tensor& t = known_args[i];
    if (!t.IsInitialized() || t.dtype() != DType::kResource || t.NumElements() != 1) continue;
    const VariableResource* var = AsVariable(t.scalar<std::shared_ptr<ResourceBase>>().get());
    if (var != nullptr && var->frozen()) frozen.push_back(static_cast<int32_t>(i));
  }
  return frozen;
}

#ifndef KILN_NO_PROTOBUF
FunctionCompiler::FunctionCompiler(const tensorflow::FunctionDef& fdef,
                                   const FunctionLibrary& library, const PrepareOptions& options)
    : fdef_(&fdef), library_(library), options_(options), fname_(fdef.signature().name()) {}
#endif

FunctionCompiler::FunctionCompiler(std::shared_ptr<const FlatGraph> graph,
                                   std::shared_ptr<const FunctionInterface> iface,
                                   const FunctionLibrary& library, const PrepareOptions& options)
    : source_graph_(std::move(graph)),
      iface_(std::move(iface)),
      library_(library),
      options_(options),
      fname_(iface_->name) {}

Result<std::shared_ptr<const PreparedFunction>> FunctionCompiler::Compile(
    std::span<const TensorSpec> arg_specs) {
  // Folded constants computed as a call would; oneDNN's workers made now flush too.
  const ScopedFlushDenormals flush;
  compiled_ = Compiled();
  compiled_.name = fname_;
  compiled_.fdef = fdef_;
  compiled_.library = &library_;
  compiled_.options = options_;
#ifndef KILN_NO_PROTOBUF
  if (iface_ == nullptr) {
    KILN_ASSIGN_OR_RETURN(FunctionInterface iface, InterfaceOf(*fdef_));
    iface_ = std::make_shared<const FunctionInterface>(std::move(iface));
  }
#endif
  compiled_.iface = iface_;
  compiled_.source_graph = source_graph_;
  compiled_.requested_specs.assign(arg_specs.begin(), arg_specs.end());
  compiled_.frozen_args = FrozenVariableArgs(options_.known_args);
  std::vector<Device*>& devices = compiled_.devices;
  devices = options_.devices;
  if (std::find(devices.begin(), devices.end(), HostDevice()) == devices.end())
    devices.push_back(HostDevice());
  host_ =
      static_cast<int>(std::find(devices.begin(), devices.end(), HostDevice()) - devices.begin());
  KILN_RETURN_IF_ERROR(ResolveArgSpecs(arg_specs));
  if (source_graph_ != nullptr) {
    // Nodes point into the source's attrs and values, which compiled_.source_graph keeps alive.
    graph_.nodes = source_graph_->nodes;
    graph_.outputs = source_graph_->outputs;
    graph_.keep = source_graph_->keep;
  }
#ifndef KILN_NO_PROTOBUF
  else {
    KILN_ASSIGN_OR_RETURN(graph_, FlattenFunction(*fdef_, library_));
  }
#endif
  MarkLive();
  KILN_RETURN_IF_ERROR(TopologicalOrder());
  int half_in_float = 0;
  int float_to_half = 0;
#ifndef KILN_NO_PROTOBUF
  // Half precision computes in float32 regions where the host is the only device
  // (half_in_float.h): a first look, the rewrite, and the graph as rewritten goes on.
  if (options_.half_in_float && source_graph_ == nullptr && compiled_.devices.size() == 1 &&
      HasHalfTypeAttrs(graph_, live_)) {
    // Casts are not folded in this look: folding Keras's AutoCast of every weight would read
    // (and keep resident) all the weights' pages for values the rewrite then drops. (So
    // fusion, which needs folded weights, takes a look of its own.)
    fold_casts_ = false;
    KILN_RETURN_IF_ERROR(PrepareNodes(/*analysis=*/true));
    fold_casts_ = true;
    half_in_float = ComputeHalfInFloat(&graph_, Facts(), live_,
                                       [&](int v) { return AcceptsFloat(graph_.nodes[v]); });
    ResetPrepared();
    if (half_in_float > 0) {
      MarkLive();
      order_.clear();
      KILN_RETURN_IF_ERROR(TopologicalOrder());
    }
  }
  // A float32 model in half precision on a load with an accelerator (float_to_half.h), before
  // fusion, which then fuses the half chains.
  const bool to_half =
      options_.precision == Precision::kFloat16 || options_.precision == Precision::kBFloat16;
  if (to_half && source_graph_ == nullptr && compiled_.devices.size() > 1) {
    KILN_RETURN_IF_ERROR(PrepareNodes(/*analysis=*/true));
    float_to_half = ComputeFloatToHalf(
        &graph_, Facts(), live_,
        options_.precision == Precision::kFloat16 ? DType::kHalf : DType::kBFloat16);
    ResetPrepared();
    if (float_to_half > 0) {
      MarkLive();
      order_.clear();
      KILN_RETURN_IF_ERROR(TopologicalOrder());
    }
  }
  // TF's dilated convolutions (SpaceToBatchND around a dense one) as one dilated convolution,
  // before fusion takes its bias and activation.
  int dilated = 0;
  if (options_.fuse && source_graph_ == nullptr && HasSpaceToBatch(graph_, live_)) {
    KILN_RETURN_IF_ERROR(PrepareNodes(/*analysis=*/true));
    dilated = FoldSpaceToBatchConvolutions(&graph_, Facts(), live_);
    compiled_.stats.fused = dilated;
    ResetPrepared();
    if (dilated > 0) {
      MarkLive();
      order_.clear();
      KILN_RETURN_IF_ERROR(TopologicalOrder());
    }
  }
  const bool fuse = options_.fuse && source_graph_ == nullptr && HasFusableNodes();
  const bool reduce =
      options_.fuse && source_graph_ == nullptr && HasStrengthReductions(graph_, live_);
  if (fuse || reduce) {
    // A first look (specs and constants, no heavy kernel state), then fuse, then prepare
    // the fused graph for real.
    KILN_RETURN_IF_ERROR(PrepareNodes(/*analysis=*/true));
    const std::vector<NodeFacts> facts = Facts();
    // Half-precision chains fuse where another device computes them natively; the host
    // computes them in float32 (above), or per op as TF does where that is turned off.
    const int fused = fuse ? FuseGraph(&graph_, facts, live_, /*half=*/compiled_.devices.size() > 1,
                                       options_.prune)
                           : 0;
    // After fusion, whose patterns (GELU's x / sqrt(2), attention's scale) read the divisions
    // as the model wrote them.
    const int reduced = reduce ? ReduceStrength(&graph_, facts, live_) : 0;
    ResetPrepared();
    compiled_.stats.fused = dilated + fused;
    if (fused + reduced > 0) {
      MarkLive();
      order_.clear();
      KILN_RETURN_IF_ERROR(TopologicalOrder());
    }
  }
  // TF32 for the float32 products (after fusion: the fused nodes carry the mark).
  if (options_.precision == Precision::kTF32 && source_graph_ == nullptr) MarkTf32(&graph_, live_);
#endif
  KILN_RETURN_IF_ERROR(PrepareNodes(/*analysis=*/false));
  compiled_.stats.half_in_float = half_in_float;
  compiled_.stats.float_to_half = float_to_half;
  KILN_RETURN_IF_ERROR(BindOutputs());
  DropUnreadConstants();
  PlanReleases();
  PlanArgsInPlace();
  compiled_.arena_bytes.assign(compiled_.devices.size(), 0);
  if (options_.plan_memory) PlanArena();
  PlanStats& st = compiled_.stats;
  st.steps = static_cast<int>(compiled_.steps.size());
  st.constants = static_cast<int>(compiled_.constants.size());
  st.slots = compiled_.num_slots;
  CountPlacement();
  if (options_.device_graphs) PlanDeviceGraph();
  // Specialisations of a function fused here prepare its fused graph, as those of a serving
  // plan do: fusing again with known shapes would fuse more (a residual Add needs them), and
  // oneDNN's fused and unfused forms differ in the last bits on AVX2, so results would
  // depend on whether the bundle has a plan.
  const bool specializes =
      !compiled_.shapes_fully_known && options_.max_specializations > 0 && source_graph_ == nullptr;
  if (options_.keep_graph || specializes) {
    std::shared_ptr<const FlatGraph> final = FinalGraph();
    if (options_.keep_graph) compiled_.final_graph = final;
    if (specializes) compiled_.specialize_from = std::move(final);
  }
  return internal::PreparedFunctionAccess::Make(std::move(compiled_));
}

Status FunctionCompiler::ResolveArgSpecs(std::span<const TensorSpec> arg_specs) {
  const FunctionInterface& f = *iface_;
  if (arg_specs.size() != f.arg_names.size())
    return InvalidArgument("function '", fname_, "' has ", f.arg_names.size(),
                           " arguments; prepare was given ", arg_specs.size(), " specs");
  bool fully_known = true;
  for (size_t i = 0; i < f.arg_names.size(); ++i) {
    TensorSpec spec = arg_specs[i];
    const DType declared = f.arg_dtypes[i];
    if (declared != DType::kInvalid) {
      if (spec.dtype != DType::kInvalid && spec.dtype != declared)
        return InvalidArgument("function '", fname_, "': argument '", f.arg_names[i],
                               "' is declared ", DTypeShortName(declared), ", prepared as ",
                               DTypeShortName(spec.dtype));
      spec.dtype = declared;
    }
    if (spec.dtype == DType::kInvalid)
      return InvalidArgument("function '", fname_, "': argument '", f.arg_names[i],
                             "' has no concrete dtype");
    if (spec.shape.unknown_rank() && i < f.input_shapes.size() && spec.dtype != DType::kResource)
      spec.shape = f.input_shapes[i];
    if (DTypeIsPod(spec.dtype) || spec.dtype == DType::kString)
      fully_known &= spec.shape.IsFullyDefined();
    compiled_.arg_names.push_back(f.arg_names[i]);
    compiled_.arg_specs.push_back(spec);
  }
  compiled_.shapes_fully_known = fully_known;
  for (const std::string& o : f.output_names) compiled_.output_names.push_back(o);
  return OkStatus();
}

// Liveness: what outputs, kept nodes and stateful ops need (non-strict semantics).
void FunctionCompiler::MarkLive() {
  const int n = static_cast<int>(graph_.nodes.size());
  live_.assign(n, options_.prune ? 0 : 1);
  if (options_.prune) {
    std::vector<int> stack;
    for (const Edge& e : graph_.outputs) stack.push_back(e.node);
    for (int k : graph_.keep) stack.push_back(k);
    for (int i = 0; i < n && options_.keep_stateful; ++i)
      if (graph_.nodes[i].stateful) stack.push_back(i);
    while (!stack.empty()) {
      int v = stack.back();
      stack.pop_back();
      if (live_[v]) continue;
      live_[v] = 1;
      for (const Edge& e : graph_.nodes[v].inputs) stack.push_back(e.node);
      for (int c : graph_.nodes[v].control_inputs) stack.push_back(c);
    }
  }
  for (size_t i = 0; i < iface_->arg_names.size(); ++i) live_[i] = 1;
}

// Topological order over live nodes; ties broken by creation order, which follows the
// program order of the body. A MutexLock waits until nothing else is ready: TF's executor
// runs whatever is ready while a lock is awaited, so a critical section whose lock is not
// ordered after the previous one's release (TF's automatic control dependencies order the
// locks, not the releases) must not block this one thread before that release has run.
Status FunctionCompiler::TopologicalOrder() {
  const int n = static_cast<int>(graph_.nodes.size());
  std::vector<int> indegree(n, 0);
  std::vector<std::vector<int>> consumers(n);
  for (int v = 0; v < n; ++v) {
    if (!live_[v]) continue;
    auto add = [&](int src) {
      consumers[src].push_back(v);
      ++indegree[v];
    };
    for (const Edge& e : graph_.nodes[v].inputs) add(e.node);
    for (int c : graph_.nodes[v].control_inputs) add(c);
  }
  std::priority_queue<int, std::vector<int>, std::greater<>> ready, locks;
  auto push = [&](int v) { (graph_.nodes[v].op == "MutexLock" ? locks : ready).push(v); };
  for (int v = 0; v < n; ++v)
    if (live_[v] && indegree[v] == 0) push(v);
  while (!ready.empty() || !locks.empty()) {
    auto& from = ready.empty() ? locks : ready;
    int v = from.top();
    from.pop();
    order_.push_back(v);
    for (int c : consumers[v])
      if (--indegree[c] == 0) push(c);
  }
  const int live_count = static_cast<int>(std::count(live_.begin(), live_.end(), 1));
  if (static_cast<int>(order_.size()) != live_count)
    return InvalidArgument("function '", fname_, "': the body has a cycle");
  return OkStatus();
}

// A slot for a tensor that lives on device `device` (default: the host).
int32_t FunctionCompiler::NewSlot(const TensorSpec& spec, int device) {
  slot_specs_.push_back(spec);
  slot_device_.push_back(device < 0 ? host_ : device);
  return compiled_.num_slots++;
}

int32_t FunctionCompiler::AddConstant(const Tensor& value) {
  const int32_t slot = NewSlot(TensorSpec{value.dtype(), PartialShape(value.shape())});
  compiled_.constants.emplace_back(slot, value);
  const_storage_.push_back(std::make_shared<Tensor>(value));
  const_value_.resize(compiled_.num_slots, nullptr);
  const_value_[slot] = const_storage_.back().get();
  return slot;
}

// A constant of the function (materialised in every frame).
const Tensor* FunctionCompiler::ConstantOf(int32_t slot) const {
  return slot < static_cast<int32_t>(const_value_.size()) ? const_value_[slot] : nullptr;
}

// A value known at prepare time: a constant, or a known argument.
const Tensor* FunctionCompiler::KnownValueOf(int32_t slot) const {
  if (const Tensor* c = ConstantOf(slot)) return c;
  return slot < static_cast<int32_t>(known_value_.size()) ? known_value_[slot] : nullptr;
}

// Runs a prepared node at prepare time when every input is known; nullopt when it cannot
// or should not be folded (TF's constant folding also leaves failing nodes to run time).
std::optional<std::vector<Tensor>> FunctionCompiler::TryFold(const FlatNode& node,
                                                             const PrepareContext& ctx,
                                                             ComputeFn compute,
                                                             const std::vector<int32_t>& in,
                                                             bool any_size) {
  if (!options_.fold_constants || node.stateful || node.def == nullptr ||
      (node.def->flags & kOpStateful) != 0 || (!fold_casts_ && node.op == "Cast"))
    return std::nullopt;
  std::vector<Tensor> slots;
  for (int32_t s : in) {
    const Tensor* c = KnownValueOf(s);
    if (c == nullptr) return std::nullopt;
    slots.push_back(*c);
  }
  size_t in_bytes = 0;
  for (const Tensor& t : slots) in_bytes += t.ByteSize();
  for (const TensorSpec& spec : ctx.outputs) {
    if (!spec.shape.IsFullyDefined() || (!DTypeIsPod(spec.dtype) && spec.dtype != DType::kString))
      return std::nullopt;
    const size_t bytes = static_cast<size_t>(spec.shape.ToShape()->num_elements()) *
                         std::max<size_t>(1, DTypeSize(spec.dtype));
    // A Cast that widens each element (int8 or half weights to float32, as a quantized
    // bundle stores them) folds at any size: the result is what the float model held.
    const size_t limit = node.op == "Cast" ? 8 * in_bytes : in_bytes;
    if (!any_size && bytes > kMaxFoldedBytes && bytes > limit) return std::nullopt;
  }
  const int n_in = static_cast<int>(slots.size());
  const int n_out = static_cast<int>(ctx.outputs.size());
  slots.resize(n_in + n_out);
  std::vector<int32_t> ins(n_in), outs(n_out);
  std::iota(ins.begin(), ins.end(), 0);
  std::iota(outs.begin(), outs.end(), n_in);
  std::vector<DType> out_dtypes;
  for (const TensorSpec& spec : ctx.outputs) out_dtypes.push_back(spec.dtype);
  ScratchArena scratch;
  RunEnv env{&DefaultPrintSink(), &DefaultThreadPool()};
  ExecutionFrame frame{slots.data(), nullptr, HostDevice()->allocator(), nullptr, &scratch, &env};
  StepIo io{ins.data(), n_in, outs.data(), n_out, out_dtypes.data(), 0, ctx.state.get(), node.name};
  if (!compute(KernelContext(frame, io)).ok()) return std::nullopt;
  std::vector<Tensor> result(slots.begin() + n_in, slots.end());
  for (int i = 0; i < n_out; ++i)
    if (!result[i].IsInitialized() || result[i].dtype() != ctx.outputs[i].dtype)
      return std::nullopt;
  return result;
}

bool FunctionCompiler::HasFusableNodes() const {
  for (size_t v = 0; v < graph_.nodes.size(); ++v) {
    const std::string& op = graph_.nodes[v].op;
    if (live_[v] &&
        (op == "Conv2D" || op == "MatMul" || op == "DepthwiseConv2dNative" || op == "Transpose" ||
         op == "Mean" || op == "Softmax" || op == "LogSoftmax" || op == "FakeQuantWithMinMaxArgs"))
      return true;
  }
  return false;
}

// Whether `node`, whose inputs the analysis pass prepared, also prepares with its half types
// read as float32 (half_in_float.h).
bool FunctionCompiler::AcceptsFloat(const FlatNode& node) const {
  std::vector<TensorSpec> specs;
  for (const Edge& e : node.inputs) {
    if (e.node >= static_cast<int>(out_slots_.size()) ||
        e.output >= static_cast<int>(out_slots_[e.node].size()))
      return false;
    TensorSpec s = slot_specs_[out_slots_[e.node][e.output]];
    if (s.dtype == DType::kHalf || s.dtype == DType::kBFloat16) s.dtype = DType::kFloat;
    specs.push_back(s);
  }
  const std::vector<const Tensor*> consts(specs.size(), nullptr);
  PrepareContext ctx = ContextFor(node, node.reader().WithHalfAs(DType::kFloat), specs, consts,
                                  /*analysis=*/true);
  return node.def->prepare(ctx).ok();
}

// What the analysis pass learnt, per node.
std::vector<NodeFacts> FunctionCompiler::Facts() const {
  std::vector<NodeFacts> facts(graph_.nodes.size());
  for (size_t v = 0; v < graph_.nodes.size(); ++v) {
    for (int32_t slot : out_slots_[v]) {
      facts[v].specs.push_back(slot_specs_[slot]);
      facts[v].values.push_back(KnownValueOf(slot));
    }
  }
  return facts;
}

// Forgets what PrepareNodes made, keeping the argument specs.
void FunctionCompiler::ResetPrepared() {
  compiled_.num_slots = 0;
  compiled_.arg_slots.clear();
  compiled_.constants.clear();
  compiled_.steps.clear();
  compiled_.stats = PlanStats();
  out_slots_.clear();
  slot_specs_.clear();
  slot_device_.clear();
  copies_.clear();
  const_value_.clear();
  known_value_.clear();
  const_storage_.clear();
}

Status FunctionCompiler::PrepareNodes(bool analysis) {
  const int n = static_cast<int>(graph_.nodes.size());
  out_slots_.assign(n, {});
  for (int v : order_) {
    FlatNode& node = graph_.nodes[v];
    if (node.op == "_Arg") {
      const int32_t slot = NewSlot(compiled_.arg_specs[node.arg_index]);
      compiled_.arg_slots.push_back(slot);
      out_slots_[v] = {slot};
      if (node.arg_index < static_cast<int>(options_.known_args.size()) &&
          options_.known_args[node.arg_index].IsInitialized()) {
        known_value_.resize(compiled_.num_slots, nullptr);
        known_value_[slot] = &options_.known_args[node.arg_index];
      }
      continue;
    }
    std::vector<TensorSpec> in_specs;
    std::vector<const Tensor*> in_consts;
    std::vector<int32_t> in_slots;
    for (const Edge& e : node.inputs) {
      if (e.output >= static_cast<int>(out_slots_[e.node].size()))
        return InvalidArgument("function '", fname_, "', node '", node.name, "': input from '",
                               graph_.nodes[e.node].name, "' output ", e.output,
                               ", which has only ", out_slots_[e.node].size(), " outputs");
      const int32_t slot = out_slots_[e.node][e.output];
      in_slots.push_back(slot);
      in_specs.push_back(slot_specs_[slot]);
      in_consts.push_back(KnownValueOf(slot));
    }
    if (node.IsInliningSink()) continue;
    if (node.value != nullptr) {  // a constant a rewrite made
      out_slots_[v] = {AddConstant(*node.value)};
      continue;
    }
    if (node.def == nullptr)
      return Unimplemented("op '", node.op, "' (node '", node.name, "' in function '", fname_,
                           "') is not implemented by this runtime", OpTableNote());
    PrepareContext ctx = ContextFor(node, node.reader(), in_specs, in_consts, analysis);
    if (Status st = node.def->prepare(ctx); !st.ok()) {
      KILN_ASSIGN_OR_RETURN(bool widened,
                            PrepareWidened(node, v, in_specs, in_consts, in_slots, analysis));
      if (widened) continue;
      KILN_RETURN_IF_ERROR_CTX(st, "function '", fname_, "'");
    }
    if (IsForwardingOp(node.op)) {
      if (in_slots.size() != ctx.outputs.size())
        return Internal("forwarding op '", node.name, "' changes its arity");
      out_slots_[v] = in_slots;
      continue;
    }
    // Values known without running (Shape of a known shape, a frozen variable's value):
    // constants. Prepare of a stateful op only offers them when that is safe.
    if (!ctx.constant_outputs.empty()) {
      bool all = ctx.constant_outputs.size() == ctx.outputs.size();
      for (const Tensor& t : ctx.constant_outputs) all &= t.IsInitialized();
      if (all) {
        for (const Tensor& t : ctx.constant_outputs) out_slots_[v].push_back(AddConstant(t));
        ++compiled_.stats.folded;
        continue;
      }
    }
    // Const nodes, and nodes whose inputs are all constants, are computed now.
    const bool is_const = node.op == "Const" && in_slots.empty();
    const KernelEntry* host_kernel = HostDevice()->FindKernel(node.op);
    bool host_state = false;  // the host kernel's CreateState completed ctx.state
    if (host_kernel != nullptr && (is_const || !in_slots.empty())) {
      // A fold runs the host's kernel: with its state complete, as a call would.
      if (!analysis && host_kernel->create_state != nullptr &&
          std::all_of(in_slots.begin(), in_slots.end(),
                      [&](int32_t s) { return KnownValueOf(s) != nullptr; })) {
        ctx.device = HostDevice();
        KILN_RETURN_IF_ERROR_CTX(host_kernel->create_state(ctx), "function '", fname_, "'");
        host_state = true;
      }
      if (auto values = TryFold(node, ctx, host_kernel->compute, in_slots, /*any_size=*/is_const)) {
        for (const Tensor& t : *values) out_slots_[v].push_back(AddConstant(t));
        if (!is_const) ++compiled_.stats.folded;
        continue;
      }
      if (is_const) return Internal("node '", node.name, "': Const did not evaluate");
    }
    KILN_ASSIGN_OR_RETURN_CTX(Placement place, PlaceNode(compiled_.devices, ctx), "function '",
                              fname_, "'");
    Device* device = compiled_.devices[place.device];
    if (place.kernel->create_state != nullptr && !analysis &&
        !(host_state && device == HostDevice())) {
      if (host_state) {  // completed for the host: the device completes a fresh one
        ctx = ContextFor(node, node.reader(), in_specs, in_consts, analysis);
        KILN_RETURN_IF_ERROR_CTX(node.def->prepare(ctx), "function '", fname_, "'");
      }
      ctx.device = device;
      KILN_RETURN_IF_ERROR_CTX(place.kernel->create_state(ctx), "function '", fname_, "'");
    }
    KILN_ASSIGN_OR_RETURN(
        out_slots_[v],
        AddStep(node.name, node.def->name, node.def->flags, place.device, *place.kernel, ctx.state,
                std::move(in_slots), ctx.outputs, ctx.in_place_input));
  }
  const_value_.resize(compiled_.num_slots, nullptr);
  return OkStatus();
}

// A node whose kernel has no half-precision form, run in float32 between casts
// (half_precision.h). False when the node is not one to widen or its kernel refuses float32
// too: the caller reports its first error.
Result<bool> FunctionCompiler::PrepareWidened(const FlatNode& node, int v,
                                              const std::vector<TensorSpec>& specs,
                                              const std::vector<const Tensor*>& consts,
                                              const std::vector<int32_t>& slots, bool analysis) {
  const DType half = HalfTypeOf(node.reader(), specs);
  if (half == DType::kInvalid || !MayWiden(node.op) || node.stateful ||
      (node.def->flags & kOpStateful) != 0 || IsForwardingOp(node.op))
    return false;
  auto prepare_as = [&](DType wide, bool analysis_only, std::vector<Tensor>* converted,
                        PrepareContext& ctx) -> bool {
    ctx = ContextFor(node, node.reader().WithHalfAs(wide), specs, consts, analysis_only);
    for (size_t i = 0; i < specs.size(); ++i) {
      if (specs[i].dtype != half) continue;
      ctx.inputs[i].dtype = wide;
      ctx.constant_inputs[i] = nullptr;
      if (converted != nullptr && consts[i] != nullptr) {
        auto c = CastNow(*consts[i], wide);
        if (!c.ok()) return false;
        (*converted)[i] = *std::move(c);
        ctx.constant_inputs[i] = &(*converted)[i];
      }
    }
    return node.def->prepare(ctx).ok();
  };
  std::vector<Tensor> converted(specs.size());
  PrepareContext ctx, probe;
  if (!prepare_as(DType::kFloat, analysis, &converted, ctx)) return false;
  const bool probed = prepare_as(DType::kDouble, /*analysis_only=*/true, nullptr, probe);
  const std::vector<bool> narrow = OutputsToNarrow(ctx.outputs, probed ? &probe.outputs : nullptr);
  if (!analysis) {
    KILN_ASSIGN_OR_RETURN(bool placed,
                          PlaceHalfOnDevice(node, v, half, narrow, specs, consts, slots, ctx));
    if (placed) return true;
  }
  // Widening is the host's answer to a missing half-precision kernel: the node runs there.
  const KernelEntry* kernel = HostDevice()->FindKernel(node.op);
  if (kernel == nullptr) return false;
  if (kernel->create_state != nullptr && !analysis) {
    ctx.device = HostDevice();
    KILN_RETURN_IF_ERROR_CTX(kernel->create_state(ctx), "function '", fname_, "'");
  }
  // Inputs: constants converted now, the rest cast by a step.
  std::vector<int32_t> in = slots;
  for (size_t i = 0; i < specs.size(); ++i) {
    if (specs[i].dtype != half) continue;
    if (converted[i].IsInitialized()) {
      in[i] = AddConstant(converted[i]);
    } else {
      KILN_ASSIGN_OR_RETURN(in[i], AddCastStep(node.name, slots[i], DType::kFloat));
    }
  }
  KILN_ASSIGN_OR_RETURN(std::vector<int32_t> out,
                        AddStep(node.name, node.def->name, node.def->flags, host_, *kernel,
                                ctx.state, std::move(in), ctx.outputs));
  ++compiled_.stats.widened;
  for (size_t j = 0; j < out.size(); ++j)
    if (narrow[j]) {
      KILN_ASSIGN_OR_RETURN(out[j], AddCastStep(node.name, out[j], half));
    }
  out_slots_[v] = std::move(out);
  return true;
}

// A half-precision node whose op definition takes float32 only, on a device listed before the
// host whose kernel computes the half type itself (a GPU's: its kernels read the dtype from
// the tensors). The float32 prepare (`ctx`) gave the shapes and the op's state; the kernel
// sees the node's own types and constants. False when no such device takes it.
Result<bool> FunctionCompiler::PlaceHalfOnDevice(const FlatNode& node, int v, DType half,
                                                 const std::vector<bool>& narrow,
                                                 const std::vector<TensorSpec>& specs,
                                                 const std::vector<const Tensor*>& consts,
                                                 const std::vector<int32_t>& slots,
                                                 PrepareContext& ctx) {
  for (int d = 0; d < static_cast<int>(compiled_.devices.size()) && d != host_; ++d) {
    Device* device = compiled_.devices[d];
    const KernelEntry* kernel = device->FindKernel(node.op);
    if (kernel == nullptr || kernel->supports == nullptr) continue;
    PrepareContext dev = ContextFor(node, node.reader(), specs, consts, /*analysis=*/false);
    dev.outputs = ctx.outputs;
    for (size_t j = 0; j < dev.outputs.size(); ++j)
      if (narrow[j]) dev.outputs[j].dtype = half;
    dev.state = ctx.state;
    if (!kernel->supports(dev)) continue;
    if (kernel->create_state != nullptr) {
      dev.device = device;
      KILN_RETURN_IF_ERROR_CTX(kernel->create_state(dev), "function '", fname_, "'");
    }
    KILN_ASSIGN_OR_RETURN(out_slots_[v], AddStep(node.name, node.def->name, node.def->flags, d,
                                                 *kernel, dev.state, slots, dev.outputs));
    return true;
  }
  return false;
}

// A step casting `slot` to `to`; returns the new slot.
Result<int32_t> FunctionCompiler::AddCastStep(const std::string& node_name, int32_t slot,
                                              DType to) {
  const TensorSpec from = slot_specs_[slot];
  KILN_ASSIGN_OR_RETURN(CastStep cast, PrepareCastStep(from.dtype, to, from.shape));
  KernelEntry kernel{"Cast", cast.compute};
  KILN_ASSIGN_OR_RETURN(std::vector<int32_t> out,
                        AddStep(node_name, "Cast", kOpNone, host_, kernel, cast.state, {slot},
                                {TensorSpec{to, from.shape}}));
  return out[0];
}

// What Prepare of `node` sees: its attrs (as `attrs` reads them), input specs and constants.
PrepareContext FunctionCompiler::ContextFor(const FlatNode& node, const AttrReader& attrs,
                                            const std::vector<TensorSpec>& specs,
                                            const std::vector<const Tensor*>& consts,
                                            bool analysis) const {
  PrepareContext ctx;
  ctx.node_name = node.name;
  ctx.op = node.op;
  ctx.attrs = attrs;
  ctx.inputs = specs;
  ctx.constant_inputs = consts;
  ctx.resources = options_.resources;
  ctx.library = &library_;
  ctx.analysis_only = analysis;
  return ctx;
}

// Appends a step of `kernel` on device `device` computing `outputs` from slots `in`, after
// the copies that bring each input where the kernel reads it; returns the output slots.
Result<std::vector<int32_t>> FunctionCompiler::AddStep(
    const std::string& node_name, std::string_view op, uint32_t flags, int device,
    const KernelEntry& kernel, std::shared_ptr<const OpState> state, std::vector<int32_t> in,
    const std::vector<TensorSpec>& outputs, int in_place_input) {
  // A copy step reads its input where it is.
  for (size_t i = 0; i < in.size() && op != kCopyOp; ++i) {
    const int want =
        InputDevice(kernel, device, host_, static_cast<int>(i), slot_specs_[in[i]].dtype);
    KILN_ASSIGN_OR_RETURN(in[i], Locate(in[i], want, node_name));
  }
  Step step;
  step.compute = kernel.compute;
  step.state = std::move(state);
  step.op = op;
  step.device = device;
  step.allocator = compiled_.devices[device]->allocator();
  step.host_outputs = kernel.host_outputs;
  step.in = std::move(in);
  for (size_t j = 0; j < outputs.size(); ++j) {
    const int where = OutputDevice(kernel, device, host_, static_cast<int>(j), outputs[j].dtype);
    step.out.push_back(NewSlot(outputs[j], where));
    step.out_dtypes.push_back(outputs[j].dtype);
  }
  step.flags = flags;
  step.in_place_input = (flags & kOpInPlace) != 0 ? 0 : in_place_input;
  step.node_name = node_name;
  std::vector<int32_t> out = step.out;
  compiled_.steps.push_back(std::move(step));
  return out;
}

// `slot`'s tensor on device `want`: the slot itself when it lives there, else a copy (one
// per slot and device; a constant is copied now, anything else by a step).
Result<int32_t> FunctionCompiler::Locate(int32_t slot, int want, const std::string& consumer) {
  const int have = slot_device_[slot];
  if (have == want) return slot;
  const auto key = std::make_pair(slot, want);
  if (auto it = copies_.find(key); it != copies_.end()) return it->second;
  Device* from = compiled_.devices[have];
  Device* to = compiled_.devices[want];
  int32_t copy = 0;
  if (const Tensor* c = ConstantOf(slot)) {
    KILN_ASSIGN_OR_RETURN_CTX(Tensor moved, CopyTensor(*c, from, to), "function '", fname_,
                              "': constant for node '", consumer, "'");
    copy = AddConstant(moved);
    slot_device_[copy] = want;
  } else {
    auto state = std::make_shared<CopyState>();
    state->from = from;
    state->to = to;
    // Device to host runs on the device (its stream, later) and writes host memory.
    const bool to_host = want == host_;
    KernelEntry kernel{kCopyOp, CopyCompute, 0, to_host ? 1u : 0u};
    KILN_ASSIGN_OR_RETURN(std::vector<int32_t> out,
                          AddStep(consumer, kCopyOp, kOpFreshOutputs, to_host ? have : want, kernel,
                                  std::move(state), {slot}, {slot_specs_[slot]}));
    copy = out[0];
  }
  copies_.emplace(key, copy);
  return copy;
}

PreparedFunction::PreparedFunction(Compiled compiled) : compiled_(std::move(compiled)) {}

PreparedFunction::~PreparedFunction() = default;

std::vector<size_t> PreparedFunction::ArenaOffsets() const {
  std::vector<size_t> offsets;
  offsets.reserve(compiled_.planned.size());
  for (const PlannedSlot& p : compiled_.planned) offsets.push_back(p.offset);
  return offsets;
}

std::vector<ScheduledStep> PreparedFunction::Schedule() const {
  std::vector<ScheduledStep> out;
  for (const Step& step : compiled_.steps) {
    ScheduledStep s;
    s.node_name = step.node_name;
    s.op = step.op;
    s.device = compiled_.devices[step.device]->name();
    if (step.op == kCopyOp) {
      const auto& copy = *static_cast<const CopyState*>(step.state.get());
      s.from = copy.from->name();
      s.device = copy.to->name();
      s.bytes = step.copy_bytes;
    }
    out.push_back(std::move(s));
  }
  return out;
}

#ifndef KILN_NO_PROTOBUF
Result<std::shared_ptr<const PreparedFunction>> PreparedFunction::Prepare(
    const tensorflow::FunctionDef& fdef, const FunctionLibrary& library,
    std::span<const TensorSpec> arg_specs, const PrepareOptions& options) {
  return FunctionCompiler(fdef, library, options).Compile(arg_specs);
}
#endif

Result<std::shared_ptr<const PreparedFunction>> PreparedFunction::PrepareGraph(
    std::shared_ptr<const FlatGraph> graph, std::shared_ptr<const FunctionInterface> iface,
    const FunctionLibrary& library, std::span<const TensorSpec> arg_specs,
    const PrepareOptions& options) {
  if (graph == nullptr || iface == nullptr)
    return InvalidArgument("PrepareGraph: no graph or no interface");
  return FunctionCompiler(std::move(graph), std::move(iface), library, options).Compile(arg_specs);
}

}  // namespace kiln::exec
