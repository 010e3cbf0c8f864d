#include "kiln/modules/attention.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include "kiln/modules/initializers.h"
#include "kiln/trace/array_ops.h"
#include "kiln/trace/compare_ops.h"
#include "kiln/trace/math_ops.h"
#include "kiln/trace/op_builder.h"
#include "kiln/trace/ops.h"
#include "nn_ops.h"

namespace kiln::modules {
namespace {

using trace::Value;

// Keras's large negative number for masked scores (float32).
constexpr float kMasked = -1e9F;

// A Glorot-uniform kernel of `shape` whose fan-in is its first dimension and fan-out the rest
// (an EinsumDense projection) or, for the output projection, all but the last and the last.
Tensor ProjectionKernel(const Shape& shape, int64_t fan_in, std::mt19937& engine) {
  const int64_t fan_out = shape.num_elements() / fan_in;
  const Tensor flat = GlorotUniform(fan_in, fan_out, engine);
  Tensor t(DType::kFloat, shape);
  std::copy_n(flat.flat<float>().data(), shape.num_elements(), t.flat<float>().data());
  return t;
}

// (batch, steps, features) with steps and features known.
bool Rank3Known(const PartialShape& s) {
  return !s.unknown_rank() && s.rank() == 3 && s.dim(1) >= 0 && s.dim(2) >= 0;
}

// A (steps, steps) constant: true where column <= row.
Value CausalMask(int64_t t, int64_t s) {
  Tensor m(DType::kBool, Shape{t, s});
  for (int64_t i = 0; i < t; ++i) {
    for (int64_t j = 0; j < s; ++j) m.flat<bool>()[i * s + j] = j <= i;
  }
  return trace::Constant(m);
}

}  // namespace

MultiHeadAttention::MultiHeadAttention(MultiHeadAttentionOptions options)
    : Layer("multi_head_attention"), options_(options) {
  if (options_.value_dim == 0) options_.value_dim = options_.key_dim;
  if (options_.num_heads <= 0 || options_.key_dim <= 0 || options_.value_dim < 0 ||
      options_.output_dim < 0) {
    RecordError(InvalidArgument(Who(), ": num_heads and key_dim must be positive, value_dim and ",
                                "output_dim positive or 0 (default), got num_heads ",
                                options_.num_heads, ", key_dim ", options_.key_dim, ", value_dim ",
                                options_.value_dim, ", output_dim ", options_.output_dim));
  }
}

std::string MultiHeadAttention::Who() const { return "MultiHeadAttention '" + name() + "'"; }

Status MultiHeadAttention::CheckInput(const char* what, const PartialShape& s,
                                      int64_t features) const {
  if (!Rank3Known(s)) {
    return InvalidArgument(Who(), ": expected a rank-3 ", what,
                           " (batch, steps, features) with steps and features known while ",
                           "tracing, got ", s.ToPythonString());
  }
  if (features >= 0 && s.dim(2) != features) {
    return InvalidArgument(Who(), ": built for ", features, " ", what, " features, got ",
                           s.ToPythonString());
  }
  return OkStatus();
}

Result<PartialShape> MultiHeadAttention::OutputShape(const PartialShape& input) const {
  KILN_RETURN_IF_ERROR(status());
  KILN_RETURN_IF_ERROR(CheckInput("input", input, query_dim_));
  const int64_t out = options_.output_dim > 0 ? options_.output_dim : input.dim(2);
  return PartialShape{input.dim(0), input.dim(1), out};
}

Status MultiHeadAttention::Build(const PartialShape& input) {
  KILN_RETURN_IF_ERROR(CheckInput("input", input, -1));
  KILN_RETURN_IF_ERROR(BuildFor(input.dim(2), input.dim(2), input.dim(2)));
  built_input_ = PartialShape{-1, input.dim(1), input.dim(2)};
  return OkStatus();
}

Status MultiHeadAttention::BuildFor(int64_t query_dim, int64_t value_dim, int64_t key_dim) {
  if (built()) return OkStatus();
  KILN_RETURN_IF_ERROR(status());
  const int64_t h = options_.num_heads, k = options_.key_dim, v = options_.value_dim;
  const int64_t out = options_.output_dim > 0 ? options_.output_dim : query_dim;
  std::mt19937 own(options_.seed.value_or(0));
  std::mt19937& engine = options_.seed ? own : DefaultEngine();
  struct Part {
    const char* name;
    Shape kernel;
    int64_t fan_in;
    Shape bias;
    trace::Variable* kernel_var;
    trace::Variable* bias_var;
  };
  const Part parts[] = {
      {"query", Shape{query_dim, h, k}, query_dim, Shape{h, k}, &query_kernel_, &query_bias_},
      {"key", Shape{key_dim, h, k}, key_dim, Shape{h, k}, &key_kernel_, &key_bias_},
      {"value", Shape{value_dim, h, v}, value_dim, Shape{h, v}, &value_kernel_, &value_bias_},
      {"attention_output", Shape{h, v, out}, h * v, Shape{out}, &output_kernel_, &output_bias_},
  };
  std::vector<trace::Variable> vars;
  for (const Part& p : parts) {
    WeightsModule& m = EmplaceModule<WeightsModule>(p.name, p.name, "EinsumDense");
    vars.push_back(m.AddVariable("kernel", ProjectionKernel(p.kernel, p.fan_in, engine)));
    vars.push_back(options_.use_bias ? m.AddVariable("bias", Zeros(DType::kFloat, p.bias))
                                     : trace::Variable());
  }
  KILN_RETURN_IF_ERROR(status());
  for (size_t i = 0; i < std::size(parts); ++i) {
    *parts[i].kernel_var = vars[2 * i];
    *parts[i].bias_var = vars[2 * i + 1];
  }
  query_dim_ = query_dim;
  value_in_dim_ = value_dim;
  key_in_dim_ = key_dim;
  return OkStatus();
}

Value MultiHeadAttention::Project(const Value& x, const trace::Variable& kernel,
                                  const trace::Variable& bias, int64_t dim) const {
  const int64_t h = options_.num_heads;
  const int64_t features = kernel.shape().dim(0);
  Value y = internal::BatchMatMul(x, internal::Reshape(kernel.Read(), {features, h * dim}));
  y = internal::Reshape(y, {-1, x.shape().dim(1), h, dim});
  if (bias.valid()) y = y + bias.Read();
  return trace::Transpose(y, {0, 2, 1, 3});
}

Value MultiHeadAttention::Attend(const Value& query, const Value& value, const Value& key_in,
                                 const Value& attention_mask) {
  const Value& key = key_in.empty() ? value : key_in;
  for (const Value* v : {&query, &value, &key, &attention_mask}) {
    if (!v->empty() && !v->ok()) return *v;
  }
  trace::NameScope scope(name());
  const auto fail = [](const Status& s) { return Value::Error(s); };
  Status s = CheckInput("query", query.shape(), query_dim_);
  if (s.ok()) s = CheckInput("value", value.shape(), value_in_dim_);
  if (s.ok()) s = CheckInput("key", key.shape(), key_in_dim_);
  if (s.ok() && key.shape().dim(1) != value.shape().dim(1)) {
    s = InvalidArgument(Who(), ": key and value must have the same number of steps, got ",
                        key.shape().ToPythonString(), " and ", value.shape().ToPythonString());
  }
  if (s.ok()) s = BuildFor(query.shape().dim(2), value.shape().dim(2), key.shape().dim(2));
  if (!s.ok()) return fail(s);
  const int64_t t = query.shape().dim(1), steps = value.shape().dim(1);
  const int64_t h = options_.num_heads, v = options_.value_dim;
  const Value q = Project(query, query_kernel_, query_bias_, options_.key_dim);
  const Value k = Project(key, key_kernel_, key_bias_, options_.key_dim);
  const Value vals = Project(value, value_kernel_, value_bias_, v);
  // (batch, heads, t, steps)
  Value scores = internal::BatchMatMul(q, k, /*adj_y=*/true) *
                 (1.0 / std::sqrt(static_cast<double>(options_.key_dim)));
  if (!attention_mask.empty()) {
    const PartialShape& ms = attention_mask.shape();
    if (ms.unknown_rank() || ms.rank() != 3 || (ms.dim(1) >= 0 && ms.dim(1) != t) ||
        (ms.dim(2) >= 0 && ms.dim(2) != steps)) {
      return fail(InvalidArgument(Who(), ": expected an attention_mask (batch, ", t, ", ", steps,
                                  "), got ", ms.ToPythonString()));
    }
    Value keep = attention_mask.dtype() == DType::kBool
                     ? attention_mask
                     : trace::Greater(attention_mask,
                                      trace::Cast(trace::Scalar(0.5F), attention_mask.dtype()));
    scores = trace::Where(internal::ExpandDims(keep, 1), scores, trace::Scalar(kMasked));
  }
  const Value weights = trace::Softmax(scores);
  // (batch, heads, t, v) -> (batch, t, heads * v) -> (batch, t, output)
  Value o = trace::Transpose(internal::BatchMatMul(weights, vals), {0, 2, 1, 3});
  o = internal::Reshape(o, {-1, t, h * v});
  o = internal::BatchMatMul(
      o, internal::Reshape(output_kernel_.Read(), {h * v, output_kernel_.shape().dim(2)}));
  if (output_bias_.valid()) o = trace::BiasAdd(o, output_bias_.Read());
  return o;
}

Value MultiHeadAttention::Call(const Value& input, bool /*training*/) {
  if (!options_.use_causal_mask) return Attend(input, input);
  const int64_t t = input.shape().dim(1);
  // (1, t, t) broadcasts over the batch.
  return Attend(input, input, {}, internal::ExpandDims(CausalMask(t, t), 0));
}

}  // namespace kiln::modules
