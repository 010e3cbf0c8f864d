// Pooling layers, channels-last, no variables:
//
//   MaxPooling1D / AveragePooling1D   ExpandDims + MaxPool / AvgPool + Squeeze (tf.nn.max_pool1d)
//   MaxPooling2D / AveragePooling2D   MaxPool / AvgPool
//   GlobalMaxPooling1D/2D, GlobalAveragePooling1D/2D   Max / Mean over the spatial axes
//
// Keras's short names (MaxPool2D, GlobalAvgPool2D, ...) are aliases.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "kiln/modules/layer.h"
#include "kiln/modules/padding.h"

namespace kiln::modules {

struct PoolOptions {
  std::vector<int64_t> pool_size = {2};  // one value for every spatial dimension, or one each
  std::vector<int64_t> strides;          // empty: pool_size (Keras's strides=None)
  Padding padding = Padding::kValid;
};

// The four windowed pools.
class PoolingBase : public Layer {
 public:
  std::string type_name() const override { return type_; }
  // Max pooling keeps integer inputs; average pooling refuses them (TensorFlow has no kernel).
  NonFloatInput non_float_input() const override {
    return max_ ? NonFloatInput::kKeep : NonFloatInput::kRefuse;
  }
  const PoolOptions& options() const { return options_; }
  Result<PartialShape> OutputShape(const PartialShape& input) const override;

 protected:
  PoolingBase(std::string type, std::string name, bool max, int spatial_dims, PoolOptions options);
  trace::Value Call(const trace::Value& input, bool training) override;

 private:
  std::string type_;
  bool max_;
  int spatial_;
  PoolOptions options_;  // pool_size and strides with one value per dimension
  Status invalid_;
};

class MaxPooling1D final : public PoolingBase {
 public:
  explicit MaxPooling1D(PoolOptions options);
  explicit MaxPooling1D(int64_t pool_size = 2) : MaxPooling1D(PoolOptions{{pool_size}, {}, {}}) {}
};
class MaxPooling2D final : public PoolingBase {
 public:
  explicit MaxPooling2D(PoolOptions options);
  explicit MaxPooling2D(int64_t pool_size = 2) : MaxPooling2D(PoolOptions{{pool_size}, {}, {}}) {}
};
class AveragePooling1D final : public PoolingBase {
 public:
  explicit AveragePooling1D(PoolOptions options);
  explicit AveragePooling1D(int64_t pool_size = 2)
      : AveragePooling1D(PoolOptions{{pool_size}, {}, {}}) {}
};
class AveragePooling2D final : public PoolingBase {
 public:
  explicit AveragePooling2D(PoolOptions options);
  explicit AveragePooling2D(int64_t pool_size = 2)
      : AveragePooling2D(PoolOptions{{pool_size}, {}, {}}) {}
};

// Max or mean over the spatial axes: (batch, channels), or (batch, 1[, 1], channels) with
// keepdims.
class GlobalPoolingBase : public Layer {
 public:
  std::string type_name() const override { return type_; }
  // Max keeps integer inputs; the average casts them to float32 (Keras's mean does).
  NonFloatInput non_float_input() const override {
    return max_ ? NonFloatInput::kKeep : NonFloatInput::kCast;
  }
  bool keepdims() const { return keepdims_; }
  Result<PartialShape> OutputShape(const PartialShape& input) const override;

 protected:
  GlobalPoolingBase(std::string type, std::string name, bool max, int spatial_dims, bool keepdims);
  trace::Value Call(const trace::Value& input, bool training) override;

 private:
  std::string type_;
  bool max_;
  int spatial_;
  bool keepdims_;
};

class GlobalMaxPooling1D final : public GlobalPoolingBase {
 public:
  explicit GlobalMaxPooling1D(bool keepdims = false);
};
class GlobalMaxPooling2D final : public GlobalPoolingBase {
 public:
  explicit GlobalMaxPooling2D(bool keepdims = false);
};
class GlobalAveragePooling1D final : public GlobalPoolingBase {
 public:
  explicit GlobalAveragePooling1D(bool keepdims = false);
};
class GlobalAveragePooling2D final : public GlobalPoolingBase {
 public:
  explicit GlobalAveragePooling2D(bool keepdims = false);
};

using MaxPool1D = MaxPooling1D;
using MaxPool2D = MaxPooling2D;
using AvgPool1D = AveragePooling1D;
using AvgPool2D = AveragePooling2D;
using GlobalMaxPool1D = GlobalMaxPooling1D;
using GlobalMaxPool2D = GlobalMaxPooling2D;
using GlobalAvgPool1D = GlobalAveragePooling1D;
using GlobalAvgPool2D = GlobalAveragePooling2D;

}  // namespace kiln::modules
