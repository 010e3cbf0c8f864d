// The op table and the kernel contract. Every op has one device-independent definition
// (output argument names, flags, and a Prepare function that validates attrs and input specs
// and infers output specs once, before anything runs) and one compute function per device
// table. Nothing registers itself: the tables are plain arrays listed in op_table.cc.
#pragma once

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

// Typed access to a node's attrs; a missing attr falls back to the default given, or is an
// error naming the attr. Used at prepare time only.
class AttrReader {
 public:
  explicit AttrReader(const ProtoAttrMap* attrs) : attrs_(attrs) {}
  const tensorflow::AttrValue* Find(std::string_view name) const;
  bool Has(std::string_view name) const { return Find(name) != nullptr; }

  Result<DType> GetType(std::string_view name) const;
  Result<DType> GetType(std::string_view name, DType dflt) const;
  Result<std::vector<DType>> GetTypeList(std::string_view name) const;
  Result<int64_t> GetInt(std::string_view name) const;
  Result<int64_t> GetInt(std::string_view name, int64_t dflt) const;
  Result<std::vector<int64_t>> GetIntList(std::string_view name) const;
  Result<std::vector<int64_t>> GetIntList(std::string_view name, std::vector<int64_t> dflt) const;
  Result<float> GetFloat(std::string_view name, float dflt) const;
  Result<bool> GetBool(std::string_view name, bool dflt) const;
  Result<std::string> GetString(std::string_view name) const;
  Result<std::string> GetString(std::string_view name, std::string dflt) const;
  Result<std::vector<std::string>> GetStringList(std::string_view name) const;
  Result<PartialShape> GetShape(std::string_view name) const;
  Result<PartialShape> GetShape(std::string_view name, PartialShape dflt) const;
  Result<std::vector<PartialShape>> GetShapeList(std::string_view name) const;
  Result<Tensor> GetTensor(std::string_view name) const;
  Result<std::string> GetFunctionName(std::string_view name) const;

 private:
  const ProtoAttrMap* attrs_;
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
  AttrReader attrs{nullptr};
  std::vector<TensorSpec> inputs;
  // Value of input i when it is known at prepare time (a Const), else nullptr.
  std::vector<const Tensor*> constant_inputs;
  // Filled by Prepare: one spec per output, in flat output order.
  std::vector<TensorSpec> outputs;
  // Optional, filled by Prepare.
  std::shared_ptr<const OpState> state;
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

struct RunEnv {
  const PrintSink* print = nullptr;  // never null while running
};

// What compute sees: inputs and outputs live in the caller's frame, addressed by slot
// indices resolved at prepare time, so a call does no lookups and no allocation here.
class KernelContext {
 public:
  KernelContext(Tensor* frame, const int32_t* in, int n_in, const int32_t* out, int n_out,
                const OpState* state, std::string_view node_name, const RunEnv* env)
      : frame_(frame),
        in_(in),
        n_in_(n_in),
        out_(out),
        n_out_(n_out),
        state_(state),
        node_name_(node_name),
        env_(env) {}

  int num_inputs() const { return n_in_; }
  int num_outputs() const { return n_out_; }
  const Tensor& input(int i) const { return frame_[in_[i]]; }
  void set_output(int i, Tensor t) const { frame_[out_[i]] = std::move(t); }
  template <typename S>
  const S& state() const {
    return *static_cast<const S*>(state_);
  }
  std::string_view node_name() const { return node_name_; }
  const RunEnv& env() const { return *env_; }

  template <typename... Args>
  Status Error(Args&&... args) const {
    return InvalidArgument("node '", node_name_, "': ", std::forward<Args>(args)...);
  }

 private:
  Tensor* frame_;
  const int32_t* in_;
  int n_in_;
  const int32_t* out_;
  int n_out_;
  const OpState* state_;
  std::string_view node_name_;
  const RunEnv* env_;
};

using PrepareFn = Status (*)(PrepareContext& ctx);
using ComputeFn = Status (*)(const KernelContext& ctx);

enum OpFlags : uint32_t {
  kOpNone = 0,
  kOpStateful = 1u << 0,  // has side effects: never pruned, runs in program order
};

struct OpDefinition {
  std::string_view name;
  // Output argument names as in TF's OpDef, comma separated ("product", "y,idx", "").
  // FunctionDef inputs "node:<arg>:<i>" resolve through these.
  std::string_view output_args;
  uint32_t flags;
  PrepareFn prepare;
};

struct KernelEntry {
  std::string_view op;
  ComputeFn compute;
};

// nullptr when the op is unknown.
const OpDefinition* FindOp(std::string_view name);
std::span<const OpDefinition> AllOps();
// nullptr when the CPU table has no kernel for the op.
ComputeFn FindCpuKernel(std::string_view op);

// Maps a FunctionDef output reference ("product", i) of op `def` to its flat output index.
// Ops with one output argument (lists included) map i directly; ops with several single
// outputs map by argument position.
Result<int> FlatOutputIndex(const OpDefinition& def, std::string_view arg, int index);
// The name of the output arg that holds flat output `flat_index` (for writing FunctionDefs),
// and the index inside it.
std::pair<std::string_view, int> OutputArgOf(const OpDefinition& def, int flat_index);

}  // namespace kiln::exec
