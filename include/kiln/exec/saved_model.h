// Loading a SavedModel directory and running what it exports. This is all a deployed
// service needs (it links kiln::exec only).
//
// TF2 bundles (with an object graph) load the way TensorFlow's Python loader does: variables
// are created from the object graph and restored from variables/ by their checkpoint keys;
// signatures are the `signatures` map's concrete functions, and restored methods are the root's
// function children; both share the same variables. TF1 bundles (no object graph) run the way a
// TF1 Session does: each signature becomes a function over the main graph, from the input
// placeholders to the fetched tensors. Everything is validated and prepared at
// load time; running a signature only checks the inputs and walks a prepared schedule.
#pragma once

#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "kiln/core/status.h"
#include "kiln/core/tensor.h"
#include "kiln/exec/executor.h"
#include "kiln/exec/op_table.h"
#include "kiln/exec/resources.h"
#include "kiln/exec/thread_pool.h"

namespace tensorflow {
class SavedModel;
class MetaGraphDef;
class FunctionDef;
}  // namespace tensorflow

namespace kiln::internal {
struct PlanFacts;         // libexec/loader/saved_model_access.h
struct SavedModelAccess;  // the same
}  // namespace kiln::internal

namespace kiln::exec {

// Whether a load uses the bundle's serving plan (serving_plan.h).
enum class PlanUse {
  kAuto,     // when present, verified and fresh; otherwise prepare from the protobuf and warn
  kIgnore,   // never read it
  kRequire,  // fail unless every function prepared comes from the plan
};

struct LoadOptions {
  std::vector<std::string> tags = {"serve"};
  // Threads for intra-op parallelism in this model's calls (the matrix products, convolutions
  // and large element-wise ops of one call); 0 means all the cores this process may use.
  int num_threads = 0;
  // Variables that no function this load prepares can write (a serving model's weights) are
  // frozen: read-only, with their values folded into the prepared graphs, so weights are
  // constants (batch norms fold into convolutions, filters are packed once). Off: variables
  // stay assignable through the API, at the price of those optimisations.
  bool freeze_variables = true;
  // Only these signatures are prepared (and no restored functions), so a bundle whose other
  // signatures use ops this runtime lacks still serves these. Empty: every signature (and the
  // restored functions, per restored_functions). A key the bundle does not have is an error.
  std::vector<std::string> signatures;
  // Prepare the restored functions too (the object graph's methods: a Keras 2 model's
  // training-mode call among them). Off, as a server loads: only signatures run, so what only
  // those functions write (a batch norm's moving averages) is frozen and folded as well.
  bool restored_functions = true;
  // Check the CRC32C of every variable restored from variables/ (as TensorFlow does). The data
  // file is memory-mapped and variables alias it, so the check is the one pass over the bytes
  // at load; turn it off only for trusted bundles that were verified before (savedmodel-cli's
  // --skip_checksums), to load without touching the weights' pages until a call needs them.
  // TF1 bundles (no object graph) restore through their saver's RestoreV2 op, which always
  // verifies.
  bool verify_checksums = true;
  // The serving plan in assets.extra/ (savedmodel-cli compile). A plan is used only when the
  // FlatBuffers verifier and kiln's own checks pass and it was compiled from these very files
  // (size and CRC32C of saved_model.pb and variables.index), for these tags and this
  // freeze_variables; a function whose prepared form differs from the plan's record is prepared
  // from the protobuf. SavedModel::plan_status() tells what happened.
  PlanUse plan = PlanUse::kAuto;
  // Where the warning goes when a present plan is not used (default: stderr).
  std::function<void(std::string_view)> warn;
  // Keep every prepared function's final graph (savedmodel-cli compile writes them).
  bool keep_graphs = false;
  // Devices the model's nodes may run on, in priority order ("cpu", "gpu", "gpu:1", a
  // registered device's name): each node goes to the first with a kernel for it, and copies
  // are inserted where a tensor crosses devices. The host is added when missing (ops no other
  // device has run there). Empty: the host alone. An unknown or absent device is an error.
  std::vector<std::string> devices;
  // Fixed-shape calls on a GPU become one CUDA graph launch from their third call on
  // (PrepareOptions::device_graphs says when that is taken and how it falls back).
  bool device_graphs = false;
  // Results a device computed stay in its memory (PrepareOptions::results_on_device); inputs
  // may be given in a device's memory either way.
  bool results_on_device = false;
  // What float32 computes in (Precision, kiln/exec/executor.h): as saved (default), TF32 products
  // on a GPU, or the whole model in float16 / bfloat16 on a GPU (refused without one).
  Precision precision = Precision::kAsSaved;
};

// What a load did with the bundle's serving plan.
struct PlanStatus {
  bool present = false;           // assets.extra/kiln.plan exists
  int functions_from_plan = 0;    // functions prepared from the plan's graphs
  int functions_not_in_plan = 0;  // prepared from the protobuf: the plan lacked them
  std::string reason;             // why a present plan was not used ("" when it was)
};

// One named input or output of a signature.
struct SignatureArg {
  std::string key;          // "a", "output_0"
  std::string tensor_name;  // "serving_default_a:0", as the SignatureDef says
  TensorSpec spec;
};

class Signature {
 public:
  // What a signature is made of. The loaders fill it (from the object graph, a TF1
  // SignatureDef or a serving plan); the serving plan writer reads it back (parts()).
  struct Parts {
    std::string name;
    std::vector<SignatureArg> inputs;  // sorted by key
    std::vector<SignatureArg> outputs;
    // The shapes fed inputs must fit, one per input, when not inputs[i].spec.shape (empty:
    // those): a TF1 signature checks a fed tensor against the fed node's own shape (a
    // Placeholder's shape attr), not the SignatureDef.
    std::vector<PartialShape> fed_shapes;
    std::shared_ptr<const PreparedFunction> function;
    std::vector<int> input_to_arg;     // inputs[i] feeds function argument input_to_arg[i]
    std::vector<int> output_from_ret;  // outputs[i] is function output output_from_ret[i]
    std::vector<Tensor> captures;      // the function's arguments after the inputs
  };
  // A signature over `parts`, whose calls run on `threads` (the model's) when RunOptions names
  // none. InvalidArgument when the parts do not fit together: no function, or counts and
  // indices that disagree with each other or with the function's arguments and outputs.
  static Result<Signature> Make(Parts parts, const ThreadPool* threads);

