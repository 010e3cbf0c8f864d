// Lookup tables (lookup_table.h): HashTableV2, MutableHashTableV2, MutableHashTableOfTensorsV2
// and MutableDenseHashTableV2 make them (shared by name
// through the model's resource manager, or owned by the node when unnamed, as TF's kernels do;
// the Anonymous* tables are always the node's own);
// InitializeTableV2, InitializeTableFromTextFileV2, LookupTableImportV2 and LookupTableInsertV2
// fill them, LookupTableRemoveV2 empties them; LookupTableFindV2, LookupTableSizeV2 and
// LookupTableExportV2 read them. The TF 1 forms (HashTable, LookupTableFind, ...) take the table
// as a reference (Ref(string)); here that is the same resource handle, so they share the V2
// kernels.
#include <functional>
#include <string>
#include <vector>

#include "kernels/array_util.h"
#include "kernels/lookup_table.h"
#include "kernels/string_util.h"
#include "kiln/core/file_util.h"
#include "kiln/exec/resources.h"

namespace kiln::exec {
namespace {

using Handle = std::shared_ptr<ResourceBase>;

Result<LookupTable*> TableOf(const Tensor& handle) {
  if (handle.dtype() != DType::kResource || handle.NumElements() != 1)
    return InvalidArgument("input 'table_handle': expected a resource handle scalar, got ",
                           handle.DebugString());
  const Handle& r = handle.scalar<Handle>();
  LookupTable* table = AsLookupTable(r.get());
  if (table == nullptr)
    return InvalidArgument("input 'table_handle': ",
                           r == nullptr ? std::string("the handle is null") : r->DebugString(),
                           " is not a lookup table");
  return table;
}

// The table behind input 0 when the handle is known at prepare time, else nullptr.
LookupTable* ConstantTable(const PrepareContext& ctx) {
  const Tensor* h = ConstantInput(ctx, 0);
  if (h == nullptr) return nullptr;
  auto t = TableOf(*h);
  return t.ok() ? *t : nullptr;
}

// The table's dtypes against what the node declares.
Status CheckTableDTypes(const LookupTable& table, DType key, DType value) {
  if (table.key_dtype() == key && table.value_dtype() == value) return OkStatus();
  return InvalidArgument("table '", table.name(), "' maps ", DTypeShortName(table.key_dtype()),
                         " -> ", DTypeShortName(table.value_dtype()), ", the node uses ",
                         DTypeShortName(key), " -> ", DTypeShortName(value));
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

Status ComputeTable(const KernelContext& ctx) {
  ctx.SetOutput(0, ctx.state<TypedOpState<Tensor>>().value);
  return OkStatus();
}

// ---- LookupTableFindV2 -----------------------------------------------------------------------

struct TableIoState : OpState {
  DType key = DType::kInvalid;
  DType value = DType::kInvalid;
};

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

// What a default must be: one value or one per key (`full`).
std::string DefaultShapeError(const Shape& value, const std::string& full, const std::string& got) {
  if (value.rank() == 0)
    return "input 'default_value' must be a scalar or have the shape of 'keys' " + full + ", got " +
           got;
  return "input 'default_value' must have the value shape " + value.ToString() + " or " + full +
         ", got " + got;
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

// keys' shape followed by the table's value shape; fails past kMaxRank.
Result<Shape> FullValuesShape(const LookupTable& table, const Shape& keys) {
  if (keys.rank() + table.value_shape().rank() > kMaxRank)
    return InvalidArgument("input 'keys' has rank ", keys.rank(), ", too many for values of shape ",
                           table.value_shape().ToString());
  return table.ValuesShapeFor(keys, false);
}

Status ComputeFind(const KernelContext& ctx) {
  const auto& st = ctx.state<TableIoState>();
  auto table = TableOf(ctx.input(0));
  if (!table.ok()) return Wrap(ctx, table.status());
  Status s = CheckTableDTypes(**table, st.key, st.value);
  if (!s.ok()) return Wrap(ctx, s);
  const Tensor& keys = ctx.input(1);
  const Tensor& dflt = ctx.input(2);
  auto full = FullValuesShape(**table, keys.shape());
  if (!full.ok()) return Wrap(ctx, full.status());
  if (dflt.shape() != (*table)->value_shape() && dflt.shape() != *full)
    return ctx.Error(
        DefaultShapeError((*table)->value_shape(), full->ToString(), dflt.shape().ToString()));
  KILN_ASSIGN_OR_RETURN(Tensor * out, ctx.AllocateOutput(0, *full));
  s = (*table)->Find(keys, dflt, out);
  if (!s.ok())
    return Status(s.code(), "node '" + std::string(ctx.node_name()) + "': " + s.message());
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

// How keys and values go into the table: InitializeTable (once, a static table), Import
// (replacing a mutable table's entries) or Insert (adding to them).
enum class Fill { kInitialize, kImport, kInsert };

template <Fill kFill>
Status ComputeFill(const KernelContext& ctx) {
  const auto& st = ctx.state<TableIoState>();
  auto table = TableOf(ctx.input(0));
  if (!table.ok()) return Wrap(ctx, table.status());
  Status s = CheckTableDTypes(**table, st.key, st.value);
  if (!s.ok()) return Wrap(ctx, s);
  const Tensor& keys = ctx.input(1);
  const Tensor& values = ctx.input(2);
  if (kFill == Fill::kInitialize) {
    if (!(*table)->initializable())
      return ctx.Error("table '", (*table)->name(), "' is not initializable (a mutable table)");
    if (keys.rank() != 1)
      return ctx.Error("input 'keys' must be a vector, got shape ", keys.shape().ToString());
    if (keys.NumElements() != values.NumElements())
      return ctx.Error("inputs 'keys' and 'values' must have the same size, got ",
                       keys.NumElements(), " and ", values.NumElements());
  } else {
    auto full = FullValuesShape(**table, keys.shape());
    if (!full.ok()) return Wrap(ctx, full.status());
    const Shape want = (*table)->ValuesShapeFor(keys.shape(), kFill == Fill::kImport);
    if (values.shape() != want)
      return ctx.Error("input 'values': expected shape ", want.ToString(), " for keys of shape ",
                       keys.shape().ToString(), ", got ", values.shape().ToString());
  }
  s = kFill == Fill::kInsert ? (*table)->Insert(keys, values) : (*table)->Import(keys, values);
  if (!s.ok())
    return Status(s.code(), "node '" + std::string(ctx.node_name()) + "': " + s.message());
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

Status ComputeRemove(const KernelContext& ctx) {
  auto table = TableOf(ctx.input(0));
  if (!table.ok()) return Wrap(ctx, table.status());
  if ((*table)->key_dtype() != ctx.input(1).dtype()) {
    return ctx.Error("table '", (*table)->name(), "' has ", DTypeShortName((*table)->key_dtype()),
                     " keys, got ", DTypeShortName(ctx.input(1).dtype()));
  }
  Status s = (*table)->Remove(ctx.input(1));
  if (!s.ok())
    return Status(s.code(), "node '" + std::string(ctx.node_name()) + "': " + s.message());
  return OkStatus();
}

// ---- LookupTableSizeV2 -----------------------------------------------------------------------

Status PrepareSize(PrepareContext& ctx) {
  KILN_RETURN_IF_ERROR(ctx.ExpectInputs(1));
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 0, "table_handle", DType::kResource));
  ctx.outputs = {TensorSpec{DType::kInt64, PartialShape::Scalar()}};
  return OkStatus();
}

Status ComputeSize(const KernelContext& ctx) {
  auto table = TableOf(ctx.input(0));
  if (!table.ok()) return Wrap(ctx, table.status());
  KILN_ASSIGN_OR_RETURN(Tensor * out, ctx.AllocateOutput(0, Shape()));
  out->scalar<int64_t>() = (*table)->Size();
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

Status ComputeExport(const KernelContext& ctx) {
  const auto& st = ctx.state<TableIoState>();
  auto table = TableOf(ctx.input(0));
  if (!table.ok()) return Wrap(ctx, table.status());
  Status s = CheckTableDTypes(**table, st.key, st.value);
  if (!s.ok()) return Wrap(ctx, s);
  Tensor keys, values;
  (*table)->Export(&keys, &values);
  ctx.SetOutput(0, std::move(keys));
  ctx.SetOutput(1, std::move(values));
  return OkStatus();
}

// ---- InitializeTableFromTextFileV2 -----------------------------------------------------------
// Each line of the file gives one key and one value: index -2 is the whole line, -1 the line
// number (+ offset), k >= 0 the k-th field split at `delimiter`. vocab_size (-1: all) reads only
// that many lines and fails when the file has fewer. Empty lines fail. An already initialized
// table is left as it is (TF's rule for file initializers).

struct TextFileState : OpState {
  int64_t key_index = 0;
  int64_t value_index = 0;
  int64_t vocab_size = -1;
  char delimiter = '\t';
  int64_t offset = 0;
};

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

bool IsIntegerDType(DType t) {
  return t == DType::kInt8 || t == DType::kInt16 || t == DType::kInt32 || t == DType::kInt64 ||
         t == DType::kUInt8 || t == DType::kUInt16 || t == DType::kUInt32 || t == DType::kUInt64;
}

// The index rules of TF's text-file initializer for one side ("key" or "value").
Status CheckIndexDType(std::string_view side, int64_t index, DType t) {
  if (index == -1 && t != DType::kInt64)
    return InvalidArgument(side, " index -1 (line number) needs table ", side, " dtype int64, got ",
                           DTypeShortName(t));
  if (index == -2 && !IsIntegerDType(t) && t != DType::kString)
    return InvalidArgument(side, " index -2 (whole line) needs an integer or string table ", side,
                           " dtype, got ", DTypeShortName(t));
  if (t != DType::kInt32 && t != DType::kInt64 && t != DType::kFloat && t != DType::kDouble &&
      t != DType::kString)
    return InvalidArgument("a text file cannot give table ", side, "s of dtype ",
                           DTypeShortName(t));
  return OkStatus();
}

// Sets element i of `out` from the line (index -2), its number (-1) or field `index`.
Status SetFromLine(const std::string& file, int64_t line_no, std::string_view line,
                   const std::vector<std::string_view>& fields, int64_t index, int64_t offset,
                   Tensor* out, int64_t i) {
  if (index == -1) {
    out->data<int64_t>()[i] = line_no + offset;
    return OkStatus();
  }
  const std::string_view token = index == -2 ? line : fields[static_cast<size_t>(index)];
  auto bad = [&](std::string_view what) {
    return InvalidArgument("field \"", token, "\" in line ", line_no, " of '", file,
                           "' is not a valid ", what);
  };
  switch (out->dtype()) {
    case DType::kString:
      out->data<std::string>()[i] = std::string(token);
      return OkStatus();
    case DType::kInt32: {
      int32_t v;
      if (!ParseNumber(token, &v)) return bad("int32");
      out->data<int32_t>()[i] = static_cast<int32_t>(v + offset);  // TF adds the offset here
      return OkStatus();
    }
    case DType::kInt64:
      return ParseNumber(token, &out->data<int64_t>()[i]) ? OkStatus() : bad("int64");
    case DType::kFloat:
      return ParseNumber(token, &out->data<float>()[i]) ? OkStatus() : bad("float32");
    case DType::kDouble:
      return ParseNumber(token, &out->data<double>()[i]) ? OkStatus() : bad("float64");
    default:
      return Internal("unchecked dtype ", DTypeShortName(out->dtype()));
  }
}

Status InitializeFromFile(const TextFileState& st, LookupTable* table, const std::string& file) {
  if (!table->initializable())
    return InvalidArgument("table '", table->name(), "' is not initializable (a mutable table)");
  KILN_RETURN_IF_ERROR(CheckIndexDType("key", st.key_index, table->key_dtype()));
  KILN_RETURN_IF_ERROR(CheckIndexDType("value", st.value_index, table->value_dtype()));
  KILN_ASSIGN_OR_RETURN(std::string text, ReadFileToString(file));
  std::vector<std::string_view> lines;
  std::string_view rest = text;
  while (!rest.empty()) {
    size_t nl = rest.find('\n');
    std::string_view line = rest.substr(0, nl);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    lines.push_back(line);
    rest.remove_prefix(nl == std::string_view::npos ? rest.size() : nl + 1);
  }
  int64_t n = static_cast<int64_t>(lines.size());
  if (st.vocab_size >= 0) {
    if (n < st.vocab_size)
      return InvalidArgument("invalid vocab_size for '", file, "': expected ", st.vocab_size,
                             " lines, the file has ", n);
    n = st.vocab_size;
  }
  Tensor keys(table->key_dtype(), Shape{n}), values(table->value_dtype(), Shape{n});
  const int64_t needed = std::max(st.key_index, st.value_index) + 1;
  std::vector<std::string_view> fields;
  for (int64_t i = 0; i < n; ++i) {
    const std::string_view line = lines[static_cast<size_t>(i)];
    if (line.empty())
      return InvalidArgument("invalid content in '", file, "': line ", i, " is empty");
    fields.clear();
    if (needed > 0) {
      std::string_view l = line;
      for (size_t p; (p = l.find(st.delimiter)) != std::string_view::npos; l.remove_prefix(p + 1))
        fields.push_back(l.substr(0, p));
      fields.push_back(l);
      if (static_cast<int64_t>(fields.size()) < needed)
        return InvalidArgument("invalid number of columns in '", file, "' line ", i, " (", line,
                               "): expected at least ", needed, ", got ", fields.size());
    }
    KILN_RETURN_IF_ERROR(SetFromLine(file, i, line, fields, st.key_index, st.offset, &keys, i));
    KILN_RETURN_IF_ERROR(SetFromLine(file, i, line, fields, st.value_index, st.offset, &values, i));
  }
  if (table->initialized()) return OkStatus();
  return table->Import(keys, values);
}

Status ComputeTextFile(const KernelContext& ctx) {
  auto table = TableOf(ctx.input(0));
  if (!table.ok()) return Wrap(ctx, table.status());
  const Tensor& file = ctx.input(1);
  if (file.NumElements() != 1)
    return ctx.Error("input 'filename' must be a scalar, got shape ", file.shape().ToString());
  Status s = InitializeFromFile(ctx.state<TextFileState>(), *table, file.scalar<std::string>());
  if (!s.ok())
    return Status(s.code(), "node '" + std::string(ctx.node_name()) + "': " + s.message());
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

constexpr KernelEntry kCpu[] = {
    {"HashTableV2", ComputeTable},
    {"MutableHashTableV2", ComputeTable},
    {"AnonymousHashTable", ComputeTable},
    {"AnonymousMutableHashTable", ComputeTable},
    {"MutableHashTableOfTensorsV2", ComputeTable},
    {"AnonymousMutableHashTableOfTensors", ComputeTable},
    {"MutableDenseHashTableV2", ComputeTable},
    {"AnonymousMutableDenseHashTable", ComputeTable},
    {"LookupTableFindV2", ComputeFind},
    {"LookupTableImportV2", ComputeFill<Fill::kImport>},
    {"LookupTableInsertV2", ComputeFill<Fill::kInsert>},
    {"LookupTableRemoveV2", ComputeRemove},
    {"LookupTableExportV2", ComputeExport},
    {"InitializeTableV2", ComputeFill<Fill::kInitialize>},
    {"InitializeTableFromTextFileV2", ComputeTextFile},
    {"LookupTableSizeV2", ComputeSize},
    {"HashTable", ComputeTable},
    {"MutableHashTable", ComputeTable},
    {"MutableHashTableOfTensors", ComputeTable},
    {"MutableDenseHashTable", ComputeTable},
    {"LookupTableFind", ComputeFind},
    {"LookupTableImport", ComputeFill<Fill::kImport>},
    {"LookupTableInsert", ComputeFill<Fill::kInsert>},
    {"LookupTableExport", ComputeExport},
    {"InitializeTable", ComputeFill<Fill::kInitialize>},
    {"InitializeTableFromTextFile", ComputeTextFile},
    {"LookupTableSize", ComputeSize},
};

}  // namespace

std::span<const OpDefinition> LookupOpDefs() { return kDefs; }
std::span<const KernelEntry> LookupCpuKernels() { return kCpu; }

}  // namespace kiln::exec
