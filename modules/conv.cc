#include "kiln/modules/conv.h"

#include <utility>

#include "kiln/modules/initializers.h"
#include "kiln/trace/array_ops.h"
#include "kiln/trace/ops.h"
#include "nn_ops.h"

namespace kiln::modules {
namespace {

Result<Shape> MakeShape(const std::vector<int64_t>& dims) { return Shape::FromDims(dims); }

}  // namespace

ConvBase::ConvBase(std::string type, std::string name, Kind kind, int spatial_dims,
                   ConvOptions options)
    : Layer(std::move(name)),
      type_(std::move(type)),
      kind_(kind),
      spatial_(spatial_dims),
      options_(std::move(options)) {
  invalid_ = CheckOptions();
  if (!invalid_.ok()) {
    RecordError(invalid_);
    return;
  }
  if (!options_.input_shape.empty()) {
    std::vector<int64_t> dims{-1};
    dims.insert(dims.end(), options_.input_shape.begin(), options_.input_shape.end());
    Result<PartialShape> input = PartialShape::FromDims(dims);
    Status s = input.ok() ? Build(*input) : input.status();
    if (!s.ok()) RecordError(s.WithContext(Who() + " input_shape"));
  }
}

std::string ConvBase::Who() const { return type_ + " '" + name() + "'"; }

std::string ConvBase::ExpectedInput() const {
  return spatial_ == 1 ? "a rank-3 input (batch, steps, channels)"
                       : "a rank-4 input (batch, height, width, channels)";
}

Status ConvBase::CheckOptions() {
  const std::string who = Who();
  KILN_ASSIGN_OR_RETURN(options_.kernel_size,
                        SpatialOption(options_.kernel_size, spatial_, who + ": kernel_size"));
  KILN_ASSIGN_OR_RETURN(options_.strides,
                        SpatialOption(options_.strides, spatial_, who + ": strides"));
  KILN_ASSIGN_OR_RETURN(options_.dilation_rate,
                        SpatialOption(options_.dilation_rate, spatial_, who + ": dilation_rate"));
  if (kind_ == Kind::kDepthwise) {
    if (options_.filters != 0) {
      return InvalidArgument(who, ": has no filters option (its output has input channels * ",
                             "depth_multiplier), got filters=", options_.filters);
    }
  } else if (options_.filters <= 0) {
    return InvalidArgument(who, ": filters must be positive, got ", options_.filters);
  }
  if (options_.groups <= 0 || (kind_ != Kind::kConv && options_.groups != 1)) {
    return InvalidArgument(who, ": groups must be ",
                           kind_ == Kind::kConv ? "positive" : "1 for this layer", ", got ",
                           options_.groups);
  }
  if (options_.filters % options_.groups != 0) {
    return InvalidArgument(who, ": filters (", options_.filters, ") must be a multiple of groups (",
                           options_.groups, ")");
  }
  const bool has_multiplier = kind_ == Kind::kDepthwise || kind_ == Kind::kSeparable;
  if (options_.depth_multiplier <= 0 || (!has_multiplier && options_.depth_multiplier != 1)) {
    return InvalidArgument(who, ": depth_multiplier must be ",
                           has_multiplier ? "positive" : "1 for this layer", ", got ",
                           options_.depth_multiplier);
  }
  bool strided = false;
  bool dilated = false;
  for (int i = 0; i < spatial_; ++i) {
    strided = strided || options_.strides[i] > 1;
    dilated = dilated || options_.dilation_rate[i] > 1;
  }
  if (strided && dilated) {
    return InvalidArgument(who, ": strides ", internal::DimsString(options_.strides),
                           " > 1 cannot be combined with dilation_rate ",
                           internal::DimsString(options_.dilation_rate), " > 1 (as in Keras)");
  }
  if (!options_.input_shape.empty() &&
      options_.input_shape.size() != static_cast<size_t>(spatial_) + 1) {
    return InvalidArgument(who, ": input_shape ", internal::DimsString(options_.input_shape),
                           " must have ", spatial_ + 1,
                           " dimensions (without the batch dimension)");
  }
  return OkStatus();
}

Result<int64_t> ConvBase::InputChannels(const PartialShape& input) const {
  if (input.unknown_rank() || input.rank() != spatial_ + 2) {
    return InvalidArgument(Who(), ": expected ", ExpectedInput(), ", got ", input.ToPythonString());
  }
  const int64_t c = input.dim(spatial_ + 1);
  if (built() && c >= 0 && c != in_channels_) {
    return InvalidArgument(Who(), ": built for ", in_channels_, " input channels, got ",
                           input.ToPythonString());
  }
  if (kind_ == Kind::kConv && c >= 0 && c % options_.groups != 0) {
    return InvalidArgument(Who(), ": input channels (", c, ") must be a multiple of groups (",
                           options_.groups, "), got ", input.ToPythonString());
  }
  return c >= 0 ? c : in_channels_;
}

int64_t ConvBase::OutputChannels(int64_t in_channels) const {
  if (kind_ != Kind::kDepthwise) return options_.filters;
  return in_channels < 0 ? -1 : in_channels * options_.depth_multiplier;
}

Result<PartialShape> ConvBase::OutputShape(const PartialShape& input) const {
  KILN_RETURN_IF_ERROR(invalid_);
  KILN_ASSIGN_OR_RETURN(int64_t channels, InputChannels(input));
  std::vector<int64_t> dims{input.dim(0)};
  for (int i = 0; i < spatial_; ++i) {
    const int64_t in = input.dim(i + 1);
    const int64_t k = options_.kernel_size[i];
    const int64_t s = options_.strides[i];
    const int64_t d = options_.dilation_rate[i];
    const int64_t out = kind_ == Kind::kTranspose
                            ? DeconvOutputLength(in, k, options_.padding, s, d)
                            : ConvOutputLength(in, k, options_.padding, s, d);
    if (in >= 0 && out <= 0) {
      return InvalidArgument(Who(), ": input ", input.ToPythonString(),
                             " is too small for kernel_size ",
                             internal::DimsString(options_.kernel_size), " with dilation_rate ",
                             internal::DimsString(options_.dilation_rate), " and padding \"",
                             PaddingName(options_.padding), "\"");
    }
    dims.push_back(out);
  }
  dims.push_back(OutputChannels(channels));
  return PartialShape::FromDims(dims);
}

Status ConvBase::Build(const PartialShape& input) {
  if (built()) return OkStatus();
  KILN_RETURN_IF_ERROR(invalid_);
  KILN_RETURN_IF_ERROR(OutputShape(input).status());
  const int64_t in = input.dim(spatial_ + 1);
  if (in < 0) {
    return InvalidArgument(Who(), ": the input's channel dimension must be known to build the ",
                           "layer, got ", input.ToPythonString());
  }
  std::mt19937 own(options_.seed.value_or(0));
  std::mt19937& engine = options_.seed ? own : DefaultEngine();
  const std::vector<int64_t>& ks = options_.kernel_size;
  std::vector<int64_t> kernel_dims(ks.begin(), ks.end());
  int64_t bias_size = options_.filters;
  switch (kind_) {
    case Kind::kConv:
      kernel_dims.insert(kernel_dims.end(), {in / options_.groups, options_.filters});
      break;
    case Kind::kDepthwise:
    case Kind::kSeparable:
      kernel_dims.insert(kernel_dims.end(), {in, options_.depth_multiplier});
      if (kind_ == Kind::kDepthwise) bias_size = in * options_.depth_multiplier;
      break;
    case Kind::kTranspose:
      kernel_dims.insert(kernel_dims.end(), {options_.filters, in});
      break;
  }
  KILN_ASSIGN_OR_RETURN(Shape kernel_shape, MakeShape(kernel_dims));
  trace::Variable k = AddVariable(kind_ == Kind::kSeparable ? "depthwise_kernel" : "kernel",
                                  GlorotUniform(kernel_shape, engine));
  KILN_RETURN_IF_ERROR(k.status());
  if (kind_ == Kind::kSeparable) {
    const Shape pointwise{1, 1, in * options_.depth_multiplier, options_.filters};
    trace::Variable p = AddVariable("pointwise_kernel", GlorotUniform(pointwise, engine));
    KILN_RETURN_IF_ERROR(p.status());
    pointwise_kernel_ = p;
  }
  if (options_.use_bias) {
    trace::Variable b = AddVariable("bias", Zeros(DType::kFloat, Shape{bias_size}));
    KILN_RETURN_IF_ERROR(b.status());
    bias_ = b;
  }
  kernel_ = k;
  in_channels_ = in;
  std::vector<int64_t> dims(input.dims().begin(), input.dims().end());
  dims[0] = -1;
  KILN_ASSIGN_OR_RETURN(built_input_, PartialShape::FromDims(dims));
  return OkStatus();
}

trace::Value ConvBase::Convolve(const trace::Value& x) {
  const std::vector<int64_t>& s = options_.strides;
  const std::vector<int64_t>& d = options_.dilation_rate;
  const Padding pad = options_.padding;
  switch (kind_) {
    case Kind::kConv:
      if (spatial_ == 1) {
        // tf.nn.conv1d: a Conv2D over (batch, 1, steps, channels) with a [1, k, in, out] kernel.
        trace::Value y =
            internal::Conv2D(internal::ExpandDims(x, -3), internal::ExpandDims(kernel_.Read(), 0),
                             {1, s[0]}, {1, d[0]}, pad);
        return internal::Squeeze(y, {-3});
      }
      return internal::Conv2D(x, kernel_.Read(), s, d, pad);
    case Kind::kDepthwise:
      return internal::DepthwiseConv2D(x, kernel_.Read(), s, d, pad);
    case Kind::kSeparable: {
      trace::Value depthwise = internal::DepthwiseConv2D(x, kernel_.Read(), s, d, pad);
      return internal::Conv2D(depthwise, pointwise_kernel_.Read(), {1, 1}, {1, 1}, Padding::kValid);
    }
    case Kind::kTranspose: {
      Result<PartialShape> out = OutputShape(x.shape());
      if (!out.ok()) return trace::Value::Error(out.status());
      if (out->dim(1) < 0 || out->dim(2) < 0) {
        return trace::Value::Error(InvalidArgument(
            Who(), ": needs the input's height and width, got ", x.shape().ToPythonString()));
      }
      // The output size is an input of Conv2DBackpropInput; the batch size may be dynamic.
      trace::Value batch = trace::Gather(trace::ShapeOf(x), trace::Scalar<int32_t>(0));
      trace::Value size = internal::Pack({batch, trace::Scalar(static_cast<int32_t>(out->dim(1))),
                                          trace::Scalar(static_cast<int32_t>(out->dim(2))),
                                          trace::Scalar(static_cast<int32_t>(options_.filters))});
      return internal::Conv2DTranspose(x, kernel_.Read(), size, s, d, pad);
    }
  }
  return trace::Value::Error(Internal(Who(), ": unknown convolution kind"));
}

trace::Value ConvBase::Call(const trace::Value& input, bool /*training*/) {
  if (!built()) return trace::Value::Error(FailedPrecondition(Who(), " is not built"));
  trace::Value y = Convolve(input);
  if (options_.use_bias) y = trace::BiasAdd(y, bias_.Read());
  return ApplyActivation(options_.activation, y);
}

namespace {

ConvOptions Simple(int64_t filters, int64_t kernel_size, Activation activation, Padding padding) {
  ConvOptions o;
  o.filters = filters;
  o.kernel_size = {kernel_size};
  o.activation = activation;
  o.padding = padding;
  return o;
}

}  // namespace

Conv1D::Conv1D(ConvOptions options)
    : ConvBase("Conv1D", "conv1d", Kind::kConv, 1, std::move(options)) {}
Conv1D::Conv1D(int64_t filters, int64_t kernel_size, Activation activation, Padding padding)
    : Conv1D(Simple(filters, kernel_size, activation, padding)) {}

Conv2D::Conv2D(ConvOptions options)
    : ConvBase("Conv2D", "conv2d", Kind::kConv, 2, std::move(options)) {}
Conv2D::Conv2D(int64_t filters, int64_t kernel_size, Activation activation, Padding padding)
    : Conv2D(Simple(filters, kernel_size, activation, padding)) {}

DepthwiseConv2D::DepthwiseConv2D(ConvOptions options)
    : ConvBase("DepthwiseConv2D", "depthwise_conv2d", Kind::kDepthwise, 2, std::move(options)) {}

SeparableConv2D::SeparableConv2D(ConvOptions options)
    : ConvBase("SeparableConv2D", "separable_conv2d", Kind::kSeparable, 2, std::move(options)) {}

Conv2DTranspose::Conv2DTranspose(ConvOptions options)
    : ConvBase("Conv2DTranspose", "conv2d_transpose", Kind::kTranspose, 2, std::move(options)) {}

}  // namespace kiln::modules