  const std::string& name() const { return parts_.name; }
  // Sorted by key, as saved_model_cli lists them.
  std::span<const SignatureArg> inputs() const { return parts_.inputs; }
  std::span<const SignatureArg> outputs() const { return parts_.outputs; }

  // Named inputs to named outputs. A missing, extra or misspelt input name, a wrong dtype or an
  // incompatible shape is an InvalidArgument error that names the input and what was expected.
  Result<std::map<std::string, Tensor>> Run(const std::map<std::string, Tensor>& inputs,
                                            const RunOptions& options = {}) const;
  // Inputs in inputs() order, outputs in outputs() order.
  Status RunFlat(std::span<const Tensor> inputs, std::vector<Tensor>* outputs,
                 const RunOptions& options = {}) const;
  // The prepared function behind the signature (its plan_stats(), and SpecializedFor() the
  // shapes of a call, show what prepare made of it).
  const PreparedFunction& function() const { return *parts_.function; }
  std::span<const Tensor> captures() const { return parts_.captures; }
  const Parts& parts() const { return parts_; }

  // RunFlat into caller-owned outputs (one per outputs()): an element that already holds a
  // tensor of the output's dtype and shape, not shared with anything, receives the result in
  // its buffer. With such outputs a fixed-shape signature runs without allocating.
  Status RunInto(std::span<const Tensor> inputs, std::span<Tensor> outputs,
                 const RunOptions& options = {}) const;

 private:
  Signature(Parts parts, const ThreadPool* threads);
  Parts parts_;
  // Run-path shortcuts, worked out once by the constructor.
  bool args_in_input_order_ = false;     // input_to_arg is the identity
  bool outputs_in_ret_order_ = false;    // output_from_ret is the identity
  const ThreadPool* threads_ = nullptr;  // the model's
};

// A restored tf.function-style method: one or more concrete functions, chosen by the specs
// of the arguments.
class RestoredFunction {
 public:
  struct Concrete {
    std::string function_name;  // FunctionDef name
    std::vector<std::string> arg_names;
    std::vector<TensorSpec> arg_specs;
    std::shared_ptr<const PreparedFunction> function;
    std::vector<Tensor> captures;  // the function's arguments after arg_specs
  };
  // What a restored function is made of; the loaders fill it (from the object graph or a
  // serving plan).
  struct Parts {
    std::string name;
    std::vector<Concrete> concretes;  // a call runs the first that fits
  };
  // A restored function over `parts`, whose calls run on `threads` (the model's) when
  // RunOptions names none. InvalidArgument when a concrete function is missing, or its names,
  // specs and captures disagree with each other or with its function's arguments.
  static Result<RestoredFunction> Make(Parts parts, const ThreadPool* threads);

  const std::string& name() const { return parts_.name; }
  std::span<const Concrete> concrete_functions() const { return parts_.concretes; }
  // Positional tensor args; the first concrete function whose specs they fit runs. No fit is
  // an InvalidArgument error listing the signatures it can take.
  Result<std::vector<Tensor>> Call(std::span<const Tensor> args,
                                   const RunOptions& options = {}) const;

 private:
  RestoredFunction(Parts parts, const ThreadPool* threads);
  Parts parts_;
  const ThreadPool* threads_ = nullptr;  // the model's
};

struct RestoredVariable {
  std::string path;  // "dense_1/kernel", the object-graph path from the root
  std::shared_ptr<VariableResource> resource;
  bool trainable = true;
};

// What a loaded model is, however it was loaded: SavedModel (from saved_model.pb or from its
// serving plan) and PlanModel (the plan alone) each hold one, filled by their loaders and read
// through the owning model's accessors. A load that falls back from the plan to the protobuf
// clears it (Clear) and fills it again.
struct LoadedModel {
  std::filesystem::path dir;
  std::unique_ptr<ThreadPool> threads;
  std::unique_ptr<ResourceManager> resources;
  std::unique_ptr<FunctionLibrary> library;
  std::map<std::string, Signature, std::less<>> signatures;
  std::map<std::string, RestoredFunction, std::less<>> functions;
  std::vector<RestoredVariable> variables;
  // Signatures the bundle declares but this runtime does not serve, with why (a TF1 signature
  // of sparse tensors): the model loads and serves the others; GetSignature names the reason.
  std::map<std::string, std::string, std::less<>> unavailable_signatures;

