// Op-tester cases of the lookup-table ops. Tables live in a resource manager shared by the
// cases (tables are found by shared name, as in a loaded model); the references are plain maps.
#include <filesystem>
#include <fstream>
#include <map>

#include "kernels/lookup_table.h"
#include "ops/op_cases.h"

namespace kiln::testing {
namespace {

ResourceManager* Manager() {
  static ResourceManager rm;
  return &rm;
}

// A table made directly (what a loader's creator function would give), as a handle tensor.
Tensor TableHandle(const std::string& name, DType key, DType value, bool initializable,
                   const Tensor& keys, const Tensor& values) {
  auto made = exec::MakeLookupTable(name, key, value, initializable);
  REQUIRE(made.ok());
  std::shared_ptr<exec::LookupTable> table = *made;
  if (keys.IsInitialized()) REQUIRE(table->Import(keys, values).ok());
  Tensor h(DType::kResource, Shape());
  h.scalar<std::shared_ptr<ResourceBase>>() = table;
  return h;
}

template <typename K, typename V>
Tensor RefFind(const std::map<K, V>& m, const Tensor& keys, const Tensor& dflt) {
  Tensor out(kDTypeOf<V>, keys.shape());
  for (int64_t i = 0; i < keys.NumElements(); ++i) {
    auto it = m.find(keys.data<K>()[i]);
    out.data<V>()[i] = it != m.end() ? it->second : dflt.data<V>()[dflt.rank() == 0 ? 0 : i];
  }
  return out;
}

}  // namespace

namespace {

// The TF 1 reference forms, the anonymous tables, LookupTableInsertV2 and LookupTableRemoveV2
// (their effects: tests/exec/kernels_lookup_test.cc).
void AddTf1AndEdits(std::vector<OpCase>* c) {
  const Tensor words = Make<std::string>({"apple", "banana", "cherry"}, {3});
  const Tensor ids = Make<int64_t>({3, 5, 7}, {3});
  const std::map<std::string, int64_t> fruit = {{"apple", 3}, {"banana", 5}, {"cherry", 7}};
  for (const char* op : {"HashTable", "MutableHashTable"}) {
    c->push_back(OpCaseBuilder(op)
                     .Type("key_dtype", DType::kString)
                     .Type("value_dtype", DType::kInt64)
                     .String("shared_name", std::string("cases_v1_") + op)
                     .Resources(Manager())
                     .Build());
  }
  // Integer keys (an IntegerLookup's table, ids mapped to strings).
  for (const char* op : {"HashTable", "MutableHashTable", "HashTableV2", "MutableHashTableV2"}) {
    for (DType key : {DType::kInt64, DType::kInt32}) {
      c->push_back(OpCaseBuilder(op, std::string(op) + " " + DTypeShortName(key) + " keys")
                       .Type("key_dtype", key)
                       .Type("value_dtype", DType::kString)
                       .Resources(Manager())
                       .NonDeterministic()  // unshared: a new table, a new handle, each run
                       .Build());
    }
  }
  for (const char* op : {"AnonymousHashTable", "AnonymousMutableHashTable"}) {
    c->push_back(OpCaseBuilder(op)
                     .Type("key_dtype", DType::kInt64)
                     .Type("value_dtype", DType::kFloat)
                     .NonDeterministic()
                     .Build());
  }
  const Tensor table = TableHandle("fruit_v1", DType::kString, DType::kInt64, true, words, ids);
  c->push_back(OpCaseBuilder("LookupTableFind", "LookupTableFind (TF 1)")
                   .Type("Tin", DType::kString)
                   .Type("Tout", DType::kInt64)
                   .Input(table)
                   .Input(Make<std::string>({"cherry", "kiwi"}, {2}))
                   .Input(Tensor::Scalar<int64_t>(-1))
                   .Reference1([fruit](const std::vector<Tensor>& in) {
                     return RefFind(fruit, in[1], in[2]);
                   })
                   .Build());
  c->push_back(OpCaseBuilder("LookupTableSize", "LookupTableSize (TF 1)")
                   .Input(table)
                   .Reference1([](const auto&) { return Tensor::Scalar<int64_t>(3); })
                   .Build());
  c->push_back(OpCaseBuilder("InitializeTable", "InitializeTable (TF 1, again, same data)")
                   .Type("Tkey", DType::kString)
                   .Type("Tval", DType::kInt64)
                   .Input(table)
                   .Input(words)
                   .Input(ids)
                   .Build());
  const Tensor k = Make<std::string>({"fig", "apple"}, {2});
  const Tensor v = Make<float>({1.5f, 4.0f}, {2});
  c->push_back(OpCaseBuilder("LookupTableExport", "LookupTableExport (TF 1)")
                   .Type("Tkeys", DType::kString)
                   .Type("Tvalues", DType::kFloat)
                   .Input(TableHandle("exported_v1", DType::kString, DType::kFloat, false, k, v))
                   .Reference([](const std::vector<Tensor>&) {
                     return std::vector<Tensor>{Make<std::string>({"apple", "fig"}, {2}),
                                                Make<float>({4.0f, 1.5f}, {2})};
                   })
                   .Build());
  for (const char* op : {"LookupTableImport", "LookupTableInsert", "LookupTableInsertV2"}) {
    c->push_back(OpCaseBuilder(op)
                     .Type("Tin", DType::kString)
                     .Type("Tout", DType::kInt64)
                     .Input(TableHandle(std::string("edits_") + op, DType::kString, DType::kInt64,
                                        false, Tensor(), Tensor()))
                     .Input(Make<std::string>({"x", "y"}, {2}))
                     .Input(Make<int64_t>({1, 2}, {2}))
                     .Build());
  }
  c->push_back(OpCaseBuilder("LookupTableRemoveV2")
                   .Type("Tin", DType::kString)
                   .Input(TableHandle("removes", DType::kString, DType::kInt64, false, words, ids))
                   .Input(Make<std::string>({"banana"}, {1}))
                   .Build());
  const std::filesystem::path vocab =
      std::filesystem::temp_directory_path() / "kiln_cases_vocab_v1.txt";
  {
    std::ofstream f(vocab);
    f << "apple\nbanana\n";
  }
  c->push_back(
      OpCaseBuilder("InitializeTableFromTextFile", "InitializeTableFromTextFile (TF 1)")
          .Int("key_index", -2)
          .Int("value_index", -1)
          .Input(TableHandle("vocab_v1", DType::kString, DType::kInt64, true, Tensor(), Tensor()))
          .Input(Tensor::StringScalar(vocab.string()))
          .Build());
}

}  // namespace

std::vector<OpCase> LookupCases() {
  std::vector<OpCase> c;
  const Tensor words = Make<std::string>({"apple", "banana", "cherry"}, {3});
  const Tensor ids = Make<int64_t>({3, 5, 7}, {3});
  const std::map<std::string, int64_t> fruit = {{"apple", 3}, {"banana", 5}, {"cherry", 7}};

  // Making tables: the handle of a shared table is the same on every path.
  for (bool mut : {false, true}) {
    c.push_back(OpCaseBuilder(mut ? "MutableHashTableV2" : "HashTableV2")
                    .Type("key_dtype", DType::kString)
                    .Type("value_dtype", DType::kInt64)
                    .String("shared_name", mut ? "cases_mutable" : "cases_static")
                    .Resources(Manager())
                    .Build());
  }

  // Finding: string -> int64 with one default, then with one default per key.
  const Tensor table = TableHandle("fruit", DType::kString, DType::kInt64, true, words, ids);
  const Tensor keys = Make<std::string>({"banana", "kiwi", "apple", "cherry", "", "apple"}, {2, 3});
  for (bool per_key : {false, true}) {
    const Tensor dflt =
        per_key ? Make<int64_t>({-1, -2, -3, -4, -5, -6}, {2, 3}) : Tensor::Scalar<int64_t>(-1);
    c.push_back(OpCaseBuilder("LookupTableFindV2", per_key ? "LookupTableFindV2 default per key"
                                                           : "LookupTableFindV2 string -> int64")
                    .Type("Tin", DType::kString)
                    .Type("Tout", DType::kInt64)
                    .Input(table)
                    .Input(keys)
                    .Input(dflt)
                    .Reference1([fruit](const std::vector<Tensor>& in) {
                      return RefFind(fruit, in[1], in[2]);
                    })
                    .Build());
  }
  // int64 -> string and int32 -> float, many keys.
  {
    const Tensor k = Make<int64_t>({10, 20, 30}, {3});
    const Tensor v = Make<std::string>({"ten", "twenty", "thirty"}, {3});
    const std::map<int64_t, std::string> m = {{10, "ten"}, {20, "twenty"}, {30, "thirty"}};
    c.push_back(
        OpCaseBuilder("LookupTableFindV2", "LookupTableFindV2 int64 -> string")
            .Type("Tin", DType::kInt64)
            .Type("Tout", DType::kString)
            .Input(TableHandle("names", DType::kInt64, DType::kString, true, k, v))
            .Input(RandomOf(DType::kInt64, Shape{50, 40}, 2, 0, 40))
            .Input(Tensor::StringScalar("?"))
            .Reference1([m](const std::vector<Tensor>& in) { return RefFind(m, in[1], in[2]); })
            .Build());
    const Tensor k32 = Make<int32_t>({1, 2}, {2});
    const Tensor vf = Make<float>({0.5f, 1.5f}, {2});
    const std::map<int32_t, float> mf = {{1, 0.5f}, {2, 1.5f}};
    c.push_back(
        OpCaseBuilder("LookupTableFindV2", "LookupTableFindV2 int32 -> float32")
            .Type("Tin", DType::kInt32)
            .Type("Tout", DType::kFloat)
            .Input(TableHandle("halves", DType::kInt32, DType::kFloat, false, k32, vf))
            .Input(Make<int32_t>({2, 3, 1}, {3}))
            .Input(Tensor::Scalar(-1.0f))
            .Reference1([mf](const std::vector<Tensor>& in) { return RefFind(mf, in[1], in[2]); })
            .Build());
  }

  // Sizes, before and after filling.
  const Tensor empty =
      TableHandle("empty", DType::kString, DType::kInt64, true, Tensor(), Tensor());
  c.push_back(OpCaseBuilder("LookupTableSizeV2", "LookupTableSizeV2 uninitialized")
                  .Input(empty)
                  .Reference1([](const auto&) { return Tensor::Scalar<int64_t>(0); })
                  .Build());
  c.push_back(OpCaseBuilder("LookupTableSizeV2", "LookupTableSizeV2 of three entries")
                  .Input(table)
                  .Reference1([](const auto&) { return Tensor::Scalar<int64_t>(3); })
                  .Build());

  // Filling: initializing again with the same data and importing into a mutable table succeed
  // on every run.
  c.push_back(OpCaseBuilder("InitializeTableV2", "InitializeTableV2 (again, same data)")
                  .Type("Tkey", DType::kString)
                  .Type("Tval", DType::kInt64)
                  .Input(table)
                  .Input(words)
                  .Input(ids)
                  .Build());
  c.push_back(
      OpCaseBuilder("LookupTableImportV2", "LookupTableImportV2 into a mutable table")
          .Type("Tin", DType::kString)
          .Type("Tout", DType::kInt64)
          .Input(TableHandle("mutable", DType::kString, DType::kInt64, false, Tensor(), Tensor()))
          .Input(Make<std::string>({"x", "y"}, {2}))
          .Input(Make<int64_t>({1, 2}, {2}))
          .Build());

  // Exporting (what a mutable table's save function runs): every entry, sorted by key.
  {
    const Tensor k = Make<std::string>({"pear", "fig", "plum", "apple"}, {4});
    const Tensor v = Make<float>({0.5f, 1.5f, -2.0f, 4.0f}, {4});
    c.push_back(OpCaseBuilder("LookupTableExportV2", "LookupTableExportV2 of a mutable table")
                    .Type("Tkeys", DType::kString)
                    .Type("Tvalues", DType::kFloat)
                    .Input(TableHandle("exported", DType::kString, DType::kFloat, false, k, v))
                    .Reference([k, v](const std::vector<Tensor>&) {
                      std::map<std::string, float> m;
                      for (int64_t i = 0; i < k.NumElements(); ++i)
                        m[k.data<std::string>()[i]] = v.data<float>()[i];
                      Tensor keys(DType::kString, Shape{static_cast<int64_t>(m.size())});
                      Tensor values(DType::kFloat, keys.shape());
                      int64_t i = 0;
                      for (const auto& [key, value] : m) {
                        keys.data<std::string>()[i] = key;
                        values.data<float>()[i++] = value;
                      }
                      return std::vector<Tensor>{keys, values};
                    })
                    .Build());
    c.push_back(OpCaseBuilder("LookupTableExportV2", "LookupTableExportV2 of an empty table")
                    .Type("Tkeys", DType::kInt64)
                    .Type("Tvalues", DType::kString)
                    .Input(TableHandle("exported_empty", DType::kInt64, DType::kString, false,
                                       Tensor(), Tensor()))
                    .Reference([](const std::vector<Tensor>&) {
                      return std::vector<Tensor>{Tensor(DType::kInt64, Shape{0}),
                                                 Tensor(DType::kString, Shape{0})};
                    })
                    .Build());
  }

  // From a vocabulary file: word -> line number.
  const std::filesystem::path vocab =
      std::filesystem::temp_directory_path() / "kiln_cases_vocab.txt";
  {
    std::ofstream f(vocab);
    f << "apple\t3\nbanana\t5\r\ncherry\t7";
  }
  c.push_back(
      OpCaseBuilder("InitializeTableFromTextFileV2")
          .Int("key_index", 0)
          .Int("value_index", -1)
          .Input(TableHandle("vocab", DType::kString, DType::kInt64, true, Tensor(), Tensor()))
          .Input(Tensor::StringScalar(vocab.string()))
          .Build());
  AddTf1AndEdits(&c);
  return c;
}

}  // namespace kiln::testing
