// SingleOp: one op prepared and run outside a graph (see op_runner.h).
#include "kiln/exec/op_runner.h"

#include <numeric>
#include <string>

#include "device/denormals.h"
#include "executor/placement.h"
#include "kernels/op_table_builder.h"

namespace kiln::exec {

Result<SingleOp> SingleOp::Prepare(std::string_view op, std::string_view node_name,
                                   const ProtoAttrMap& attrs, std::span<const TensorSpec> inputs,
                                   std::span<const Tensor* const> constant_inputs,
                                   const SingleOpOptions& options) {
  SingleOp s;
  s.def_ = FindOp(op);
  if (s.def_ == nullptr)
    return Unimplemented("op '", op, "' is not in kiln's op table", OpTableNote());
  s.device_ = options.device != nullptr ? options.device : HostDevice();
  PrepareContext ctx;
  ctx.node_name = node_name;
  ctx.op = s.def_->name;
  ctx.attrs = AttrReader(&attrs);
  ctx.inputs.assign(inputs.begin(), inputs.end());
  ctx.constant_inputs.assign(constant_inputs.begin(), constant_inputs.end());
  ctx.constant_inputs.resize(inputs.size(), nullptr);
  ctx.resources = options.resources;
  ctx.library = options.library;
  KILN_RETURN_IF_ERROR(s.def_->prepare(ctx));
  Device* const one[] = {s.device_};
  KILN_ASSIGN_OR_RETURN(Placement place, PlaceNode(one, ctx));
  s.kernel_ = place.kernel;
  if (s.kernel_->create_state != nullptr) {
    ctx.device = s.device_;
    KILN_RETURN_IF_ERROR(s.kernel_->create_state(ctx));
  }
  s.node_name_ = std::string(node_name);
  s.output_specs_ = std::move(ctx.outputs);
  s.constant_outputs_ = std::move(ctx.constant_outputs);
  s.state_ = std::move(ctx.state);
  s.options_ = options;
  return s;
}

Result<std::vector<Tensor>> SingleOp::Run(std::span<const Tensor> inputs) const {
  const int n_in = static_cast<int>(inputs.size());
  const int n_out = static_cast<int>(output_specs_.size());
  Device* host = HostDevice();
  const int kDevice = 0, kHost = 1;
  std::vector<Tensor> slots;
  for (int i = 0; i < n_in; ++i) {
    const Tensor& t = inputs[i];
    const bool on_device = InputDevice(*kernel_, kDevice, kHost, i, t.dtype()) == kDevice;
    if (on_device && device_ != host) {
      KILN_ASSIGN_OR_RETURN(Tensor moved, CopyTensor(t, host, device_));
      slots.push_back(std::move(moved));
    } else {
      slots.push_back(t);
    }
  }
  slots.resize(inputs.size() + output_specs_.size());
  std::vector<int32_t> in(n_in), out(n_out);
  std::iota(in.begin(), in.end(), 0);
  std::iota(out.begin(), out.end(), n_in);
  std::vector<DType> out_dtypes;
  for (const TensorSpec& spec : output_specs_) out_dtypes.push_back(spec.dtype);

  ScratchArena scratch(device_->allocator());
  RunEnv env{options_.print ? options_.print : &DefaultPrintSink(),
             options_.threads ? options_.threads : &DefaultThreadPool()};
  ExecutionFrame frame{slots.data(),
                       nullptr,
                       device_->allocator(),
                       device_ == host ? nullptr : host->allocator(),
                       &scratch,
                       &env,
                       device_};
  StepIo io{in.data(),    n_in,       out.data(),           n_out, out_dtypes.data(), 0,
            state_.get(), node_name_, kernel_->host_outputs};
  {
    const ScopedFlushDenormals flush;  // as a call's steps (device/denormals.h)
    KILN_RETURN_IF_ERROR(kernel_->compute(KernelContext(frame, io)));
  }

  std::vector<Tensor> results(slots.begin() + n_in, slots.end());
  for (int i = 0; i < n_out; ++i) {
    if (!results[i].IsInitialized())
      return Internal("op '", def_->name, "' (node '", node_name_, "') left output ", i, " unset");
    if (output_specs_[i].dtype != DType::kInvalid && results[i].dtype() != output_specs_[i].dtype)
      return Internal("op '", def_->name, "' (node '", node_name_, "') output ", i, " is ",
                      DTypeShortName(results[i].dtype()), ", prepared as ",
                      DTypeShortName(output_specs_[i].dtype));
    const bool on_device = OutputDevice(*kernel_, kDevice, kHost, i, results[i].dtype()) == kDevice;
    if (on_device && device_ != host) {
      KILN_ASSIGN_OR_RETURN(results[i], CopyTensor(results[i], device_, host));
    }
  }
  return results;
}

Result<std::vector<Tensor>> RunSingleOp(std::string_view op, std::string_view node_name,
                                        const ProtoAttrMap& attrs, std::span<const Tensor> inputs,
                                        const SingleOpOptions& options) {
  std::vector<TensorSpec> specs;
  std::vector<const Tensor*> values;
  for (const Tensor& t : inputs) {
    specs.push_back(TensorSpec{t.dtype(), PartialShape(t.shape())});
    values.push_back(&t);
  }
  KILN_ASSIGN_OR_RETURN(SingleOp s,
                        SingleOp::Prepare(op, node_name, attrs, specs, values, options));
  return s.Run(inputs);
}

}  // namespace kiln::exec
