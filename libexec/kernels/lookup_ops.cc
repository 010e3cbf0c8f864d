// Lookup tables (lookup_table.h): HashTableV2, MutableHashTableV2, MutableHashTableOfTensorsV2
// and MutableDenseHashTableV2 make them (shared by name
// through the model's resource manager, or owned by the node when unnamed, as TF's kernels do;
// the Anonymous* tables are always the node's own);
// InitializeTableV2, InitializeTableFromTextFileV2, LookupTableImportV2 and LookupTableInsertV2
// fill them, LookupTableRemoveV2 empties them; LookupTableFindV2, LookupTableSizeV2 and
// LookupTableExportV2 read them. The TF 1 forms (HashTable, LookupTableFind, ...) take the table
// as a reference (Ref(string)); here that is the same resource handle, so they share the V2
// kernels.
// The CPU kernels are in kernels/cpu/lookup_ops.cc.
#include "kernels/lookup_ops.h"

#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "kernels/array_util.h"
#include "kernels/lookup_table.h"
#include "kiln/exec/resources.h"

namespace kiln::exec {
namespace {

using lookup::CheckTableDTypes;
using lookup::DefaultShapeError;
using lookup::Handle;
using lookup::TableIoState;
using lookup::TableOf;
using lookup::TextFileState;

// The table behind input 0 when the handle is known at prepare time, else nullptr.
LookupTable* ConstantTable(const PrepareContext& ctx) {
  const Tensor* h = ConstantInput(ctx, 0);
  if (h == nullptr) return nullptr;
  auto t = TableOf(*h);
  return t.ok() ? *t : nullptr;
}

// ---- HashTableV2, MutableHashTableV2 ---------------------------------------------------------

// Which kind of table a creating node makes; a shared table must be of the node's kind.
enum class Kind { kStatic, kMutable, kTensors, kDense };

constexpr std::string_view KindName(Kind k) {
  constexpr std::string_view kNames[] = {"HashTableV2", "MutableHashTableV2",
                                         "MutableHashTableOfTensorsV2", "MutableDenseHashTableV2"};
  return kNames[static_cast<int>(k)];
}

Kind KindOf(const LookupTable& t) {
  if (t.initializable()) return Kind::kStatic;
  if (t.dense()) return Kind::kDense;
  return t.value_shape().rank() == 0 ? Kind::kMutable : Kind::kTensors;
}

// The kind-specific part of a creating node: its attrs and inputs, and the table they make.
using TableMaker = std::function<Result<std::shared_ptr<LookupTable>>(std::string name)>;

Status PrepareTableOf(PrepareContext& ctx, Kind kind, DType key, DType value,
                      const Shape& value_shape, const TableMaker& make) {
  KILN_PREPARE_ASSIGN(ctx, std::string container, ctx.attrs.GetString("container", ""));
  KILN_PREPARE_ASSIGN(ctx, std::string shared_name, ctx.attrs.GetString("shared_name", ""));
  KILN_PREPARE_ASSIGN(ctx, bool node_sharing, ctx.attrs.GetBool("use_node_name_sharing", false));
  if (ctx.op.starts_with("Anonymous")) {
    shared_name.clear();
    node_sharing = false;
  }
  if (!LookupKeyDTypeSupported(key))
    return ctx.Error("attr 'key_dtype': ", DTypeShortName(key),
                     " is not supported, expected int32, int64 or string");
  if (!LookupValueDTypeSupported(value))
    return ctx.Error("attr 'value_dtype': ", DTypeShortName(value),
                     " is not supported, expected bool, float32, float64, int32, int64 or string");
  std::string name = !shared_name.empty() ? shared_name
                     : node_sharing       ? std::string(ctx.node_name)
                                          : std::string();
  if (!name.empty() && !container.empty()) name = container + "/" + name;
  Handle r;
  if (!name.empty() && ctx.resources != nullptr) {
    Status made;
    r = ctx.resources->LookupOrCreate(name, [&]() -> Handle {
      auto t = make(name);
      if (!t.ok()) made = t.status();
      return t.ok() ? *t : nullptr;
    });
    KILN_PREPARE_CHECK(ctx, made);
    LookupTable* table = AsLookupTable(r.get());
    if (table == nullptr) return ctx.Error("resource '", name, "' exists and is not a table");
    KILN_PREPARE_CHECK(ctx, CheckTableDTypes(*table, key, value));
    if (KindOf(*table) != kind)
      return ctx.Error("table '", name, "' exists as a ", KindName(KindOf(*table)));
    if (table->value_shape() != value_shape)
      return ctx.Error("table '", name, "' exists with value shape ",
                       table->value_shape().ToString(), ", the node's is ", value_shape.ToString());
  } else {
    // Unnamed: the node owns its table, which lives as long as the prepared graph.
    KILN_PREPARE_ASSIGN(ctx, r, make(name.empty() ? std::string(ctx.node_name) : name));
  }
  Tensor handle(DType::kResource, Shape());
  handle.scalar<Handle>() = std::move(r);
  ctx.outputs = {TensorSpec{DType::kResource, PartialShape::Scalar()}};
  ctx.state = std::make_shared<TypedOpState<Tensor>>(std::move(handle));
  return OkStatus();
}

template <bool kMutable>
Status PrepareTable(PrepareContext& ctx) {
  KILN_RETURN_IF_ERROR(ctx.ExpectInputs(0));
  KILN_PREPARE_ASSIGN(ctx, DType key, ctx.attrs.GetType("key_dtype"));
  KILN_PREPARE_ASSIGN(ctx, DType value, ctx.attrs.GetType("value_dtype"));
  return PrepareTableOf(
      ctx, kMutable ? Kind::kMutable : Kind::kStatic, key, value, Shape(),
      [&](std::string name) { return MakeLookupTable(std::move(name), key, value, !kMutable); });
}

// MutableHashTableOfTensorsV2: values of the vector shape `value_shape`.
Status PrepareTensorTable(PrepareContext& ctx) {
  KILN_RETURN_IF_ERROR(ctx.ExpectInputs(0));
  KILN_PREPARE_ASSIGN(ctx, DType key, ctx.attrs.GetType("key_dtype"));
  KILN_PREPARE_ASSIGN(ctx, DType value, ctx.attrs.GetType("value_dtype"));
  KILN_PREPARE_ASSIGN(ctx, PartialShape vs, ctx.attrs.GetShape("value_shape", Shape()));
  auto shape = vs.ToShape();
  if (!shape.ok() || shape->rank() != 1)
    return ctx.Error("attr 'value_shape': expected a vector of known size, got ",
                     vs.ToPythonString());
  return PrepareTableOf(ctx, Kind::kTensors, key, value, *shape, [&](std::string name) {
    return MakeTensorLookupTable(std::move(name), key, value, *shape);
  });
}

// MutableDenseHashTableV2: `empty_key` and `deleted_key` (inputs, known when the graph is
// prepared: constants in a saved model) mark free buckets.
Status PrepareDenseTable(PrepareContext& ctx) {
  KILN_RETURN_IF_ERROR(ctx.ExpectInputs(2));
  KILN_PREPARE_ASSIGN(ctx, DType key, ctx.attrs.GetType("key_dtype"));
  KILN_PREPARE_ASSIGN(ctx, DType value, ctx.attrs.GetType("value_dtype"));
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 0, "empty_key", key));
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 1, "deleted_key", key));
  DenseTableOptions o;
  KILN_PREPARE_ASSIGN(ctx, PartialShape vs, ctx.attrs.GetShape("value_shape", Shape()));
  auto shape = vs.ToShape();
  if (!shape.ok()) return ctx.Error("attr 'value_shape' must be known, got ", vs.ToPythonString());
  o.value_shape = *shape;
  KILN_PREPARE_ASSIGN(ctx, o.initial_num_buckets, ctx.attrs.GetInt("initial_num_buckets", 131072));
  KILN_PREPARE_ASSIGN(ctx, o.max_load_factor, ctx.attrs.GetFloat("max_load_factor", 0.8f));
  const Tensor* empty = ConstantInput(ctx, 0);
  const Tensor* deleted = ConstantInput(ctx, 1);
  if (empty == nullptr || deleted == nullptr)
    return ctx.Error("inputs 'empty_key' and 'deleted_key' must be constants");
  o.empty_key = *empty;
  o.deleted_key = *deleted;
  return PrepareTableOf(ctx, Kind::kDense, key, value, o.value_shape, [&](std::string name) {
    return MakeDenseLookupTable(std::move(name), key, value, o);
  });
}

