// Graph execution. A FunctionDef is prepared once for given argument specs: calls to library
// functions are inlined, nodes that neither outputs nor side effects need are pruned, every
// node's Prepare runs (attrs read, dtypes and shapes checked, state built), constants are
// materialised, and the result is a flat schedule of (kernel, input slots, output slots).
// Running walks that schedule over a per-call frame of tensors: no map lookups, no string
// handling, no graph walks. Run is const and thread-safe.
#pragma once

#include <map>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "kiln/core/status.h"
#include "kiln/core/tensor.h"
#include "kiln/exec/op_table.h"

namespace tensorflow {
class FunctionDef;
class FunctionDefLibrary;
}  // namespace tensorflow

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

struct PrepareOptions {
  ResourceManager* resources = nullptr;
  // When set, nodes that outputs and side effects do not need are dropped (TF semantics).
  bool prune = true;
  // When set, stateful ops are kept even if no output needs them (a TF2 function's side
  // effects). A TF1 Session-style run fetches outputs only: it clears this.
  bool keep_stateful = true;
};

struct RunOptions {
  const PrintSink* print = nullptr;  // default: DefaultPrintSink()
};

class PreparedFunction {
 public:
  // arg_specs: one per input arg of fdef. A spec with unknown rank takes the shape from the
  // function's "_input_shapes" attr when it has one.
  static Result<std::shared_ptr<const PreparedFunction>> Prepare(
      const tensorflow::FunctionDef& fdef, const FunctionLibrary& library,
      std::span<const TensorSpec> arg_specs, const PrepareOptions& options = {});

  const std::string& name() const { return name_; }
  std::span<const std::string> arg_names() const { return arg_names_; }
  std::span<const TensorSpec> arg_specs() const { return arg_specs_; }
  std::span<const std::string> output_names() const { return output_names_; }
  std::span<const TensorSpec> output_specs() const { return output_specs_; }
  // Kernel steps in the schedule (after inlining and pruning; constants excluded).
  int num_steps() const { return static_cast<int>(steps_.size()); }

  // Checks argument count, dtypes and shapes against arg_specs, then runs.
  Status Run(std::span<const Tensor> args, std::vector<Tensor>* outputs,
             const RunOptions& options = {}) const;

  ~PreparedFunction();

 private:
  friend class FunctionCompiler;
  struct Step {
    ComputeFn compute;
    std::shared_ptr<const OpState> state;
    std::vector<int32_t> in;
    std::vector<int32_t> out;
    std::vector<int32_t> release;  // slots whose last use is this step
    std::string node_name;
  };
  PreparedFunction() = default;

  std::string name_;
  std::vector<std::string> arg_names_;
  std::vector<TensorSpec> arg_specs_;
  std::vector<std::string> output_names_;
  std::vector<TensorSpec> output_specs_;
  int32_t num_slots_ = 0;
  std::vector<int32_t> arg_slots_;
  std::vector<int32_t> output_slots_;
  std::vector<std::pair<int32_t, Tensor>> constants_;  // slot, value
  std::vector<Step> steps_;
};

}  // namespace kiln::exec
