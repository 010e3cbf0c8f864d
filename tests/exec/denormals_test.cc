// Subnormal floats are zero while kiln computes (device/denormals.h), as in TensorFlow: a
// 1e-40 input compares equal to 0, widens to 0.0, and the caller's floating-point mode is
// left as it was.
#include <doctest/doctest.h>
#include <google/protobuf/text_format.h>

#include <cmath>
#include <limits>

#include "kiln/exec/executor.h"
#include "tensorflow/framework.pb.h"

namespace kiln::exec {
namespace {

const char* kLib = R"pb(
  function {
    signature {
      name: "g"
      input_arg { name: "x" type: DT_FLOAT }
      input_arg { name: "zero" type: DT_FLOAT }
      output_arg { name: "positive" type: DT_BOOL }
      output_arg { name: "wide" type: DT_DOUBLE }
      output_arg { name: "scaled" type: DT_FLOAT }
    }
    node_def {
      name: "gt"
      op: "Greater"
      input: "x"
      input: "zero"
      attr {
        key: "T"
        value { type: DT_FLOAT }
      }
    }
    node_def {
      name: "cast"
      op: "Cast"
      input: "x"
      attr {
        key: "SrcT"
        value { type: DT_FLOAT }
      }
      attr {
        key: "DstT"
        value { type: DT_DOUBLE }
      }
    }
    node_def {
      name: "mul"
      op: "Mul"
      input: "x"
      input: "x"
      attr {
        key: "T"
        value { type: DT_FLOAT }
      }
    }
    ret { key: "positive" value: "gt:z:0" }
    ret { key: "wide" value: "cast:y:0" }
    ret { key: "scaled" value: "mul:z:0" }
  }
)pb";

TEST_CASE("subnormal floats are zero to a call, as to TensorFlow's CPU kernels") {
  tensorflow::FunctionDefLibrary proto;
  REQUIRE(google::protobuf::TextFormat::ParseFromString(kLib, &proto));
  FunctionLibrary lib(proto);
  const int64_t n = 64;  // past the width of one vector
  auto pf = PreparedFunction::Prepare(*lib.Find("g"), lib,
                                      std::vector{TensorSpec{DType::kFloat, PartialShape({n})},
                                                  TensorSpec{DType::kFloat, PartialShape({n})}});
  REQUIRE_MESSAGE(pf.ok(), pf.status().ToString());
  const float tiny = 1e-40f;  // subnormal
  REQUIRE(std::fpclassify(tiny) == FP_SUBNORMAL);
  Tensor x(DType::kFloat, Shape{n}), zero(DType::kFloat, Shape{n});
  for (int64_t i = 0; i < n; ++i) {
    x.data<float>()[i] = i % 2 == 0 ? tiny : 1e-20f;
    zero.data<float>()[i] = 0.f;
  }
  std::vector<Tensor> out;
  REQUIRE((*pf)->Run(std::vector{x, zero}, &out).ok());
  for (int64_t i = 0; i < n; ++i) {
    const bool normal = i % 2 == 1;
    CHECK(out[0].data<bool>()[i] == normal);
    CHECK(out[1].data<double>()[i] == (normal ? static_cast<double>(1e-20f) : 0.0));
    CHECK(out[2].data<float>()[i] == 0.f);  // 1e-40 squared, and the subnormal 1e-20 squared
  }
  // The calling thread's mode is its own again.
  volatile float t = tiny;
  CHECK(t * 2.f > 0.f);
}

}  // namespace
}  // namespace kiln::exec