// ---- LookupTableFindV2 -----------------------------------------------------------------------

// Inputs (table_handle, keys: key attr, values or default: value attr).
Result<std::shared_ptr<TableIoState>> PrepareTableIo(PrepareContext& ctx, std::string_view key_attr,
                                                     std::string_view value_attr,
                                                     std::string_view value_name) {
  KILN_RETURN_IF_ERROR(ctx.ExpectInputs(3));
  auto st = std::make_shared<TableIoState>();
  KILN_PREPARE_ASSIGN(ctx, st->key, ctx.attrs.GetType(key_attr));
  KILN_PREPARE_ASSIGN(ctx, st->value, ctx.attrs.GetType(value_attr));
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 0, "table_handle", DType::kResource));
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 1, "keys", st->key));
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 2, value_name, st->value));
  if (LookupTable* table = ConstantTable(ctx))
    KILN_PREPARE_CHECK(ctx, CheckTableDTypes(*table, st->key, st->value));
  return st;
}

// `keys` followed by the table's value shape; unknown rank when either is.
PartialShape ValuesShape(const PartialShape& keys, const LookupTable* table) {
  if (table == nullptr || keys.unknown_rank() ||
      keys.rank() + table->value_shape().rank() > kMaxRank)
    return PartialShape::UnknownRank();
  std::vector<int64_t> dims(keys.dims().begin(), keys.dims().end());
  for (int64_t d : table->value_shape().dims()) dims.push_back(d);
  auto s = PartialShape::FromDims(dims);
  return s.ok() ? *s : PartialShape::UnknownRank();
}

