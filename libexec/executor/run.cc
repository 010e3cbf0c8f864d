// Running a prepared function: argument checks at the boundary, then a walk over the steps
// with a pooled execution state. No lookups, no strings and, for a fixed-shape function with
// bound outputs, no heap allocation.
#include <algorithm>

#include "device/denormals.h"
#include "executor/execution_state.h"
#include "kiln/exec/executor.h"
#include "kiln/exec/op_runner.h"

namespace kiln::exec {
namespace {

Status CheckArg(const TensorSpec& spec, const Tensor& t, size_t i, const std::string& name,
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

const ThreadPool& DefaultThreadPool() {
  static const ThreadPool pool(0);
  return pool;
}

Status PreparedFunction::CheckArgs(std::span<const Tensor> args,
                                   std::span<const Tensor> captures) const {
  if (args.size() + captures.size() != compiled_.arg_specs.size())
    return InvalidArgument("function '", compiled_.name, "' takes ", compiled_.arg_specs.size(),
                           " arguments, got ", args.size() + captures.size());
  for (size_t i = 0; i < compiled_.arg_specs.size(); ++i) {
    const Tensor& t = i < args.size() ? args[i] : captures[i - args.size()];
    KILN_RETURN_IF_ERROR(
        CheckArg(compiled_.arg_specs[i], t, i, compiled_.arg_names[i], compiled_.name));
  }
  return OkStatus();
}

Result<const PreparedFunction*> PreparedFunction::SpecializedFor(
    std::span<const Tensor> args, std::span<const Tensor> captures) const {
  const std::shared_ptr<const FlatGraph>& graph =
      compiled_.specialize_from != nullptr ? compiled_.specialize_from : compiled_.source_graph;
  if (compiled_.shapes_fully_known || (compiled_.fdef == nullptr && graph == nullptr) ||
      compiled_.options.max_specializations <= 0)
    return this;
  std::vector<Shape> key;
  key.reserve(args.size() + captures.size());
  for (const Tensor& t : args) key.push_back(t.shape());
  for (const Tensor& t : captures) key.push_back(t.shape());
  std::unique_lock lock(specializations_mu_);
  for (;;) {
    for (const auto& [shapes, fn] : specializations_)
      if (shapes == key) return fn != nullptr ? fn.get() : this;
    if (std::find(preparing_.begin(), preparing_.end(), key) == preparing_.end()) break;
    specializations_cv_.wait(lock);  // another caller is preparing these shapes
  }
  if (static_cast<int>(specializations_.size() + preparing_.size()) >=
      compiled_.options.max_specializations)
    return this;
  preparing_.push_back(key);
  lock.unlock();
  std::vector<TensorSpec> specs(compiled_.arg_specs.begin(), compiled_.arg_specs.end());
  for (size_t i = 0; i < key.size(); ++i)
    if (DTypeIsPod(specs[i].dtype) || specs[i].dtype == DType::kString)
      specs[i].shape = PartialShape(key[i]);
  PrepareOptions options = compiled_.options;
  options.max_specializations = 0;
  options.keep_graph = false;
  Result<std::shared_ptr<const PreparedFunction>> fn = [&] {
#ifndef KILN_NO_PROTOBUF
    if (graph == nullptr) return Prepare(*compiled_.fdef, *compiled_.library, specs, options);
#endif
    return PrepareGraph(graph, compiled_.iface, *compiled_.library, specs, options);
  }();
  // Preparing for known shapes also checks what these shapes never run: the branch a cond does
  // not take, the body of a loop that runs zero times (an empty guard's `t[-1]`). TensorFlow
  // checks only what runs, so such shapes run the generic version, which checks each step as it
  // runs; the key is remembered so that the next call does not prepare again.
  lock.lock();
  preparing_.erase(std::find(preparing_.begin(), preparing_.end(), key));
  specializations_.emplace_back(std::move(key), fn.ok() ? *std::move(fn) : nullptr);
  const PreparedFunction* made = specializations_.back().second.get();
  lock.unlock();
  specializations_cv_.notify_all();
  return made != nullptr ? made : this;
}

std::unique_ptr<ExecutionState> PreparedFunction::AcquireState() const {
  {
    std::lock_guard lock(states_mu_);
    if (!free_states_.empty()) {
      std::unique_ptr<ExecutionState> s = std::move(free_states_.back());
      free_states_.pop_back();
      return s;
    }
  }
  // A new concurrent caller: a frame, scratch and an arena per device with a view per planned
  // slot.
  auto s = std::make_unique<ExecutionState>();
  s->slots.resize(static_cast<size_t>(compiled_.num_slots));
  for (const auto& [slot, t] : compiled_.constants) s->slots[slot] = t;
  s->planned.resize(static_cast<size_t>(compiled_.num_slots));
  for (Device* d : compiled_.devices)
    s->scratch.push_back(std::make_unique<ScratchArena>(d->allocator()));
  for (size_t d = 0; d < compiled_.devices.size(); ++d) {
    const size_t bytes = compiled_.arena_bytes[d];
    if (bytes == 0) continue;
    Allocator* allocator = compiled_.devices[d]->allocator();
    void* data = allocator->Allocate(bytes);
    if (data == nullptr) continue;  // no arena: kernels allocate as they go
    std::shared_ptr<void> arena(data,
                                [allocator, bytes](void* p) { allocator->Deallocate(p, bytes); });
    for (const PlannedSlot& p : compiled_.planned)
      if (p.device == static_cast<int>(d))
        s->planned[p.slot] = std::make_shared<TensorBuffer>(
            p.dtype, p.shape.num_elements(), static_cast<char*>(data) + p.offset, arena,
            /*transient=*/true);
  }
  return s;
}

void PreparedFunction::ReleaseState(std::unique_ptr<ExecutionState> state) const {
  std::lock_guard lock(states_mu_);
  free_states_.push_back(std::move(state));
}

Status PreparedFunction::Run(std::span<const Tensor> args, std::vector<Tensor>* outputs,
                             const RunOptions& options) const {
  outputs->resize(compiled_.output_slots.size());
  return Run(args, {}, std::span<Tensor>(*outputs), options);
}

Status PreparedFunction::Run(std::span<const Tensor> args, std::span<const Tensor> captures,
                             std::span<Tensor> outputs, const RunOptions& options) const {
  KILN_RETURN_IF_ERROR(CheckArgs(args, captures));
  if (outputs.size() != compiled_.output_slots.size())
    return InvalidArgument("function '", compiled_.name, "' has ", compiled_.output_slots.size(),
                           " outputs; the caller gave room for ", outputs.size());
  if (compiled_.shapes_fully_known) return RunPrepared(args, captures, outputs, options);
  // Shapes the signature left open: run the version prepared for these shapes.
  KILN_ASSIGN_OR_RETURN(const PreparedFunction* fn, SpecializedFor(args, captures));
  return fn->RunPrepared(args, captures, outputs, options);
}

int PreparedFunction::DeviceIndexOf(const Tensor& t) const {
  const std::vector<Device*>& devices = compiled_.devices;
  if (const Allocator* a = t.BufferAllocator(); a != nullptr && devices.size() > 1)
    for (size_t d = 0; d < devices.size(); ++d)
      if (devices[d]->allocator() == a) return static_cast<int>(d);
  return t.HostAccessible() ? compiled_.host_device : -1;
}

Result<std::vector<Tensor>> PreparedFunction::ArgsWhereRead(std::span<const Tensor> args,
                                                            size_t first) const {
  std::vector<Tensor> placed(args.begin(), args.end());
  for (size_t i = first; i < placed.size(); ++i) {
    const int d = DeviceIndexOf(placed[i]);
    if (d >= 0 && (d == compiled_.host_device || d == compiled_.arg_in_place_devices[i])) continue;
    Device* from = DeviceHolding(placed[i]);
    if (from == nullptr)
      return InvalidArgument(
          "function '", compiled_.name, "': argument #", i, " '", compiled_.arg_names[i],
          "' is in memory of no device of this process (", placed[i].BufferAllocator()->Name(),
          "); expected a host tensor or one a device's allocator made");
    KILN_ASSIGN_OR_RETURN_CTX(placed[i], CopyTensor(placed[i], from, HostDevice()), "function '",
                              compiled_.name, "': argument #", i, " '", compiled_.arg_names[i],
                              "' from ", from->name());
  }
  return placed;
}

Status PreparedFunction::RunPrepared(std::span<const Tensor> args, std::span<const Tensor> captures,
                                     std::span<Tensor> outputs, const RunOptions& options) const {
  // Arguments in a device's memory are read there when that device's copy alone reads them,
  // else brought to the host first; such calls run their steps (a replay reads host buffers).
  size_t first_off_host = args.size();
  for (size_t i = 0; i < args.size() && first_off_host == args.size(); ++i)
    if (DeviceIndexOf(args[i]) != compiled_.host_device) first_off_host = i;
  if (first_off_host < args.size()) {
    KILN_ASSIGN_OR_RETURN(std::vector<Tensor> placed, ArgsWhereRead(args, first_off_host));
    return RunOnState(AcquireState(), placed, captures, outputs, options);
  }
  std::unique_ptr<ExecutionState> state = AcquireState();
  if (compiled_.graph_device >= 0) {
    bool done = false;
    Status status = RunRecorded(*state, args, captures, outputs, options, &done);
    if (done) {
      ReleaseState(std::move(state));
      if (!status.ok())
        return status.WithContext(internal::StrCat("function '", compiled_.name, "'"));
      return OkStatus();
    }
  }
  return RunOnState(std::move(state), args, captures, outputs, options);
}

Status PreparedFunction::RunOnState(std::unique_ptr<ExecutionState> state,
                                    std::span<const Tensor> args, std::span<const Tensor> captures,
                                    std::span<Tensor> outputs, const RunOptions& options) const {
  std::vector<Tensor>& slots = state->slots;
  for (size_t i = 0; i < args.size(); ++i) slots[compiled_.arg_slots[i]] = args[i];
  for (size_t i = 0; i < captures.size(); ++i)
    slots[compiled_.arg_slots[args.size() + i]] = captures[i];
  // Caller-provided output buffers, bound for this call where they are in the result's memory.
  for (size_t i = 0; i < outputs.size(); ++i) {
    const Tensor& o = outputs[i];
    const int32_t slot = compiled_.output_slots[i];
    if (o.IsInitialized() && o.dtype() == compiled_.output_specs[i].dtype &&
        o.BufferIsExclusive() && DTypeIsPod(o.dtype()) && state->planned[slot] == nullptr &&
        DeviceIndexOf(o) == compiled_.output_devices[i])
      state->planned[slot] = o.buffer();
  }
  Status status = RunSteps(*state, options);
  if (status.ok()) {
    for (size_t i = 0; i < outputs.size(); ++i) outputs[i] = slots[compiled_.output_slots[i]];
  }
  ClearState(*state, !status.ok());
  ReleaseState(std::move(state));
  if (!status.ok()) return status.WithContext(internal::StrCat("function '", compiled_.name, "'"));
  return OkStatus();
}

Status PreparedFunction::RunSteps(ExecutionState& state, const RunOptions& options) const {
  const ScopedFlushDenormals flush;  // as TF's CPU kernels (device/denormals.h)
  std::vector<Tensor>& slots = state.slots;
  const ThreadPool& threads = options.threads ? *options.threads : DefaultThreadPool();
  threads.ApplyToCallingThread();
  RunEnv env{options.print ? options.print : &DefaultPrintSink(), &threads, options.deadline};
  const bool timed = options.deadline != std::chrono::steady_clock::time_point::max();
  Allocator* host = compiled_.devices.size() > 1 ? HostDevice()->allocator() : nullptr;
  ExecutionFrame frame{slots.data(), state.planned.data(), nullptr, host, nullptr, &env};
  for (const Step& step : compiled_.steps) {
    if (timed && std::chrono::steady_clock::now() >= options.deadline)
      return DeadlineExceeded("the call's deadline passed before node '", step.node_name, "' ran");
    StepIo io{step.in.data(),         static_cast<int>(step.in.size()),
              step.out.data(),        static_cast<int>(step.out.size()),
              step.out_dtypes.data(), step.dying_inputs,
              step.state.get(),       step.node_name,
              step.host_outputs};
    ScratchArena* scratch = state.scratch[step.device].get();
    frame.allocator = step.allocator;
    frame.device = compiled_.devices[step.device];
    frame.scratch = scratch;
    Status status = step.compute(KernelContext(frame, io));
    scratch->Reset();
    if (!status.ok()) return status;
    for (int32_t slot : step.release) slots[slot] = Tensor();
  }
  return OkStatus();
}

void PreparedFunction::ClearState(ExecutionState& state, bool failed) const {
  std::vector<Tensor>& slots = state.slots;
  // Leave the state as a new call expects it: constants in place, nothing else held. (Output
  // slots are never planned, so their planned entry is only ever a caller's bound buffer.)
  for (size_t i = 0; i < compiled_.output_slots.size(); ++i) {
    const int32_t slot = compiled_.output_slots[i];
    state.planned[slot] = nullptr;
    if (!compiled_.output_is_constant[i]) slots[slot] = Tensor();
  }
  for (int32_t slot : compiled_.arg_slots) slots[slot] = Tensor();
  if (failed) {
    for (Tensor& t : slots) t = Tensor();
    for (const auto& [slot, t] : compiled_.constants) slots[slot] = t;
  }
}

}  // namespace kiln::exec
