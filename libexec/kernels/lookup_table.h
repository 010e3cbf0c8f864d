// Lookup tables: the resources behind HashTableV2 and MutableHashTableV2. Scalar keys (int32,
// int64, string) map to scalar values (bool, float32, float64, int32, int64, string). Safe to use
// from several threads: finds share a lock, writes take it exclusively.
#pragma once

#include <memory>
#include <string>

#include "kiln/core/status.h"
#include "kiln/core/tensor.h"

namespace kiln::exec {

class LookupTable : public ResourceBase {
 public:
  LookupTable(std::string name, DType key_dtype, DType value_dtype, bool initializable)
      : name_(std::move(name)),
        key_dtype_(key_dtype),
        value_dtype_(value_dtype),
        initializable_(initializable) {}

  const std::string& name() const { return name_; }
  DType key_dtype() const { return key_dtype_; }
  DType value_dtype() const { return value_dtype_; }
  // HashTableV2 (filled once by an initializer) versus MutableHashTableV2.
  bool initializable() const { return initializable_; }

  virtual int64_t Size() const = 0;
  virtual bool initialized() const = 0;
  // `out` has the keys' shape and the value dtype. `dflt` is a scalar (one default for all) or
  // has the keys' shape (one default per key); the caller has checked dtypes and shapes. An
  // initializable table that was never initialized fails (FailedPrecondition).
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
  // Every entry as two vectors of Size() elements, sorted by key (TF gives hash order; sorted
  // makes saved checkpoints reproducible).
  virtual void Export(Tensor* keys, Tensor* values) const = 0;

  std::string DebugString() const override;
  const void* TypeTag() const override { return &kTypeTag; }
  static constexpr char kTypeTag = 'L';

 private:
  std::string name_;
  DType key_dtype_;
  DType value_dtype_;
  bool initializable_;
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

}  // namespace kiln::exec