Status PrepareFind(PrepareContext& ctx) {
  KILN_ASSIGN_OR_RETURN(auto st, PrepareTableIo(ctx, "Tin", "Tout", "default_value"));
  const PartialShape& keys = ctx.inputs[1].shape;
  const PartialShape& dflt = ctx.inputs[2].shape;
  // The values have the keys' shape and the table's value shape: known from the table, or
  // from a scalar default (which only a table of scalars accepts).
  PartialShape out = PartialShape::UnknownRank();
  if (const LookupTable* table = ConstantTable(ctx)) {
    out = ValuesShape(keys, table);
    if (!dflt.unknown_rank() && !dflt.IsCompatibleWith(table->value_shape()) &&
        !dflt.IsCompatibleWith(out))
      return ctx.Error(
          DefaultShapeError(table->value_shape(), out.ToPythonString(), dflt.ToPythonString()));
  } else if (dflt.rank() == 0) {
    out = keys;
  }
  ctx.outputs = {TensorSpec{st->value, out}};
  ctx.state = std::move(st);
  return OkStatus();
}

// ---- LookupTableImportV2, LookupTableInsertV2, InitializeTableV2
// --------------------------------------------------

Status PrepareImport(PrepareContext& ctx) {
  KILN_ASSIGN_OR_RETURN(ctx.state, PrepareTableIo(ctx, "Tin", "Tout", "values"));
  // A table of scalars takes values of the keys' shape (tables of tensors: checked at run time).
  const LookupTable* table = ConstantTable(ctx);
  if (table != nullptr && table->value_shape().rank() == 0 && !table->dense() &&
      !ctx.inputs[1].shape.IsCompatibleWith(ctx.inputs[2].shape))
    return ctx.Error("inputs 'keys' ", ctx.inputs[1].shape.ToPythonString(), " and 'values' ",
                     ctx.inputs[2].shape.ToPythonString(), " must have the same shape");
  return OkStatus();
}

