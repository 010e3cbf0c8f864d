#include "kiln/modules/initializers.h"

#include <algorithm>
#include <cmath>
#include <numbers>
#include <vector>

namespace kiln::modules {

std::mt19937& DefaultEngine() {
  static std::mt19937 engine(0);
  return engine;
}

void ManualSeed(uint32_t seed) { DefaultEngine().seed(seed); }

float UniformFloat(std::mt19937& engine) {
  return static_cast<float>(engine() >> 8) * (1.0f / 16777216.0f);
}

Tensor GlorotUniform(int64_t fan_in, int64_t fan_out, std::mt19937& engine) {
  const float limit = std::sqrt(6.0f / static_cast<float>(fan_in + fan_out));
  Tensor t(DType::kFloat, Shape{fan_in, fan_out});
  for (float& x : t.flat<float>()) x = (2.0f * UniformFloat(engine) - 1.0f) * limit;
  return t;
}

Tensor GlorotUniform(const Shape& shape, std::mt19937& engine) {
  int64_t field = 1;
  for (int i = 0; i + 2 < shape.rank(); ++i) field *= shape.dim(i);
  const int64_t fan_in = shape.rank() >= 2 ? shape.dim(shape.rank() - 2) * field : 1;
  const int64_t fan_out = shape.rank() >= 1 ? shape.dim(shape.rank() - 1) * field : 1;
  const float limit = std::sqrt(6.0f / static_cast<float>(fan_in + fan_out));
  return RandomUniform(shape, -limit, limit, engine);
}

Tensor RandomUniform(const Shape& shape, float minval, float maxval, std::mt19937& engine) {
  Tensor t(DType::kFloat, shape);
  for (float& x : t.flat<float>()) x = minval + (maxval - minval) * UniformFloat(engine);
  return t;
}

namespace {

// Standard normal by Box-Muller (1 - u keeps the logarithm's argument in (0, 1]).
double StandardNormal(std::mt19937& engine) {
  const double u1 = 1.0 - static_cast<double>(UniformFloat(engine));
  const double u2 = static_cast<double>(UniformFloat(engine));
  return std::sqrt(-2.0 * std::log(u1)) * std::cos(2.0 * std::numbers::pi * u2);
}

}  // namespace

Tensor Orthogonal(const Shape& shape, std::mt19937& engine) {
  const int64_t cols = shape.rank() >= 1 ? shape.dim(shape.rank() - 1) : 1;
  const int64_t rows = cols > 0 ? shape.num_elements() / cols : 0;
  Tensor t(DType::kFloat, shape);
  if (rows == 0 || cols == 0) return t;
  // Gram-Schmidt on the k columns (length n) of a normal matrix gives Q with R's diagonal
  // positive, the same Q as Keras's qr + sign correction.
  const int64_t n = std::max(rows, cols);
  const int64_t k = std::min(rows, cols);
  std::vector<double> q(static_cast<size_t>(n * k));  // column j at q[j * n]
  for (double& v : q) v = StandardNormal(engine);
  for (int64_t j = 0; j < k; ++j) {
    double* c = &q[static_cast<size_t>(j * n)];
    for (int64_t p = 0; p < j; ++p) {
      const double* b = &q[static_cast<size_t>(p * n)];
      double dot = 0;
      for (int64_t i = 0; i < n; ++i) dot += b[i] * c[i];
      for (int64_t i = 0; i < n; ++i) c[i] -= dot * b[i];
    }
    double norm = 0;
    for (int64_t i = 0; i < n; ++i) norm += c[i] * c[i];
    norm = std::sqrt(norm);
    for (int64_t i = 0; i < n; ++i) c[i] /= norm;
  }
  // rows >= cols: element (r, j) is Q[r, j]; otherwise the transpose, element (r, j) = Q[j, r].
  float* out = t.flat<float>().data();
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t j = 0; j < cols; ++j) {
      const double v =
          rows >= cols ? q[static_cast<size_t>(j * n + r)] : q[static_cast<size_t>(r * n + j)];
      out[r * cols + j] = static_cast<float>(v);
    }
  }
  return t;
}

Tensor Zeros(DType dtype, const Shape& shape) { return Tensor(dtype, shape); }

Tensor Ones(const Shape& shape) {
  Tensor t(DType::kFloat, shape);
  for (float& x : t.flat<float>()) x = 1.0f;
  return t;
}

}  // namespace kiln::modules
