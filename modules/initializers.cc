#include "kiln/modules/initializers.h"

#include <cmath>

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

Tensor Zeros(DType dtype, const Shape& shape) { return Tensor(dtype, shape); }

Tensor Ones(const Shape& shape) {
  Tensor t(DType::kFloat, shape);
  for (float& x : t.flat<float>()) x = 1.0f;
  return t;
}

}  // namespace kiln::modules
