// Graph execution. A FunctionDef is prepared once for given argument specs: calls to library
// functions are inlined, nodes that neither outputs nor side effects need are pruned, every
// node's Prepare runs (attrs read, dtypes and shapes checked, state built), constants are
// materialised, and the result is a flat schedule of (kernel, input slots, output slots).
// Running walks that schedule over a per-call frame of tensors: no map lookups, no string
// handling, no graph walks. Run is const and thread-safe.
#pragma once

#include <chrono>
#include <condition_variable>
#include <map>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "kiln/core/status.h"
#include "kiln/core/tensor.h"
#include "kiln/exec/device.h"
#include "kiln/exec/op_table.h"
#include "kiln/exec/thread_pool.h"

namespace tensorflow {
class FunctionDef;
class FunctionDefLibrary;
}  // namespace tensorflow

namespace kiln::internal {
struct PreparedFunctionAccess;  // libexec/executor/function_compiler.h
}  // namespace kiln::internal

namespace kiln::exec {

// A non-owning index of FunctionDefs by name; the protos must outlive it.
class FunctionLibrary {
 public:
  FunctionLibrary() = default;
  explicit FunctionLibrary(const tensorflow::FunctionDefLibrary& lib);
  void Add(const tensorflow::FunctionDef& fdef);
  const tensorflow::FunctionDef* Find(std::string_view name) const;
  size_t size() const { return functions_.size(); }