  LoadedModel();
  ~LoadedModel();
  LoadedModel(LoadedModel&&) noexcept;
  LoadedModel& operator=(LoadedModel&&) noexcept;

  std::vector<std::string> SignatureNames() const;
  // NotFound naming the signature and listing the available ones; Unimplemented with the
  // reason for one of unavailable_signatures.
  Result<const Signature*> GetSignature(std::string_view name) const;
  std::vector<std::string> FunctionNames() const;
  Result<const RestoredFunction*> GetFunction(std::string_view name) const;
  // Drops what was loaded (resources, functions, signatures, variables); keeps dir and threads.
  void Clear();
};

class SavedModel {
 public:
  // Reads, validates and prepares everything; errors name the file and the thing at fault.
  static Result<std::unique_ptr<SavedModel>> Load(const std::filesystem::path& dir,
                                                  const LoadOptions& options = {});
  // Loads a proto that ParseSavedModelProto returned (the bytes came from elsewhere: fuzzing,
  // a caller that holds them). Variables are restored from dir/variables when it has an index;
  // without one they stay uninitialised and reading them says so. Reads no other file.
  static Result<std::unique_ptr<SavedModel>> LoadFromProto(
      std::unique_ptr<tensorflow::SavedModel> proto, const std::filesystem::path& dir,
      const LoadOptions& options = {});
  ~SavedModel();

  const std::filesystem::path& dir() const { return core_.dir; }
  // A model loaded from its serving plan alone has not read saved_model.pb: the first call of
  // either reads it (an empty proto if that fails, which a fresh plan rules out).
  const tensorflow::SavedModel& proto() const;
  const tensorflow::MetaGraphDef& meta_graph() const;
  // Whether the load used the plan's model section and did not read saved_model.pb.
  bool loaded_from_plan() const { return loaded_from_plan_; }

  std::vector<std::string> SignatureNames() const { return core_.SignatureNames(); }
  // NotFound naming the signature and listing the available ones.
  Result<const Signature*> GetSignature(std::string_view name) const {
    return core_.GetSignature(name);
  }

  std::vector<std::string> FunctionNames() const { return core_.FunctionNames(); }
  Result<const RestoredFunction*> GetFunction(std::string_view name) const {
    return core_.GetFunction(name);
  }

  std::span<const RestoredVariable> variables() const { return core_.variables; }
  const PlanStatus& plan_status() const { return plan_status_; }

  // Writes the model's current variables as a checkpoint at `prefix` (files prefix.index and
  // prefix.data-*) by running the bundle's own save op (its SaverDef: the SaveV2 and
  // MergeV2Checkpoints it was exported with), so TensorFlow restores what a train step changed.
  Status Save(const std::filesystem::path& prefix) const;

 private:
  // The loader (libexec/loader) fills a model through this, its one way in, and the serving
  // plan writer reads what the load learnt for it: what a load keeps is the loader's own
  // business, not an interface (users read it through the accessors above).
  friend struct internal::SavedModelAccess;
  SavedModel();
  mutable std::unique_ptr<tensorflow::SavedModel> proto_;
  mutable const tensorflow::MetaGraphDef* meta_graph_ = nullptr;
  mutable std::once_flag proto_once_;
  std::vector<std::string> tags_;
  // After the proto: the prepared functions refer to its FunctionDefs.
  LoadedModel core_;
  PlanStatus plan_status_;
  bool loaded_from_plan_ = false;  // the plan's model section: saved_model.pb was not read
  // What a load learnt for the serving plan writer (libexec/loader/saved_model_access.h).
  std::unique_ptr<internal::PlanFacts> plan_facts_;
  // TF1 bundles: one function per signature, made from the main graph.
  std::vector<std::unique_ptr<tensorflow::FunctionDef>> synthesized_;
  // The SaverDef's save op over the main graph (null when the bundle has none), made by the
  // first Save: most loads never save, and making it took 2-3 ms of a Keras model's load.
  mutable std::unique_ptr<tensorflow::FunctionDef> save_fdef_;
  mutable std::once_flag save_once_;
};

// Reads and parses D/saved_model.pb (or .pbtxt) without preparing anything (for `show`).
Result<std::unique_ptr<tensorflow::SavedModel>> ReadSavedModelProto(
    const std::filesystem::path& dir);
// The same checks on the bytes of a saved_model.pb held in memory; `name` names them in errors.
Result<std::unique_ptr<tensorflow::SavedModel>> ParseSavedModelProto(
    std::string_view bytes, std::string_view name = "<saved_model.pb bytes>");

}  // namespace kiln::exec
