#include "kiln/modules/dense.h"

#include "kiln/modules/initializers.h"
#include "kiln/trace/ops.h"

namespace kiln::modules {

Dense::Dense(DenseOptions options) : Layer("dense"), options_(options) {
  if (options_.units <= 0) {
    RecordError(InvalidArgument("Dense: units must be positive, got ", options_.units));
    return;
  }
  if (options_.input_dim > 0) {
    Status s = BuildFor(options_.input_dim);
    if (!s.ok()) RecordError(s);
  } else if (options_.input_dim != -1) {
    RecordError(
        InvalidArgument("Dense: input_dim must be positive or -1, got ", options_.input_dim));
  }
}

Dense::Dense(int64_t units, Activation activation, int64_t input_dim)
    : Dense(DenseOptions{units, activation, input_dim, true, std::nullopt}) {}

Status Dense::BuildFor(int64_t input_dim) {
  if (built()) return OkStatus();
  if (options_.units <= 0) return FailedPrecondition("Dense '", name(), "' has no units");
  std::mt19937 own(options_.seed.value_or(0));
  std::mt19937& engine = options_.seed ? own : DefaultEngine();
  Tensor kernel = GlorotUniform(input_dim, options_.units, engine);
  trace::Variable k = AddVariable("kernel", kernel);
  KILN_RETURN_IF_ERROR(k.status());
  kernel_ = k;
  if (options_.use_bias) {
    trace::Variable b = AddVariable("bias", Zeros(DType::kFloat, Shape{options_.units}));
    KILN_RETURN_IF_ERROR(b.status());
    bias_ = b;
  }
  options_.input_dim = input_dim;
  return OkStatus();
}

Status Dense::Build(const PartialShape& input) {
  if (built()) return OkStatus();
  if (input.unknown_rank() || input.rank() != 2) {
    return InvalidArgument("Dense '", name(), "': expected a rank-2 input (batch, features), got ",
                           input.ToPythonString());
  }
  if (input.dim(1) < 0) {
    return InvalidArgument("Dense '", name(), "': the input's last dimension must be known to ",
                           "build the layer, got ", input.ToPythonString());
  }
  return BuildFor(input.dim(1));
}

PartialShape Dense::built_input_shape() const {
  if (!built()) return PartialShape::UnknownRank();
  return PartialShape{-1, options_.input_dim};
}

Result<PartialShape> Dense::OutputShape(const PartialShape& input) const {
  if (input.unknown_rank() || input.rank() != 2) {
    return InvalidArgument("Dense '", name(), "': expected a rank-2 input, got ",
                           input.ToPythonString());
  }
  if (built() && input.dim(1) >= 0 && input.dim(1) != options_.input_dim) {
    return InvalidArgument("Dense '", name(), "': built for ", options_.input_dim,
                           " input features, got ", input.ToPythonString());
  }
  return PartialShape{input.dim(0), options_.units};
}

trace::Value Dense::Call(const trace::Value& input, bool /*training*/) {
  if (!input.ok()) return input;
  if (!built()) {
    return trace::Value::Error(FailedPrecondition("Dense '", name(), "' is not built"));
  }
  trace::Value y = trace::MatMul(input, kernel_.Read());
  if (options_.use_bias) y = trace::BiasAdd(y, bias_.Read());
  return ApplyActivation(options_.activation, y);
}

}  // namespace kiln::modules