 private:
  std::map<std::string, const tensorflow::FunctionDef*, std::less<>> functions_;
};

// What float32 computes in (LoadOptions::precision; `--precision`). kAsSaved: as the model was
// saved (float32 products without TF32). kTF32: float32 products and convolutions may use the
// GPU's TF32 tensor cores (a 10-bit mantissa in the products, float32 accumulation; as
// PyTorch's allow_tf32 and ONNX Runtime's use_tf32). kFloat16, kBFloat16: on a load with an
// accelerator, a float32 model runs in half precision (graph/float_to_half.h); the signature's
// dtypes do not change.
enum class Precision { kAsSaved, kTF32, kFloat16, kBFloat16 };
// "fp32", "tf32", "fp16", "bf16".
inline const char* PrecisionName(Precision p) {
  switch (p) {
    case Precision::kTF32:
      return "tf32";
    case Precision::kFloat16:
      return "fp16";
    case Precision::kBFloat16:
      return "bf16";
    default:
      return "fp32";
  }
}
inline Result<Precision> ParsePrecision(std::string_view name) {
  for (Precision p :
       {Precision::kAsSaved, Precision::kTF32, Precision::kFloat16, Precision::kBFloat16})
    if (name == PrecisionName(p)) return p;
  return InvalidArgument("precision '", name, "' is not one of fp32, tf32, fp16, bf16");
}

struct PrepareOptions {
  ResourceManager* resources = nullptr;
  // Where nodes may run, in priority order: each node goes to the first device with a kernel
  // that takes it (KernelEntry::supports), and copy steps move tensors between devices.
  // Constants and, unless results_on_device, results live on the host. Empty: the host alone.
  // An argument may be a host tensor or one in a device's memory (CopyTensor makes one): where
  // every step that reads it runs on that device, a call uses it in place; otherwise the call
  // copies it to the host first.
  std::vector<Device*> devices;
  // Results a device computed stay in its memory (tensors from its allocator; CopyTensor brings
  // them to the host, and Device::Synchronize waits for them), for services that keep data on
  // the GPU. Results of host steps are host tensors either way. Off: every result is copied to
  // the host, and the call returns once it is there.
  bool results_on_device = false;
  // When set, nodes that outputs and side effects do not need are dropped (TF semantics).
  bool prune = true;
  // When set, stateful ops are kept even if no output needs them (a TF2 function's side
  // effects). A TF1 Session-style run fetches outputs only: it clears this.
  bool keep_stateful = true;
  // Nodes whose inputs are all known at prepare time are computed there (constant folding).
  bool fold_constants = true;
  // When shapes are fully known, intermediate tensors live in one arena laid out by liveness.
  bool plan_memory = true;
  // Matrix products and convolutions absorb the bias, batch-norm, residual add and activation
  // ops that follow them (graph/fusion.h).
  bool fuse = true;
  // Where the host is the only device, float16/bfloat16 nodes compute in float32 regions, cast
  // back where a value leaves them (graph/half_in_float.h). Off: every node rounds its
  // result to its half type, as TensorFlow's kernels do.
  bool half_in_float = true;
  // A function whose argument shapes are not fully known is prepared again (folded, planned)
  // for the exact shapes of a call, for up to this many distinct shape sets.
  int max_specializations = 8;
  // Values of arguments known at prepare time, by argument index (an uninitialised tensor:
  // unknown), such as the captured variable handles of a loaded model. They stay arguments,
  // fed at every call; ops may read them while preparing (a ReadVariableOp of a frozen variable
  // becomes a constant).
  std::vector<Tensor> known_args;
  // Keep the graph the schedule was made from (after inlining, pruning and fusion), for
  // writing a serving plan (savedmodel-cli compile). Off: it is dropped after prepare.
  bool keep_graph = false;
  // Replays a fixed-shape call on a device that can record its work (CUDA graphs): from the
  // third call of an execution state on, its device work is one recorded launch, with the
  // arguments and results copied through the device's page-locked buffers; host steps run
  // only while recording. Taken only where that gives the same results: every host step's
  // inputs depend on shapes and constants alone, nothing stateful runs, and every result is
  // copied from the device (PlanStats::device_graph says whether, or why not). A call whose
  // recording fails runs as usual, as do all later ones of that state.
  bool device_graphs = false;
  // Precision::kTF32 marks float32 products for the GPU's TF32 math; kFloat16 and kBFloat16
  // run float32 nodes in half precision where `devices` has an accelerator (no effect on the
  // host alone: the loader refuses that combination).
  Precision precision = Precision::kAsSaved;
};

// The indices of `known_args` that hold a frozen variable's handle: their reads are folded into
// the prepared function, so two loads that freeze different variables prepare different graphs.
std::vector<int32_t> FrozenVariableArgs(std::span<const Tensor> known_args);

struct RunOptions {
  const PrintSink* print = nullptr;     // default: DefaultPrintSink()
  const ThreadPool* threads = nullptr;  // default: DefaultThreadPool()
  // A call still running at this time stops before its next kernel (and in every loop
  // iteration and called function) with DEADLINE_EXCEEDED. max(): none.
  std::chrono::steady_clock::time_point deadline = std::chrono::steady_clock::time_point::max();
};

// What prepare made of a function (for tests, `bench` and `show`).
struct PlanStats {
  int steps = 0;             // kernels a call runs
  int constants = 0;         // values materialised at prepare time (Const nodes and folds)
  int folded = 0;            // nodes computed at prepare time
  int fused = 0;             // products and convolutions that absorbed the ops after them
  int widened = 0;           // half-precision nodes run in float32 between casts
  int half_in_float = 0;     // half-precision nodes rewritten to compute in float32 regions
  int float_to_half = 0;     // float32 nodes run in half precision (Precision::kFloat16...)
  int slots = 0;             // tensors a call holds
  int planned_slots = 0;     // of those, placed in the arena
  int in_place = 0;          // planned outputs sharing their input's memory
  size_t arena_bytes = 0;    // one per concurrent call
  size_t planned_bytes = 0;  // sum of the planned tensors (arena_bytes <= this)
  int copies = 0;            // copy steps between devices (included in steps)
  int64_t copy_bytes = 0;    // bytes those copies move per call (-1: a shape is not known)
  // Kernel steps per device, in the order of PrepareOptions::devices (copies included).
  std::vector<std::pair<std::string, int>> device_steps;
  // With PrepareOptions::device_graphs: the device whose calls are recorded and replayed
  // ("gpu:0"), or why none is ("not recorded: ..."). Empty when not asked.
  std::string device_graph;
};

// One step of a schedule, for `savedmodel-cli show --placement` and tests.
struct ScheduledStep {
  std::string node_name;
  std::string_view op;  // "_Copy" for a copy between devices
  std::string device;   // where it runs ("cpu", "gpu:0")
  std::string from;     // for a copy: where the tensor comes from ("" otherwise)
  int64_t bytes = -1;   // for a copy: its size when known
};

class ExecutionState;
struct FlatGraph;
struct FunctionInterface;

class PreparedFunction {
 public:
  // arg_specs: one per input arg of fdef. A spec with unknown rank takes the shape from the
  // function's "_input_shapes" attr when it has one. fdef and library must outlive the result.
  static Result<std::shared_ptr<const PreparedFunction>> Prepare(
      const tensorflow::FunctionDef& fdef, const FunctionLibrary& library,
      std::span<const TensorSpec> arg_specs, const PrepareOptions& options = {});

