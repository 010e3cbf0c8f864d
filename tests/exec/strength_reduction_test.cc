// Grappler's strength reductions (graph/strength_reduction.h): kiln divides by a constant as TF
// does after its constant folding, by multiplying with the reciprocal, and takes a power by a
// constant exponent as TF's arithmetic optimizer rewrites it; a divisor that is an argument
// stays a division.
#include <doctest/doctest.h>
#include <google/protobuf/text_format.h>

#include <bit>
#include <cmath>
#include <limits>
#include <string>

#include "kiln/exec/executor.h"
#include "tensorflow/framework.pb.h"

namespace kiln::exec {
namespace {

// f(x, d) = (x / 3, x / d, pow(x, p), x * 3) with p a Const of value `p`.
std::string Library(const std::string& p) {
  return R"pb(
           function { signature {
             name: "f"
             input_arg { name: "x" type: DT_FLOAT }
             input_arg { name: "d" type: DT_FLOAT }
             output_arg { name: "by_const" type: DT_FLOAT }
             output_arg { name: "by_arg" type: DT_FLOAT }
             output_arg { name: "pow" type: DT_FLOAT }
             output_arg { name: "times_const" type: DT_FLOAT }
           }
                      node_def {
                        name: "three"
                        op: "Const"
                        attr {
                          key: "dtype"
                          value { type: DT_FLOAT }
                        }
                        attr {
                          key: "value"
                          value {
                            tensor {
                              dtype: DT_FLOAT
                              tensor_shape {}
                              float_val: 3
                            }
                          }
                        }
                      }
                      node_def { name: "p" op: "Const"
                                 attr {
                                   key: "dtype"
                                   value { type: DT_FLOAT }
                                 }
                                 attr { key: "value"
                                        value { tensor { dtype: DT_FLOAT
                                                         tensor_shape {}
                                                         float_val:)pb" +
         p + R"pb(}
                  }
        }
      }
      node_def {
        name: "q"
        op: "RealDiv"
        input: "x"
        input: "three:output:0"
        attr {
          key: "T"
          value { type: DT_FLOAT }
        }
      }
      node_def {
        name: "r"
        op: "RealDiv"
        input: "x"
        input: "d"
        attr {
          key: "T"
          value { type: DT_FLOAT }
        }
      }
      node_def {
        name: "w"
        op: "Pow"
        input: "x"
        input: "p:output:0"
        attr {
          key: "T"
          value { type: DT_FLOAT }
        }
      }
      ret { key: "by_const" value: "q:z:0" }
      ret { key: "by_arg" value: "r:z:0" }
      node_def {
        name: "t"
        op: "Mul"
        input: "x"
        input: "three:output:0"
        attr {
          key: "T"
          value { type: DT_FLOAT }
        }
      }
      ret { key: "pow" value: "w:z:0" }
      ret { key: "times_const" value: "t:z:0" }
    }
  )pb";
}

std::vector<Tensor> Run(const std::string& p, const std::vector<float>& x) {
  tensorflow::FunctionDefLibrary proto;
  REQUIRE(google::protobuf::TextFormat::ParseFromString(Library(p), &proto));
  FunctionLibrary lib(proto);
  const int64_t n = static_cast<int64_t>(x.size());
  auto pf =
      PreparedFunction::Prepare(*lib.Find("f"), lib,
                                std::vector{TensorSpec{DType::kFloat, PartialShape({n})},
                                            TensorSpec{DType::kFloat, PartialShape::Scalar()}});
  REQUIRE_MESSAGE(pf.ok(), pf.status().ToString());
  Tensor xt(DType::kFloat, Shape{n});
  std::copy(x.begin(), x.end(), xt.data<float>());
  std::vector<Tensor> out;
  REQUIRE((*pf)->Run(std::vector{xt, Tensor::Scalar(3.f)}, &out).ok());
  REQUIRE(out.size() == 4);
  return out;
}

TEST_CASE("a division by a constant multiplies by its reciprocal, as TF's constant folding") {
  // Values whose quotient by 3 and product with 1/3 round apart.
  std::vector<float> x;
  for (float v = 1.f; x.size() < 4 && v < 1000.f; v += 1.f)
    if (v / 3.f != v * (1.f / 3.f)) x.push_back(v);
  REQUIRE(x.size() == 4);
  const std::vector<Tensor> out = Run("2", x);
  for (size_t i = 0; i < x.size(); ++i) {
    CHECK(out[0].data<float>()[i] == x[i] * (1.f / 3.f));
    CHECK(out[1].data<float>()[i] == x[i] / 3.f);  // a divisor TF does not know: divided
    CHECK(out[3].data<float>()[i] == x[i] * 3.f);  // the constant's other reader reads 3
  }
}

TEST_CASE("a power by a constant becomes what TF's arithmetic optimizer makes of it") {
  const float inf = std::numeric_limits<float>::infinity();
  SUBCASE("0.5: a square root (of -inf NaN, of -0 -0)") {
    const std::vector<Tensor> out = Run("0.5", {-inf, -0.f, 4.f, 2.f});
    CHECK(std::isnan(out[2].data<float>()[0]));
    CHECK(std::signbit(out[2].data<float>()[1]));
    CHECK(out[2].data<float>()[2] == 2.f);
    CHECK(out[2].data<float>()[3] == std::sqrt(2.f));
  }
  SUBCASE("2, 3, -1, -0.5") {
    CHECK(Run("2", {-3.f})[2].data<float>()[0] == 9.f);
    CHECK(Run("3", {1.1f})[2].data<float>()[0] == 1.1f * (1.1f * 1.1f));
    CHECK(Run("-1", {4.f})[2].data<float>()[0] == 0.25f);
    CHECK(Run("-0.5", {4.f})[2].data<float>()[0] == 0.5f);
  }
  SUBCASE("other exponents stay powers") { CHECK(Run("2.5", {4.f})[2].data<float>()[0] == 32.f); }
}

}  // namespace
}  // namespace kiln::exec
