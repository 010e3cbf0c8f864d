// Lookup tables: the resources behind HashTableV2 and MutableHashTableV2 (scalar values) and
// MutableHashTableOfTensorsV2 and MutableDenseHashTableV2 (values of `value_shape`,
// lookup_table_tensors.cc). Scalar keys (int32, int64, string); values bool, float32, float64,
// int32, int64, string. Safe to use from several threads: finds share a lock, writes take it
// exclusively.
#pragma once

#include <memory>
#include <string>

#include "kiln/core/status.h"
#include "kiln/core/tensor.h"

namespace kiln::exec {

class LookupTable : public ResourceBase {
 public:
  LookupTable(std::string name, DType key_dtype, DType value_dtype, bool initializable,
              Shape value_shape = Shape())
      : name_(std::move(name)),
        key_dtype_(key_dtype),
        value_dtype_(value_dtype),
        initializable_(initializable),
        value_shape_(value_shape) {}

  const std::string& name() const { return name_; }
  DType key_dtype() const { return key_dtype_; }
  DType value_dtype() const { return value_dtype_; }
  // HashTableV2 (filled once by an initializer) versus MutableHashTableV2.
  bool initializable() const { return initializable_; }
  // The shape of one key's value: scalar but for the tables of tensors.
  const Shape& value_shape() const { return value_shape_; }
  // MutableDenseHashTable (open addressing, exports its buckets).
  virtual bool dense() const { return false; }
  // The shape `values` must have for Insert (import: false) or Import (import: true) of `keys`:
  // the keys' shape followed by value_shape (the dense table imports its bucket arrays). The
  // caller has checked that the ranks fit in kMaxRank.
  virtual Shape ValuesShapeFor(const Shape& keys, bool import) const;

  virtual int64_t Size() const = 0;
  virtual bool initialized() const = 0;
  // `out` has the keys' shape followed by value_shape, and the value dtype. `dflt` has
  // value_shape (one default for all) or out's shape (one default per key); the caller has
  // checked dtypes and shapes. An initializable table that was never initialized fails
  // (FailedPrecondition).
  virtual Status Find(const Tensor& keys, const Tensor& dflt, Tensor* out) const = 0;
  // Initializable tables: the first call inserts the pairs (a key given twice with different
  // values fails); a later call succeeds only with the same contents. Mutable tables: replaces
  // every entry. keys and values have the same element count.
  virtual Status Import(const Tensor& keys, const Tensor& values) = 0;
  // Mutable tables: adds the pairs, replacing the values of keys already there (keys and
  // values have the same element count); Remove drops the keys (absent ones are ignored).
  // Initializable tables refuse both (FailedPrecondition), as TF's do.
  virtual Status Insert(const Tensor& keys, const Tensor& values) = 0;
  virtual Status Remove(const Tensor& keys) = 0;
  // Every entry as Size() keys and values, sorted by key (TF gives hash order; sorted makes
  // saved checkpoints reproducible). The dense table exports its buckets in TF's layout.
  virtual void Export(Tensor* keys, Tensor* values) const = 0;

  std::string DebugString() const override;
  const void* TypeTag() const override { return &kTypeTag; }
  static constexpr char kTypeTag = 'L';

 private:
  std::string name_;
  DType key_dtype_;
  DType value_dtype_;
  bool initializable_;
  Shape value_shape_;
};

inline LookupTable* AsLookupTable(ResourceBase* r) {
  return r != nullptr && r->TypeTag() == &LookupTable::kTypeTag ? static_cast<LookupTable*>(r)
                                                                : nullptr;
}

// Whether a table of these dtypes can be made.
bool LookupKeyDTypeSupported(DType t);
bool LookupValueDTypeSupported(DType t);
// An empty table; InvalidArgument for unsupported dtypes.
Result<std::shared_ptr<LookupTable>> MakeLookupTable(std::string name, DType key_dtype,
                                                     DType value_dtype, bool initializable);
// MutableHashTableOfTensors: each key maps to a vector of value_shape (rank 1).
Result<std::shared_ptr<LookupTable>> MakeTensorLookupTable(std::string name, DType key_dtype,
                                                           DType value_dtype, Shape value_shape);
// MutableDenseHashTable: open addressing over a power-of-two bucket count as TF's, with the
// scalar `empty_key` and `deleted_key` marking free slots and value_shape a scalar or a vector.
struct DenseTableOptions {
  Tensor empty_key;
  Tensor deleted_key;
  Shape value_shape;
  int64_t initial_num_buckets = 131072;
  float max_load_factor = 0.8f;
};
Result<std::shared_ptr<LookupTable>> MakeDenseLookupTable(std::string name, DType key_dtype,
                                                          DType value_dtype,
                                                          const DenseTableOptions& options);

}  // namespace kiln::exec