  // A graph that was imported and fused before (a serving plan's), prepared as it is: no
  // inlining, no fusion. Specializations are prepared from it too.
  static Result<std::shared_ptr<const PreparedFunction>> PrepareGraph(
      std::shared_ptr<const FlatGraph> graph, std::shared_ptr<const FunctionInterface> iface,
      const FunctionLibrary& library, std::span<const TensorSpec> arg_specs,
      const PrepareOptions& options = {});

  const std::string& name() const { return compiled_.name; }
  // The function's declared interface and, with PrepareOptions::keep_graph, the graph its
  // schedule was made from (null otherwise). Both are the executor's private types
  // (graph/flat_graph.h), for the serving plan writer.
  const FunctionInterface& interface() const { return *compiled_.iface; }
  const FlatGraph* final_graph() const { return compiled_.final_graph.get(); }
  std::span<const std::string> arg_names() const { return compiled_.arg_names; }
  std::span<const TensorSpec> arg_specs() const { return compiled_.arg_specs; }
  // The specs Prepare was given, before the function's declared types and "_input_shapes"
  // refined them into arg_specs(): what a serving plan files the function under.
  std::span<const TensorSpec> requested_specs() const { return compiled_.requested_specs; }
  // The arguments whose known value was a frozen variable (FrozenVariableArgs): prepare folded
  // their reads, so a serving plan files the function under them as well.
  std::span<const int32_t> frozen_args() const { return compiled_.frozen_args; }
  std::span<const std::string> output_names() const { return compiled_.output_names; }
  std::span<const TensorSpec> output_specs() const { return compiled_.output_specs; }
  // Kernel steps in the schedule (after inlining, pruning and folding; constants excluded).
  int num_steps() const { return static_cast<int>(compiled_.steps.size()); }
  const PlanStats& plan_stats() const { return compiled_.stats; }
  // Where each tensor of the memory plan starts in its device's arena, in planning order
  // (plan_stats().planned_slots of them): a serving plan records them, so a load can check
  // that it plans the same memory.
  std::vector<size_t> ArenaOffsets() const;
  // The steps in order, with the device each runs on.
  std::vector<ScheduledStep> Schedule() const;
  // The devices this function may run on (PrepareOptions::devices, the host included).
  std::span<Device* const> devices() const { return compiled_.devices; }
  // The function prepared for these exact argument shapes (itself when its specs are fully
  // known, or when the cache of specializations is full); built on first use.
  Result<const PreparedFunction*> SpecializedFor(std::span<const Tensor> args,
                                                 std::span<const Tensor> captures = {}) const;

  // Checks argument count, dtypes and shapes against arg_specs, then runs.
  Status Run(std::span<const Tensor> args, std::vector<Tensor>* outputs,
             const RunOptions& options = {}) const;
  // The arguments in two parts (a signature's inputs, then its captured variables); one output
  // per element of `outputs`. An element that already holds a tensor of the output's dtype and
  // shape with an unshared buffer receives the result in that buffer, so a steady call of a
  // fixed-shape function allocates nothing.
  Status Run(std::span<const Tensor> args, std::span<const Tensor> captures,
             std::span<Tensor> outputs, const RunOptions& options = {}) const;

  ~PreparedFunction();

 private:
  // The compiler (libexec/executor/function_compiler.h) builds a Compiled and makes the
  // function from it through this, its one way in: the schedule's layout is the executor's
  // own, not an interface (callers read it through the accessors above).
  friend struct internal::PreparedFunctionAccess;
  struct Step {
    ComputeFn compute;
    std::shared_ptr<const OpState> state;
    std::string_view op;             // the op's name, or "_Copy"
    int device = 0;                  // index into Compiled::devices
    Allocator* allocator = nullptr;  // that device's
    uint32_t host_outputs = 0;       // StepIo::host_outputs
    int64_t copy_bytes = -1;         // a copy step's size, when its shape is known
    std::vector<int32_t> in;
    std::vector<int32_t> out;
    std::vector<DType> out_dtypes;
    std::vector<int32_t> release;  // slots whose last use is this step
    uint32_t dying_inputs = 0;     // StepIo::dying_inputs
    uint32_t flags = 0;            // the op's OpFlags
    int in_place_input = -1;       // PlanStep::in_place_input
    std::string node_name;
  };
  // One planned slot: where its tensor lives in the arena.
  struct PlannedSlot {
    int device;  // whose arena
    int32_t slot;
    DType dtype;
    Shape shape;
    size_t offset;
  };
  // What the compiler made: the schedule, and what specializations are prepared from.
  struct Compiled {
    std::string name;
    std::vector<std::string> arg_names;
    std::vector<TensorSpec> arg_specs;
    std::vector<TensorSpec> requested_specs;  // what Prepare was given (before refinement)
    std::vector<int32_t> frozen_args;         // FrozenVariableArgs(options.known_args)
    std::vector<std::string> output_names;
    std::vector<TensorSpec> output_specs;
    int32_t num_slots = 0;
    std::vector<int32_t> arg_slots;
    std::vector<int32_t> output_slots;
    std::vector<char> output_is_constant;  // per output
    std::vector<int> output_devices;       // per output: where it lives
    // Per argument: the device whose copy step is the argument's only reader (an argument in
    // that device's memory is used in place), or -1.
    std::vector<int> arg_in_place_devices;
    int host_device = 0;                                // index of the host in devices
    std::vector<std::pair<int32_t, Tensor>> constants;  // slot, value
    std::vector<Step> steps;
    std::vector<PlannedSlot> planned;
    std::vector<Device*> devices;     // [0] is where most nodes go; the host is among them
    std::vector<size_t> arena_bytes;  // per device
    PlanStats stats;