Status PrepareInitialize(PrepareContext& ctx) {
  KILN_ASSIGN_OR_RETURN(ctx.state, PrepareTableIo(ctx, "Tkey", "Tval", "values"));
  KILN_RETURN_IF_ERROR(ExpectInputRank(ctx, 1, "keys", 1));
  KILN_RETURN_IF_ERROR(ExpectInputRank(ctx, 2, "values", 1));
  if (!ctx.inputs[1].shape.IsCompatibleWith(ctx.inputs[2].shape))
    return ctx.Error("inputs 'keys' ", ctx.inputs[1].shape.ToPythonString(), " and 'values' ",
                     ctx.inputs[2].shape.ToPythonString(), " must have the same size");
  return OkStatus();
}

// ---- LookupTableRemoveV2 -----------------------------------------------------------------------

Status PrepareRemove(PrepareContext& ctx) {
  KILN_RETURN_IF_ERROR(ctx.ExpectInputs(2));
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 0, "table_handle", DType::kResource));
  KILN_PREPARE_ASSIGN(ctx, DType key, ctx.attrs.GetType("Tin"));
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 1, "keys", key));
  if (LookupTable* table = ConstantTable(ctx); table != nullptr && table->key_dtype() != key) {
    return ctx.Error("table '", table->name(), "' has ", DTypeShortName(table->key_dtype()),
                     " keys, the node removes ", DTypeShortName(key), " keys");
  }
  ctx.state = std::make_shared<TypedOpState<DType>>(key);
  return OkStatus();
}

// ---- LookupTableSizeV2 -----------------------------------------------------------------------

Status PrepareSize(PrepareContext& ctx) {
  KILN_RETURN_IF_ERROR(ctx.ExpectInputs(1));
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 0, "table_handle", DType::kResource));
  ctx.outputs = {TensorSpec{DType::kInt64, PartialShape::Scalar()}};
  return OkStatus();
}

// ---- LookupTableExportV2 ---------------------------------------------------------------------
// What a mutable table's save function writes to a checkpoint: all keys and all values.

Status PrepareExport(PrepareContext& ctx) {
  KILN_RETURN_IF_ERROR(ctx.ExpectInputs(1));
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 0, "table_handle", DType::kResource));
  auto st = std::make_shared<TableIoState>();
  KILN_PREPARE_ASSIGN(ctx, st->key, ctx.attrs.GetType("Tkeys"));
  KILN_PREPARE_ASSIGN(ctx, st->value, ctx.attrs.GetType("Tvalues"));
  // Keys (n) and values (n, ...value shape); the dense table's keys are (buckets, 1).
  PartialShape keys = PartialShape::UnknownRank(), values = PartialShape::UnknownRank();
  if (LookupTable* table = ConstantTable(ctx)) {
    KILN_PREPARE_CHECK(ctx, CheckTableDTypes(*table, st->key, st->value));
    keys = table->dense() ? PartialShape{-1, 1} : PartialShape{-1};
    values = table->dense() ? PartialShape{-1, table->value_shape().num_elements()}
                            : ValuesShape(PartialShape{-1}, table);
  }
  ctx.outputs = {TensorSpec{st->key, keys}, TensorSpec{st->value, values}};
  ctx.state = std::move(st);
  return OkStatus();
}

// ---- InitializeTableFromTextFileV2 -----------------------------------------------------------
// Each line of the file gives one key and one value: index -2 is the whole line, -1 the line
// number (+ offset), k >= 0 the k-th field split at `delimiter`. vocab_size (-1: all) reads only
// that many lines and fails when the file has fewer. Empty lines fail. An already initialized
// table is left as it is (TF's rule for file initializers).

