// The op table and the kernel contract. Every op has one device-independent definition
// (output argument names, flags, and a Prepare function that validates attrs and input specs
// and infers output specs once, before anything runs) and one compute function per device
// table. Nothing registers itself: the tables are plain arrays listed in op_table.cc.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "kiln/core/shape.h"
#include "kiln/core/status.h"
#include "kiln/core/tensor.h"
#include "kiln/exec/device.h"
#include "kiln/exec/thread_pool.h"

namespace google::protobuf {
template <typename K, typename V>
class Map;
}  // namespace google::protobuf
namespace tensorflow {
class AttrValue;
}  // namespace tensorflow

namespace kiln::exec {

struct TensorSpec {
  DType dtype = DType::kInvalid;
  PartialShape shape;
  // "TensorSpec(shape=(None, 784), dtype=float32)"
  std::string ToString() const;
  bool operator==(const TensorSpec& o) const { return dtype == o.dtype && shape == o.shape; }
};

using ProtoAttrMap = google::protobuf::Map<std::string, tensorflow::AttrValue>;

class NativeAttrMap;
struct NativeAttr;

// Typed access to a node's attrs; a missing attr falls back to the default given, or is an
// error naming the attr. Used at prepare time only. The attrs are protobuf (a FunctionDef's
// nodes) or native (a serving plan's nodes, core/native_attrs.h); both read the same.
class AttrReader {
 public:
  AttrReader() = default;
  explicit AttrReader(const ProtoAttrMap* attrs) : attrs_(attrs) {}
  explicit AttrReader(const NativeAttrMap* attrs) : native_(attrs) {}
  // The protobuf value; nullptr when missing or when the attrs are native.
  const tensorflow::AttrValue* Find(std::string_view name) const;
  bool Has(std::string_view name) const;

  Result<DType> GetType(std::string_view name) const;
  Result<DType> GetType(std::string_view name, DType dflt) const;
  Result<std::vector<DType>> GetTypeList(std::string_view name) const;
  Result<int64_t> GetInt(std::string_view name) const;
  Result<int64_t> GetInt(std::string_view name, int64_t dflt) const;
  Result<std::vector<int64_t>> GetIntList(std::string_view name) const;
  Result<std::vector<int64_t>> GetIntList(std::string_view name, std::vector<int64_t> dflt) const;
  Result<float> GetFloat(std::string_view name, float dflt) const;
  Result<std::vector<float>> GetFloatList(std::string_view name) const;
  Result<bool> GetBool(std::string_view name, bool dflt) const;
  Result<std::string> GetString(std::string_view name) const;
  Result<std::string> GetString(std::string_view name, std::string dflt) const;
  Result<std::vector<std::string>> GetStringList(std::string_view name) const;
  Result<PartialShape> GetShape(std::string_view name) const;
  Result<PartialShape> GetShape(std::string_view name, PartialShape dflt) const;
  Result<std::vector<PartialShape>> GetShapeList(std::string_view name) const;
  Result<Tensor> GetTensor(std::string_view name) const;
  Result<std::string> GetFunctionName(std::string_view name) const;
  // The names of a list(func) attr's functions.
  Result<std::vector<std::string>> GetFunctionNameList(std::string_view name) const;

  // The same attrs, with float16 and bfloat16 read as `to` by GetType and GetTypeList: how
  // the executor prepares a node that computes half precision in a wider type.
  AttrReader WithHalfAs(DType to) const {
    AttrReader r = *this;
    r.half_as_ = to;
    return r;
  }
  // Whether any type or list(type) attr holds `t`.
  bool MentionsType(DType t) const;

 private:
  DType Substituted(DType t) const {
    return half_as_ != DType::kInvalid && (t == DType::kHalf || t == DType::kBFloat16) ? half_as_
                                                                                       : t;
  }
  Result<const NativeAttr*> Native(std::string_view name, int kind) const;
  const ProtoAttrMap* attrs_ = nullptr;
  const NativeAttrMap* native_ = nullptr;
  DType half_as_ = DType::kInvalid;
};

// Per-node state built by Prepare and read (never written) by compute.
class OpState {
 public:
  virtual ~OpState() = default;
};

class ResourceManager;
class FunctionLibrary;

// Where graph print ops write: stream is "stdout", "stderr" or a log level name.
using PrintSink = std::function<void(std::string_view stream, std::string_view text)>;
// The sink used when a run gives none: stdout/stderr of the process.
const PrintSink& DefaultPrintSink();
// Replaces the process-wide default sink (tests capture prints with it). Not thread-safe
// against concurrent runs; set it before running.
void SetDefaultPrintSink(PrintSink sink);

struct PrepareContext {
  std::string_view node_name;
  std::string_view op;
  AttrReader attrs;
  std::vector<TensorSpec> inputs;
  // Value of input i when it is known at prepare time (a Const, a folded expression, a
  // read-only variable), else nullptr.
  std::vector<const Tensor*> constant_inputs;
  // Filled by Prepare: one spec per output, in flat output order.
  std::vector<TensorSpec> outputs;
  // Optional, filled by Prepare: output values known without running the kernel (Shape of an
  // input whose shape is fully defined, ...). Empty, or one entry per output where an
  // uninitialised tensor means "not known".
  std::vector<Tensor> constant_outputs;
  // Optional, filled by Prepare.
  std::shared_ptr<const OpState> state;
  // Optional, filled by a kernel's CreateState: an input whose memory output 0 may take when it
  // dies at this step and has as many elements (the addend of a fused Add, which the kernel
  // sums into its output in place). kOpInPlace ops take input 0's without saying so.
  int in_place_input = -1;
  // The device the node runs on (null: the host). Prepare is device-free; a kernel's
  // CreateState reads it.
  Device* device = nullptr;
  // Set when the executor only wants specs and constants (its first look at a graph, before
  // fusing it): Prepare may skip expensive state (library primitives, packed weights).
  bool analysis_only = false;
  // Resources (variables) of the loaded model or the tracing context; null when only
  // inferring shapes.
  ResourceManager* resources = nullptr;
  const FunctionLibrary* library = nullptr;

