#include "kiln/modules/normalization.h"

#include <vector>

#include "kiln/modules/initializers.h"
#include "kiln/trace/math_ops.h"
#include "kiln/trace/ops.h"
#include "nn_ops.h"

namespace kiln::modules {
namespace {

// The last axis's size, with the checks both layers share.
Result<int64_t> CheckInput(const std::string& who, const PartialShape& input, int64_t built_for) {
  if (input.unknown_rank() || input.rank() < 2) {
    return InvalidArgument(who, ": expected an input of rank 2 or more (batch, ..., features), ",
                           "got ", input.ToPythonString());
  }
  const int64_t c = input.dim(input.rank() - 1);
  if (built_for >= 0 && c >= 0 && c != built_for) {
    return InvalidArgument(who, ": built for ", built_for, " features on the last axis, got ",
                           input.ToPythonString());
  }
  return c;
}

PartialShape WithUnknownBatch(const PartialShape& input) {
  std::vector<int64_t> dims(input.dims().begin(), input.dims().end());
  dims[0] = -1;
  Result<PartialShape> s = PartialShape::FromDims(dims);
  return s.ok() ? *s : input;
}

std::vector<int64_t> AllButLast(int rank) {
  std::vector<int64_t> axes;
  for (int i = 0; i + 1 < rank; ++i) axes.push_back(i);
  return axes;
}

// tf.nn.batch_normalization's arithmetic, mean and variance broadcasting against x.
trace::Value Normalize(const trace::Value& x, const trace::Value& mean,
                       const trace::Value& variance, const trace::Variable& gamma,
                       const trace::Variable& beta, float epsilon) {
  trace::Value inv = internal::Unary("Rsqrt", variance + static_cast<double>(epsilon));
  if (gamma.valid()) inv = inv * gamma.Read();
  trace::Value shift = beta.valid() ? beta.Read() - mean * inv : -(mean * inv);
  return x * inv + shift;
}

}  // namespace

BatchNormalization::BatchNormalization(BatchNormalizationOptions options)
    : Layer("batch_normalization"), options_(options) {}

Result<PartialShape> BatchNormalization::OutputShape(const PartialShape& input) const {
  KILN_RETURN_IF_ERROR(
      CheckInput("BatchNormalization '" + name() + "'", input, channels_).status());
  return input;
}

Status BatchNormalization::Build(const PartialShape& input) {
  if (built()) return OkStatus();
  const std::string who = "BatchNormalization '" + name() + "'";
  KILN_ASSIGN_OR_RETURN(int64_t c, CheckInput(who, input, -1));
  if (c < 0) {
    return InvalidArgument(who, ": the input's last dimension must be known to build the layer, ",
                           "got ", input.ToPythonString());
  }
  const Shape shape{c};
  if (options_.scale) gamma_ = AddVariable("gamma", Ones(shape));
  if (options_.center) beta_ = AddVariable("beta", Zeros(DType::kFloat, shape));
  trace::Variable mean =
      AddVariable("moving_mean", Zeros(DType::kFloat, shape), {.trainable = false});
  trace::Variable var = AddVariable("moving_variance", Ones(shape), {.trainable = false});
  KILN_RETURN_IF_ERROR(status());
  moving_mean_ = mean;
  moving_variance_ = var;
  channels_ = c;
  built_input_ = WithUnknownBatch(input);
  return OkStatus();
}

trace::Value BatchNormalization::Call(const trace::Value& input, bool training) {
  if (!built()) {
    return trace::Value::Error(
        FailedPrecondition("BatchNormalization '", name(), "' is not built"));
  }
  // Keras: a frozen BatchNormalization runs in inference mode even when training.
  if (!training || !trainable()) {
    return Normalize(input, moving_mean_.Read(), moving_variance_.Read(), gamma_, beta_,
                     options_.epsilon);
  }
  const std::vector<int64_t> axes = AllButLast(input.shape().rank());
  trace::Value mean = internal::Reduce("Mean", input, axes, false);
  trace::Value variance = internal::Reduce(
      "Mean", internal::SquaredDifference(input, internal::Unary("StopGradient", mean)), axes,
      false);
  const double decay = 1.0 - static_cast<double>(options_.momentum);
  trace::Value new_mean = moving_mean_.AssignAdd((mean - moving_mean_.Read()) * decay);
  trace::Value new_var = moving_variance_.AssignAdd((variance - moving_variance_.Read()) * decay);
  if (!new_mean.ok()) return new_mean;
  if (!new_var.ok()) return new_var;
  return Normalize(input, mean, variance, gamma_, beta_, options_.epsilon);
}

LayerNormalization::LayerNormalization(LayerNormalizationOptions options)
    : Layer("layer_normalization"), options_(options) {}

Result<PartialShape> LayerNormalization::OutputShape(const PartialShape& input) const {
  KILN_RETURN_IF_ERROR(
      CheckInput("LayerNormalization '" + name() + "'", input, channels_).status());
  return input;
}

Status LayerNormalization::Build(const PartialShape& input) {
  if (built()) return OkStatus();
  const std::string who = "LayerNormalization '" + name() + "'";
  KILN_ASSIGN_OR_RETURN(int64_t c, CheckInput(who, input, -1));
  if (c < 0) {
    return InvalidArgument(who, ": the input's last dimension must be known to build the layer, ",
                           "got ", input.ToPythonString());
  }
  if (options_.scale) gamma_ = AddVariable("gamma", Ones(Shape{c}));
  if (options_.center) beta_ = AddVariable("beta", Zeros(DType::kFloat, Shape{c}));
  KILN_RETURN_IF_ERROR(status());
  channels_ = c;
  built_input_ = WithUnknownBatch(input);
  return OkStatus();
}

trace::Value LayerNormalization::Call(const trace::Value& input, bool /*training*/) {
  if (!built()) {
    return trace::Value::Error(
        FailedPrecondition("LayerNormalization '", name(), "' is not built"));
  }
  const std::vector<int64_t> last{input.shape().rank() - 1};
  trace::Value mean = internal::Reduce("Mean", input, last, true);
  trace::Value variance = internal::Reduce(
      "Mean", internal::SquaredDifference(input, internal::Unary("StopGradient", mean)), last,
      true);
  return Normalize(input, mean, variance, gamma_, beta_, options_.epsilon);
}

}  // namespace kiln::modules
