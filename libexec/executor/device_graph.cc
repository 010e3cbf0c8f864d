// Replaying a fixed-shape call as one recorded launch (PrepareOptions::device_graphs, CUDA
// graphs on a GPU). The first calls of an execution state run as usual, so kernels have made
// their per-shape choices (cuDNN's algorithm search synchronises and cannot be recorded);
// the next call is recorded: its arguments are copied into the device's page-locked buffers
// and its results are copied into others, both kept by the state, and the device records its
// work while the host steps run. From then on a call copies the arguments in, replays the
// recording, and copies the results out; no host step runs. prepared_function_finish.cc's
// PlanDeviceGraph decides where that gives the same results as running the steps.
#include <cstring>

#include "executor/execution_state.h"
#include "kiln/exec/executor.h"

namespace kiln::exec {
namespace {

// Calls of a state that run as usual before one is recorded.
constexpr int kCallsBeforeRecording = 2;

// A host tensor for the recording, in the device's page-locked memory where it has some.
Result<Tensor> StagingTensor(Device* device, DType dtype, const Shape& shape) {
  Allocator* staging = device->staging_allocator();
  return Tensor::Allocate(staging != nullptr ? staging : HostDevice()->allocator(), dtype, shape);
}

}  // namespace

Status PreparedFunction::RunRecorded(ExecutionState& state, std::span<const Tensor> args,
                                     std::span<const Tensor> captures, std::span<Tensor> outputs,
                                     const RunOptions& options, bool* done) const {
  *done = false;
  if (state.graph_failed) return OkStatus();
  const size_t n_args = args.size() + captures.size();
  auto arg = [&](size_t i) -> const Tensor& {
    return i < args.size() ? args[i] : captures[i - args.size()];
  };
  if (state.graph == nullptr) {
    if (++state.calls <= kCallsBeforeRecording) return OkStatus();
    Device* device = compiled_.devices[compiled_.graph_device];
    state.graph_args.clear();
    state.graph_outputs.assign(outputs.size(), Tensor());
    for (size_t i = 0; i < n_args; ++i) {
      Result<Tensor> t = StagingTensor(device, arg(i).dtype(), arg(i).shape());
      if (!t.ok()) return OkStatus();  // no staging memory: run as usual this time
      state.graph_args.push_back(std::move(t).value());
    }
    for (size_t i = 0; i < outputs.size(); ++i) {
      if (compiled_.output_is_constant[i]) continue;
      Result<Shape> shape = compiled_.output_specs[i].shape.ToShape();
      if (!shape.ok()) return OkStatus();
      Result<Tensor> t = StagingTensor(device, compiled_.output_specs[i].dtype, *shape);
      if (!t.ok()) return OkStatus();
      state.graph_outputs[i] = std::move(t).value();
    }
    for (size_t i = 0; i < n_args; ++i) state.slots[compiled_.arg_slots[i]] = state.graph_args[i];
    for (size_t i = 0; i < outputs.size(); ++i)
      if (state.graph_outputs[i].IsInitialized())
        state.planned[compiled_.output_slots[i]] = state.graph_outputs[i].buffer();
    // Recorded, not run: the device does nothing until the replay below.
    Status status = device->BeginCapture();
    if (status.ok()) {
      status = RunSteps(state, options);
      Result<std::unique_ptr<DeviceGraph>> graph = device->EndCapture();
      if (status.ok()) status = graph.status();
      if (status.ok()) state.graph = std::move(graph).value();
    }
    // The recorded call must have written its results where the replays will.
    for (size_t i = 0; i < outputs.size() && status.ok(); ++i) {
      const Tensor& out = state.slots[compiled_.output_slots[i]];
      if (state.graph_outputs[i].IsInitialized() &&
          (!out.IsInitialized() || out.raw_data() != state.graph_outputs[i].raw_data()))
        status = Internal("output ", i, " was not written to its recording buffer");
    }
    ClearState(state, !status.ok());
    if (!status.ok()) {
      // This state runs its calls as usual from now on; this one too (nothing ran on the
      // device while recording, and the host steps only read shapes and constants).
      state.graph.reset();
      state.graph_failed = true;
      state.graph_args.clear();
      state.graph_outputs.clear();
      return OkStatus();
    }
  }
  *done = true;
  if (options.deadline != std::chrono::steady_clock::time_point::max() &&
      std::chrono::steady_clock::now() >= options.deadline)
    return DeadlineExceeded("the call's deadline passed before its recorded work ran");
  for (size_t i = 0; i < n_args; ++i) {
    Tensor& staged = state.graph_args[i];
    if (staged.shape() != arg(i).shape())
      return Internal("argument ", i, " has shape ", arg(i).shape().ToString(), ", the recording ",
                      staged.shape().ToString());
    if (staged.ByteSize() > 0) std::memcpy(staged.raw_data(), arg(i).raw_data(), staged.ByteSize());
  }
  KILN_RETURN_IF_ERROR(state.graph->Replay());
  for (size_t i = 0; i < outputs.size(); ++i) {
    if (!state.graph_outputs[i].IsInitialized()) {
      outputs[i] = state.slots[compiled_.output_slots[i]];  // a constant
      continue;
    }
    const Tensor& result = state.graph_outputs[i];
    Tensor& out = outputs[i];
    // A caller's bound buffer of the same size takes the result; else a new host tensor.
    if (!(out.IsInitialized() && out.dtype() == result.dtype() && out.BufferIsExclusive() &&
          out.HostAccessible() && out.ByteSize() == result.ByteSize())) {
      KILN_ASSIGN_OR_RETURN(
          out, Tensor::Allocate(HostDevice()->allocator(), result.dtype(), result.shape()));
    } else if (out.shape() != result.shape()) {
      out = out.BufferAs(result.dtype(), result.shape());
    }
    if (result.ByteSize() > 0) std::memcpy(out.raw_data(), result.raw_data(), result.ByteSize());
  }
  return OkStatus();
}

}  // namespace kiln::exec