  // Errors from Prepare should name the node: use these.
  template <typename... Args>
  Status Error(Args&&... args) const {
    return InvalidArgument("node '", node_name, "' (", op, "): ", std::forward<Args>(args)...);
  }
  // Checks the number of inputs.
  Status ExpectInputs(int n) const;
  Status ExpectInputsAtLeast(int n) const;
};

// Scratch memory for kernels: a bump allocator that is reset after every step. It grows on
// first use and keeps its blocks, so a steady call allocates nothing.
class ScratchArena {
 public:
  explicit ScratchArena(Allocator* allocator = CpuAllocator()) : allocator_(allocator) {}
  ~ScratchArena();
  ScratchArena(const ScratchArena&) = delete;
  ScratchArena& operator=(const ScratchArena&) = delete;
  // Aligned to kTensorAlignment; valid until Reset().
  Result<void*> Allocate(size_t bytes);
  void Reset();

 private:
  struct Block {
    void* data;
    size_t bytes;
  };
  Allocator* allocator_;
  std::vector<Block> blocks_;  // more than one only until the next Reset merges them
  size_t used_ = 0;            // bytes used in blocks_.back()
};

// What a run gives its kernels: where prints go and the model's threads.
struct RunEnv {
  const PrintSink* print = nullptr;     // never null while running
  const ThreadPool* threads = nullptr;  // never null while running
  std::chrono::steady_clock::time_point deadline = std::chrono::steady_clock::time_point::max();
};

// The memory of one call: the frame of tensor slots, the buffers the memory plan assigned
// to slots, the device allocator and scratch. Owned by the executor.
struct ExecutionFrame {
  Tensor* slots = nullptr;
  // Per slot: the arena buffer the plan assigned, or null (allocate on demand).
  const std::shared_ptr<TensorBuffer>* planned = nullptr;
  // The running step's device memory, and the host's (host-memory outputs, strings, handles).
  Allocator* allocator = nullptr;
  Allocator* host_allocator = nullptr;  // null: `allocator` is host memory
  ScratchArena* scratch = nullptr;
  const RunEnv* env = nullptr;
  // The running step's device (null: the host). A device's kernels reach its stream and
  // library handles through it.
  Device* device = nullptr;
};

// One step's wiring, fixed at prepare time.
struct StepIo {
  const int32_t* in = nullptr;
  int n_in = 0;
  const int32_t* out = nullptr;
  int n_out = 0;
  const DType* out_dtypes = nullptr;  // the prepared dtype of each output
  // Bit j set: input j's slot is not used after this step, so its buffer may be reused.
  uint32_t dying_inputs = 0;
  const OpState* state = nullptr;
  std::string_view node_name;
  // Bit j set: output j lives in host memory (KernelEntry::host_outputs).
  uint32_t host_outputs = 0;
};

// What compute sees. Inputs live in the call's frame; outputs get their memory from here
// (kernels never allocate output buffers themselves), so the memory plan and the device
// decide where they live. No lookups and, in a steady call, no heap allocation.
class KernelContext {
 public:
  KernelContext(const ExecutionFrame& frame, const StepIo& io) : frame_(frame), io_(io) {}

  int num_inputs() const { return io_.n_in; }
  int num_outputs() const { return io_.n_out; }
  const Tensor& input(int i) const { return frame_.slots[io_.in[i]]; }

  // Output i with `shape` and its prepared dtype. POD elements are NOT initialised; strings
  // are empty. An error (naming the bytes) when the memory cannot be had.
  Result<Tensor*> AllocateOutput(int i, const Shape& shape) const {
    return AllocateOutput(i, io_.out_dtypes[i], shape);
  }
  Result<Tensor*> AllocateOutput(int i, DType dtype, const Shape& shape) const;
  // Output i reuses input j's buffer when input j dies at this step, nothing else shares its
  // buffer and the byte sizes match; otherwise a fresh AllocateOutput. For kernels that read
  // each element before writing the same position.
  Result<Tensor*> ForwardInputOrAllocateOutput(int j, int i, const Shape& shape) const;
  // Output i is an existing tensor: an input, a view of one (Reshape), a variable's value.
  void SetOutput(int i, Tensor t) const { frame_.slots[io_.out[i]] = std::move(t); }
  // Scratch memory valid until the kernel returns.
  Result<void*> AllocateTemp(size_t bytes) const { return frame_.scratch->Allocate(bytes); }

