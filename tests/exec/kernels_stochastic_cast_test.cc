// StochasticCastToInt: what its draws must give whatever they are (integers, NaN and the range's
// bounds stay fixed; every other value goes to one of its two neighbours), rounding up about as
// often as the fraction says, and TF's input checks in their order and words (a counter need only
// be as long as the algorithm's id; the auto algorithm is Philox). Its exact values are TF's
// recorded ones (tests/ops/record_tf_cases.py).
#include <doctest/doctest.h>

#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "kernel_test_util.h"

namespace kiln::testing {
namespace {

Result<Tensor> Cast(const Tensor& x, DType out, const Tensor& key, const Tensor& counter,
                    const Tensor& alg) {
  return OpRunner("StochasticCastToInt")
      .Type("Tin", x.dtype())
      .Type("Tout", out)
      .Input(x)
      .Input(key)
      .Input(counter, TensorSpec{DType::kUInt64, PartialShape::UnknownRank()})
      .Input(alg, TensorSpec{DType::kInt32, PartialShape::UnknownRank()})
      .Run1();
}

Tensor U64(const std::vector<uint64_t>& v) {
  return Make<uint64_t>(v, Shape{static_cast<int64_t>(v.size())});
}

bool Has(const Status& s, const std::string& text) {
  return std::string(s.message()).find(text) != std::string::npos;
}

TEST_CASE("StochasticCastToInt: neighbours, fixed points, and the fraction's odds") {
  const float inf = std::numeric_limits<float>::infinity();
  std::vector<float> v = {std::nanf(""), inf, -inf, 300.5f, -300.5f, 7.0f, -2.0f};
  for (int i = 0; i < 4000; ++i) v.push_back(i % 2 ? 0.25f : -1.25f);
  const Tensor x = Make<float>(v, {static_cast<int64_t>(v.size())});
  auto y = Cast(x, DType::kInt8, U64({42}), U64({7, 0}), Tensor::Scalar<int32_t>(3));
  REQUIRE_MESSAGE(y.ok(), y.status().ToString());
  const int8_t* o = y->data<int8_t>();
  CHECK(o[0] == 0);
  CHECK(o[1] == 127);
  CHECK(o[2] == -128);
  CHECK(o[3] == 127);
  CHECK(o[4] == -128);
  CHECK(o[5] == 7);
  CHECK(o[6] == -2);
  int up_pos = 0, up_neg = 0;
  for (size_t i = 7; i < v.size(); ++i) {
    if (v[i] > 0) {
      CHECK((o[i] == 0 || o[i] == 1));
      up_pos += o[i] == 1;
    } else {
      CHECK((o[i] == -2 || o[i] == -1));
      up_neg += o[i] == -1;
    }
  }
  // 2000 draws each: up with odds 0.25 (mean 500, sd 19) and 0.75 (mean 1500).
  CHECK(up_pos > 400);
  CHECK(up_pos < 600);
  CHECK(up_neg > 1400);
  CHECK(up_neg < 1600);
}

TEST_CASE("StochasticCastToInt: TF's input checks") {
  const Tensor x = Make<float>({0.5f, 1.5f}, {2});
  const Tensor key = U64({5});
  // A one-word counter does for Philox (TF asks for as many words as the algorithm's id).
  auto one = Cast(x, DType::kInt32, key, U64({6}), Tensor::Scalar<int32_t>(1));
  auto two = Cast(x, DType::kInt32, key, U64({6, 99}), Tensor::Scalar<int32_t>(1));
  REQUIRE((one.ok() && two.ok()));
  CheckClose<int32_t>(*one, *two);  // counter[1] is never read
  Status s = Cast(x, DType::kInt32, key, U64({6, 7}), Tensor::Scalar<int32_t>(2)).status();
  CHECK(Has(s, "Unsupported algorithm id: 2"));
  s = Cast(x, DType::kInt32, key, U64({6, 7}), Tensor::Scalar<int32_t>(7)).status();
  CHECK(Has(s,
            "counter must be a vector with length at least 7; got shape: (2,). (Note that "
            "batched counters are not supported yet.)"));
  s = Cast(x, DType::kInt32, key, U64({6}), Make<int32_t>({1}, {1})).status();
  CHECK(Has(s, "input 3 (0-based) must have shape [], not (1,)"));
  s = Cast(x, DType::kInt32, key, Make<uint64_t>({6, 7}, {1, 2}), Tensor::Scalar<int32_t>(1))
          .status();
  CHECK(Has(s, "counter must be a vector with length at least 1"));
  s = OpRunner("StochasticCastToInt")
          .Type("Tin", DType::kFloat)
          .Type("Tout", DType::kInt64)
          .Input(x)
          .Input(key)
          .Input(U64({6}))
          .Input(Tensor::Scalar<int32_t>(1))
          .Run()
          .status();
  CHECK(Has(s, "attr 'Tout'"));
  s = OpRunner("StochasticCastToInt")
          .Type("Tin", DType::kFloat)
          .Type("Tout", DType::kInt32)
          .Input(x)
          .Input(U64({5, 6}))
          .Input(U64({6}))
          .Input(Tensor::Scalar<int32_t>(1))
          .Run()
          .status();
  CHECK(Has(s, "input 'key' must have shape (1,)"));
}

}  // namespace
}  // namespace kiln::testing
