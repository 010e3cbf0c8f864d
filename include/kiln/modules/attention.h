// MultiHeadAttention with Keras 3's semantics and variable names. Its four projections are
// sublayers named as Keras's EinsumDense layers:
//
//   query/kernel [query_dim, heads, key_dim], query/bias [heads, key_dim]
//   key/kernel [key_in_dim, heads, key_dim], key/bias [heads, key_dim]
//   value/kernel [value_in_dim, heads, value_dim], value/bias [heads, value_dim]
//   attention_output/kernel [heads, value_dim, output_dim], attention_output/bias [output_dim]
//
// Inputs are (batch, steps, features), steps and features known while tracing. The projections
// are BatchMatMulV2 with the kernel reshaped to 2-D, a Reshape to (batch, steps, heads, dim) and
// a Transpose to (batch, heads, steps, dim); scores = q k^T / sqrt(key_dim) (BatchMatMulV2 with
// adj_y), masked positions set to -1e9 (SelectV2, as Keras's Softmax does with a mask), Softmax
// over the keys, then the weighted values are projected back. Every op has a gradient. No
// attention dropout.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "kiln/modules/layer.h"
#include "kiln/trace/variable.h"

namespace kiln::modules {

struct MultiHeadAttentionOptions {
  int64_t num_heads = 0;
  int64_t key_dim = 0;
  int64_t value_dim = 0;   // 0: key_dim (Keras's value_dim=None)
  int64_t output_dim = 0;  // 0: the query's feature size (Keras's output_shape=None)
  bool use_bias = true;
  // operator() (self-attention) with Keras's call(..., use_causal_mask=True): step t attends to
  // steps <= t only.
  bool use_causal_mask = false;
  // Kernel initializer seed; without one the layer draws from DefaultEngine().
  std::optional<uint32_t> seed;
};

class MultiHeadAttention : public Layer {
 public:
  explicit MultiHeadAttention(MultiHeadAttentionOptions options);
  MultiHeadAttention(int64_t num_heads, int64_t key_dim)
      : MultiHeadAttention(MultiHeadAttentionOptions{.num_heads = num_heads, .key_dim = key_dim}) {}

  std::string type_name() const override { return "MultiHeadAttention"; }
  // Integer and bool inputs are cast to float32, as Keras's EinsumDense promotes them.
  NonFloatInput non_float_input() const override { return NonFloatInput::kCast; }
  const MultiHeadAttentionOptions& options() const { return options_; }

  bool built() const override { return query_kernel_.valid(); }
  // Self-attention: query, key and value all have the input's feature size.
  Status Build(const PartialShape& input) override;
  Status BuildFor(int64_t query_dim, int64_t value_dim, int64_t key_dim);
  PartialShape built_input_shape() const override { return built_input_; }
  // For self-attention inputs: (batch, steps, output_dim).
  Result<PartialShape> OutputShape(const PartialShape& input) const override;

  // Keras's call(query, value, key=None, attention_mask=None): key defaults to value; the mask
  // (batch, query steps, value steps) keeps positions that are true (bool) or > 0.5 (numeric);
  // empty: none. Builds on first use as operator() does.
  trace::Value Attend(const trace::Value& query, const trace::Value& value,
                      const trace::Value& key = {}, const trace::Value& attention_mask = {});

 protected:
  trace::Value Call(const trace::Value& input, bool training) override;

 private:
  std::string Who() const;
  Status CheckInput(const char* what, const PartialShape& s, int64_t features) const;
  // (batch, steps, features) -> (batch, heads, steps, dim).
  trace::Value Project(const trace::Value& x, const trace::Variable& kernel,
                       const trace::Variable& bias, int64_t dim) const;

  MultiHeadAttentionOptions options_;
  int64_t query_dim_ = -1, value_in_dim_ = -1, key_in_dim_ = -1;
  PartialShape built_input_ = PartialShape::UnknownRank();
  trace::Variable query_kernel_, query_bias_, key_kernel_, key_bias_, value_kernel_, value_bias_,
      output_kernel_, output_bias_;
};

}  // namespace kiln::modules