Status PrepareTextFile(PrepareContext& ctx) {
  KILN_RETURN_IF_ERROR(ctx.ExpectInputs(2));
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 0, "table_handle", DType::kResource));
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 1, "filename", DType::kString));
  KILN_RETURN_IF_ERROR(ExpectInputRank(ctx, 1, "filename", 0));
  auto st = std::make_shared<TextFileState>();
  KILN_PREPARE_ASSIGN(ctx, st->key_index, ctx.attrs.GetInt("key_index"));
  KILN_PREPARE_ASSIGN(ctx, st->value_index, ctx.attrs.GetInt("value_index"));
  KILN_PREPARE_ASSIGN(ctx, st->vocab_size, ctx.attrs.GetInt("vocab_size", -1));
  KILN_PREPARE_ASSIGN(ctx, st->offset, ctx.attrs.GetInt("offset", 0));
  KILN_PREPARE_ASSIGN(ctx, std::string delimiter, ctx.attrs.GetString("delimiter", "\t"));
  if (st->key_index < -2)
    return ctx.Error("attr 'key_index' must be at least -2, got ", st->key_index);
  if (st->value_index < -2)
    return ctx.Error("attr 'value_index' must be at least -2, got ", st->value_index);
  if (st->vocab_size < -1)
    return ctx.Error("attr 'vocab_size' must be at least -1, got ", st->vocab_size);
  if (delimiter.size() != 1)
    return ctx.Error("attr 'delimiter' must be one character, got \"", delimiter, "\"");
  st->delimiter = delimiter[0];
  ctx.state = std::move(st);
  return OkStatus();
}

// ---- tables ----------------------------------------------------------------------------------

constexpr OpDefinition kDefs[] = {
    {"HashTableV2", "table_handle", kOpStateful, PrepareTable<false>},
    {"MutableHashTableV2", "table_handle", kOpStateful, PrepareTable<true>},
    {"AnonymousHashTable", "table_handle", kOpStateful, PrepareTable<false>},
    {"AnonymousMutableHashTable", "table_handle", kOpStateful, PrepareTable<true>},
    {"MutableHashTableOfTensorsV2", "table_handle", kOpStateful, PrepareTensorTable},
    {"AnonymousMutableHashTableOfTensors", "table_handle", kOpStateful, PrepareTensorTable},
    {"MutableDenseHashTableV2", "table_handle", kOpStateful, PrepareDenseTable},
    {"AnonymousMutableDenseHashTable", "table_handle", kOpStateful, PrepareDenseTable},
    {"LookupTableFindV2", "values", kOpStateful | kOpFreshOutputs, PrepareFind},
    {"LookupTableImportV2", "", kOpStateful, PrepareImport},
    {"LookupTableInsertV2", "", kOpStateful, PrepareImport},
    {"LookupTableRemoveV2", "", kOpStateful, PrepareRemove},
    {"LookupTableExportV2", "keys,values", kOpStateful | kOpFreshOutputs, PrepareExport},
    {"InitializeTableV2", "", kOpStateful, PrepareInitialize},
    {"InitializeTableFromTextFileV2", "", kOpStateful, PrepareTextFile},
    {"LookupTableSizeV2", "size", kOpStateful | kOpFreshOutputs, PrepareSize},
    // TF 1's reference forms.
    {"HashTable", "table_handle", kOpStateful, PrepareTable<false>},
    {"MutableHashTable", "table_handle", kOpStateful, PrepareTable<true>},
    {"MutableHashTableOfTensors", "table_handle", kOpStateful, PrepareTensorTable},
    {"MutableDenseHashTable", "table_handle", kOpStateful, PrepareDenseTable},
    {"LookupTableFind", "values", kOpStateful | kOpFreshOutputs, PrepareFind},
    {"LookupTableImport", "", kOpStateful, PrepareImport},
    {"LookupTableInsert", "", kOpStateful, PrepareImport},
    {"LookupTableExport", "keys,values", kOpStateful | kOpFreshOutputs, PrepareExport},
    {"InitializeTable", "", kOpStateful, PrepareInitialize},
    {"InitializeTableFromTextFile", "", kOpStateful, PrepareTextFile},
    {"LookupTableSize", "size", kOpStateful | kOpFreshOutputs, PrepareSize},
};

}  // namespace

std::span<const OpDefinition> LookupOpDefs() { return kDefs; }

}  // namespace kiln::exec
