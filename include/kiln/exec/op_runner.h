// Prepares and runs one op on a device, outside any graph. The one place besides the executor
// that wires a PrepareContext and a KernelContext: eager execution in libtrace, constant
// folding in the executor, and the op tests use it.
#pragma once

#include <span>
#include <string_view>
#include <vector>

#include "kiln/core/status.h"
#include "kiln/core/tensor.h"
#include "kiln/exec/device.h"
#include "kiln/exec/executor.h"
#include "kiln/exec/op_table.h"

namespace kiln::exec {

struct SingleOpOptions {
  // Where the op runs (null: the host). Inputs are host tensors, copied to the device where the
  // kernel reads them there; outputs come back as host tensors.
  Device* device = nullptr;
  ResourceManager* resources = nullptr;
  const FunctionLibrary* library = nullptr;
  const PrintSink* print = nullptr;     // default: DefaultPrintSink()
  const ThreadPool* threads = nullptr;  // default: one pool sized to the machine
};

class SingleOp {
 public:
  // Validates attrs and inputs with the op's Prepare. constant_inputs[i] may be null (input i
  // is only known by its spec) or point to its value, which must outlive Prepare.
  static Result<SingleOp> Prepare(std::string_view op, std::string_view node_name,
                                  const ProtoAttrMap& attrs, std::span<const TensorSpec> inputs,
                                  std::span<const Tensor* const> constant_inputs,
                                  const SingleOpOptions& options = {});

  const OpDefinition& definition() const { return *def_; }
  const std::vector<TensorSpec>& output_specs() const { return output_specs_; }
  // What Prepare could tell without running (see PrepareContext::constant_outputs).
  const std::vector<Tensor>& constant_outputs() const { return constant_outputs_; }
  const std::shared_ptr<const OpState>& state() const { return state_; }
  ComputeFn compute() const { return kernel_->compute; }

  // Runs the kernel; an output left unset or off its prepared dtype is an Internal error.
  Result<std::vector<Tensor>> Run(std::span<const Tensor> inputs) const;

 private:
  SingleOp() = default;
  const OpDefinition* def_ = nullptr;
  const KernelEntry* kernel_ = nullptr;
  Device* device_ = nullptr;
  std::string node_name_;
  std::vector<TensorSpec> output_specs_;
  std::vector<Tensor> constant_outputs_;
  std::shared_ptr<const OpState> state_;
  SingleOpOptions options_;
};

// Prepare (with every input known) and Run in one go.
Result<std::vector<Tensor>> RunSingleOp(std::string_view op, std::string_view node_name,
                                        const ProtoAttrMap& attrs, std::span<const Tensor> inputs,
                                        const SingleOpOptions& options = {});

}  // namespace kiln::exec
