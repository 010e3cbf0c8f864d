#include "kiln/modules/pooling.h"

#include <utility>

#include "nn_ops.h"

namespace kiln::modules {
namespace {

std::string ExpectedInput(int spatial) {
  return spatial == 1 ? "a rank-3 input (batch, steps, channels)"
                      : "a rank-4 input (batch, height, width, channels)";
}

}  // namespace

PoolingBase::PoolingBase(std::string type, std::string name, bool max, int spatial_dims,
                         PoolOptions options)
    : Layer(std::move(name)),
      type_(std::move(type)),
      max_(max),
      spatial_(spatial_dims),
      options_(std::move(options)) {
  const std::string who = type_ + " '" + this->name() + "'";
  Result<std::vector<int64_t>> pool =
      SpatialOption(options_.pool_size, spatial_, who + ": pool_size");
  Result<std::vector<int64_t>> strides =
      pool.ok() ? SpatialOption(options_.strides.empty() ? *pool : options_.strides, spatial_,
                                who + ": strides")
                : pool.status();
  if (!strides.ok()) {
    invalid_ = strides.status();
    RecordError(invalid_);
    return;
  }
  options_.pool_size = *pool;
  options_.strides = *strides;
}

Result<PartialShape> PoolingBase::OutputShape(const PartialShape& input) const {
  KILN_RETURN_IF_ERROR(invalid_);
  const std::string who = type_ + " '" + name() + "'";
  if (input.unknown_rank() || input.rank() != spatial_ + 2) {
    return InvalidArgument(who, ": expected ", ExpectedInput(spatial_), ", got ",
                           input.ToPythonString());
  }
  std::vector<int64_t> dims{input.dim(0)};
  for (int i = 0; i < spatial_; ++i) {
    const int64_t in = input.dim(i + 1);
    const int64_t out =
        ConvOutputLength(in, options_.pool_size[i], options_.padding, options_.strides[i]);
    if (in >= 0 && out <= 0) {
      return InvalidArgument(who, ": input ", input.ToPythonString(),
                             " is smaller than the pool with padding \"",
                             PaddingName(options_.padding), "\"");
    }
    dims.push_back(out);
  }
  dims.push_back(input.dim(spatial_ + 1));
  return PartialShape::FromDims(dims);
}

trace::Value PoolingBase::Call(const trace::Value& input, bool /*training*/) {
  if (spatial_ == 2) {
    return internal::Pool(max_, input, options_.pool_size, options_.strides, options_.padding);
  }
  // tf.nn.max_pool1d / avg_pool1d: a 2-D pool over (batch, 1, steps, channels).
  trace::Value y = internal::Pool(max_, internal::ExpandDims(input, 1), {1, options_.pool_size[0]},
                                  {1, options_.strides[0]}, options_.padding);
  return internal::Squeeze(y, {1});
}

MaxPooling1D::MaxPooling1D(PoolOptions options)
    : PoolingBase("MaxPooling1D", "max_pooling1d", true, 1, std::move(options)) {}
MaxPooling2D::MaxPooling2D(PoolOptions options)
    : PoolingBase("MaxPooling2D", "max_pooling2d", true, 2, std::move(options)) {}
AveragePooling1D::AveragePooling1D(PoolOptions options)
    : PoolingBase("AveragePooling1D", "average_pooling1d", false, 1, std::move(options)) {}
AveragePooling2D::AveragePooling2D(PoolOptions options)
    : PoolingBase("AveragePooling2D", "average_pooling2d", false, 2, std::move(options)) {}

GlobalPoolingBase::GlobalPoolingBase(std::string type, std::string name, bool max, int spatial_dims,
                                     bool keepdims)
    : Layer(std::move(name)),
      type_(std::move(type)),
      max_(max),
      spatial_(spatial_dims),
      keepdims_(keepdims) {}

Result<PartialShape> GlobalPoolingBase::OutputShape(const PartialShape& input) const {
  if (input.unknown_rank() || input.rank() != spatial_ + 2) {
    return InvalidArgument(type_, " '", name(), "': expected ", ExpectedInput(spatial_), ", got ",
                           input.ToPythonString());
  }
  const int64_t channels = input.dim(spatial_ + 1);
  if (!keepdims_) return PartialShape{input.dim(0), channels};
  return spatial_ == 1 ? PartialShape{input.dim(0), 1, channels}
                       : PartialShape{input.dim(0), 1, 1, channels};
}

trace::Value GlobalPoolingBase::Call(const trace::Value& input, bool /*training*/) {
  const std::vector<int64_t> axes =
      spatial_ == 1 ? std::vector<int64_t>{1} : std::vector<int64_t>{1, 2};
  return internal::Reduce(max_ ? "Max" : "Mean", input, axes, keepdims_);
}

GlobalMaxPooling1D::GlobalMaxPooling1D(bool keepdims)
    : GlobalPoolingBase("GlobalMaxPooling1D", "global_max_pooling1d", true, 1, keepdims) {}
GlobalMaxPooling2D::GlobalMaxPooling2D(bool keepdims)
    : GlobalPoolingBase("GlobalMaxPooling2D", "global_max_pooling2d", true, 2, keepdims) {}
GlobalAveragePooling1D::GlobalAveragePooling1D(bool keepdims)
    : GlobalPoolingBase("GlobalAveragePooling1D", "global_average_pooling1d", false, 1, keepdims) {}
GlobalAveragePooling2D::GlobalAveragePooling2D(bool keepdims)
    : GlobalPoolingBase("GlobalAveragePooling2D", "global_average_pooling2d", false, 2, keepdims) {}

}  // namespace kiln::modules
