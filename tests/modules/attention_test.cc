// MultiHeadAttention against a plain-loop reference (cross-attention with a mask), Keras's
// variable names, the causal option, traced with a dynamic batch, and its errors.
#include "kiln/modules/attention.h"

#include <doctest/doctest.h>

#include <cmath>
#include <string>
#include <vector>

#include "layer_test_util.h"

namespace kiln::modules {
namespace {

using testing::MaxRelDiff;
using testing::Mentions;
using testing::RandomTensor;
using trace::Value;
using trace::Values;

float F(const Tensor& t, int64_t i) { return t.flat<float>()[i]; }

// softmax(q k^T / sqrt(kd), masked) v, projected; w in Keras's order (query kernel, bias, key,
// value, attention_output). q (B, T, Dq), v (B, S, Dv) (key = value), mask (B, T, S) or none.
Tensor Reference(const Tensor& q, const Tensor& v, const std::vector<Tensor>& w, int64_t heads,
                 int64_t kd, const std::vector<bool>* mask) {
  const int64_t b = q.shape().dim(0), t = q.shape().dim(1), dq = q.shape().dim(2);
  const int64_t s = v.shape().dim(1), dv = v.shape().dim(2), out = w[7].shape().dim(0);
  auto project = [&](const Tensor& x, int64_t steps, int64_t d, const Tensor& k, const Tensor& bias,
                     int64_t batch, int64_t step, int64_t head, int64_t j) {
    float acc = F(bias, head * kd + j);
    for (int64_t c = 0; c < d; ++c)
      acc += F(x, (batch * steps + step) * d + c) * F(k, (c * heads + head) * kd + j);
    return acc;
  };
  Tensor y(DType::kFloat, Shape{b, t, out});
  for (int64_t n = 0; n < b; ++n) {
    for (int64_t i = 0; i < t; ++i) {
      std::vector<float> mixed(heads * kd, 0.0f);
      for (int64_t h = 0; h < heads; ++h) {
        std::vector<double> score(s);
        double top = -1e30;
        for (int64_t j = 0; j < s; ++j) {
          double dot = 0;
          for (int64_t e = 0; e < kd; ++e) {
            dot += project(q, t, dq, w[0], w[1], n, i, h, e) *
                   project(v, s, dv, w[2], w[3], n, j, h, e);
          }
          score[j] = dot / std::sqrt(static_cast<double>(kd));
          if (mask != nullptr && !(*mask)[(n * t + i) * s + j]) score[j] = -1e9;
          top = std::max(top, score[j]);
        }
        double total = 0;
        for (double& x : score) total += (x = std::exp(x - top));
        for (int64_t j = 0; j < s; ++j) {
          for (int64_t e = 0; e < kd; ++e) {
            mixed[h * kd + e] +=
                static_cast<float>(score[j] / total) * project(v, s, dv, w[4], w[5], n, j, h, e);
          }
        }
      }
      for (int64_t o = 0; o < out; ++o) {
        float acc = F(w[7], o);
        for (int64_t c = 0; c < heads * kd; ++c) acc += mixed[c] * F(w[6], c * out + o);
        y.flat<float>()[(n * t + i) * out + o] = acc;
      }
    }
  }
  return y;
}

std::vector<Tensor> Randomize(MultiHeadAttention& mha) {
  std::vector<Tensor> values;
  uint32_t seed = 30;
  for (const trace::Variable& v : mha.variables()) {
    Tensor t = RandomTensor(*v.shape().ToShape(), seed++);
    REQUIRE(v.SetValue(t).ok());
    values.push_back(t);
  }
  return values;
}

TEST_CASE("MultiHeadAttention: Keras's variables, cross-attention with a mask, eager and traced") {
  MultiHeadAttention mha(2, 3);
  const Tensor q = RandomTensor(Shape{2, 3, 4}, 1);
  const Tensor v = RandomTensor(Shape{2, 5, 6}, 2);
  REQUIRE(mha.BuildFor(4, 6, 6).ok());
  std::vector<std::string> names;
  for (const auto& [name, var] : mha.named_variables()) names.push_back(name);
  CHECK(names == std::vector<std::string>{"query/kernel", "query/bias", "key/kernel", "key/bias",
                                          "value/kernel", "value/bias", "attention_output/kernel",
                                          "attention_output/bias"});
  CHECK(mha.FindModule("query") != nullptr);
  CHECK(mha.FindModule("query")->type_name() == "EinsumDense");
  CHECK(mha.variables()[6].shape() == PartialShape{2, 3, 4});  // output back to the query's 4
  const std::vector<Tensor> w = Randomize(mha);

  std::vector<bool> keep(2 * 3 * 5);
  Tensor mask(DType::kBool, Shape{2, 3, 5});
  for (size_t i = 0; i < keep.size(); ++i) {
    keep[i] = (i % 3) != 1;
    mask.flat<bool>()[i] = keep[i];
  }
  const Tensor ref = Reference(q, v, w, 2, 3, &keep);
  Value y = mha.Attend(q, v, {}, mask);
  REQUIRE_MESSAGE(y.ok(), y.status().ToString());
  CHECK(MaxRelDiff(*y.tensor(), ref) < 1e-5f);
  // A numeric mask keeps what is > 0.5.
  Tensor numeric(DType::kFloat, Shape{2, 3, 5});
  for (size_t i = 0; i < keep.size(); ++i) numeric.flat<float>()[i] = keep[i] ? 0.9f : 0.2f;
  CHECK(MaxRelDiff(*mha.Attend(q, v, {}, numeric).tensor(), ref) < 1e-6f);
  CHECK(MaxRelDiff(*mha.Attend(q, v).tensor(), Reference(q, v, w, 2, 3, nullptr)) < 1e-5f);

  trace::Function f("f",
                    trace::InputSignature{{"q", DType::kFloat, PartialShape{-1, 3, 4}},
                                          {"v", DType::kFloat, PartialShape{-1, 5, 6}},
                                          {"m", DType::kBool, PartialShape{-1, 3, 5}}},
                    [&mha](const Values& a) -> Result<Values> {
                      return Values{mha.Attend(a[0], a[1], {}, a[2])};
                    });
  auto traced = f(q, v, mask);
  REQUIRE_MESSAGE(traced.ok(), traced.status().ToString());
  CHECK(MaxRelDiff((*traced)[0], ref) < 1e-5f);
}

TEST_CASE("MultiHeadAttention's causal option is self-attention with a lower-triangular mask") {
  MultiHeadAttention causal(
      MultiHeadAttentionOptions{.num_heads = 1, .key_dim = 2, .use_causal_mask = true});
  const Tensor x = RandomTensor(Shape{1, 4, 3}, 5);
  REQUIRE(causal.Build(x.shape()).ok());
  const std::vector<Tensor> w = Randomize(causal);
  std::vector<bool> lower(16);
  for (int i = 0; i < 4; ++i)
    for (int j = 0; j < 4; ++j) lower[i * 4 + j] = j <= i;
  Value y = causal(x);
  REQUIRE_MESSAGE(y.ok(), y.status().ToString());
  CHECK(MaxRelDiff(*y.tensor(), Reference(x, x, w, 1, 2, &lower)) < 1e-5f);
}

TEST_CASE("MultiHeadAttention errors name the layer and what it expected") {
  CHECK(Mentions(MultiHeadAttention(0, 2).status(),
                 "MultiHeadAttention 'multi_head_attention': num_heads and key_dim must be"));
  MultiHeadAttention mha(2, 2);
  CHECK(Mentions(mha(RandomTensor(Shape{2, 3}, 1)).status(),
                 "expected a rank-3 input (batch, steps, features)"));
  const Tensor q = RandomTensor(Shape{1, 2, 3}, 1);
  CHECK(Mentions(mha.Attend(q, q, RandomTensor(Shape{1, 4, 3}, 2)).status(),
                 "key and value must have the same number of steps"));
  CHECK(Mentions(mha.Attend(q, q, {}, Tensor(DType::kBool, Shape{1, 2, 5})).status(),
                 "expected an attention_mask (batch, 2, 2), got (1, 2, 5)"));
  CHECK(Mentions(mha.Attend(RandomTensor(Shape{1, 2, 4}, 3), q).status(),
                 "built for 3 query features, got (1, 2, 4)"));
}

}  // namespace
}  // namespace kiln::modules