  template <typename S>
  const S& state() const {
    return *static_cast<const S*>(io_.state);
  }
  std::string_view node_name() const { return io_.node_name; }
  const RunEnv& env() const { return *frame_.env; }
  // The device this step runs on (the host when the frame names none).
  Device* device() const { return frame_.device != nullptr ? frame_.device : HostDevice(); }
  const ThreadPool& threads() const { return *frame_.env->threads; }

  template <typename... Args>
  Status Error(Args&&... args) const {
    return InvalidArgument("node '", io_.node_name, "': ", std::forward<Args>(args)...);
  }

 private:
  // Where output i of `dtype` is allocated: the host for host-memory outputs and non-POD
  // dtypes (strings, handles), else the step's device.
  Allocator* OutputAllocator(int i, DType dtype) const;
  const ExecutionFrame& frame_;
  const StepIo& io_;
};

using PrepareFn = Status (*)(PrepareContext& ctx);
using ComputeFn = Status (*)(const KernelContext& ctx);

enum OpFlags : uint32_t {
  kOpNone = 0,
  kOpStateful = 1u << 0,  // has side effects: never pruned, runs in program order
  // Every output is freshly allocated through AllocateOutput, never an input or a view of one:
  // the memory plan may place such outputs in the arena. Ops without it may return inputs
  // (or views of them) as outputs, so the plan keeps their inputs alive as long as the outputs.
  kOpFreshOutputs = 1u << 1,
  // Output 0 may occupy input 0's memory when the sizes match: the kernel reads each element
  // before writing the same position (element-wise ops). The plan then shares the buffer.
  kOpInPlace = 1u << 2,
};

struct OpDefinition {
  std::string_view name;
  // Output argument names as in TF's OpDef, comma separated ("product", "y,idx", "").
  // FunctionDef inputs "node:<arg>:<i>" resolve through these. A list arg beside other args
  // whose length an int attr (or the length of a list(type) attr) gives is written "name*ATTR"
  // ("output_nested_splits*OUTPUT_RAGGED_RANK,output_dense_values", "dense_values*Tdense").
  std::string_view output_args;
  uint32_t flags;
  PrepareFn prepare;
};

// Whether a device's kernel takes a node as Prepare specified it (its dtypes, its attrs).
using KernelSupportsFn = bool (*)(const PrepareContext& ctx);
// Builds the device's own objects for a prepared node (library primitives, packed weights,
// later cuDNN plans) into ctx.state, after the op's Prepare and before anything runs.
using CreateStateFn = Status (*)(PrepareContext& ctx);

// One kernel of a device's table: ORT's KernelDef in a row.
struct KernelEntry {
  std::string_view op;
  ComputeFn compute;
  // Bit i: input i is read on the host (a shape, an axis, a size), so it stays in host memory
  // whichever device computes. Bit j of host_outputs: output j is written in host memory.
  uint32_t host_inputs = 0;
  uint32_t host_outputs = 0;
  // Null: every dtype the op's Prepare accepts. Otherwise the node is placed on this device
  // only when it returns true (the next device in the list is tried).
  KernelSupportsFn supports = nullptr;
  // Null: the state Prepare built (if any) is what compute reads.
  CreateStateFn create_state = nullptr;
};

// nullptr when the op is unknown.
const OpDefinition* FindOp(std::string_view name);
std::span<const OpDefinition> AllOps();
// The built-in table of a device type (sorted by op; empty where the build has none).
std::span<const KernelEntry> KernelTable(DeviceType device);
// nullptr when the device type's table has no kernel for the op.
ComputeFn FindKernel(DeviceType device, std::string_view op);
// The host's kernel for an op (what constant folding and the reference runs use).
inline ComputeFn FindCpuKernel(std::string_view op) { return FindKernel(DeviceType::kCpu, op); }

// Maps a FunctionDef output reference ("product", i) of op `def` to its flat output index.
// Ops with one output argument (lists included) map i directly; ops with several single
// outputs map by argument position.
Result<int> FlatOutputIndex(const OpDefinition& def, std::string_view arg, int index);
// The name of the output arg that holds flat output `flat_index` (for writing FunctionDefs),
// and the index inside it.
std::pair<std::string_view, int> OutputArgOf(const OpDefinition& def, int flat_index);
// The same for a node with these attrs, which give the lengths of "name*ATTR" list args.
// Without attrs (null) such a list resolves only when it is the op's one output arg.
Result<int> FlatOutputIndex(const OpDefinition& def, std::string_view arg, int index,
                            const ProtoAttrMap* attrs);
std::pair<std::string_view, int> OutputArgOf(const OpDefinition& def, int flat_index,
                                             const ProtoAttrMap* attrs);

}  // namespace kiln::exec
