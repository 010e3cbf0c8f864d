// LSTM and GRU against plain-loop cells (Keras's equations), eagerly and traced with a dynamic
// batch; return_sequences / return_state / go_backwards; Keras's variable names; errors; the
// orthogonal initializer.
#include "kiln/modules/recurrent.h"

#include <doctest/doctest.h>

#include <cmath>
#include <vector>

#include "layer_test_util.h"

namespace kiln::modules {
namespace {

using testing::MaxRelDiff;
using testing::Mentions;
using testing::RandomTensor;
using trace::Value;
using trace::Values;

float Sigmoid(float v) { return 1.0f / (1.0f + std::exp(-v)); }

// Row-major [rows, cols] views of a tensor.
float At(const Tensor& t, int64_t r, int64_t c) {
  return t.flat<float>()[r * t.shape().dim(t.shape().rank() - 1) + c];
}

// Sets the layer's variables to random values (by position in Keras's order) and returns them.
std::vector<Tensor> Randomize(RecurrentBase& layer, uint32_t seed) {
  std::vector<Tensor> values;
  for (const trace::Variable& v : layer.variables()) {
    Tensor t = RandomTensor(*v.shape().ToShape(), seed++, -0.8f, 0.8f);
    REQUIRE(v.SetValue(t).ok());
    values.push_back(t);
  }
  return values;
}

// x [batch, steps, features]; returns h for every step (processing order), [steps][batch][u].
using Sequence = std::vector<std::vector<std::vector<float>>>;

Sequence LstmReference(const Tensor& x, const std::vector<Tensor>& w, int64_t u, bool backwards) {
  const int64_t batch = x.shape().dim(0), steps = x.shape().dim(1), f = x.shape().dim(2);
  Sequence out;
  std::vector<std::vector<float>> h(batch, std::vector<float>(u, 0.0f)), c = h;
  for (int64_t s = 0; s < steps; ++s) {
    const int64_t t = backwards ? steps - 1 - s : s;
    for (int64_t b = 0; b < batch; ++b) {
      std::vector<float> z(4 * u);
      for (int64_t j = 0; j < 4 * u; ++j) {
        float acc = w[2].flat<float>()[j];
        for (int64_t k = 0; k < f; ++k)
          acc += x.flat<float>()[(b * steps + t) * f + k] * At(w[0], k, j);
        for (int64_t k = 0; k < u; ++k) acc += h[b][k] * At(w[1], k, j);
        z[j] = acc;
      }
      for (int64_t j = 0; j < u; ++j) {
        c[b][j] = Sigmoid(z[u + j]) * c[b][j] + Sigmoid(z[j]) * std::tanh(z[2 * u + j]);
        h[b][j] = Sigmoid(z[3 * u + j]) * std::tanh(c[b][j]);
      }
    }
    out.push_back(h);
  }
  return out;
}

// reset_after=true: bias [2, 3u] (input bias, recurrent bias).
Sequence GruReference(const Tensor& x, const std::vector<Tensor>& w, int64_t u) {
  const int64_t batch = x.shape().dim(0), steps = x.shape().dim(1), f = x.shape().dim(2);
  Sequence out;
  std::vector<std::vector<float>> h(batch, std::vector<float>(u, 0.0f));
  for (int64_t t = 0; t < steps; ++t) {
    std::vector<std::vector<float>> next = h;
    for (int64_t b = 0; b < batch; ++b) {
      std::vector<float> mx(3 * u), mh(3 * u);
      for (int64_t j = 0; j < 3 * u; ++j) {
        mx[j] = At(w[2], 0, j);
        mh[j] = At(w[2], 1, j);
        for (int64_t k = 0; k < f; ++k)
          mx[j] += x.flat<float>()[(b * steps + t) * f + k] * At(w[0], k, j);
        for (int64_t k = 0; k < u; ++k) mh[j] += h[b][k] * At(w[1], k, j);
      }
      for (int64_t j = 0; j < u; ++j) {
        const float z = Sigmoid(mx[j] + mh[j]);
        const float r = Sigmoid(mx[u + j] + mh[u + j]);
        const float hh = std::tanh(mx[2 * u + j] + r * mh[2 * u + j]);
        next[b][j] = z * h[b][j] + (1.0f - z) * hh;
      }
    }
    h = next;
    out.push_back(h);
  }
  return out;
}

// Largest difference between a [batch, steps, u] (or [batch, u]: the last step) output and
// the reference.
float Diff(const Tensor& y, const Sequence& ref) {
  float d = 0;
  const bool seq = y.shape().rank() == 3;
  const int64_t steps = static_cast<int64_t>(ref.size());
  const int64_t batch = y.shape().dim(0), u = y.shape().dim(y.shape().rank() - 1);
  for (int64_t b = 0; b < batch; ++b) {
    for (int64_t s = seq ? 0 : steps - 1; s < steps; ++s) {
      for (int64_t j = 0; j < u; ++j) {
        const float got = seq ? y.flat<float>()[(b * steps + s) * u + j] : At(y, b, j);
        d = std::max(d, std::abs(got - ref[s][b][j]));
      }
    }
  }
  return d;
}

TEST_CASE("LSTM: Keras's variables, the plain-loop cell, sequences backwards and states") {
  LSTM lstm(RecurrentOptions{
      .units = 3, .return_sequences = true, .return_state = true, .go_backwards = true});
  const Tensor x = RandomTensor(Shape{2, 4, 5}, 1);
  REQUIRE(lstm.Build(x.shape()).ok());
  std::vector<std::string> names;
  for (const auto& [name, v] : lstm.named_variables()) names.push_back(name);
  CHECK(names == std::vector<std::string>{"lstm_cell/kernel", "lstm_cell/recurrent_kernel",
                                          "lstm_cell/bias"});
  CHECK(lstm.kernel().shape() == PartialShape{5, 12});
  CHECK(lstm.recurrent_kernel().shape() == PartialShape{3, 12});
  CHECK(lstm.CountParams() == 5 * 12 + 3 * 12 + 12);
  // unit_forget_bias: ones for the forget gate, zeros elsewhere.
  Tensor b0 = *lstm.bias().value();
  CHECK(b0.flat<float>()[2] == 0.0f);
  CHECK(b0.flat<float>()[3] == 1.0f);
  CHECK(b0.flat<float>()[6] == 0.0f);

  const std::vector<Tensor> w = Randomize(lstm, 10);
  const Sequence ref = LstmReference(x, w, 3, /*backwards=*/true);
  Values all = lstm.CallWithStates(x);
  REQUIRE(all.size() == 3);
  for (const Value& v : all) REQUIRE_MESSAGE(v.ok(), v.status().ToString());
  CHECK(all[0].shape() == PartialShape{2, 4, 3});
  CHECK(Diff(*all[0].tensor(), ref) < 1e-5f);
  CHECK(Diff(*all[1].tensor(), ref) < 1e-5f);  // h: the last step
  CHECK(all[2].shape() == PartialShape{2, 3});

  // Traced with a dynamic batch (zero states from Fill), the same.
  trace::Function f(
      "f", trace::InputSignature{{"x", DType::kFloat, PartialShape{-1, 4, 5}}},
      [&lstm](const Values& a) -> Result<Values> { return lstm.CallWithStates(a[0]); });
  auto traced = f(x);
  REQUIRE_MESSAGE(traced.ok(), traced.status().ToString());
  CHECK(MaxRelDiff((*traced)[0], *all[0].tensor()) < 1e-6f);
  CHECK(MaxRelDiff((*traced)[2], *all[2].tensor()) < 1e-6f);
}

TEST_CASE("GRU (reset_after): the plain-loop cell, last output by default, its bias [2, 3u]") {
  GRU gru(4);
  const Tensor x = RandomTensor(Shape{3, 5, 2}, 2);
  REQUIRE(gru.Build(x.shape()).ok());
  CHECK(gru.bias().shape() == PartialShape{2, 12});
  const std::vector<Tensor> w = Randomize(gru, 20);
  Value y = gru(x);
  REQUIRE_MESSAGE(y.ok(), y.status().ToString());
  CHECK(y.shape() == PartialShape{3, 4});
  CHECK(Diff(*y.tensor(), GruReference(x, w, 4)) < 1e-5f);
  CHECK(gru.CallWithStates(x).size() == 1);  // no return_state
}

TEST_CASE("recurrent layer errors name the layer and what it expected") {
  LSTM lstm(3);
  Value y = lstm(RandomTensor(Shape{2, 5}, 1));
  CHECK(Mentions(y.status(), "LSTM 'lstm': expected a rank-3 input (batch, timesteps, features)"));
  GRU gru(3);
  trace::Function f("f", trace::InputSignature{{"x", DType::kFloat, PartialShape{2, -1, 4}}},
                    [&gru](const Values& a) -> Result<Values> { return Values{gru(a[0])}; });
  auto r = f(RandomTensor(Shape{2, 3, 4}, 1));
  REQUIRE_FALSE(r.ok());
  CHECK(Mentions(r.status(), "GRU 'gru': the number of timesteps must be known while tracing"));
  CHECK(Mentions(GRU(0).status(), "GRU 'gru': units must be positive, got 0"));
  GRU built(2);
  REQUIRE(built(RandomTensor(Shape{1, 2, 4}, 1)).ok());
  CHECK(Mentions(built(RandomTensor(Shape{1, 2, 3}, 1)).status(),
                 "GRU 'gru': expected 4 features on the last axis, got (1, 2, 3)"));
}

TEST_CASE("Orthogonal gives orthonormal columns (tall) or rows (wide)") {
  std::mt19937 engine(3);
  for (const Shape& s : {Shape{6, 4}, Shape{3, 9}}) {
    const Tensor q = Orthogonal(s, engine);
    const bool tall = s.dim(0) >= s.dim(1);
    const int64_t n = tall ? s.dim(1) : s.dim(0), len = tall ? s.dim(0) : s.dim(1);
    for (int64_t a = 0; a < n; ++a) {
      for (int64_t b = 0; b < n; ++b) {
        double dot = 0;
        for (int64_t i = 0; i < len; ++i) {
          dot += static_cast<double>(tall ? At(q, i, a) * At(q, i, b) : At(q, a, i) * At(q, b, i));
        }
        CHECK(dot == doctest::Approx(a == b ? 1.0 : 0.0).epsilon(1e-5));
      }
    }
  }
}

}  // namespace
}  // namespace kiln::modules