    // For specializations: what this was prepared from (a FunctionDef, or a source graph).
    const tensorflow::FunctionDef* fdef = nullptr;
    std::shared_ptr<const FlatGraph> source_graph;
    std::shared_ptr<const FunctionInterface> iface;
    std::shared_ptr<const FlatGraph> final_graph;
    // The fused graph that specialisations prepare (without fusing again), as a serving
    // plan's are: so every shape runs the same kernels with and without a plan.
    std::shared_ptr<const FlatGraph> specialize_from;
    const FunctionLibrary* library = nullptr;
    PrepareOptions options;
    bool shapes_fully_known = false;
    // The device whose work a call records and replays (index into devices), or -1.
    int graph_device = -1;
  };
  explicit PreparedFunction(Compiled compiled);
  Status CheckArgs(std::span<const Tensor> args, std::span<const Tensor> captures) const;
  Status RunPrepared(std::span<const Tensor> args, std::span<const Tensor> captures,
                     std::span<Tensor> outputs, const RunOptions& options) const;
  // The call on `state` with its arguments bound: the steps, then the results.
  Status RunOnState(std::unique_ptr<ExecutionState> state, std::span<const Tensor> args,
                    std::span<const Tensor> captures, std::span<Tensor> outputs,
                    const RunOptions& options) const;
  // Index into devices of the device whose memory holds `t`, or -1 when none of them does.
  int DeviceIndexOf(const Tensor& t) const;
  // `args` with each argument in a device's memory brought to the host, unless that device's
  // copy step alone reads it (arg_in_place_devices).
  Result<std::vector<Tensor>> ArgsWhereRead(std::span<const Tensor> args, size_t first) const;
  // The steps in order, on a state whose arguments are in place (run.cc), and the state left
  // as a new call expects it.
  Status RunSteps(ExecutionState& state, const RunOptions& options) const;
  void ClearState(ExecutionState& state, bool failed) const;
  // executor/device_graph.cc: the call as a replay of its recording, made at this call if the
  // state is due; *done is false when the call is to run as usual.
  Status RunRecorded(ExecutionState& state, std::span<const Tensor> args,
                     std::span<const Tensor> captures, std::span<Tensor> outputs,
                     const RunOptions& options, bool* done) const;
  std::unique_ptr<ExecutionState> AcquireState() const;
  void ReleaseState(std::unique_ptr<ExecutionState> state) const;

  const Compiled compiled_;
  // Versions prepared for calls' shapes (null: the generic one serves those shapes). A new
  // shape is prepared outside the lock, so calls of other shapes do not wait for it; callers of
  // the same new shape wait for the one preparing it.
  mutable std::mutex specializations_mu_;
  mutable std::condition_variable specializations_cv_;
  mutable std::vector<std::pair<std::vector<Shape>, std::shared_ptr<const PreparedFunction>>>
      specializations_;
  mutable std::vector<std::vector<Shape>> preparing_;

  // Per-call memory (frames, arenas, scratch), reused across calls and threads.
  mutable std::mutex states_mu_;
  mutable std::vector<std::unique_ptr<ExecutionState>> free_states_;
};

// The pool runs use when RunOptions gives none: sized to the machine.
const ThreadPool& DefaultThreadPool();

}  // namespace kiln::exec
