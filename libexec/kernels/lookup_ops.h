// What the definitions of the lookup-table ops (kernels/lookup_ops.cc) and their CPU kernels
// (kernels/cpu/lookup_ops.cc) share: reaching a table through its handle, the checks both make
// and the nodes' state.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "kernels/lookup_table.h"
#include "kiln/core/shape.h"
#include "kiln/core/status.h"
#include "kiln/core/tensor.h"
#include "kiln/exec/op_table.h"
#include "kiln/exec/resources.h"

namespace kiln::exec::lookup {

using Handle = std::shared_ptr<ResourceBase>;

inline Result<LookupTable*> TableOf(const Tensor& handle) {
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

// The table's dtypes against what the node declares.
inline Status CheckTableDTypes(const LookupTable& table, DType key, DType value) {
  if (table.key_dtype() == key && table.value_dtype() == value) return OkStatus();
  return InvalidArgument("table '", table.name(), "' maps ", DTypeShortName(table.key_dtype()),
                         " -> ", DTypeShortName(table.value_dtype()), ", the node uses ",
                         DTypeShortName(key), " -> ", DTypeShortName(value));
}

struct TableIoState : OpState {
  DType key = DType::kInvalid;
  DType value = DType::kInvalid;
};

// What a default must be: one value or one per key (`full`).
inline std::string DefaultShapeError(const Shape& value, const std::string& full,
                                     const std::string& got) {
  if (value.rank() == 0)
    return "input 'default_value' must be a scalar or have the shape of 'keys' " + full + ", got " +
           got;
  return "input 'default_value' must have the value shape " + value.ToString() + " or " + full +
         ", got " + got;
}

// InitializeTableFromTextFileV2's attrs (kernels/lookup_ops.cc says what they select).
struct TextFileState : OpState {
  int64_t key_index = 0;
  int64_t value_index = 0;
  int64_t vocab_size = -1;
  char delimiter = '\t';
  int64_t offset = 0;
};

}  // namespace kiln::exec::lookup
