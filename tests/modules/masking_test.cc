// Masks into LSTM / GRU (Embedding mask_zero, Masking, a mask given to CallMasked) and their
// dropout / recurrent_dropout under the training flag. Keras's numbers are compared in
// tests/tf (test_layers_forward.py, test_functional_summary.py); these check the semantics.
#include <doctest/doctest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "kiln/modules/layers.h"
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

Tensor Bools(const Shape& shape, const std::vector<bool>& v) {
  Tensor t(DType::kBool, shape);
  for (size_t i = 0; i < v.size(); ++i) t.flat<bool>()[i] = v[i];
  return t;
}

// Rows [b] of a (batch, ...) tensor's leading steps: x[b, :steps, :].
Tensor Prefix(const Tensor& x, int64_t b, int64_t steps) {
  const int64_t t = x.shape().dim(1);
  const int64_t f = x.shape().dim(2);
  Tensor out(DType::kFloat, Shape{1, steps, f});
  for (int64_t i = 0; i < steps * f; ++i) out.flat<float>()[i] = x.flat<float>()[b * t * f + i];
  return out;
}

Tensor Row(const Tensor& y, int64_t b) {
  const int64_t n = y.NumElements() / y.shape().dim(0);
  std::vector<int64_t> dims(y.shape().dims().begin(), y.shape().dims().end());
  dims[0] = 1;
  Tensor out(DType::kFloat, *Shape::FromDims(dims));
  for (int64_t i = 0; i < n; ++i) out.flat<float>()[i] = y.flat<float>()[b * n + i];
  return out;
}

TEST_CASE("a right-padding mask gives the unpadded sequence's last output, for LSTM and GRU") {
  ManualSeed(21);
  const Tensor x = RandomTensor(Shape{2, 5, 3}, 1);
  const Tensor mask = Bools(Shape{2, 5}, {true, true, true, false, false,  //
                                          true, true, true, true, true});
  LSTM lstm(4);
  GRU gru(4);
  for (RecurrentBase* layer : std::vector<RecurrentBase*>{&lstm, &gru}) {
    auto masked = layer->CallMasked(x, mask).tensor();
    REQUIRE(masked.ok());
    auto first = (*layer)(Prefix(x, 0, 3)).tensor();
    auto second = (*layer)(Prefix(x, 1, 5)).tensor();
    REQUIRE(first.ok());
    REQUIRE(second.ok());
    CHECK(MaxRelDiff(Row(*masked, 0), *first) < 1e-6f);
    CHECK(MaxRelDiff(Row(*masked, 1), *second) < 1e-6f);
  }
}

TEST_CASE("masked steps repeat the previous output with return_sequences, zeros before any") {
  ManualSeed(22);
  const Tensor x = RandomTensor(Shape{1, 4, 2}, 2);
  const Tensor mask = Bools(Shape{1, 4}, {false, true, false, true});
  LSTM lstm(RecurrentOptions{.units = 3, .return_sequences = true});
  auto y = lstm.CallMasked(x, mask).tensor();
  REQUIRE(y.ok());
  auto at = [&](int64_t t, int64_t u) { return y->flat<float>()[t * 3 + u]; };
  for (int64_t u = 0; u < 3; ++u) {
    CHECK(at(0, u) == 0.0f);      // masked first step: the zero initial output
    CHECK(at(2, u) == at(1, u));  // masked: the previous output again
    CHECK(at(1, u) != 0.0f);
  }
  // With return_sequences the mask goes on to the next layer; without, it stops.
  const Value m(mask);
  CHECK_FALSE(lstm.ComputeMask(x, m).empty());
  LSTM last(3);
  CHECK(last.ComputeMask(x, m).empty());
}

TEST_CASE("Embedding(mask_zero) and Masking feed their masks to an LSTM in a Sequential") {
  ManualSeed(23);
  Sequential model("masked");
  model.Add<Embedding>(EmbeddingOptions{.input_dim = 10, .output_dim = 3, .mask_zero = true});
  model.Add<LSTM>(4);
  Tensor ids(DType::kInt32, Shape{2, 4});
  const std::vector<int32_t> v{3, 7, 0, 0, 3, 7, 5, 2};
  for (size_t i = 0; i < v.size(); ++i) ids.flat<int32_t>()[i] = v[i];
  auto y = model(ids).tensor();
  REQUIRE(y.ok());
  // The first row is the second's first two steps: masked steps change nothing.
  auto* lstm = dynamic_cast<LSTM*>(model.layers()[1]);
  REQUIRE(lstm != nullptr);
  const Value e = (*model.layers()[0])(ids);
  auto prefix = (*lstm)(Prefix(*e.tensor(), 1, 2)).tensor();
  REQUIRE(prefix.ok());
  CHECK(MaxRelDiff(Row(*y, 0), *prefix) < 1e-6f);

  Masking masking;
  Tensor x = RandomTensor(Shape{1, 3, 2}, 3);
  x.flat<float>()[2] = 0.0f;
  x.flat<float>()[3] = 0.0f;  // step 1 all zeros
  auto zeroed = masking(x).tensor();
  REQUIRE(zeroed.ok());
  auto keep = masking.ComputeMask(x, Value()).tensor();
  REQUIRE(keep.ok());
  CHECK(keep->flat<bool>()[0]);
  CHECK_FALSE(keep->flat<bool>()[1]);
  CHECK(keep->flat<bool>()[2]);
  CHECK(Mentions(masking(RandomTensor(Shape{3}, 4)).status(), "Masking 'masking'"));
}

