// The numerical gradient check: every op with a gradient function, on small inputs, against
// central differences of sum(output * w) for a fixed random w. The coverage case fails when an
// op gains a gradient function without a case here.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <map>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "kiln/trace/trace.h"

namespace kiln::trace {
namespace {

struct GradCase {
  std::string op;
  std::vector<Tensor> inputs;
  std::vector<int> wrt;  // inputs differentiated (float32)
  std::function<Values(const Values&)> build;
};

Tensor Floats(std::vector<int64_t> dims, std::vector<float> v) {
  Tensor t(DType::kFloat, *Shape::FromDims(dims));
  for (size_t i = 0; i < v.size(); ++i) t.flat<float>()[i] = v[i];
  return t;
}

// Distinct values in [lo, hi) (no ties, so max/min/relu kinks stay away).
Tensor Spread(std::vector<int64_t> dims, float lo, float hi, uint32_t seed) {
  Shape s = *Shape::FromDims(dims);
  const int64_t n = s.num_elements();
  std::vector<float> v(n);
  for (int64_t i = 0; i < n; ++i)
    v[i] = lo + (hi - lo) * (static_cast<float>(i) + 0.5F) / static_cast<float>(n);
  std::shuffle(v.begin(), v.end(), std::mt19937(seed));
  return Floats(dims, v);
}

Tensor Ints(std::vector<int64_t> dims, std::vector<int32_t> v) {
  Tensor t(DType::kInt32, *Shape::FromDims(dims));
  for (size_t i = 0; i < v.size(); ++i) t.flat<int32_t>()[i] = v[i];
  return t;
}

Value Op(std::string_view op, const Values& in,
         std::initializer_list<std::pair<const char*, int64_t>> ints = {}) {
  OpBuilder b(op);
  b.Inputs(in).Attr("T", in[0].dtype());
  for (const auto& [k, v] : ints) b.Attr(k, v);
  return b.BuildOne();
}

std::function<Values(const Values&)> Unary(std::string op) {
  return [op](const Values& in) { return Values{Op(op, in)}; };
}
std::function<Values(const Values&)> Binary(std::string op) {
  return [op](const Values& in) { return Values{Op(op, in)}; };
}

Value Reduce(std::string_view op, const Value& x, std::vector<int32_t> axes, bool keep) {
  Tensor a(DType::kInt32, Shape{static_cast<int64_t>(axes.size())});
  for (size_t i = 0; i < axes.size(); ++i) a.flat<int32_t>()[i] = axes[i];
  OpBuilder b(op);
  b.Input(x).Input(Constant(a)).Attr("T", x.dtype()).Attr("Tidx", DType::kInt32);
  if (keep) b.Attr("keep_dims", true);
  return b.BuildOne();
}

Value Conv(std::string_view op, const Value& x, const Value& w, std::vector<int64_t> strides,
           std::string_view padding) {
  return OpBuilder(op)
      .Input(x)
      .Input(w)
      .Attr("T", DType::kFloat)
      .Attr("strides", std::span<const int64_t>(strides))
      .Attr("padding", padding)
      .BuildOne();
}

Value Pool(std::string_view op, const Value& x) {
  std::vector<int64_t> k = {1, 2, 2, 1};
  return OpBuilder(op)
      .Input(x)
      .Attr("T", DType::kFloat)
      .Attr("ksize", std::span<const int64_t>(k))
      .Attr("strides", std::span<const int64_t>(k))
      .Attr("padding", "VALID")
      .BuildOne();
}

std::vector<GradCase> Cases() {
  std::vector<GradCase> c;
  const Tensor a23 = Spread({2, 3}, -1.5F, 1.5F, 1);
  const Tensor b23 = Spread({2, 3}, -1.4F, 1.6F, 2);
  const Tensor b3 = Spread({3}, 0.5F, 2.0F, 3);
  const Tensor pos23 = Spread({2, 3}, 0.5F, 2.0F, 4);
  for (const char* op :
       {"Identity", "Snapshot", "Neg", "Square", "Exp", "Tanh", "Sigmoid", "Sin", "Cos", "Erf",
        "Relu", "Relu6", "Elu", "Selu", "Softplus", "Softmax", "LogSoftmax"}) {
    c.push_back({op, {Spread({2, 3}, -1.5F, 1.5F, 5)}, {0}, Unary(op)});
  }
  for (const char* op : {"Sqrt", "Rsqrt", "Log", "Log1p", "Reciprocal", "Abs"}) {
    c.push_back({op, {pos23}, {0}, Unary(op)});
  }
  c.push_back({"CheckNumerics", {a23}, {0}, [](const Values& in) {
                 return Values{CheckNumerics(in[0], "checked")};
               }});
  c.push_back({"LeakyRelu", {a23}, {0}, [](const Values& in) {
                 return Values{OpBuilder("LeakyRelu")
                                   .Input(in[0])
                                   .Attr("T", DType::kFloat)
                                   .Attr("alpha", 0.3F)
                                   .BuildOne()};
               }});
  for (const char* op : {"Add", "AddV2", "Sub", "Mul", "SquaredDifference"}) {
    c.push_back({op, {a23, b3}, {0, 1}, Binary(op)});
  }
  // No ties within the finite-difference step.
  const Tensor apart3 = Floats({3}, {0.6F, 1.1F, -0.1F});
  for (const char* op : {"Maximum", "Minimum"})
    c.push_back({op, {a23, apart3}, {0, 1}, Binary(op)});
  for (const char* op : {"RealDiv", "Div", "Pow"})
    c.push_back({op, {pos23, b3}, {0, 1}, Binary(op)});
  c.push_back({"AddN", {a23, b23}, {0, 1}, [](const Values& in) {
                 return Values{OpBuilder("AddN")
                                   .Inputs(in)
                                   .Attr("N", int64_t{2})
                                   .Attr("T", DType::kFloat)
                                   .BuildOne()};
               }});
  c.push_back({"Cast", {a23}, {0}, [](const Values& in) {
                 return Values{OpBuilder("Cast")
                                   .Input(in[0])
                                   .Attr("SrcT", DType::kFloat)
                                   .Attr("DstT", DType::kDouble)
                                   .BuildOne()};
               }});
  const Tensor x234 = Spread({2, 3, 4}, -2.0F, 2.0F, 6);
  for (const char* op : {"Sum", "Mean", "Max", "Min"}) {
    c.push_back({op, {x234}, {0}, [op](const Values& in) {
                   return Values{Reduce(op, in[0], {1}, false), Reduce(op, in[0], {0, 2}, true)};
                 }});
  }
  const Tensor m34 = Spread({3, 4}, -1.0F, 1.0F, 7);
  const Tensor m43 = Spread({4, 3}, -1.0F, 1.0F, 8);
  c.push_back({"MatMul", {a23, m34}, {0, 1}, [m43](const Values& in) {
                 Values out{MatMul(in[0], in[1])};
                 out.push_back(MatMul(in[0], in[1], false, false));
                 out.push_back(MatMul(MatMul(in[0], in[1]), Constant(m43), false, false));
                 out.push_back(MatMul(in[1], in[0], true, true));
                 out.push_back(MatMul(in[0], in[0], true, false));
                 out.push_back(MatMul(in[0], in[0], false, true));
                 return out;
               }});
  const Tensor x223 = Spread({2, 2, 3}, -1.0F, 1.0F, 9);
  for (const char* op : {"BatchMatMulV2", "BatchMatMulV3"}) {
    c.push_back(
        {op, {x223, m34}, {0, 1}, [op](const Values& in) {
           OpBuilder b(op);
           b.Input(in[0]).Input(in[1]).Attr("T", DType::kFloat);
           if (std::string_view(op) == "BatchMatMulV3")
             b.Attr("Ta", DType::kFloat).Attr("Tb", DType::kFloat).Attr("Tout", DType::kFloat);
           return Values{b.BuildOne()};
         }});
  }
  c.push_back({"Select", {a23, b23}, {0, 1}, [](const Values& in) {
                 Value cond = OpBuilder("Greater")
                                  .Input(in[0])
                                  .Input(Constant(Tensor::Scalar(0.0F)))
                                  .Attr("T", DType::kFloat)
                                  .BuildOne();
                 Value stop =
                     OpBuilder("StopGradient").Input(cond).Attr("T", DType::kBool).BuildOne();
                 return Values{OpBuilder("Select")
                                   .Input(stop)
                                   .Input(in[0])
                                   .Input(in[1])
                                   .Attr("T", DType::kFloat)
                                   .BuildOne()};
               }});
  c.push_back({"SelectV2", {a23, b3}, {0, 1}, [](const Values& in) {
                 Tensor mask(DType::kBool, Shape{3});
                 mask.flat<bool>()[0] = true;
                 mask.flat<bool>()[1] = false;
                 mask.flat<bool>()[2] = true;
                 return Values{OpBuilder("SelectV2")
                                   .Input(Constant(mask))
                                   .Input(in[0])
                                   .Input(in[1])
                                   .Attr("T", DType::kFloat)
                                   .BuildOne()};
               }});
  c.push_back({"BiasAdd", {a23, b3}, {0, 1}, Binary("BiasAdd")});
  c.push_back({"BiasAddV1", {a23, b3}, {0, 1}, Binary("BiasAddV1")});
  const Tensor img = Spread({1, 5, 5, 2}, -1.0F, 1.0F, 10);
  c.push_back(
      {"Conv2D", {img, Spread({3, 3, 2, 3}, -0.5F, 0.5F, 11)}, {0, 1}, [](const Values& in) {
         return Values{Conv("Conv2D", in[0], in[1], {1, 1, 1, 1}, "SAME"),
                       Conv("Conv2D", in[0], in[1], {1, 2, 2, 1}, "VALID")};
       }});
  // Grouped: 2 input channels, a filter with 1 in-channel, 2 groups of 2 filters.
  c.push_back(
      {"Conv2D", {img, Spread({3, 3, 1, 4}, -0.5F, 0.5F, 17)}, {0, 1}, [](const Values& in) {
         return Values{Conv("Conv2D", in[0], in[1], {1, 1, 1, 1}, "SAME"),
                       Conv("Conv2D", in[0], in[1], {1, 2, 2, 1}, "VALID")};
       }});
  // Conv2DBackpropInput(input_sizes, filter, out_backprop): a transposed convolution.
  c.push_back({"Conv2DBackpropInput",
               {Spread({3, 3, 3, 2}, -0.5F, 0.5F, 18), Spread({1, 2, 2, 2}, -1.0F, 1.0F, 19)},
               {0, 1},
               [](const Values& in) {
                 std::vector<int64_t> strides = {1, 2, 2, 1};
                 return Values{OpBuilder("Conv2DBackpropInput")
                                   .Input(Constant(Ints({4}, {1, 5, 5, 3})))
                                   .Input(in[0])
                                   .Input(in[1])
                                   .Attr("T", DType::kFloat)
                                   .Attr("strides", std::span<const int64_t>(strides))
                                   .Attr("padding", "VALID")
                                   .BuildOne()};
               }});
  c.push_back({"DepthwiseConv2dNative",
               {img, Spread({3, 3, 2, 2}, -0.5F, 0.5F, 12)},
               {0, 1},
               [](const Values& in) {
                 return Values{Conv("DepthwiseConv2dNative", in[0], in[1], {1, 1, 1, 1}, "SAME"),
                               Conv("DepthwiseConv2dNative", in[0], in[1], {1, 2, 2, 1}, "VALID")};
               }});
  const Tensor img4 = Spread({1, 4, 4, 2}, -1.0F, 1.0F, 13);
  c.push_back(
      {"MaxPool", {img4}, {0}, [](const Values& in) { return Values{Pool("MaxPool", in[0])}; }});
  c.push_back(
      {"AvgPool", {img4}, {0}, [](const Values& in) { return Values{Pool("AvgPool", in[0])}; }});
  const Tensor logits = Spread({3, 4}, -2.0F, 2.0F, 14);
  c.push_back({"SparseSoftmaxCrossEntropyWithLogits",
               {logits, Ints({3}, {1, 3, 0})},
               {0},
               [](const Values& in) {
                 Values r = OpBuilder("SparseSoftmaxCrossEntropyWithLogits")
                                .Input(in[0])
                                .Input(in[1])
                                .Attr("T", DType::kFloat)
                                .Attr("Tlabels", DType::kInt32)
                                .Build();
                 return Values{r[0]};
               }});
  c.push_back(
      {"SoftmaxCrossEntropyWithLogits",
       {logits, Floats({3, 4}, {0.1F, 0.2F, 0.3F, 0.4F, 1, 0, 0, 0, 0.25F, 0.25F, 0.5F, 0})},
       {0, 1},
       [](const Values& in) {
         Values r = OpBuilder("SoftmaxCrossEntropyWithLogits")
                        .Input(in[0])
                        .Input(in[1])
                        .Attr("T", DType::kFloat)
                        .Build();
         return Values{r[0]};
       }});
  c.push_back({"FusedBatchNormV3",
               {Spread({2, 2, 2, 3}, -1.0F, 1.0F, 15), Floats({3}, {1.0F, 0.5F, 2.0F}),
                Floats({3}, {0.1F, -0.2F, 0.3F})},
               {0, 1, 2},
               [](const Values& in) {
                 Values r = OpBuilder("FusedBatchNormV3")
                                .Input(in[0])
                                .Input(in[1])
                                .Input(in[2])
                                .Input(Constant(Tensor(DType::kFloat, Shape{0})))
                                .Input(Constant(Tensor(DType::kFloat, Shape{0})))
                                .Attr("T", DType::kFloat)
                                .Attr("U", DType::kFloat)
                                .Attr("epsilon", 0.001F)
                                .Build();
                 return Values{r[0]};
               }});
  auto shape = [](std::vector<int32_t> v) {
    return Constant(Ints({static_cast<int64_t>(v.size())}, v));
  };
  c.push_back({"Reshape", {a23}, {0}, [shape](const Values& in) {
                 return Values{OpBuilder("Reshape")
                                   .Input(in[0])
                                   .Input(shape({3, 2}))
                                   .Attr("T", DType::kFloat)
                                   .Attr("Tshape", DType::kInt32)
                                   .BuildOne()};
               }});
  c.push_back({"ExpandDims", {a23}, {0}, [](const Values& in) {
                 return Values{OpBuilder("ExpandDims")
                                   .Input(in[0])
                                   .Input(Constant(Tensor::Scalar(int32_t{1})))
                                   .Attr("T", DType::kFloat)
                                   .Attr("Tdim", DType::kInt32)
                                   .BuildOne()};
               }});
  c.push_back({"Squeeze", {Spread({2, 1, 3}, -1, 1, 16)}, {0}, Unary("Squeeze")});
  c.push_back({"Transpose", {x234}, {0}, [shape](const Values& in) {
                 return Values{OpBuilder("Transpose")
                                   .Input(in[0])
                                   .Input(shape({2, 0, 1}))
                                   .Attr("T", DType::kFloat)
                                   .Attr("Tperm", DType::kInt32)
                                   .BuildOne()};
               }});
  c.push_back({"ConcatV2", {a23, b23}, {0, 1}, [](const Values& in) {
                 return Values{OpBuilder("ConcatV2")
                                   .Input(in[0])
                                   .Input(in[1])
                                   .Input(Constant(Tensor::Scalar(int32_t{1})))
                                   .Attr("N", int64_t{2})
                                   .Attr("T", DType::kFloat)
                                   .Attr("Tidx", DType::kInt32)
                                   .BuildOne()};
               }});
  c.push_back({"Pack", {a23, b23}, {0, 1}, [](const Values& in) {
                 return Values{OpBuilder("Pack")
                                   .Inputs(in)
                                   .Attr("N", int64_t{2})
                                   .Attr("T", DType::kFloat)
                                   .Attr("axis", int64_t{1})
                                   .BuildOne()};
               }});
  c.push_back({"Unpack", {a23}, {0}, [](const Values& in) {
                 return OpBuilder("Unpack")
                     .Input(in[0])
                     .Attr("num", int64_t{3})
                     .Attr("T", DType::kFloat)
                     .Attr("axis", int64_t{1})
                     .Build();
               }});
  c.push_back({"Slice", {x234}, {0}, [shape](const Values& in) {
                 return Values{OpBuilder("Slice")
                                   .Input(in[0])
                                   .Input(shape({0, 1, 1}))
                                   .Input(shape({2, 2, -1}))
                                   .Attr("T", DType::kFloat)
                                   .Attr("Index", DType::kInt32)
                                   .BuildOne()};
               }});
  c.push_back({"Pad", {a23}, {0}, [](const Values& in) {
                 return Values{OpBuilder("Pad")
                                   .Input(in[0])
                                   .Input(Constant(Ints({2, 2}, {1, 0, 0, 2})))
                                   .Attr("T", DType::kFloat)
                                   .Attr("Tpaddings", DType::kInt32)
                                   .BuildOne()};
               }});
  for (const char* op : {"GatherV2", "Gather"}) {
    c.push_back({op, {m43}, {0}, [op](const Values& in) {
                   OpBuilder b(op);
                   b.Input(in[0])
                       .Input(Constant(Ints({2, 2}, {3, 0, 3, 1})))
                       .Attr("Tparams", DType::kFloat)
                       .Attr("Tindices", DType::kInt32);
                   if (std::string_view(op) == "GatherV2")
                     b.Input(Constant(Tensor::Scalar(int32_t{0}))).Attr("Taxis", DType::kInt32);
                   else
                     b.Attr("validate_indices", true);
                   return Values{b.BuildOne()};
                 }});
  }
  // Along another axis (transposed to axis 0 and back), and with a batch dim (offset indices).
  for (const auto& axis_batch : std::vector<std::pair<int32_t, int64_t>>{{2, 0}, {2, 1}}) {
    const int32_t axis = axis_batch.first;
    const int64_t batch_dims = axis_batch.second;
    c.push_back({"GatherV2", {x234}, {0}, [axis, batch_dims](const Values& in) {
                   return Values{OpBuilder("GatherV2")
                                     .Input(in[0])
                                     .Input(Constant(Ints({2, 3}, {3, 0, 3, 1, 2, 2})))
                                     .Input(Constant(Tensor::Scalar(axis)))
                                     .Attr("Tparams", DType::kFloat)
                                     .Attr("Tindices", DType::kInt32)
                                     .Attr("Taxis", DType::kInt32)
                                     .Attr("batch_dims", batch_dims)
                                     .BuildOne()};
                 }});
  }
  c.push_back({"BroadcastTo", {b3}, {0}, [shape](const Values& in) {
                 return Values{OpBuilder("BroadcastTo")
                                   .Input(in[0])
                                   .Input(shape({2, 3}))
                                   .Attr("T", DType::kFloat)
                                   .Attr("Tidx", DType::kInt32)
                                   .BuildOne()};
               }});
  c.push_back({"Tile", {a23}, {0}, [shape](const Values& in) {
                 return Values{OpBuilder("Tile")
                                   .Input(in[0])
                                   .Input(shape({2, 3}))
                                   .Attr("T", DType::kFloat)
                                   .Attr("Tmultiples", DType::kInt32)
                                   .BuildOne()};
               }});
  c.push_back({"Split", {x234}, {0}, [](const Values& in) {
                 return OpBuilder("Split")
                     .Input(Constant(Tensor::Scalar(int32_t{2})))
                     .Input(in[0])
                     .Attr("num_split", int64_t{2})
                     .Attr("T", DType::kFloat)
                     .Build();
               }});
  c.push_back({"SplitV", {x234}, {0}, [shape](const Values& in) {
                 return OpBuilder("SplitV")
                     .Input(in[0])
                     .Input(shape({1, 3}))
                     .Input(Constant(Tensor::Scalar(int32_t{2})))
                     .Attr("num_split", int64_t{2})
                     .Attr("T", DType::kFloat)
                     .Attr("Tlen", DType::kInt32)
                     .Build();
               }});
  return c;
}

// sum over the outputs of sum(out * w), with w fixed pseudo-random per output element.
Value Projection(const Values& outs) {
  uint32_t seed = 99;
  Value sum;
  for (const Value& o : outs) {
    if (!o.ok()) return o;
    Result<Shape> s = o.shape().ToShape();
    if (!s.ok()) return Value::Error(s.status());
    Tensor w(o.dtype(), *s);
    std::mt19937 gen(seed++);
    std::uniform_real_distribution<double> dist(-1.0, 1.0);
    for (int64_t i = 0; i < s->num_elements(); ++i) {
      if (o.dtype() == DType::kDouble) {
        w.flat<double>()[i] = dist(gen);
      } else {
        w.flat<float>()[i] = static_cast<float>(dist(gen));
      }
    }
    Value term = Sum(Cast(Mul(o, Constant(w)), DType::kDouble));
    sum = sum.empty() ? term : Add(sum, term);
  }
  return sum;
}

double ScalarOf(const Value& v) {
  Result<Tensor> t = v.tensor();
  REQUIRE_MESSAGE(t.ok(), t.status().ToString());
  return t->flat<double>()[0];
}

double Evaluate(const GradCase& c, const std::vector<Tensor>& inputs) {
  Values in(inputs.begin(), inputs.end());
  return ScalarOf(Projection(c.build(in)));
}

TEST_CASE("every op with a gradient function matches central differences") {
  for (const GradCase& c : Cases()) {
    CAPTURE(c.op);
    Values in(c.inputs.begin(), c.inputs.end());
    GradientTape tape;
    for (int i : c.wrt) tape.Watch(in[i]);
    Value loss = Projection(c.build(in));
    REQUIRE_MESSAGE(loss.ok(), loss.status().ToString());
    Values sources;
    for (int i : c.wrt) sources.push_back(in[i]);
    Result<Values> grads = tape.Gradient(loss, sources);
    REQUIRE_MESSAGE(grads.ok(), grads.status().ToString());
    for (size_t k = 0; k < c.wrt.size(); ++k) {
      const int i = c.wrt[k];
      CAPTURE(i);
      REQUIRE_FALSE((*grads)[k].empty());
      Result<Tensor> analytic = (*grads)[k].tensor();
      REQUIRE_MESSAGE(analytic.ok(), analytic.status().ToString());
      REQUIRE(analytic->shape() == c.inputs[i].shape());
      REQUIRE(analytic->dtype() == DType::kFloat);
      for (int64_t e = 0; e < c.inputs[i].NumElements(); ++e) {
        CAPTURE(e);
        constexpr float kEps = 1e-2F;
        std::vector<Tensor> plus = c.inputs;
        std::vector<Tensor> minus = c.inputs;
        plus[i] = c.inputs[i].DeepCopy();
        minus[i] = c.inputs[i].DeepCopy();
        plus[i].flat<float>()[e] += kEps;
        minus[i].flat<float>()[e] -= kEps;
        const double numeric = (Evaluate(c, plus) - Evaluate(c, minus)) / (2.0 * kEps);
        const double got = analytic->flat<float>()[e];
        CHECK(std::abs(got - numeric) <= 2e-3 + 1e-2 * std::abs(numeric));
      }
    }
  }
}

TEST_CASE("the numerical check has a case for every op with a gradient function") {
  std::set<std::string> covered;
  for (const GradCase& c : Cases()) covered.insert(c.op);
  // Functional control flow exists only in a trace: control_flow_gradient_test.cc checks it,
  // eagerly and traced, against central differences.
  for (const char* op : {"If", "StatelessIf", "While", "StatelessWhile"}) covered.insert(op);
  std::vector<std::string> missing;
  for (const std::string& op : OpsWithGradient()) {
    if (covered.count(op) == 0) missing.push_back(op);
  }
  CHECK_MESSAGE(missing.empty(), "no gradient check for: " << doctest::toString(missing.size()));
  for (const std::string& op : missing) MESSAGE(op);
}

}  // namespace
}  // namespace kiln::trace
