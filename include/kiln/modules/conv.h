// Convolution layers, channels-last (Keras's data_format="channels_last"), with Keras 3's
// variable names and shapes:
//
//   Conv1D           kernel [k, in / groups, filters], bias [filters]
//                    ExpandDims + Conv2D + Squeeze, as tf.nn.conv1d emits it
//   Conv2D           kernel [kh, kw, in / groups, filters], bias [filters]      Conv2D
//   DepthwiseConv2D  kernel [kh, kw, in, depth_multiplier], bias [in * dm] DepthwiseConv2dNative
//   SeparableConv2D  depthwise_kernel [kh, kw, in, dm], pointwise_kernel [1, 1, in * dm,
//                    filters], bias [filters]         DepthwiseConv2dNative + Conv2D 1x1
//   Conv2DTranspose  kernel [kh, kw, filters, in], bias [filters]              Conv2DBackpropInput
//
// then BiasAdd and the activation. Kernels are Glorot-uniform, biases zeros. A layer is built
// from its first input (only the channel count matters) or at once from
// ConvOptions::input_shape.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "kiln/modules/activations.h"
#include "kiln/modules/layer.h"
#include "kiln/modules/padding.h"
#include "kiln/trace/variable.h"

namespace kiln::modules {

// One options struct for every convolution layer; a field a layer does not have must keep its
// default (the layer reports an error otherwise).
struct ConvOptions {
  int64_t filters = 0;               // output channels; not DepthwiseConv2D
  std::vector<int64_t> kernel_size;  // one value for every spatial dimension, or one each
  std::vector<int64_t> strides = {1};
  std::vector<int64_t> dilation_rate = {1};
  Padding padding = Padding::kValid;
  int64_t groups = 1;            // Conv1D / Conv2D only
  int64_t depth_multiplier = 1;  // DepthwiseConv2D / SeparableConv2D only
  Activation activation = Activation::kNone;
  bool use_bias = true;
  // The input without its batch dimension ({28, 28, 1}); when given the layer is built at once
  // (Keras's input_shape=). Empty: built from the first input.
  std::vector<int64_t> input_shape;
  // Kernel initializer seed; without one the layer draws from DefaultEngine().
  std::optional<uint32_t> seed;
};

// What the five layers share: options checking, shapes, building and the call.
class ConvBase : public Layer {
 public:
  enum class Kind { kConv, kDepthwise, kSeparable, kTranspose };

  std::string type_name() const override { return type_; }
  // Integer and bool inputs are refused, naming the layer (TensorFlow has no such kernels).
  NonFloatInput non_float_input() const override { return NonFloatInput::kRefuse; }
  const ConvOptions& options() const { return options_; }

  bool built() const override { return kernel_.valid(); }
  Status Build(const PartialShape& input) override;
  PartialShape built_input_shape() const override { return built_input_; }
  Result<PartialShape> OutputShape(const PartialShape& input) const override;

  // Until built, invalid handles whose status() names the layer and says so. SeparableConv2D's
  // kernel() is its depthwise_kernel.
  trace::Variable kernel() const { return WeightOrError(kernel_, "kernel"); }
  trace::Variable pointwise_kernel() const {
    return WeightOrError(pointwise_kernel_, "pointwise_kernel");
  }
  trace::Variable bias() const { return WeightOrError(bias_, "bias"); }

 protected:
  // `type` is the Keras class name, `name` the layer's base name ("conv2d").
  ConvBase(std::string type, std::string name, Kind kind, int spatial_dims, ConvOptions options);
  trace::Value Call(const trace::Value& input, bool training) override;

 private:
  Status CheckOptions();
  // "Conv2D 'conv2d'".
  std::string Who() const;
  // "a rank-4 input (batch, height, width, channels)".
  std::string ExpectedInput() const;
  Result<int64_t> InputChannels(const PartialShape& input) const;
  int64_t OutputChannels(int64_t in_channels) const;
  trace::Value Convolve(const trace::Value& x);

  std::string type_;
  Kind kind_;
  int spatial_;
  ConvOptions options_;  // kernel_size, strides and dilation_rate with one value per dimension
  Status invalid_;       // from the options; also recorded with RecordError
  int64_t in_channels_ = -1;
  PartialShape built_input_ = PartialShape::UnknownRank();
  trace::Variable kernel_;
  trace::Variable pointwise_kernel_;
  trace::Variable bias_;
};

class Conv1D final : public ConvBase {
 public:
  explicit Conv1D(ConvOptions options);
  Conv1D(int64_t filters, int64_t kernel_size, Activation activation = Activation::kNone,
         Padding padding = Padding::kValid);
};

class Conv2D final : public ConvBase {
 public:
  explicit Conv2D(ConvOptions options);
  Conv2D(int64_t filters, int64_t kernel_size, Activation activation = Activation::kNone,
         Padding padding = Padding::kValid);
};

class DepthwiseConv2D final : public ConvBase {
 public:
  explicit DepthwiseConv2D(ConvOptions options);
};

class SeparableConv2D final : public ConvBase {
 public:
  explicit SeparableConv2D(ConvOptions options);
};

class Conv2DTranspose final : public ConvBase {
 public:
  explicit Conv2DTranspose(ConvOptions options);
};

}  // namespace kiln::modules
