// The CPU kernels of the lookup-table ops in kernels/lookup_ops.cc: they fill, read and empty
// the table the handle holds (lookup_table.h).
#include "kernels/lookup_ops.h"

#include <algorithm>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "kernels/array_util.h"
#include "kernels/lookup_table.h"
#include "kernels/string_util.h"
#include "kiln/core/file_util.h"

namespace kiln::exec {
namespace {

using lookup::CheckTableDTypes;
using lookup::DefaultShapeError;
using lookup::TableIoState;
using lookup::TableOf;
using lookup::TextFileState;

// ---- HashTableV2, MutableHashTableV2 ---------------------------------------------------------

Status ComputeTable(const KernelContext& ctx) {
  ctx.SetOutput(0, ctx.state<TypedOpState<Tensor>>().value);
  return OkStatus();
}

// ---- LookupTableFindV2 -----------------------------------------------------------------------

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

Status ComputeSize(const KernelContext& ctx) {
  auto table = TableOf(ctx.input(0));
  if (!table.ok()) return Wrap(ctx, table.status());
  KILN_ASSIGN_OR_RETURN(Tensor * out, ctx.AllocateOutput(0, Shape()));
  out->scalar<int64_t>() = (*table)->Size();
  return OkStatus();
}

// ---- LookupTableExportV2 ---------------------------------------------------------------------
// What a mutable table's save function writes to a checkpoint: all keys and all values.

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
// that many lines and fails when the file has fewer. Empty lines fail, and so does reading no
// line at all (an empty file, or vocab_size 0): TF's TextFileLineIterator fails with
// OutOfRange there rather than leaving a table where every lookup misses. An already
// initialized table is left as it is (TF's rule for file initializers).

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
  if (n == 0)
    return OutOfRange("'", file, "' gives no lines to initialize table '", table->name(), "'",
                      st.vocab_size == 0 ? " (vocab_size is 0)" : " (the file is empty)");
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

std::span<const KernelEntry> LookupCpuKernels() { return kCpu; }

}  // namespace kiln::exec
