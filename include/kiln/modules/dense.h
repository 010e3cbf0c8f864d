// Dense: y = activation(x @ kernel + bias), emitted as TensorFlow's MatMul + BiasAdd +
// activation op. The kernel is Glorot-uniform, the bias zeros. Given an input dimension it is
// built at once; otherwise on the first call (or when a Sequential learns its input size).
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "kiln/core/dtype.h"
#include "kiln/modules/activations.h"
#include "kiln/modules/layer.h"
#include "kiln/trace/variable.h"

namespace kiln::modules {

struct DenseOptions {
  int64_t units = 0;
  Activation activation = Activation::kNone;
  int64_t input_dim = -1;  // -1: taken from the first input
  bool use_bias = true;
  // Kernel initializer seed; without one the layer draws from DefaultEngine().
  std::optional<uint32_t> seed;
};

class Dense : public Layer {
 public:
  explicit Dense(DenseOptions options);
  explicit Dense(int64_t units, Activation activation = Activation::kNone, int64_t input_dim = -1);

  std::string type_name() const override { return "Dense"; }
  // Integer and bool inputs are cast to float32 (Keras 3's matmul promotes them).
  NonFloatInput non_float_input() const override { return NonFloatInput::kCast; }
  // Passes a mask on (Keras's supports_masking).
  bool supports_masking() const override { return true; }
  const DenseOptions& options() const { return options_; }
  int64_t units() const { return options_.units; }

  bool built() const override { return kernel_.valid(); }
  Status Build(const PartialShape& input) override;
  PartialShape built_input_shape() const override;
  Result<PartialShape> OutputShape(const PartialShape& input) const override;

  // Until built, invalid handles whose status() names the layer and says so.
  trace::Variable kernel() const { return WeightOrError(kernel_, "kernel"); }
  trace::Variable bias() const { return WeightOrError(bias_, "bias"); }

 protected:
  trace::Value Call(const trace::Value& input, bool training) override;

 private:
  Status BuildFor(int64_t input_dim);

  DenseOptions options_;
  trace::Variable kernel_;
  trace::Variable bias_;
};

}  // namespace kiln::modules
