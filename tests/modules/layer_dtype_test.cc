// What a layer does with an input that is not float32 (Keras's autocast in Layer.__call__), and
// what an unbuilt layer's variable accessors say.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "kiln/modules/conv.h"
#include "kiln/modules/core_layers.h"
#include "kiln/modules/dense.h"
#include "kiln/modules/normalization.h"
#include "kiln/modules/pooling.h"
#include "kiln/modules/sequential.h"
#include "layer_test_util.h"

namespace kiln::modules {
namespace {

using testing::Contains;
using testing::MaxRelDiff;
using testing::Mentions;
using testing::OpsOf;
using testing::RandomTensor;
using trace::Value;
using trace::Values;

Tensor CastTensor(const Tensor& x, DType dtype) {
  Value y = trace::Cast(x, dtype);
  REQUIRE_MESSAGE(y.ok(), y.status().ToString());
  return *y.tensor();
}

TEST_CASE("a float64 input to a float32 layer is cast to float32, as Keras autocasts it") {
  Dense dense(DenseOptions{.units = 2, .input_dim = 3, .seed = 1});
  const Tensor x = RandomTensor(Shape{4, 3}, 2);
  Value want = dense(x);
  Value got = dense(CastTensor(x, DType::kDouble));
  REQUIRE_MESSAGE(got.ok(), got.status().ToString());
  CHECK(got.dtype() == DType::kFloat);
  CHECK(MaxRelDiff(*got.tensor(), *want.tensor()) == 0.0f);

  // Traced: the cast is a node of the layer's scope, and a Sequential passes float32 on.
  Sequential model("model");
  model.Add<Dense>(DenseOptions{.units = 2, .input_dim = 3, .seed = 1});
  model.Add<Flatten>();
  trace::Function f("f", {{"x", DType::kDouble, PartialShape({-1, 3})}},
                    [&model](const Values& a) -> Result<Values> { return Values{model(a[0])}; });
  auto traced = f(CastTensor(x, DType::kDouble));
  REQUIRE_MESSAGE(traced.ok(), traced.status().ToString());
  CHECK(traced->at(0).dtype() == DType::kFloat);
  CHECK(MaxRelDiff(traced->at(0), *want.tensor()) == 0.0f);
  auto cf = f.GetConcreteFunction();
  REQUIRE(cf.ok());
  CHECK(Contains(OpsOf(**cf), "Cast"));
}

TEST_CASE("integer inputs: cast where Keras's ops promote, kept where data only moves") {
  Dense dense(DenseOptions{.units = 2, .input_dim = 3, .seed = 1});
  Tensor ints(DType::kInt32, Shape{2, 3});
  for (int64_t i = 0; i < 6; ++i) ints.flat<int32_t>()[i] = static_cast<int32_t>(i) - 2;
  Value y = dense(ints);
  REQUIRE_MESSAGE(y.ok(), y.status().ToString());
  CHECK(y.dtype() == DType::kFloat);
  CHECK(MaxRelDiff(*y.tensor(), *dense(CastTensor(ints, DType::kFloat)).tensor()) == 0.0f);

  Flatten flatten;
  Value same = flatten(ints);
  REQUIRE_MESSAGE(same.ok(), same.status().ToString());
  CHECK(same.dtype() == DType::kInt32);

  Embedding embedding(5, 2);  // float ids are cast to float32, then to int32 ids, as in Keras
  Tensor ids(DType::kDouble, Shape{2});
  ids.flat<double>()[0] = 3;
  ids.flat<double>()[1] = 1;
  Value e = embedding(ids);
  REQUIRE_MESSAGE(e.ok(), e.status().ToString());
  CHECK(e.dtype() == DType::kFloat);
}

TEST_CASE("an integer input to a convolution or an average pool is an error naming the layer") {
  Tensor ints(DType::kInt32, Shape{1, 4, 4, 1});
  Conv2D conv(ConvOptions{.filters = 2, .kernel_size = {1}});
  Value y = conv(ints);
  REQUIRE_FALSE(y.ok());
  CHECK_MESSAGE(Mentions(y.status(), "Conv2D 'conv2d': expected a float32 input, got int32"),
                y.status().ToString());
  CHECK(Mentions(y.status(), "Cast(x, DType::kFloat)"));
  AveragePooling2D pool;
  Value p = pool(ints);
  REQUIRE_FALSE(p.ok());
  CHECK_MESSAGE(Mentions(p.status(), "AveragePooling2D 'average_pooling2d'"),
                p.status().ToString());
  CHECK(Mentions(p.status(), "got int32"));
  // A string is never cast, even by a layer that casts integers.
  Dense dense(DenseOptions{.units = 2, .input_dim = 1});
  Value s = dense(Tensor::StringScalar("a"));
  REQUIRE_FALSE(s.ok());
  CHECK_MESSAGE(Mentions(s.status(), "Dense 'dense': expected a float32 input, got string"),
                s.status().ToString());
}

TEST_CASE("an unbuilt layer's variables say which layer and how to build it") {
  Dense dense(4);
  REQUIRE_FALSE(dense.kernel().valid());
  const Status s = dense.kernel().value().status();
  CHECK(s.code() == StatusCode::kFailedPrecondition);
  CHECK_MESSAGE(Mentions(s, "Dense 'dense': its kernel does not exist yet"), s.ToString());
  CHECK(Mentions(s, "has not been built"));
  CHECK(Mentions(s, "Call the layer once on an input"));
  CHECK(Mentions(dense.bias().Read().status(), "its bias does not exist yet"));
  REQUIRE(dense(RandomTensor(Shape{1, 3}, 5)).ok());
  CHECK(dense.kernel().valid());
  CHECK(dense.kernel().shape() == PartialShape({3, 4}));
  CHECK(dense.kernel() == dense.kernel());  // the same variable each time

  // Built, but without the variable: the options say why.
  BatchNormalization bn(BatchNormalizationOptions{.scale = false});
  REQUIRE(bn.Build(PartialShape({-1, 3})).ok());
  CHECK(bn.beta().valid());
  CHECK_MESSAGE(
      Mentions(bn.gamma().status(), "BatchNormalization 'batch_normalization' has no gamma"),
      bn.gamma().status().ToString());
}

}  // namespace
}  // namespace kiln::modules