TEST_CASE("a functional model passes its output mask on, inside a Sequential") {
  ManualSeed(25);
  SymbolicTensor ids = Input({4}, DType::kInt32);
  auto embed = MakeModel({ids},
                         {MakeLayer<Embedding>(EmbeddingOptions{
                             .input_dim = 10, .output_dim = 3, .mask_zero = true})(ids)},
                         "embed");
  Sequential model("outer");
  model.Add(embed.get());
  auto& lstm = model.Add<LSTM>(4);
  Tensor x(DType::kInt32, Shape{2, 4});
  const std::vector<int32_t> v{3, 7, 0, 0, 3, 7, 5, 2};
  for (size_t i = 0; i < v.size(); ++i) x.flat<int32_t>()[i] = v[i];
  auto y = model(x).tensor();
  REQUIRE(y.ok());
  const Value e = (*embed)(x);
  auto prefix = lstm(Prefix(*e.tensor(), 1, 2)).tensor();
  REQUIRE(prefix.ok());
  CHECK(MaxRelDiff(Row(*y, 0), *prefix) < 1e-6f);
}

TEST_CASE("recurrent dropout only while training, one mask for every step") {
  ManualSeed(24);
  const Tensor x = RandomTensor(Shape{8, 6, 5}, 5);
  RecurrentOptions o{.units = 4, .return_sequences = true, .seed = 3u};
  o.dropout = 0.5f;
  o.recurrent_dropout = 0.3f;
  LSTM lstm(o);
  RecurrentOptions plain_o = o;
  plain_o.dropout = 0.0f;
  plain_o.recurrent_dropout = 0.0f;
  LSTM plain(plain_o);  // the same seed: the same initial weights
  auto infer = lstm(x, false).tensor();
  auto reference = plain(x).tensor();
  REQUIRE(infer.ok());
  REQUIRE(reference.ok());
  CHECK(MaxRelDiff(*infer, *reference) == 0.0f);
  auto train = lstm(x, true).tensor();
  REQUIRE(train.ok());
  CHECK(MaxRelDiff(*train, *reference) > 1e-3f);

  trace::FunctionOptions options;
  trace::Function call("call", options, [&lstm](const trace::Args& a) -> Result<Values> {
    return Values{lstm(a[0].value(), a[1].bool_value())};
  });
  auto inference_graph = call.GetConcreteFunction(trace::Args{trace::Arg(x), trace::Arg(false)});
  REQUIRE(inference_graph.ok());
  CHECK_FALSE(Contains(OpsOf(**inference_graph), "RandomUniform"));
  auto training_graph = call.GetConcreteFunction(trace::Args{trace::Arg(x), trace::Arg(true)});
  REQUIRE(training_graph.ok());
  // Four gate masks for the input and four for h (Keras's implementation 1), drawn once per
  // call rather than once per step.
  const std::vector<std::string> ops = OpsOf(**training_graph);
  CHECK(std::count(ops.begin(), ops.end(), "RandomUniform") == 8);

  GRU gru(RecurrentOptions{.units = 3, .dropout = 0.5f, .seed = 1u});
  trace::Function gru_call("gru", options, [&gru](const trace::Args& a) -> Result<Values> {
    return Values{gru(a[0].value(), true)};
  });
  auto gru_train = gru_call.GetConcreteFunction(trace::Args{trace::Arg(x)});
  REQUIRE(gru_train.ok());
  const std::vector<std::string> gru_ops = OpsOf(**gru_train);
  CHECK(std::count(gru_ops.begin(), gru_ops.end(), "RandomUniform") == 1);  // implementation 2

  CHECK(Mentions(LSTM(RecurrentOptions{.units = 2, .dropout = 1.0f}).status(), "dropout"));
}

}  // namespace
}  // namespace kiln::modules
