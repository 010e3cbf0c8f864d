// Layers without a computation of their own beyond one op or two:
//
//   Dropout          training only: x * 1/(1 - rate) * (RandomUniform(shape(x)) >= rate), as
//                    tf.nn.dropout; the identity otherwise (no op at all in the graph)
//   Flatten          Reshape to (batch, product of the other dimensions)
//   Reshape          Reshape to (batch,) + target_shape (one -1 allowed)
//   ActivationLayer  Keras's Activation layer (the C++ name Activation is the enum)
//   Embedding        embeddings [input_dim, output_dim], U(-0.05, 0.05); GatherV2 of the rows;
//                    with mask_zero its output mask is indices != 0 (for LSTM / GRU)
//   Masking          zeros the timesteps whose features all equal mask_value and masks them:
//                    Any(x != mask_value, last axis)
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "kiln/modules/activations.h"
#include "kiln/modules/layer.h"
#include "kiln/trace/variable.h"

namespace kiln::modules {

struct DropoutOptions {
  float rate = 0.0f;            // in [0, 1)
  std::optional<int64_t> seed;  // op seed of the RandomUniform; none = nondeterministic
};

class Dropout : public Layer {
 public:
  explicit Dropout(DropoutOptions options);
  explicit Dropout(float rate) : Dropout(DropoutOptions{rate, std::nullopt}) {}

  std::string type_name() const override { return "Dropout"; }
  // Passes a mask on (Keras's supports_masking).
  bool supports_masking() const override { return true; }
  float rate() const { return options_.rate; }
  Result<PartialShape> OutputShape(const PartialShape& input) const override;

 protected:
  trace::Value Call(const trace::Value& input, bool training) override;

 private:
  DropoutOptions options_;
};

class Flatten : public Layer {
 public:
  Flatten() : Layer("flatten") {}
  std::string type_name() const override { return "Flatten"; }
  // Needs every dimension but the batch known.
  Result<PartialShape> OutputShape(const PartialShape& input) const override;

 protected:
  trace::Value Call(const trace::Value& input, bool training) override;
};

class Reshape : public Layer {
 public:
  // Without the batch dimension, as Keras's target_shape.
  explicit Reshape(std::vector<int64_t> target_shape);
  std::string type_name() const override { return "Reshape"; }
  const std::vector<int64_t>& target_shape() const { return target_shape_; }
  Result<PartialShape> OutputShape(const PartialShape& input) const override;

 protected:
  trace::Value Call(const trace::Value& input, bool training) override;

 private:
  std::vector<int64_t> target_shape_;
  Status invalid_;
};

class ActivationLayer : public Layer {
 public:
  explicit ActivationLayer(Activation activation);
  std::string type_name() const override { return "Activation"; }
  // Passes a mask on (Keras's supports_masking).
  bool supports_masking() const override { return true; }
  Activation activation() const { return activation_; }
  Result<PartialShape> OutputShape(const PartialShape& input) const override;

 protected:
  trace::Value Call(const trace::Value& input, bool training) override;

 private:
  Activation activation_;
};

struct EmbeddingOptions {
  int64_t input_dim = 0;   // vocabulary size
  int64_t output_dim = 0;  // embedding size
  std::optional<uint32_t> seed;
  // Index 0 is padding: the output's mask (ComputeMask) is indices != 0.
  bool mask_zero = false;
};

class Embedding : public Layer {
 public:
  // Built at once (its variable does not depend on the input).
  explicit Embedding(EmbeddingOptions options);
  Embedding(int64_t input_dim, int64_t output_dim)
      : Embedding(EmbeddingOptions{input_dim, output_dim, std::nullopt}) {}

  std::string type_name() const override { return "Embedding"; }
  const EmbeddingOptions& options() const { return options_; }
  bool built() const override { return embeddings_.valid(); }
  // Integer indices of any shape; (batch, ...) -> (batch, ..., output_dim).
  Result<PartialShape> OutputShape(const PartialShape& input) const override;
  trace::Variable embeddings() const { return WeightOrError(embeddings_, "embeddings"); }
  bool supports_masking() const override { return options_.mask_zero; }
  trace::Value ComputeMask(const trace::Value& input, const trace::Value& mask) const override;

 protected:
  trace::Value Call(const trace::Value& input, bool training) override;

 private:
  EmbeddingOptions options_;
  trace::Variable embeddings_;
};

class Masking : public Layer {
 public:
  explicit Masking(float mask_value = 0.0f) : Layer("masking"), mask_value_(mask_value) {}
  std::string type_name() const override { return "Masking"; }
  float mask_value() const { return mask_value_; }
  // (batch, timesteps, ...): at least rank 2.
  Result<PartialShape> OutputShape(const PartialShape& input) const override;
  bool supports_masking() const override { return true; }
  trace::Value ComputeMask(const trace::Value& input, const trace::Value& mask) const override;

 protected:
  trace::Value Call(const trace::Value& input, bool training) override;

 private:
  // Any(input != mask_value) over the last axis.
  trace::Value Keep(const trace::Value& input, bool keep_dims) const;

  float mask_value_;
};

}  // namespace kiln::modules
