// Normalization over the last axis (Keras's axis=-1), with Keras 3's variables and defaults.
//
// BatchNormalization: gamma, beta (trainable), moving_mean, moving_variance (non-trainable).
// In inference it normalizes with the moving statistics; when called with training=true (and
// the layer is trainable, as in Keras) it normalizes with the batch's mean and (biased)
// variance over every axis but the last, and adds AssignAddVariableOps that move the moving
// statistics towards them: moving += (batch - moving) * (1 - momentum). Those updates exist only
// in a training trace, so inference never changes them.
//
// LayerNormalization: gamma, beta; each example normalized over its last axis.
//
// Both compute y = x * inv + (beta - mean * inv), inv = rsqrt(variance + epsilon) * gamma, as
// tf.nn.batch_normalization does, from Mean / SquaredDifference / Rsqrt ops (no fused op, so
// every op has a plain gradient).
#pragma once

#include <string>

#include "kiln/modules/layer.h"
#include "kiln/trace/variable.h"

namespace kiln::modules {

struct BatchNormalizationOptions {
  float momentum = 0.99f;
  float epsilon = 1e-3f;
  bool center = true;  // has beta
  bool scale = true;   // has gamma
};

class BatchNormalization : public Layer {
 public:
  explicit BatchNormalization(BatchNormalizationOptions options = {});

  std::string type_name() const override { return "BatchNormalization"; }
  // Integer and bool inputs are cast to float32, as Keras's normalizations do.
  NonFloatInput non_float_input() const override { return NonFloatInput::kCast; }
  // Passes a mask on (Keras's supports_masking).
  bool supports_masking() const override { return true; }
  const BatchNormalizationOptions& options() const { return options_; }

  bool built() const override { return moving_mean_.valid(); }
  Status Build(const PartialShape& input) override;
  PartialShape built_input_shape() const override { return built_input_; }
  Result<PartialShape> OutputShape(const PartialShape& input) const override;

  // Until built, invalid handles whose status() names the layer and says so (gamma / beta
  // also without scale / center, saying that).
  trace::Variable gamma() const { return WeightOrError(gamma_, "gamma"); }
  trace::Variable beta() const { return WeightOrError(beta_, "beta"); }
  trace::Variable moving_mean() const { return WeightOrError(moving_mean_, "moving_mean"); }
  trace::Variable moving_variance() const {
    return WeightOrError(moving_variance_, "moving_variance");
  }

 protected:
  trace::Value Call(const trace::Value& input, bool training) override;

 private:
  BatchNormalizationOptions options_;
  int64_t channels_ = -1;
  PartialShape built_input_ = PartialShape::UnknownRank();
  trace::Variable gamma_;
  trace::Variable beta_;
  trace::Variable moving_mean_;
  trace::Variable moving_variance_;
};

struct LayerNormalizationOptions {
  float epsilon = 1e-3f;
  bool center = true;
  bool scale = true;
};

class LayerNormalization : public Layer {
 public:
  explicit LayerNormalization(LayerNormalizationOptions options = {});

  std::string type_name() const override { return "LayerNormalization"; }
  // Integer and bool inputs are cast to float32, as Keras's normalizations do.
  NonFloatInput non_float_input() const override { return NonFloatInput::kCast; }
  // Passes a mask on (Keras's supports_masking).
  bool supports_masking() const override { return true; }
  const LayerNormalizationOptions& options() const { return options_; }

  bool built() const override { return channels_ >= 0; }
  Status Build(const PartialShape& input) override;
  PartialShape built_input_shape() const override { return built_input_; }
  Result<PartialShape> OutputShape(const PartialShape& input) const override;

  trace::Variable gamma() const { return WeightOrError(gamma_, "gamma"); }
  trace::Variable beta() const { return WeightOrError(beta_, "beta"); }

 protected:
  trace::Value Call(const trace::Value& input, bool training) override;

 private:
  LayerNormalizationOptions options_;
  int64_t channels_ = -1;
  PartialShape built_input_ = PartialShape::UnknownRank();
  trace::Variable gamma_;
  trace::Variable beta_;
};

}  // namespace kiln::modules
