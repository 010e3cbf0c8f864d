// The TensorFlow ops the layers emit that kiln/trace has no public wrapper for, built with
// OpBuilder (attrs as TensorFlow's Python wrappers set them; defaults left out). Private to
// modules/.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "kiln/modules/padding.h"
#include "kiln/trace/value.h"

namespace kiln::modules::internal {

// "(2, 3)", or "(2,)" for one: a layer's sizes in messages, as Python prints a tuple.
std::string DimsString(const std::vector<int64_t>& v);

// A rank-1 int32 constant.
trace::Value Int32Vector(const std::vector<int64_t>& values);

trace::Value ExpandDims(const trace::Value& x, int axis);
trace::Value Squeeze(const trace::Value& x, const std::vector<int64_t>& axes);
// Reshape to `shape` (one -1 allowed).
trace::Value Reshape(const trace::Value& x, const std::vector<int64_t>& shape);
trace::Value Pack(const std::vector<trace::Value>& values);
// Pack along `axis` (tf.stack).
trace::Value Stack(const std::vector<trace::Value>& values, int64_t axis);
// Unpack of `num` slices along `axis` (tf.unstack), Split into `n` equal parts along `axis`;
// each an error value on failure.
std::vector<trace::Value> Unstack(const trace::Value& x, int64_t axis, int64_t num);
// tf.concat: ConcatV2 along `axis` (non-negative).
trace::Value Concat(const std::vector<trace::Value>& values, int64_t axis);
std::vector<trace::Value> Split(const trace::Value& x, int64_t axis, int64_t n);

// NHWC Conv2D / DepthwiseConv2dNative; `strides` and `dilations` are the two spatial values.
trace::Value Conv2D(const trace::Value& x, const trace::Value& filter,
                    const std::vector<int64_t>& strides, const std::vector<int64_t>& dilations,
                    Padding padding);
trace::Value DepthwiseConv2D(const trace::Value& x, const trace::Value& filter,
                             const std::vector<int64_t>& strides,
                             const std::vector<int64_t>& dilations, Padding padding);
// tf.nn.conv2d_transpose: Conv2DBackpropInput with int32 `output_shape` (N, H, W, C).
trace::Value Conv2DTranspose(const trace::Value& x, const trace::Value& filter,
                             const trace::Value& output_shape, const std::vector<int64_t>& strides,
                             const std::vector<int64_t>& dilations, Padding padding);
// MaxPool / AvgPool (NHWC) with two spatial window sizes and strides.
trace::Value Pool(bool max, const trace::Value& x, const std::vector<int64_t>& pool_size,
                  const std::vector<int64_t>& strides, Padding padding);

// BatchMatMulV2 (batch dimensions broadcast).
trace::Value BatchMatMul(const trace::Value& x, const trace::Value& y, bool adj_y = false);

// Mean / Max over `axes`.
trace::Value Reduce(std::string_view op, const trace::Value& x, const std::vector<int64_t>& axes,
                    bool keep_dims);
// Op `op` on x with T = x's dtype (Rsqrt, StopGradient, ...).
trace::Value Unary(std::string_view op, const trace::Value& x);
trace::Value SquaredDifference(const trace::Value& x, const trace::Value& y);

}  // namespace kiln::modules::internal
