// Helpers for the layer tests: random inputs, element-wise comparison, the ops of a traced
// graph.
#pragma once

#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "kiln/core/tensor.h"
#include "kiln/modules/initializers.h"
#include "kiln/trace/trace.h"
#include "tensorflow/framework.pb.h"

namespace kiln::modules::testing {

inline Tensor RandomTensor(const Shape& shape, uint32_t seed, float lo = -1, float hi = 1) {
  std::mt19937 engine(seed);
  Tensor t(DType::kFloat, shape);
  for (float& v : t.flat<float>()) v = lo + (hi - lo) * UniformFloat(engine);
  return t;
}

// Largest |a - b| / (1 + |b|); checks the shapes match first.
inline float MaxRelDiff(const Tensor& a, const Tensor& b) {
  REQUIRE(a.shape() == b.shape());
  float d = 0;
  for (int64_t i = 0; i < a.NumElements(); ++i) {
    const float x = a.flat<float>()[i];
    const float y = b.flat<float>()[i];
    d = std::max(d, std::abs(x - y) / (1.0f + std::abs(y)));
  }
  return d;
}

// The op names of a concrete function's nodes, in order.
inline std::vector<std::string> OpsOf(const trace::ConcreteFunction& cf) {
  std::vector<std::string> ops;
  for (const auto& n : cf.function_def().node_def()) ops.push_back(n.op());
  return ops;
}

inline bool Contains(const std::vector<std::string>& v, const std::string& s) {
  return std::find(v.begin(), v.end(), s) != v.end();
}

inline bool Mentions(const Status& s, const std::string& text) {
  return s.message().find(text) != std::string::npos;
}

}  // namespace kiln::modules::testing
