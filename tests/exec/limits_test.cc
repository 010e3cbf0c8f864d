// In-memory entry points (for fuzzing and callers that hold the bytes) and the size limits
// checked before allocation: absurd Const shapes, fill bombs, shard counts.
#include <doctest/doctest.h>
#include <google/protobuf/util/message_differencer.h>

#include "exec/test_util.h"
#include "kiln/core/proto_convert.h"
#include "kiln/exec/saved_model.h"
#include "kiln/exec/tensor_bundle.h"
#include "tensorflow/framework.pb.h"
#include "tensorflow/saved_model.pb.h"

namespace kiln::exec {
namespace {

using testing::Fixture;
using testing::ReadAll;

TEST_CASE("ParseSavedModelProto and LoadFromProto read what Load reads, from memory") {
  const auto dir = Fixture("VarsAndArithmeticObjectGraph");
  auto from_file = ReadSavedModelProto(dir);
  REQUIRE(from_file.ok());
  auto from_bytes = ParseSavedModelProto(ReadAll(dir / "saved_model.pb"));
  REQUIRE(from_bytes.ok());
  CHECK(google::protobuf::util::MessageDifferencer::Equals(**from_bytes, **from_file));
  // With the real directory the variables are restored and the signature runs.
  auto model = SavedModel::LoadFromProto(std::move(from_bytes).value(), dir);
  REQUIRE(model.ok());
  auto sig = (*model)->GetSignature("serving_default");
  REQUIRE(sig.ok());
  auto out = (*sig)->Run({{"a", Tensor::Scalar<float>(2)}, {"b", Tensor::Scalar<float>(3)}});
  CHECK(out.ok());
  // Without a variables/ directory the model still prepares; reading a variable says why not.
  auto again = ParseSavedModelProto(ReadAll(dir / "saved_model.pb"));
  REQUIRE(again.ok());
  auto bare = SavedModel::LoadFromProto(std::move(again).value(), "/nonexistent/kiln");
  REQUIRE(bare.ok());
  auto run = (*(*bare)->GetSignature("serving_default"))
                 ->Run({{"a", Tensor::Scalar<float>(2)}, {"b", Tensor::Scalar<float>(3)}});
  REQUIRE_FALSE(run.ok());
  CHECK(run.status().message().find("not initialized") != std::string::npos);
  CHECK_FALSE(ParseSavedModelProto("\xff\xff garbage").ok());
}

TEST_CASE("BundleReader::OpenFromMemory reads the same tensors as Open") {
  const auto prefix = Fixture("VarsAndArithmeticObjectGraph") / "variables" / "variables";
  auto disk = BundleReader::Open(prefix);
  REQUIRE(disk.ok());
  auto mem = BundleReader::OpenFromMemory(ReadAll(prefix.string() + ".index"),
                                          {ReadAll(prefix.string() + ".data-00000-of-00001")});
  REQUIRE(mem.ok());
  REQUIRE((*mem)->Keys() == (*disk)->Keys());
  for (const auto& key : (*disk)->Keys()) {
    auto a = (*disk)->Read(key);
    auto b = (*mem)->Read(key);
    REQUIRE(a.ok());
    REQUIRE(b.ok());
    CHECK(TensorsEqual(*a, *b));
  }
  // The wrong number of shards, and data cut short, are errors.
  CHECK_FALSE(BundleReader::OpenFromMemory(ReadAll(prefix.string() + ".index"), {}).ok());
  auto cut = BundleReader::OpenFromMemory(ReadAll(prefix.string() + ".index"), {"x"});
  REQUIRE(cut.ok());
  bool any_error = false;
  for (const auto& key : (*cut)->Keys()) any_error = any_error || !(*cut)->Read(key).ok();
  CHECK(any_error);
}

TEST_CASE("TensorFromProto refuses absurd sizes before allocating") {
  tensorflow::TensorProto p;
  p.set_dtype(tensorflow::DT_FLOAT);
  p.mutable_tensor_shape()->add_dim()->set_size(int64_t{1} << 40);
  p.add_float_val(1);
  auto huge = TensorFromProto(p);
  REQUIRE_FALSE(huge.ok());
  CHECK(huge.status().message().find("more than") != std::string::npos);
  // Dimensions whose product overflows int64.
  p.mutable_tensor_shape()->mutable_dim(0)->set_size(int64_t{1} << 40);
  p.mutable_tensor_shape()->add_dim()->set_size(int64_t{1} << 40);
  CHECK_FALSE(TensorFromProto(p).ok());
  // 512 MiB of floats from one value: a fill bomb.
  p.mutable_tensor_shape()->clear_dim();
  p.mutable_tensor_shape()->add_dim()->set_size(int64_t{1} << 27);
  auto bomb = TensorFromProto(p);
  REQUIRE_FALSE(bomb.ok());
  CHECK(bomb.status().message().find("expands") != std::string::npos);
  // A small fill is still TensorFlow's rule.
  p.mutable_tensor_shape()->mutable_dim(0)->set_size(1000);
  auto fill = TensorFromProto(p);
  REQUIRE(fill.ok());
  CHECK(fill->flat<float>()[999] == 1.0f);
}

}  // namespace
}  // namespace kiln::exec
