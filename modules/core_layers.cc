#include "kiln/modules/core_layers.h"

#include <utility>

#include "kiln/modules/initializers.h"
#include "kiln/trace/array_ops.h"
#include "kiln/trace/compare_ops.h"
#include "kiln/trace/math_ops.h"
#include "kiln/trace/op_builder.h"
#include "kiln/trace/ops.h"
#include "nn_ops.h"

namespace kiln::modules {
namespace {

// TensorFlow's DEFAULT_GRAPH_SEED: the graph-level seed used when only an op seed is given.
constexpr int64_t kDefaultGraphSeed = 87654321;

Result<PartialShape> NeedsBatch(const std::string& who, const PartialShape& input) {
  if (input.unknown_rank() || input.rank() < 1) {
    return InvalidArgument(who, ": expected an input with a batch dimension, got ",
                           input.ToPythonString());
  }
  return input;
}

}  // namespace

Dropout::Dropout(DropoutOptions options) : Layer("dropout"), options_(options) {
  if (!(options_.rate >= 0.0f && options_.rate < 1.0f)) {
    RecordError(InvalidArgument("Dropout: rate must be in [0, 1), got ", options_.rate));
  }
}

Result<PartialShape> Dropout::OutputShape(const PartialShape& input) const {
  KILN_RETURN_IF_ERROR(status());
  return input;
}

trace::Value Dropout::Call(const trace::Value& input, bool training) {
  if (!training || options_.rate == 0.0f) return input;
  // tf.nn.dropout: scale first, then zero where a uniform draw falls below the rate.
  trace::OpBuilder draw("RandomUniform", "random_uniform");
  draw.Input(trace::ShapeOf(input)).Attr("dtype", input.dtype()).Attr("T", DType::kInt32);
  if (options_.seed) draw.Attr("seed", kDefaultGraphSeed).Attr("seed2", *options_.seed);
  trace::Value keep = trace::GreaterEqual(draw.BuildOne(), trace::Scalar(options_.rate));
  const double scale = 1.0 / (1.0 - static_cast<double>(options_.rate));
  return (input * scale) * trace::Cast(keep, input.dtype());
}

Result<PartialShape> Flatten::OutputShape(const PartialShape& input) const {
  const std::string who = "Flatten '" + name() + "'";
  KILN_RETURN_IF_ERROR(NeedsBatch(who, input).status());
  int64_t n = 1;
  for (int i = 1; i < input.rank(); ++i) {
    if (input.dim(i) < 0) {
      return InvalidArgument(who, ": every dimension but the batch must be known, got ",
                             input.ToPythonString());
    }
    n *= input.dim(i);
  }
  return PartialShape{input.dim(0), n};
}

trace::Value Flatten::Call(const trace::Value& input, bool /*training*/) {
  Result<PartialShape> out = OutputShape(input.shape());
  if (!out.ok()) return trace::Value::Error(out.status());
  return internal::Reshape(input, {-1, out->dim(1)});
}

Reshape::Reshape(std::vector<int64_t> target_shape)
    : Layer("reshape"), target_shape_(std::move(target_shape)) {
  int unknown = 0;
  for (int64_t d : target_shape_) {
    if (d == -1) {
      ++unknown;
    } else if (d < 0) {
      unknown = 2;
    }
  }
  if (unknown > 1) {
    invalid_ = InvalidArgument("Reshape: target_shape ", internal::DimsString(target_shape_),
                               " may hold one -1 and no other negative dimension");
    RecordError(invalid_);
  }
}

Result<PartialShape> Reshape::OutputShape(const PartialShape& input) const {
  KILN_RETURN_IF_ERROR(invalid_);
  const std::string who = "Reshape '" + name() + "'";
  KILN_RETURN_IF_ERROR(NeedsBatch(who, input).status());
  int64_t in = 1;  // values per example; -1 when unknown
  for (int i = 1; i < input.rank(); ++i) in = input.dim(i) < 0 || in < 0 ? -1 : in * input.dim(i);
  int64_t known = 1;  // the product of the target's dimensions other than -1
  bool has_unknown = false;
  for (int64_t d : target_shape_) {
    has_unknown = has_unknown || d == -1;
    known *= d == -1 ? 1 : d;
  }
  int64_t inferred = -1;
  if (in >= 0) {
    const bool fits = has_unknown ? known > 0 && in % known == 0 : in == known;
    if (!fits) {
      return InvalidArgument(who, ": cannot reshape ", input.ToPythonString(), " (", in,
                             " values per example) to target_shape ",
                             internal::DimsString(target_shape_));
    }
    if (has_unknown) inferred = in / known;
  }
  std::vector<int64_t> dims{input.dim(0)};
  for (int64_t d : target_shape_) dims.push_back(d == -1 ? inferred : d);
  return PartialShape::FromDims(dims);
}

trace::Value Reshape::Call(const trace::Value& input, bool /*training*/) {
  Result<PartialShape> out = OutputShape(input.shape());
  if (!out.ok()) return trace::Value::Error(out.status());
  // The batch dimension stays dynamic; the rest is resolved when the input's sizes are known.
  std::vector<int64_t> dims{-1};
  bool resolved = true;
  for (int i = 1; i < out->rank(); ++i) resolved = resolved && out->dim(i) >= 0;
  for (int i = 1; i < out->rank(); ++i) {
    dims.push_back(resolved ? out->dim(i) : target_shape_[i - 1]);
  }
  if (!resolved) {
    // An unknown -1 with an unknown input size: let Reshape infer it, batch from the input.
    trace::Value batch = trace::Gather(trace::ShapeOf(input), trace::Scalar<int32_t>(0));
    std::vector<trace::Value> parts{batch};
    for (int64_t d : target_shape_) parts.push_back(trace::Scalar(static_cast<int32_t>(d)));
    return trace::OpBuilder("Reshape")
        .Input(input)
        .Input(internal::Pack(parts))
        .Attr("T", input.dtype())
        .BuildOne();
  }
  return internal::Reshape(input, dims);
}

ActivationLayer::ActivationLayer(Activation activation)
    : Layer("activation"), activation_(activation) {}

Result<PartialShape> ActivationLayer::OutputShape(const PartialShape& input) const { return input; }

trace::Value ActivationLayer::Call(const trace::Value& input, bool /*training*/) {
  return ApplyActivation(activation_, input);
}

Embedding::Embedding(EmbeddingOptions options) : Layer("embedding"), options_(options) {
  if (options_.input_dim <= 0 || options_.output_dim <= 0) {
    RecordError(InvalidArgument("Embedding: input_dim and output_dim must be positive, got ",
                                options_.input_dim, " and ", options_.output_dim));
    return;
  }
  std::mt19937 own(options_.seed.value_or(0));
  std::mt19937& engine = options_.seed ? own : DefaultEngine();
  embeddings_ = AddVariable(
      "embeddings",
      RandomUniform(Shape{options_.input_dim, options_.output_dim}, -0.05f, 0.05f, engine));
}

Result<PartialShape> Embedding::OutputShape(const PartialShape& input) const {
  KILN_RETURN_IF_ERROR(status());
  if (input.unknown_rank()) return PartialShape::UnknownRank();
  std::vector<int64_t> dims(input.dims().begin(), input.dims().end());
  dims.push_back(options_.output_dim);
  return PartialShape::FromDims(dims);
}

trace::Value Embedding::Call(const trace::Value& input, bool /*training*/) {
  if (!built())
    return trace::Value::Error(FailedPrecondition("Embedding '", name(), "' is not built"));
  if (!IsInteger(input.dtype()) && !IsFloatingPoint(input.dtype())) {
    return trace::Value::Error(InvalidArgument(
        "Embedding '", name(), "': expected integer indices, got ", DTypeShortName(input.dtype())));
  }
  // Keras casts indices that are not int32 / int64 to int32.
  trace::Value indices = input;
  if (input.dtype() != DType::kInt32 && input.dtype() != DType::kInt64) {
    indices = trace::Cast(input, DType::kInt32);
  }
  return trace::Gather(embeddings_.Read(), indices, 0);
}

}  // namespace kiln::modules

