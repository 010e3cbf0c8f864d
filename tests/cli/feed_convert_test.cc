// CastToInputDType against NumPy's astype, which TensorFlow's session applies to a fed array
// (numpy.asarray(value, dtype=input_dtype)).
#include "feed_convert.h"

#include <doctest/doctest.h>

#include <cmath>
#include <vector>

namespace kiln::cli {
namespace {

template <typename T>
Tensor Make(const std::vector<T>& values, const Shape& shape) {
  auto t = Tensor::FromVector(values, shape);
  REQUIRE(t.ok());
  return *t;
}

TEST_CASE("feed conversion: float16, bfloat16 and bool arrays feed float and integer inputs") {
  // numpy.array([1, -2.5, 65504, 2**-24, inf], numpy.float16).astype(numpy.float32)
  const Tensor half =
      Make<Half>({Half{0x3c00}, Half{0xc100}, Half{0x7bff}, Half{0x0001}, Half{0x7c00}}, Shape{5});
  auto f = CastToInputDType(half, DType::kFloat, "x");
  REQUIRE_MESSAGE(f.ok(), f.status().ToString());
  REQUIRE(f->dtype() == DType::kFloat);
  CHECK(f->shape() == Shape{5});
  CHECK(f->flat<float>()[0] == 1.0f);
  CHECK(f->flat<float>()[1] == -2.5f);
  CHECK(f->flat<float>()[2] == 65504.0f);
  CHECK(f->flat<float>()[3] == std::ldexp(1.0f, -24));
  CHECK(std::isinf(f->flat<float>()[4]));
  auto nan = CastToInputDType(Make<Half>({Half{0x7e00}}, Shape{1}), DType::kDouble, "x");
  REQUIRE(nan.ok());
  CHECK(std::isnan(nan->flat<double>()[0]));

  // bfloat16 (ml_dtypes) 1.5 and -2.
  auto bf = CastToInputDType(Make<BFloat16>({BFloat16{0x3fc0}, BFloat16{0xc000}}, Shape{2}),
                             DType::kFloat, "x");
  REQUIRE(bf.ok());
  CHECK(bf->flat<float>()[0] == 1.5f);
  CHECK(bf->flat<float>()[1] == -2.0f);

  // numpy.array([True, False]).astype(numpy.float32) == [1., 0.]; to int32 [1, 0].
  const Tensor flags = Make<bool>({true, false, true}, Shape{3, 1});
  auto fl = CastToInputDType(flags, DType::kFloat, "x");
  REQUIRE(fl.ok());
  CHECK(fl->shape() == Shape{3, 1});
  CHECK(fl->flat<float>()[0] == 1.0f);
  CHECK(fl->flat<float>()[1] == 0.0f);
  auto in = CastToInputDType(flags, DType::kInt32, "x");
  REQUIRE(in.ok());
  CHECK(in->flat<int32_t>()[2] == 1);

  // A float16 fraction into an integer input is still an error, as for float32.
  auto frac = CastToInputDType(Make<Half>({Half{0x3e00}}, Shape{1}), DType::kInt32, "k");
  REQUIRE(!frac.ok());
  CHECK(frac.status().message().find("float16") != std::string::npos);

  // Inputs of these dtypes are fed as they are (the signature refuses what does not fit).
  auto same = CastToInputDType(flags, DType::kBool, "x");
  REQUIRE(same.ok());
  CHECK(same->dtype() == DType::kBool);
  auto to_half = CastToInputDType(Make<float>({1}, Shape{1}), DType::kHalf, "x");
  REQUIRE(to_half.ok());
  CHECK(to_half->dtype() == DType::kFloat);
}

}  // namespace
}  // namespace kiln::cli
