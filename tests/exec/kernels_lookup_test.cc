// Lookup tables: sharing by name, initialization rules (once, or again with the same data),
// mutable tables, vocabulary files and every error TF's kernels report.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>

#include "exec/kernel_test_util.h"
#include "kernels/lookup_table.h"

namespace kiln::exec {
namespace {

using testing::CheckError;
using testing::Make;
using testing::OpRunner;

Tensor Strs(const std::vector<std::string>& v) {
  return Make<std::string>(v, Shape{static_cast<int64_t>(v.size())});
}

// A HashTableV2 (or MutableHashTableV2) node's handle.
Tensor MakeTable(ResourceManager* rm, const std::string& shared, DType key, DType value,
                 bool mut = false) {
  auto h = OpRunner(mut ? "MutableHashTableV2" : "HashTableV2")
               .Type("key_dtype", key)
               .Type("value_dtype", value)
               .String("shared_name", shared)
               .Resources(rm)
               .Run1();
  REQUIRE_MESSAGE(h.ok(), h.status().ToString());
  return *h;
}

Status Init(const Tensor& table, const Tensor& keys, const Tensor& values,
            const std::string& op = "InitializeTableV2") {
  const bool init = op == "InitializeTableV2";
  return OpRunner(op, "init")
      .Type(init ? "Tkey" : "Tin", keys.dtype())
      .Type(init ? "Tval" : "Tout", values.dtype())
      .Input(table)
      .Input(keys)
      .Input(values)
      .Run()
      .status();
}

Result<Tensor> Find(const Tensor& table, const Tensor& keys, const Tensor& dflt) {
  return OpRunner("LookupTableFindV2", "find")
      .Type("Tin", keys.dtype())
      .Type("Tout", dflt.dtype())
      .Input(table)
      .Input(keys)
      .Input(dflt)
      .Run1();
}

TEST_CASE("HashTableV2: one table per shared name, unnamed tables belong to their node") {
  ResourceManager rm;
  Tensor a = MakeTable(&rm, "t", DType::kString, DType::kInt64);
  Tensor b = MakeTable(&rm, "t", DType::kString, DType::kInt64);
  CHECK(TensorsEqual(a, b));
  Tensor c = MakeTable(&rm, "other", DType::kString, DType::kInt64);
  CHECK_FALSE(TensorsEqual(a, c));
  auto anon1 = OpRunner("HashTableV2")
                   .Type("key_dtype", DType::kInt64)
                   .Type("value_dtype", DType::kInt64)
                   .Resources(&rm)
                   .Run1();
  auto anon2 = OpRunner("HashTableV2")
                   .Type("key_dtype", DType::kInt64)
                   .Type("value_dtype", DType::kInt64)
                   .Resources(&rm)
                   .Run1();
  REQUIRE(anon1.ok());
  REQUIRE(anon2.ok());
  CHECK_FALSE(TensorsEqual(*anon1, *anon2));
  // The same name with other dtypes, or as the other kind of table, is refused.
  OpRunner clash("HashTableV2", "clash");
  clash.Type("key_dtype", DType::kInt64)
      .Type("value_dtype", DType::kInt64)
      .String("shared_name", "t")
      .Resources(&rm);
  CheckError(clash.Prepare(), {"node 'clash'", "table 't' maps string -> int64"});
  OpRunner kind("MutableHashTableV2", "kind");
  kind.Type("key_dtype", DType::kString)
      .Type("value_dtype", DType::kInt64)
      .String("shared_name", "t")
      .Resources(&rm);
  CheckError(kind.Prepare(), {"exists as a HashTableV2"});
  OpRunner bad("HashTableV2", "bad");
  bad.Type("key_dtype", DType::kFloat).Type("value_dtype", DType::kInt64);
  CheckError(bad.Prepare(), {"attr 'key_dtype'", "float32"});
  OpRunner badv("HashTableV2", "bad");
  badv.Type("key_dtype", DType::kInt64).Type("value_dtype", DType::kHalf);
  CheckError(badv.Prepare(), {"attr 'value_dtype'", "float16"});
}

TEST_CASE("HashTableV2: initialized once, again only with the same data, finds need it") {
  ResourceManager rm;
  Tensor t = MakeTable(&rm, "t", DType::kString, DType::kInt64);
  CheckError(Find(t, Strs({"a"}), Tensor::Scalar<int64_t>(-1)).status(),
             {"node 'find'", "not initialized"});
  REQUIRE(Init(t, Strs({"a", "b"}), Make<int64_t>({1, 2}, {2})).ok());
  CHECK(Init(t, Strs({"b", "a"}), Make<int64_t>({2, 1}, {2})).ok());
  CheckError(Init(t, Strs({"a"}), Make<int64_t>({5}, {1})),
             {"node 'init'", "already initialized with different data"});
  // Importing into a HashTableV2 follows the same rule (TF2's initializers import).
  CHECK(Init(t, Strs({"a", "b"}), Make<int64_t>({1, 2}, {2}), "LookupTableImportV2").ok());
  auto got = Find(t, Make<std::string>({"b", "zz", "a", "a"}, {2, 2}), Tensor::Scalar<int64_t>(-7));
  REQUIRE(got.ok());
  CHECK(TensorsEqual(*got, Make<int64_t>({2, -7, 1, 1}, {2, 2})));

  Tensor d = MakeTable(&rm, "dup", DType::kInt32, DType::kFloat);
  CheckError(Init(d, Make<int32_t>({7, 7}, {2}), Make<float>({1, 2}, {2})),
             {"key 7 has value 1 and is given value 2"});
  // A failed initialization leaves the table empty and uninitialized.
  REQUIRE(Init(d, Make<int32_t>({7}, {1}), Make<float>({3}, {1})).ok());
}

TEST_CASE("LookupTableFindV2: dtypes and the default's shape are checked") {
  ResourceManager rm;
  Tensor t = MakeTable(&rm, "t", DType::kString, DType::kInt64);
  REQUIRE(Init(t, Strs({"a", "b"}), Make<int64_t>({1, 2}, {2})).ok());
  CheckError(Find(t, Make<int32_t>({1}, {1}), Tensor::Scalar<int64_t>(0)).status(),
             {"table 't' maps string -> int64", "int32 -> int64"});
  CheckError(Find(t, Strs({"a", "b"}), Make<int64_t>({1, 2, 3}, {3})).status(),
             {"'default_value'", "scalar or have the shape of 'keys'"});
  auto per_key = Find(t, Strs({"a", "q"}), Make<int64_t>({-1, -2}, {2}));
  REQUIRE(per_key.ok());
  CHECK(TensorsEqual(*per_key, Make<int64_t>({1, -2}, {2})));
  OpRunner prep("LookupTableFindV2", "find");
  prep.Type("Tin", DType::kString)
      .Type("Tout", DType::kInt64)
      .ConstantInput(t)  // the table's value shape is known when the handle is
      .InputSpec({DType::kString, Shape{2}})
      .InputSpec({DType::kInt64, Shape{3}});
  CheckError(prep.Prepare(), {"node 'find'", "'default_value'", "(2,)", "(3,)"});
  OpRunner notable("LookupTableSizeV2", "size");
  Tensor var_handle(DType::kResource, Shape());
  var_handle.scalar<std::shared_ptr<ResourceBase>>() =
      std::make_shared<VariableResource>("v", DType::kFloat, PartialShape::Scalar());
  CheckError(notable.Input(var_handle).Run().status(), {"node 'size'", "is not a lookup table"});
}

TEST_CASE("InitializeTableV2 and LookupTableImportV2: shapes and table kinds") {
  ResourceManager rm;
  Tensor t = MakeTable(&rm, "t", DType::kString, DType::kInt64);
  CheckError(Init(t, Strs({"a", "b", "c"}), Make<int64_t>({1, 2}, {2})),
             {"node 'init'", "'keys' (3,) and 'values' (2,) must have the same size"});
  CheckError(Init(t, Make<std::string>({"a", "b"}, {1, 2}), Make<int64_t>({1, 2}, {1, 2})),
             {"input 'keys'", "rank 1"});
  Tensor m = MakeTable(&rm, "m", DType::kString, DType::kFloat, /*mut=*/true);
  CheckError(Init(m, Strs({"a"}), Make<float>({1}, {1})), {"not initializable"});
  // Import replaces the whole mutable table.
  REQUIRE(Init(m, Strs({"a", "b"}), Make<float>({1, 2}, {2}), "LookupTableImportV2").ok());
  REQUIRE(Init(m, Strs({"c"}), Make<float>({3}, {1}), "LookupTableImportV2").ok());
  auto size = OpRunner("LookupTableSizeV2").Input(m).Run1();
  REQUIRE(size.ok());
  CHECK(size->scalar<int64_t>() == 1);
  auto got = Find(m, Strs({"a", "c"}), Tensor::Scalar(0.5f));
  REQUIRE(got.ok());
  CHECK(TensorsEqual(*got, Make<float>({0.5f, 3}, {2})));
}

struct VocabFile {
  explicit VocabFile(const std::string& text) {
    path = std::filesystem::temp_directory_path() /
           ("kiln_vocab_" + std::to_string(reinterpret_cast<uintptr_t>(this)) + ".txt");
    std::ofstream(path, std::ios::binary) << text;
  }
  ~VocabFile() { std::filesystem::remove(path); }
  std::filesystem::path path;
};

Status InitFromFile(const Tensor& table, const std::string& file, int64_t key, int64_t value,
                    int64_t vocab_size = -1, const std::string& delimiter = "\t",
                    int64_t offset = 0) {
  return OpRunner("InitializeTableFromTextFileV2", "vocab")
      .Int("key_index", key)
      .Int("value_index", value)
      .Int("vocab_size", vocab_size)
      .String("delimiter", delimiter)
      .Int("offset", offset)
      .Input(table)
      .Input(Tensor::StringScalar(file))
      .Run()
      .status();
}

TEST_CASE("LookupTableInsertV2 and LookupTableRemoveV2: mutable tables change, static refuse") {
  ResourceManager rm;
  Tensor t = MakeTable(&rm, "m", DType::kString, DType::kInt64, /*mut=*/true);
  auto edit = [&](const std::string& op, const Tensor& table, const Tensor& keys,
                  const Tensor* values) {
    OpRunner r(op, "edit");
    r.Type("Tin", keys.dtype());
    if (values != nullptr) r.Type("Tout", values->dtype());
    r.Input(table).Input(keys);
    if (values != nullptr) r.Input(*values);
    return r.Run().status();
  };
  const Tensor v1 = Make<int64_t>({1, 2}, {2}), v2 = Make<int64_t>({20, 30}, {2});
  REQUIRE(edit("LookupTableInsertV2", t, Strs({"a", "b"}), &v1).ok());
  REQUIRE(edit("LookupTableInsertV2", t, Strs({"b", "c"}), &v2).ok());  // b replaced
  auto found = Find(t, Strs({"a", "b", "c", "d"}), Tensor::Scalar<int64_t>(-1));
  REQUIRE(found.ok());
  CHECK(TensorsEqual(*found, Make<int64_t>({1, 20, 30, -1}, {4})));
  REQUIRE(edit("LookupTableRemoveV2", t, Strs({"a", "zzz"}), nullptr).ok());
  found = Find(t, Strs({"a", "b"}), Tensor::Scalar<int64_t>(-1));
  REQUIRE(found.ok());
  CHECK(TensorsEqual(*found, Make<int64_t>({-1, 20}, {2})));
  // The TF 1 forms share the kernels.
  CHECK_FALSE(edit("LookupTableInsert", t, Strs({"q"}), &v1).ok());  // shapes differ
  const Tensor one = Make<int64_t>({7}, {1});
  REQUIRE(edit("LookupTableInsert", t, Strs({"q"}), &one).ok());
  auto size = OpRunner("LookupTableSize").Input(t).Run1();
  REQUIRE(size.ok());
  CHECK(size->scalar<int64_t>() == 3);
  // A static table refuses both.
  Tensor s = MakeTable(&rm, "s", DType::kString, DType::kInt64);
  CheckError(edit("LookupTableInsertV2", s, Strs({"a", "b"}), &v1), {"static table"});
  CheckError(edit("LookupTableRemoveV2", s, Strs({"a"}), nullptr), {"static table"});
}

TEST_CASE("InitializeTableFromTextFileV2: whole lines, line numbers, columns, offset") {
  VocabFile f("apple\t3\nbanana\t5\r\ncherry\t7");
  ResourceManager rm;
  Tensor lines = MakeTable(&rm, "lines", DType::kString, DType::kInt64);
  REQUIRE(InitFromFile(lines, f.path.string(), -2, -1).ok());
  auto got = Find(lines, Strs({"apple\t3", "banana\t5", "cherry\t7", "banana\t5\r"}),
                  Tensor::Scalar<int64_t>(-1));
  REQUIRE(got.ok());
  CHECK(TensorsEqual(*got, Make<int64_t>({0, 1, 2, -1}, {4})));

  Tensor cols = MakeTable(&rm, "cols", DType::kString, DType::kInt32);
  REQUIRE(InitFromFile(cols, f.path.string(), 0, 1, -1, "\t", 10).ok());
  got = Find(cols, Strs({"apple", "cherry"}), Tensor::Scalar<int32_t>(-1));
  REQUIRE(got.ok());
  CHECK(TensorsEqual(*got, Make<int32_t>({13, 17}, {2})));  // TF adds the offset to int32 values

  Tensor numbered = MakeTable(&rm, "numbered", DType::kString, DType::kInt64);
  REQUIRE(InitFromFile(numbered, f.path.string(), 0, -1, 2, "\t", 100).ok());
  auto size = OpRunner("LookupTableSizeV2").Input(numbered).Run1();
  REQUIRE(size.ok());
  CHECK(size->scalar<int64_t>() == 2);  // vocab_size reads only the first lines
  got = Find(numbered, Strs({"banana"}), Tensor::Scalar<int64_t>(-1));
  REQUIRE(got.ok());
  CHECK(got->data<int64_t>()[0] == 101);

  // An initialized table is left as it is.
  CHECK(InitFromFile(numbered, f.path.string(), 0, 1).ok());
  size = OpRunner("LookupTableSizeV2").Input(numbered).Run1();
  CHECK(size->scalar<int64_t>() == 2);
}

TEST_CASE("InitializeTableFromTextFileV2: errors name the file, line and what was expected") {
  VocabFile f("apple\t3\nbanana\t5\n");
  VocabFile empty_line("a\n\nb\n");
  VocabFile empty_file("");
  ResourceManager rm;
  auto table = [&](const std::string& name, DType k, DType v) {
    return MakeTable(&rm, name, k, v);
  };
  CheckError(InitFromFile(table("a", DType::kString, DType::kInt64), f.path.string(), 0, -1, 5),
             {"node 'vocab'", "vocab_size", "expected 5", "has 2"});
  CheckError(
      InitFromFile(table("b", DType::kString, DType::kInt64), empty_line.path.string(), -2, -1),
      {"line 1 is empty"});
  // No line at all: TF fails with OutOfRange rather than leaving an empty table.
  Status no_lines =
      InitFromFile(table("h", DType::kString, DType::kInt64), empty_file.path.string(), -2, -1);
  CheckError(no_lines, {"node 'vocab'", "gives no lines", "file is empty"});
  CHECK(no_lines.code() == StatusCode::kOutOfRange);
  CheckError(InitFromFile(table("i", DType::kString, DType::kInt64), f.path.string(), 0, -1, 0),
             {"vocab_size is 0"});
  CheckError(
      InitFromFile(table("c", DType::kString, DType::kInt64), "/nonexistent/vocab.txt", -2, -1),
      {"/nonexistent/vocab.txt"});
  CheckError(InitFromFile(table("d", DType::kString, DType::kInt64), f.path.string(), 0, 3),
             {"columns", "line 0", "expected at least 4, got 2"});
  CheckError(InitFromFile(table("e", DType::kInt32, DType::kString), f.path.string(), -1, -2),
             {"key index -1", "int64"});
  CheckError(InitFromFile(table("f", DType::kString, DType::kFloat), f.path.string(), 0, -2),
             {"value index -2", "float32"});
  CheckError(InitFromFile(table("g", DType::kInt64, DType::kString), f.path.string(), 0, -2),
             {"field \"apple\"", "line 0", "int64"});
  OpRunner delim("InitializeTableFromTextFileV2", "vocab");
  delim.Int("key_index", 0)
      .Int("value_index", 1)
      .String("delimiter", "ab")
      .InputSpec({DType::kResource, Shape{}})
      .InputSpec({DType::kString, Shape{}});
  CheckError(delim.Prepare(), {"attr 'delimiter'", "one character"});
  OpRunner idx("InitializeTableFromTextFileV2", "vocab");
  idx.Int("key_index", -3)
      .Int("value_index", 1)
      .InputSpec({DType::kResource, Shape{}})
      .InputSpec({DType::kString, Shape{}});
  CheckError(idx.Prepare(), {"attr 'key_index'", "at least -2"});
}

}  // namespace
}  // namespace kiln::exec
