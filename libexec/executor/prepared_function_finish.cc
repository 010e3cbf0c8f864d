// FunctionCompiler's phases after PrepareNodes (function_compiler.h; the phases before are in
// prepared_function.cc): BindOutputs, the function's output slots and specs;
// DropUnreadConstants, the constants nothing reads; PlanReleases, each
// slot released after its last use; PlanArena, the memory plan; CountPlacement, the steps per
// device and the copies between them; and FinalGraph, the graph a serving plan keeps.
#include <algorithm>
#include <map>
#include <memory>
#include <vector>

#include "executor/function_compiler.h"
#include "executor/memory_plan.h"
#include "executor/placement.h"

namespace kiln::exec {

Status FunctionCompiler::BindOutputs() {
  const FunctionInterface& f = *iface_;
  if (graph_.outputs.size() != f.output_names.size())
    return InvalidArgument("function '", fname_, "' declares ", f.output_names.size(),
                           " outputs; its body gives ", graph_.outputs.size());
  for (size_t i = 0; i < graph_.outputs.size(); ++i) {
    const Edge& e = graph_.outputs[i];
    if (e.output >= static_cast<int>(out_slots_[e.node].size()))
      return InvalidArgument("function '", fname_, "': output ", i, " refers to output ", e.output,
                             " of '", graph_.nodes[e.node].name, "', which does not exist");
    // Results are host tensors, or stay where they were computed.
    const int32_t computed = out_slots_[e.node][e.output];
    const int where = options_.results_on_device ? slot_device_[computed] : host_;
    KILN_ASSIGN_OR_RETURN(const int32_t slot, Locate(computed, where, graph_.nodes[e.node].name));
    compiled_.output_slots.push_back(slot);
    compiled_.output_devices.push_back(where);
    compiled_.output_is_constant.push_back(ConstantOf(slot) != nullptr);
    TensorSpec spec = slot_specs_[slot];
    const DType declared = f.output_dtypes[i];
    if (declared != DType::kInvalid && spec.dtype != DType::kInvalid && declared != spec.dtype)
      return InvalidArgument("function '", fname_, "': output '", f.output_names[i],
                             "' is declared ", DTypeShortName(declared), " but computes ",
                             DTypeShortName(spec.dtype));
    if (declared != DType::kInvalid) spec.dtype = declared;
    compiled_.output_specs.push_back(spec);
  }
  return OkStatus();
}

// A constant that no step reads and no output is (a weight folded into another, a host value
// copied to a device at prepare time) is not kept: a frame holds only what runs, and a device's
// weights leave no host copy behind.
void FunctionCompiler::DropUnreadConstants() {
  std::vector<char> read(compiled_.num_slots, 0);
  for (const Step& s : compiled_.steps)
    for (int32_t slot : s.in) read[slot] = 1;
  for (int32_t slot : compiled_.output_slots) read[slot] = 1;
  std::erase_if(compiled_.constants, [&](const auto& c) { return read[c.first] == 0; });
}

// An argument that only a copy to one device reads may be given in that device's memory: the
// copy step then passes it through (CopyCompute), so a service that keeps its data on the GPU
// pays no round trip through the host.
void FunctionCompiler::PlanArgsInPlace() {
  compiled_.host_device = host_;
  std::vector<int> only_reader(static_cast<size_t>(compiled_.num_slots), -1);
  std::vector<int> readers(static_cast<size_t>(compiled_.num_slots), 0);
  for (size_t s = 0; s < compiled_.steps.size(); ++s)
    for (int32_t slot : compiled_.steps[s].in) {
      if (slot < 0) continue;
      ++readers[slot];
      only_reader[slot] = static_cast<int>(s);
    }
  for (int32_t slot : compiled_.output_slots) ++readers[slot];
  for (int32_t slot : compiled_.arg_slots) {
    const int s = readers[slot] == 1 ? only_reader[slot] : -1;
    const bool copied_in = s >= 0 && compiled_.steps[s].op == kCopyOp &&
                           compiled_.steps[s].device != host_ && slot_device_[slot] == host_;
    compiled_.arg_in_place_devices.push_back(copied_in ? compiled_.steps[s].device : -1);
  }
}

// Each intermediate slot is released right after its last use, so memory is freed early,
// and a step learns which of its inputs die there (their buffers may be reused).
void FunctionCompiler::PlanReleases() {
  const int32_t n_slots = compiled_.num_slots;
  std::vector<int> last_use(n_slots, -1);
  for (int s = 0; s < static_cast<int>(compiled_.steps.size()); ++s)
    for (int32_t slot : compiled_.steps[s].in) last_use[slot] = s;
  pinned_.assign(n_slots, 0);
  for (int32_t slot : compiled_.output_slots) pinned_[slot] = 1;
  for (int32_t slot : compiled_.arg_slots) pinned_[slot] = 1;
  for (const auto& [slot, t] : compiled_.constants) pinned_[slot] = 1;
  for (int s = 0; s < static_cast<int>(compiled_.steps.size()); ++s) {
    Step& step = compiled_.steps[s];
    for (size_t j = 0; j < step.in.size() && j < 32; ++j) {
      const int32_t slot = step.in[j];
      if (last_use[slot] == s && !pinned_[slot]) step.dying_inputs |= 1u << j;
    }
  }
  for (int32_t slot = 0; slot < n_slots; ++slot)
    if (last_use[slot] >= 0 && !pinned_[slot] &&
        std::find(compiled_.arg_slots.begin(), compiled_.arg_slots.end(), slot) ==
            compiled_.arg_slots.end())
      compiled_.steps[last_use[slot]].release.push_back(slot);
}

// One arena per device, each planned over the slots that live there.
void FunctionCompiler::PlanArena() {
  std::vector<PlanStep> steps;
  for (const Step& s : compiled_.steps)
    steps.push_back(PlanStep{s.in, s.out, (s.flags & kOpFreshOutputs) != 0, s.in_place_input});
  for (int d = 0; d < static_cast<int>(compiled_.devices.size()); ++d) {
    std::vector<PlanSlot> slots(compiled_.num_slots);
    bool any = false;
    for (int32_t i = 0; i < compiled_.num_slots; ++i) {
      const TensorSpec& spec = slot_specs_[i];
      slots[i].dtype = spec.dtype;
      // Another device's slots are not this arena's to place.
      slots[i].pinned = pinned_[i] != 0 || slot_device_[i] != d;
      any |= !slots[i].pinned;
      if (spec.shape.IsFullyDefined()) {
        slots[i].shape_known = true;
        slots[i].shape = *spec.shape.ToShape();
      }
    }
    if (!any) continue;
    MemoryPlanResult plan = PlanMemory(steps, slots);
    for (const auto& e : plan.entries)
      compiled_.planned.push_back({d, e.slot, slots[e.slot].dtype, slots[e.slot].shape, e.offset});
    compiled_.arena_bytes[d] = plan.arena_bytes;
    compiled_.stats.planned_slots += static_cast<int>(plan.entries.size());
    compiled_.stats.in_place += plan.in_place;
    compiled_.stats.arena_bytes += plan.arena_bytes;
    compiled_.stats.planned_bytes += plan.planned_bytes;
  }
}

// Steps per device, copies and the bytes they move (PlanStats).
void FunctionCompiler::CountPlacement() {
  PlanStats& st = compiled_.stats;
  std::vector<int> per_device(compiled_.devices.size(), 0);
  for (Step& step : compiled_.steps) {
    ++per_device[step.device];
    if (step.op != kCopyOp) continue;
    ++st.copies;
    const TensorSpec& spec = slot_specs_[step.out[0]];
    if (spec.shape.IsFullyDefined())
      step.copy_bytes =
          spec.shape.ToShape()->num_elements() * static_cast<int64_t>(DTypeSize(spec.dtype));
    st.copy_bytes = st.copy_bytes < 0 || step.copy_bytes < 0 ? -1 : st.copy_bytes + step.copy_bytes;
  }
  for (size_t d = 0; d < per_device.size(); ++d)
    st.device_steps.emplace_back(compiled_.devices[d]->name(), per_device[d]);
}

// Whether a call can be recorded once and replayed (PrepareOptions::device_graphs): a replay
// runs the recorded device work on new argument values and no host step, so no host step (nor
// a device kernel's host-memory input) may read a value that depends on an argument, nothing
// stateful may run, and each result must be copied off the device into its recording buffer.
void FunctionCompiler::PlanDeviceGraph() {
  std::string& note = compiled_.stats.device_graph;
  auto refuse = [&note](const auto&... why) { note = internal::StrCat("not recorded: ", why...); };
  if (options_.results_on_device) return refuse("results stay on the device");
  int device = -1;
  for (size_t d = 0; d < compiled_.devices.size(); ++d) {
    if (static_cast<int>(d) == host_) continue;
    if (device >= 0) return refuse("steps run on more than one device besides the host");
    device = static_cast<int>(d);
  }
  if (device < 0) return refuse("every step runs on the host");
  Device* dev = compiled_.devices[device];
  if (!dev->CanCapture()) return refuse(dev->name(), " cannot record its work");
  if (!compiled_.shapes_fully_known) return refuse("the arguments' shapes are not all known");
  auto shape_only = [](std::string_view op) {
    return op == "Shape" || op == "ShapeN" || op == "Size" || op == "Rank";
  };
  std::vector<char> varies(static_cast<size_t>(compiled_.num_slots), 0);
  std::vector<char> is_arg(static_cast<size_t>(compiled_.num_slots), 0);
  for (size_t i = 0; i < compiled_.arg_slots.size(); ++i) {
    if (!DTypeIsPod(compiled_.arg_specs[i].dtype))
      return refuse("argument '", compiled_.arg_names[i], "' is not plain data");
    varies[compiled_.arg_slots[i]] = 1;
    is_arg[compiled_.arg_slots[i]] = 1;
  }
  std::vector<int> writer(static_cast<size_t>(compiled_.num_slots), -1);
  for (size_t s = 0; s < compiled_.steps.size(); ++s) {
    const Step& step = compiled_.steps[s];
    if ((step.flags & kOpStateful) != 0)
      return refuse("node '", step.node_name, "' (", step.op, ") is stateful");
    const bool copy = step.op == kCopyOp;
    bool in_varies = false;
    for (int32_t slot : step.in) {
      if (slot < 0) continue;
      in_varies |= varies[slot] != 0;
      if (varies[slot] != 0 && !copy && !shape_only(step.op) && slot_device_[slot] == host_)
        return refuse("node '", step.node_name, "' (", step.op,
                      ") reads a value that changes with the arguments on the host");
      // A recorded copy reads its host memory again at each replay: only the arguments'
      // page-locked buffers stay put (a host step's result is new memory every call).
      if (copy && step.device != host_ && slot_device_[slot] == host_ && !is_arg[slot])
        return refuse("node '", step.node_name, "' copies a host step's result to ", dev->name());
    }
    // Device kernels' results change with the arguments; host steps read only shapes and
    // constants (above), so theirs do not; a copy carries its input's.
    const bool out_varies = copy ? in_varies : step.device != host_ && !shape_only(step.op);
    for (int32_t slot : step.out) {
      if (slot < 0) continue;
      varies[slot] = out_varies ? 1 : 0;
      writer[slot] = static_cast<int>(s);
    }
  }
  for (size_t i = 0; i < compiled_.output_slots.size(); ++i) {
    if (compiled_.output_is_constant[i]) continue;
    const int32_t slot = compiled_.output_slots[i];
    for (size_t j = 0; j < i; ++j)
      if (compiled_.output_slots[j] == slot) return refuse("results ", j, " and ", i, " are one");
    const int w = writer[slot];
    const bool from_device = w >= 0 && compiled_.steps[w].op == kCopyOp &&
                             compiled_.steps[w].device != host_ && slot_device_[slot] == host_;
    if (!from_device || !compiled_.output_specs[i].shape.IsFullyDefined())
      return refuse("result '", compiled_.output_names[i], "' is not copied from ", dev->name(),
                    " with a known shape");
  }
  compiled_.graph_device = device;
  note = dev->name();
}

// The live nodes in schedule order, renumbered, for a serving plan. Runs last: it takes
// graph_'s storage of rewritten attrs (moving a deque keeps its elements where they are, so
// the nodes' pointers stay valid) and copies the values the live nodes hold.
std::shared_ptr<const FlatGraph> FunctionCompiler::FinalGraph() {
  auto g = std::make_shared<FlatGraph>();
  std::vector<int> index(graph_.nodes.size(), -1);
  for (int v : order_) {
    index[v] = static_cast<int>(g->nodes.size());
    g->nodes.push_back(graph_.nodes[v]);
  }
  for (FlatNode& n : g->nodes) {
    for (Edge& e : n.inputs) e.node = index[e.node];
    for (int& c : n.control_inputs) c = index[c];
  }
  for (Edge e : graph_.outputs) g->outputs.push_back(Edge{index[e.node], e.output});
  for (int k : graph_.keep)
    if (index[k] >= 0) g->keep.push_back(index[k]);
#ifndef KILN_NO_PROTOBUF
  g->owned_attrs = std::move(graph_.owned_attrs);
#endif
  g->owned_native_attrs = std::move(graph_.owned_native_attrs);
  // Only the values live nodes hold: rewrites leave others behind (the float32 weights of a
  // product that now reads them as int8, a batch norm's unscaled weights), which a kept graph
  // would otherwise hold for the model's life. A copy shares its buffer.
  std::map<const Tensor*, const Tensor*> kept;
  for (const Tensor& t : graph_.owned_values) kept.emplace(&t, nullptr);
  for (FlatNode& n : g->nodes) {
    auto it = n.value != nullptr ? kept.find(n.value) : kept.end();
    if (it == kept.end()) continue;
    if (it->second == nullptr) {
      g->owned_values.push_back(*n.value);
      it->second = &g->owned_values.back();
    }
    n.value = it->second;
  }
  return g;
}

}  // namespace kiln::exec
