// Helpers for the kiln::serve tests: a small Dense bundle exported with kiln::modules (so the
// tests need no TensorFlow), and its reference output computed with plain loops.
#pragma once

#include <filesystem>
#include <vector>

#include "exec/test_util.h"
#include "kiln/core/status.h"
#include "kiln/core/tensor.h"
#include "kiln/modules/dense.h"
#include "kiln/modules/initializers.h"
#include "kiln/modules/sequential.h"
#include "kiln/trace/export.h"
#include "kiln/trace/trace.h"

namespace kiln::testing {

// y = x W + b (4 -> 3), saved with serving_default taking float32 [None, 4]. Returns W and b
// (read back from the module) so tests can compute the answer with loops.
struct DenseBundle {
  std::vector<float> w;                                          // 4 x 3, row-major
  std::vector<float> b;                                          // 3
  std::vector<float> Apply(const std::vector<float>& x) const {  // rows of 4 -> rows of 3
    std::vector<float> y;
    for (size_t r = 0; r < x.size() / 4; ++r)
      for (int j = 0; j < 3; ++j) {
        float acc = b[j];
        for (int k = 0; k < 4; ++k) acc += x[r * 4 + k] * w[k * 3 + j];
        y.push_back(acc);
      }
    return y;
  }
};

inline Result<DenseBundle> ExportDense(const std::filesystem::path& dir, uint32_t seed = 7) {
  std::error_code ec;
  std::filesystem::create_directories(dir.parent_path(), ec);
  modules::ManualSeed(seed);
  modules::Sequential model("m");
  model.Add<modules::Dense>(3, modules::Activation::kNone, 4);
  auto& predict = model.AddMethod(
      "predict", {{"x", DType::kFloat, {-1, 4}}},
      [&model](const trace::Values& args) { return trace::Values{model(args[0])}; });
  KILN_RETURN_IF_ERROR(trace::Save(model, dir, {{"serving_default", &predict}}));
  DenseBundle out;
  for (const trace::Variable& v : model.variables()) {
    auto value = v.value();
    if (!value.ok()) return value.status();
    std::vector<float> vals(value->flat<float>().begin(), value->flat<float>().end());
    (value->rank() == 2 ? out.w : out.b) = vals;
  }
  return out;
}

}  // namespace kiln::testing
