// TensorMap ops: maps built through the kernels, immutability of the input map, key equality
// as TF's TensorKey, and TF's errors (a missing key, an empty map to stack, a non-map input,
// keys of another dtype or shape).
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "kernel_test_util.h"

namespace kiln::testing {
namespace {

Tensor Empty() {
  auto r = OpRunner("EmptyTensorMap").Run1();
  REQUIRE_MESSAGE(r.ok(), r.status().ToString());
  return *r;
}

Result<Tensor> Insert(const Tensor& map, const Tensor& key, const Tensor& value) {
  return OpRunner("TensorMapInsert")
      .Type("key_dtype", key.dtype())
      .Type("value_dtype", value.dtype())
      .Input(map)
      .Input(key)
      .Input(value)
      .Run1();
}

Result<Tensor> Lookup(const Tensor& map, const Tensor& key, DType value = DType::kFloat) {
  return OpRunner("TensorMapLookup")
      .Type("key_dtype", key.dtype())
      .Type("value_dtype", value)
      .Input(map)
      .Input(key)
      .Run1();
}

Result<Tensor> Erase(const Tensor& map, const Tensor& key) {
  return OpRunner("TensorMapErase")
      .Type("key_dtype", key.dtype())
      .Type("value_dtype", DType::kFloat)
      .Input(map)
      .Input(key)
      .Run1();
}

bool HasKey(const Tensor& map, const Tensor& key) {
  auto r = OpRunner("TensorMapHasKey").Type("key_dtype", key.dtype()).Input(map).Input(key).Run1();
  REQUIRE_MESSAGE(r.ok(), r.status().ToString());
  return r->scalar<bool>();
}

int32_t Size(const Tensor& map) {
  auto r = OpRunner("TensorMapSize").Input(map).Run1();
  REQUIRE_MESSAGE(r.ok(), r.status().ToString());
  return r->scalar<int32_t>();
}

Tensor F(float v) { return Tensor::Scalar(v); }
Tensor I(int64_t v) { return Tensor::Scalar(v); }

TEST_CASE("TensorMap: insert, lookup, replace and erase leave earlier maps unchanged") {
  const Tensor m0 = Empty();
  auto m1 = Insert(m0, I(1), F(10));
  REQUIRE(m1.ok());
  auto m2 = Insert(*m1, I(2), F(20));
  REQUIRE(m2.ok());
  auto m3 = Insert(*m2, I(1), F(11));  // replaces
  REQUIRE(m3.ok());
  CHECK(Size(m0) == 0);
  CHECK(Size(*m1) == 1);
  CHECK(Size(*m3) == 2);
  CHECK(Lookup(*m2, I(1))->scalar<float>() == 10);
  CHECK(Lookup(*m3, I(1))->scalar<float>() == 11);
  auto m4 = Erase(*m3, I(1));
  REQUIRE(m4.ok());
  CHECK(Size(*m4) == 1);
  CHECK_FALSE(HasKey(*m4, I(1)));
  CHECK(HasKey(*m3, I(1)));
  CHECK(HasKey(*m4, I(2)));
  // Keys compare by dtype too: an int32 1 is not the int64 1.
  CHECK_FALSE(HasKey(*m3, Tensor::Scalar<int32_t>(1)));
}

TEST_CASE("TensorMap: a missing key is TF's error") {
  auto m = Insert(Empty(), I(1), F(10));
  REQUIRE(m.ok());
  auto r = Lookup(*m, I(5));
  REQUIRE_FALSE(r.ok());
  CHECK(r.status().message().find("Trying to lookup non-existent key. Could not find key \"5\"") !=
        std::string::npos);
  auto e = Erase(*m, I(5));
  REQUIRE_FALSE(e.ok());
  CHECK(e.status().message().find("Trying to erase non-existent item") != std::string::npos);
}

TEST_CASE("TensorMap: a lookup of another value_dtype fails, naming both") {
  auto m = Insert(Empty(), I(1), F(10));
  REQUIRE(m.ok());
  auto r = Lookup(*m, I(1), DType::kInt32);
  REQUIRE_FALSE(r.ok());
  CHECK(r.status().message().find("value_dtype") != std::string::npos);
}

TEST_CASE("TensorMapStackKeys: insertion order, and errors on an empty map and mixed keys") {
  auto m = Insert(Empty(), I(7), F(1));
  m = Insert(*m, I(3), F(2));
  REQUIRE(m.ok());
  auto stack = [](const Tensor& map, DType key) {
    return OpRunner("TensorMapStackKeys").Type("key_dtype", key).Input(map).Run1();
  };
  auto keys = stack(*m, DType::kInt64);
  REQUIRE(keys.ok());
  CHECK(keys->shape() == Shape{2});
  CHECK(keys->data<int64_t>()[0] == 7);
  CHECK(keys->data<int64_t>()[1] == 3);
  auto empty = stack(Empty(), DType::kInt64);
  REQUIRE_FALSE(empty.ok());
  CHECK(empty.status().message().find("cannot be called on empty map") != std::string::npos);
  auto wrong = stack(*m, DType::kInt32);
  REQUIRE_FALSE(wrong.ok());
  CHECK(wrong.status().message().find("Key does not match requested dtype") != std::string::npos);
  auto mixed = Insert(*m, Make<int64_t>({1, 2}, Shape{2}), F(3));
  REQUIRE(mixed.ok());
  auto shapes = stack(*mixed, DType::kInt64);
  REQUIRE_FALSE(shapes.ok());
  CHECK(shapes.status().message().find("Keys must all have the same shape") != std::string::npos);
}

TEST_CASE("TensorMap ops: inputs that are not maps, and bad attrs") {
  auto r = OpRunner("TensorMapSize").Input(Tensor::Scalar<float>(1)).Run1();
  CHECK_FALSE(r.ok());
  // A variant that holds no map.
  Tensor v(DType::kVariant, Shape());
  auto s = OpRunner("TensorMapSize").Input(v).Run1();
  REQUIRE_FALSE(s.ok());
  CHECK(s.status().message().find("input_handle") != std::string::npos);
  // A vector of maps.
  Tensor vec(DType::kVariant, Shape{2});
  auto t = OpRunner("TensorMapSize").Input(vec).Run1();
  REQUIRE_FALSE(t.ok());
  CHECK(t.status().message().find("must be a scalar") != std::string::npos);
  // The key input must have attr key_dtype's dtype.
  auto k = OpRunner("TensorMapHasKey")
               .Type("key_dtype", DType::kInt32)
               .Input(Empty())
               .Input(F(1))
               .Run1();
  REQUIRE_FALSE(k.ok());
  CHECK(k.status().message().find("key") != std::string::npos);
  // Variant keys cannot be compared.
  auto vk = OpRunner("TensorMapInsert")
                .Type("key_dtype", DType::kVariant)
                .Type("value_dtype", DType::kFloat)
                .Input(Empty())
                .Input(Empty())
                .Input(F(1))
                .Run1();
  REQUIRE_FALSE(vk.ok());
  CHECK(vk.status().message().find("key_dtype") != std::string::npos);
}

}  // namespace
}  // namespace kiln::testing
