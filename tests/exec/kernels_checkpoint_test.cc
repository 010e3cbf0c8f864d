// Checkpoint writing: SaveV2 writes what the bundle reader reads back, MergeV2Checkpoints joins
// shards into one prefix, ShardedFilename names shards; errors name what is wrong.
#include <doctest/doctest.h>

#include <filesystem>

#include "exec/kernel_test_util.h"
#include "kiln/exec/tensor_bundle.h"

namespace kiln::exec {
namespace {

namespace fs = std::filesystem;
using testing::CheckError;
using testing::Make;
using testing::OpRunner;

struct TempDir {
  TempDir() {
    path = fs::temp_directory_path() /
           ("kiln_ckpt_" + std::to_string(reinterpret_cast<uintptr_t>(this)));
    fs::remove_all(path);
    fs::create_directories(path);
  }
  ~TempDir() { fs::remove_all(path); }
  fs::path path;
};

Result<std::vector<Tensor>> Save(const std::string& prefix, const std::vector<std::string>& names,
                                 const std::vector<Tensor>& tensors,
                                 std::vector<std::string> slices = {}) {
  if (slices.empty()) slices.assign(names.size(), "");
  OpRunner r("SaveV2", "save");
  std::vector<DType> dtypes;
  for (const Tensor& t : tensors) dtypes.push_back(t.dtype());
  r.TypeList("dtypes", dtypes)
      .Input(Tensor::StringScalar(prefix))
      .Input(Make<std::string>(names, Shape{static_cast<int64_t>(names.size())}))
      .Input(Make<std::string>(slices, Shape{static_cast<int64_t>(slices.size())}));
  for (const Tensor& t : tensors) r.Input(t);
  return r.Run();
}

TEST_CASE("SaveV2 writes a bundle the reader reads back (creating the directory)") {
  TempDir dir;
  const std::string prefix = (dir.path / "tmp" / "part-00000-of-00001").string();
  const Tensor a = Make<float>({1, 2, 3, 4}, {2, 2});
  const Tensor b = Make<std::string>({"x", "", "yz"}, {3});
  const Tensor c = Make<int64_t>({-5}, {});
  REQUIRE(Save(prefix, {"b", "a", "c"}, {b, a, c}).ok());
  auto reader = BundleReader::Open(prefix);
  REQUIRE_MESSAGE(reader.ok(), reader.status().ToString());
  CHECK((*reader)->Keys() == std::vector<std::string>{"a", "b", "c"});
  CHECK(TensorsEqual(*(*reader)->Read("a"), a));
  CHECK(TensorsEqual(*(*reader)->Read("b"), b));
  CHECK(TensorsEqual(*(*reader)->Read("c"), c));
  // The same through RestoreV2.
  auto restored = OpRunner("RestoreV2")
                      .TypeList("dtypes", {DType::kString, DType::kInt64})
                      .Input(Tensor::StringScalar(prefix))
                      .Input(Make<std::string>({"b", "c"}, {2}))
                      .Input(Make<std::string>({"", ""}, {2}))
                      .Run();
  REQUIRE(restored.ok());
  CHECK(TensorsEqual((*restored)[0], b));
  CHECK(TensorsEqual((*restored)[1], c));
}

TEST_CASE("SaveV2 errors: duplicate names, slices, counts, dtypes") {
  TempDir dir;
  const std::string prefix = (dir.path / "ckpt").string();
  const Tensor a = Make<float>({1}, {1});
  CheckError(Save(prefix, {"a", "a"}, {a, a}).status(), {"node 'save'", "'a' was added twice"});
  CheckError(Save(prefix, {"a"}, {a}, {"1 0,1"}).status(), {"slice '1 0,1'", "whole tensors"});
  OpRunner count("SaveV2", "save");
  count.TypeList("dtypes", {DType::kFloat})
      .InputSpec({DType::kString, Shape{}})
      .InputSpec({DType::kString, Shape{2}})
      .InputSpec({DType::kString, Shape{2}})
      .InputSpec({DType::kFloat, Shape{1}});
  CheckError(count.Prepare(), {"'tensor_names' has 2 elements for 1 tensors"});
  OpRunner res("SaveV2", "save");
  res.TypeList("dtypes", {DType::kResource})
      .InputSpec({DType::kString, Shape{}})
      .InputSpec({DType::kString, Shape{1}})
      .InputSpec({DType::kString, Shape{1}})
      .InputSpec({DType::kResource, Shape{}});
  CheckError(res.Prepare(), {"attr 'dtypes'", "resource"});
  auto runtime = OpRunner("SaveV2", "save")
                     .TypeList("dtypes", {DType::kFloat})
                     .Input(Tensor::StringScalar(prefix))
                     .Input(Make<std::string>({"a", "b"}, {2}),
                            TensorSpec{DType::kString, PartialShape::UnknownRank()})
                     .Input(Make<std::string>({""}, {1}))
                     .Input(a)
                     .Run();
  CheckError(runtime.status(), {"'tensor_names' must hold 1 names"});
}

TEST_CASE("MergeV2Checkpoints joins shards, renumbers their data files and removes the sources") {
  TempDir dir;
  const std::string s0 = (dir.path / "tmp" / "part-00000-of-00002").string();
  const std::string s1 = (dir.path / "tmp" / "part-00001-of-00002").string();
  const Tensor a = Make<float>({1, 2}, {2});
  const Tensor b = Make<std::string>({"hello"}, {1});
  REQUIRE(Save(s0, {"a"}, {a}).ok());
  REQUIRE(Save(s1, {"b"}, {b}).ok());
  const std::string dest = (dir.path / "out" / "variables").string();
  auto merged = OpRunner("MergeV2Checkpoints")
                    .Input(Make<std::string>({s0, s1}, {2}))
                    .Input(Tensor::StringScalar(dest))
                    .Run();
  REQUIRE_MESSAGE(merged.ok(), merged.status().ToString());
  CHECK(fs::exists(dest + ".data-00000-of-00002"));
  CHECK(fs::exists(dest + ".data-00001-of-00002"));
  CHECK_FALSE(fs::exists(dir.path / "tmp"));  // delete_old_dirs: the emptied directory goes
  auto reader = BundleReader::Open(dest);
  REQUIRE(reader.ok());
  CHECK(TensorsEqual(*(*reader)->Read("a"), a));
  CHECK(TensorsEqual(*(*reader)->Read("b"), b));
}

TEST_CASE("MergeV2Checkpoints errors: missing sources, duplicate keys") {
  TempDir dir;
  const std::string s0 = (dir.path / "p0").string();
  const std::string s1 = (dir.path / "p1").string();
  REQUIRE(Save(s0, {"a"}, {Make<float>({1}, {1})}).ok());
  REQUIRE(Save(s1, {"a"}, {Make<float>({2}, {1})}).ok());
  auto merge = [&](std::vector<std::string> srcs, bool allow_missing) {
    return OpRunner("MergeV2Checkpoints", "merge")
        .Bool("allow_missing_files", allow_missing)
        .Input(Make<std::string>(srcs, Shape{static_cast<int64_t>(srcs.size())}))
        .Input(Tensor::StringScalar((dir.path / "dest").string()))
        .Run()
        .status();
  };
  CheckError(merge({s0, s1}, false), {"node 'merge'", "tensor 'a' appears in '" + s1 + "'"});
  CheckError(merge({(dir.path / "missing").string()}, false), {"missing.index"});
  CheckError(merge({(dir.path / "missing").string()}, true), {"no source bundle"});
  CHECK(merge({(dir.path / "missing").string(), s0}, true).ok());
}

TEST_CASE("ShardedFilename formats TF's shard names, inputs must be scalars") {
  auto got = OpRunner("ShardedFilename")
                 .Input(Tensor::StringScalar("/tmp/x"))
                 .Input(Tensor::Scalar<int32_t>(1))
                 .Input(Tensor::Scalar<int32_t>(2))
                 .Run1();
  REQUIRE(got.ok());
  CHECK(got->scalar<std::string>() == "/tmp/x-00001-of-00002");
  OpRunner r("ShardedFilename", "shard");
  r.InputSpec({DType::kString, Shape{2}})
      .InputSpec({DType::kInt32, Shape{}})
      .InputSpec({DType::kInt32, Shape{}});
  CheckError(r.Prepare(), {"node 'shard'", "input 'basename'", "rank 0"});
}

}  // namespace
}  // namespace kiln::exec