namespace kiln::modules {

trace::Value Embedding::ComputeMask(const trace::Value& input, const trace::Value& /*mask*/) const {
  if (!options_.mask_zero) return trace::Value();
  return trace::NotEqual(input, 0.0);
}

Result<PartialShape> Masking::OutputShape(const PartialShape& input) const {
  if (input.unknown_rank() || input.rank() < 2) {
    return InvalidArgument("Masking '", name(), "': expected (batch, timesteps, ...), got ",
                           input.ToPythonString());
  }
  return input;
}

trace::Value Masking::Keep(const trace::Value& input, bool keep_dims) const {
  trace::OpBuilder any("Any");
  any.Input(trace::NotEqual(input, static_cast<double>(mask_value_)))
      .Input(internal::Int32Vector({input.shape().rank() - 1}))
      .Attr("Tidx", DType::kInt32);
  if (keep_dims) any.Attr("keep_dims", true);
  return any.BuildOne();
}

trace::Value Masking::ComputeMask(const trace::Value& input, const trace::Value& /*mask*/) const {
  return Keep(input, false);
}

trace::Value Masking::Call(const trace::Value& input, bool /*training*/) {
  return trace::Where(Keep(input, true), input, trace::Constant(Zeros(input.dtype(), Shape{})));
}

}  // namespace kiln::modules
