// Gradient functions of neural-network ops (TensorFlow's nn_grad.py semantics and op names:
// ReluGrad, BiasAddGrad, Conv2DBackpropInput/Filter, MaxPoolGrad, AvgPoolGrad, ...).
#include <string>
#include <vector>

#include "gradients/grad_ops.h"
#include "host_scalar.h"
#include "kiln/trace/op_builder.h"
#include "kiln/trace/ops.h"
#include "tape.h"

namespace kiln::trace::internal {
namespace {

// Copies the forward op's attrs that its backprop ops share (when set).
void CopyAttrs(const GradContext& ctx, OpBuilder& b, std::initializer_list<const char*> names) {
  for (const char* name : names) {
    const tensorflow::AttrValue* a = ctx.Find(name);
    if (a == nullptr) continue;
    if (a->has_list()) {
      std::vector<int64_t> v(a->list().i().begin(), a->list().i().end());
      b.Attr(name, std::span<const int64_t>(v));
    } else if (a->value_case() == tensorflow::AttrValue::kS) {
      b.Attr(name, std::string_view(a->s()));
    } else if (a->value_case() == tensorflow::AttrValue::kF) {
      b.Attr(name, a->f());
    } else if (a->value_case() == tensorflow::AttrValue::kB) {
      b.Attr(name, a->b());
    } else if (a->value_case() == tensorflow::AttrValue::kI) {
      b.Attr(name, static_cast<int64_t>(a->i()));
    }
  }
}

Value GreaterThanZero(const Value& x) {
  return OpBuilder("Greater").Input(x).Input(ZerosLike(x)).Attr("T", x.dtype()).BuildOne();
}

Result<Values> ReluGrad(const GradContext& ctx, const Values& g) {
  return Values{Op2("ReluGrad", g[0], ctx.output(0))};
}

Result<Values> Relu6Grad(const GradContext& ctx, const Values& g) {
  return Values{Op2("Relu6Grad", g[0], ctx.input(0))};
}

Result<Values> EluGrad(const GradContext& ctx, const Values& g) {
  // x > 0 ? g : g * (y + 1)
  const Value& y = ctx.output(0);
  return Values{
      SelectV2(GreaterThanZero(ctx.input(0)), g[0], Mul(g[0], Add(y, HostScalar(y, 1.0))))};
}

Result<Values> SeluGrad(const GradContext& ctx, const Values& g) {
  // x > 0 ? scale * g : g * (y + scale * alpha)
  constexpr double kScale = 1.0507009873554804934193349852946;
  constexpr double kAlpha = 1.6732632423543772848170429916717;
  const Value& y = ctx.output(0);
  return Values{SelectV2(GreaterThanZero(ctx.input(0)), Mul(g[0], HostScalar(y, kScale)),
                         Mul(g[0], Add(y, HostScalar(y, kScale * kAlpha))))};
}

Result<Values> LeakyReluGrad(const GradContext& ctx, const Values& g) {
  const Value& x = ctx.input(0);
  const double alpha = ctx.Float("alpha", 0.2F);
  return Values{SelectV2(GreaterThanZero(x), g[0], Mul(g[0], HostScalar(x, alpha)))};
}

Result<Values> SoftplusGrad(const GradContext& ctx, const Values& g) {
  return Values{Mul(g[0], Op1("Sigmoid", ctx.input(0)))};
}

Result<Values> BiasAddGrad(const GradContext& ctx, const Values& g) {
  Values out(2);
  out[0] = g[0];
  if (ctx.need(1)) {
    OpBuilder b("BiasAddGrad");
    b.Input(g[0]).Attr("T", g[0].dtype());
    CopyAttrs(ctx, b, {"data_format"});
    out[1] = b.BuildOne();
  }
  return out;
}

constexpr std::initializer_list<const char*> kConvAttrs = {
    "strides", "padding", "explicit_paddings", "dilations", "data_format", "use_cudnn_on_gpu"};

// One Conv2D(BackpropInput|BackpropFilter) / DepthwiseConv2dNative* op with the forward op's
// attrs: `a` (input or input_sizes), `b` (filter or filter_sizes), `c` (out_backprop).
Value ConvOp(const GradContext& ctx, const std::string& op, const Value& a, const Value& b,
             const Value& c) {
  OpBuilder builder(op);
  builder.Input(a).Input(b);
  if (!c.empty()) builder.Input(c);
  builder.Attr("T", c.empty() ? a.dtype() : c.dtype());
  CopyAttrs(ctx, builder, kConvAttrs);
  return builder.BuildOne();
}

// The channel axis of a 4-D convolution operand.
int64_t ChannelAxis(const GradContext& ctx) { return ctx.String("data_format") == "NCHW" ? 1 : 3; }

// `x` split into `n` along `axis`, or the split's error.
Result<Values> SplitAxis(const Value& x, int64_t axis, int64_t n) {
  Values parts = OpBuilder("Split")
                     .Input(HostScalar(DType::kInt32, static_cast<double>(axis)))
                     .Input(x)
                     .Attr("num_split", n)
                     .Attr("T", x.dtype())
                     .Build();
  for (const Value& p : parts) KILN_RETURN_IF_ERROR(p.status());
  if (parts.size() != static_cast<size_t>(n))
    return Internal("Split gave ", parts.size(), " parts");
  return parts;
}

Value Concat(const Values& parts, int64_t axis) {
  return OpBuilder("ConcatV2")
      .Inputs(parts)
      .Input(HostScalar(DType::kInt32, static_cast<double>(axis)))
      .Attr("N", static_cast<int64_t>(parts.size()))
      .Attr("T", parts[0].dtype())
      .Attr("Tidx", DType::kInt32)
      .BuildOne();
}

// A grouped Conv2D (input channels a multiple of the filter's in-channels): our backprop kernels
// take one group at a time, so the gradient splits input, filter and out_backprop per group
// (Split), takes each group's backprops and joins them (ConcatV2). TensorFlow runs the same graph.
Result<Values> GroupedConv2DGrad(const GradContext& ctx, const Values& g, int64_t groups) {
  const int64_t c = ChannelAxis(ctx);
  KILN_ASSIGN_OR_RETURN(const Values xs, SplitAxis(ctx.input(0), c, groups));
  KILN_ASSIGN_OR_RETURN(const Values dys, SplitAxis(g[0], c, groups));
  KILN_ASSIGN_OR_RETURN(const Values ws, SplitAxis(ctx.input(1), 3, groups));  // HWIO
  Values dx, dw;
  for (int64_t i = 0; i < groups; ++i) {
    if (ctx.need(0))
      dx.push_back(ConvOp(ctx, "Conv2DBackpropInput", ShapeValue(xs[i]), ws[i], dys[i]));
    if (ctx.need(1))
      dw.push_back(ConvOp(ctx, "Conv2DBackpropFilter", xs[i], ShapeValue(ws[i]), dys[i]));
  }
  Values out(2);
  if (ctx.need(0)) out[0] = Concat(dx, c);
  if (ctx.need(1)) out[1] = Concat(dw, 3);
  return out;
}

Result<Values> Conv2DGrad(const GradContext& ctx, const Values& g) {
  const Value& x = ctx.input(0);
  const Value& w = ctx.input(1);
  const std::string prefix = ctx.op == "Conv2D" ? "Conv2D" : "DepthwiseConv2dNative";
  if (ctx.op == "Conv2D" && x.shape().rank() == 4 && w.shape().rank() == 4) {
    const int64_t in_c = x.shape().dim(static_cast<int>(ChannelAxis(ctx)));
    const int64_t filter_in_c = w.shape().dim(2);
    if (in_c > 0 && filter_in_c > 0 && in_c != filter_in_c && in_c % filter_in_c == 0) {
      return GroupedConv2DGrad(ctx, g, in_c / filter_in_c);
    }
  }
  Values out(2);
  if (ctx.need(0)) out[0] = ConvOp(ctx, prefix + "BackpropInput", ShapeValue(x), w, g[0]);
  if (ctx.need(1)) out[1] = ConvOp(ctx, prefix + "BackpropFilter", x, ShapeValue(w), g[0]);
  return out;
}

// TensorFlow's _Conv2DBackpropInputGrad: inputs (input_sizes, filter, out_backprop); the
// filter's gradient is a Conv2DBackpropFilter of the incoming gradient against out_backprop,
// out_backprop's a Conv2D of the incoming gradient with the filter.
Result<Values> Conv2DBackpropInputGrad(const GradContext& ctx, const Values& g) {
  const Value& w = ctx.input(1);
  const Value& dy = ctx.input(2);
  Values out(3);
  if (ctx.need(1)) out[1] = ConvOp(ctx, "Conv2DBackpropFilter", g[0], ShapeValue(w), dy);
  if (ctx.need(2)) out[2] = ConvOp(ctx, "Conv2D", g[0], w, Value());
  return out;
}

Result<Values> MaxPoolGrad(const GradContext& ctx, const Values& g) {
  OpBuilder b("MaxPoolGrad");
  b.Input(ctx.input(0)).Input(ctx.output(0)).Input(g[0]).Attr("T", g[0].dtype());
  CopyAttrs(ctx, b, {"ksize", "strides", "padding", "explicit_paddings", "data_format"});
  return Values{b.BuildOne()};
}

Result<Values> AvgPoolGrad(const GradContext& ctx, const Values& g) {
  OpBuilder b("AvgPoolGrad");
  b.Input(ShapeValue(ctx.input(0))).Input(g[0]).Attr("T", g[0].dtype());
  CopyAttrs(ctx, b, {"ksize", "strides", "padding", "data_format"});
  return Values{b.BuildOne()};
}

Value SumLastAxisKeep(const Value& x) {
  std::vector<int64_t> axis = {-1};
  return SumAxes(x, Int32s(axis), /*keep_dims=*/true);
}

Result<Values> SoftmaxGrad(const GradContext& ctx, const Values& g) {
  // (g - sum(g * y, -1)) * y
  const Value& y = ctx.output(0);
  return Values{Mul(Sub(g[0], SumLastAxisKeep(Mul(g[0], y))), y)};
}

Result<Values> LogSoftmaxGrad(const GradContext& ctx, const Values& g) {
  // g - sum(g, -1) * exp(y)
  return Values{Sub(g[0], Mul(SumLastAxisKeep(g[0]), Op1("Exp", ctx.output(0))))};
}

Value ExpandLast(const Value& x) {
  return OpBuilder("ExpandDims")
      .Input(x)
      .Input(HostScalar(DType::kInt32, -1.0))
      .Attr("T", x.dtype())
      .Attr("Tdim", DType::kInt32)
      .BuildOne();
}

Result<Values> SparseXentGrad(const GradContext& ctx, const Values& g) {
  // Outputs (loss, backprop): the logits' gradient is the backprop output scaled per row.
  Values out(2);
  if (!g[0].empty()) out[0] = Mul(ExpandLast(g[0]), ctx.output(1));
  return out;
}

Result<Values> XentGrad(const GradContext& ctx, const Values& g) {
  Values out(2);
  if (g[0].empty()) return out;
  Value ge = ExpandLast(g[0]);
  out[0] = Mul(ge, ctx.output(1));
  if (ctx.need(1)) {
    Value log_softmax =
        OpBuilder("LogSoftmax").Input(ctx.input(0)).Attr("T", ge.dtype()).BuildOne();
    out[1] = Mul(ge, Op1("Neg", log_softmax));
  }
  return out;
}

Result<Values> FusedBatchNormGrad(const GradContext& ctx, const Values& g) {
  // Inputs x, scale, offset, mean, variance; outputs y, batch_mean, batch_var, reserve 1-3.
  const bool training = ctx.Bool("is_training", true);
  OpBuilder b("FusedBatchNormGradV3");
  b.Input(g[0]).Input(ctx.input(0)).Input(ctx.input(1));
  if (training) {
    b.Input(ctx.output(3)).Input(ctx.output(4)).Input(ctx.output(5));
  } else {
    // Inference: the population statistics stand for the reserve spaces (TensorFlow).
    b.Input(ctx.input(3)).Input(ctx.input(4)).Input(ctx.output(5));
  }
  b.Attr("T", ctx.input(0).dtype()).Attr("U", ctx.input(1).dtype());
  CopyAttrs(ctx, b, {"epsilon", "data_format", "is_training"});
  Values r = b.Build();
  if (r.size() < 3)
    return r.empty() ? Internal("FusedBatchNormGradV3 gave no outputs") : r[0].status();
  return Values{r[0], r[1], r[2], Value(), Value()};
}

constexpr GradientDef kNnGradients[] = {
    {"Relu", ReluGrad},
    {"Relu6", Relu6Grad},
    {"Elu", EluGrad},
    {"Selu", SeluGrad},
    {"LeakyRelu", LeakyReluGrad},
    {"Softplus", SoftplusGrad},
    {"BiasAdd", BiasAddGrad},
    {"BiasAddV1", BiasAddGrad},
    {"Conv2D", Conv2DGrad},
    {"DepthwiseConv2dNative", Conv2DGrad},
    {"Conv2DBackpropInput", Conv2DBackpropInputGrad},
    {"MaxPool", MaxPoolGrad},
    {"AvgPool", AvgPoolGrad},
    {"Softmax", SoftmaxGrad},
    {"LogSoftmax", LogSoftmaxGrad},
    {"SparseSoftmaxCrossEntropyWithLogits", SparseXentGrad},
    {"SoftmaxCrossEntropyWithLogits", XentGrad},
    {"FusedBatchNormV3", FusedBatchNormGrad},
};

}  // namespace

std::span<const GradientDef> NnGradients() { return kNnGradients; }

}  // namespace kiln::trace::internal
