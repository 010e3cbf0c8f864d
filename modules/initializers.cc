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

Tensor Zeros(DType dtype, const Shape& shape) { return Tensor(dtype, shape); }

}  // namespace kiln::modules
