// The value a TensorMap variant tensor holds (tf.raw_ops.EmptyTensorMap and the TensorMap*
// ops). A map is immutable: ops that change it build a new map, copying the vector of entries,
// whose tensor buffers stay shared. Keys compare as TF's TensorKey does: equal dtype and shape,
// then equal bytes (numbers: bitwise, so 0.0 and -0.0 differ and a NaN matches its own bits) or
// equal strings. Entries keep insertion order (TF's hash order is unspecified).
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "kiln/core/status.h"
#include "kiln/core/tensor.h"

namespace kiln::exec {

class TensorMap final : public VariantBase {
 public:
  static constexpr const char* kTypeName = "tensorflow::TensorMap";

  struct Entry {
    Tensor key;
    Tensor value;
  };

  TensorMap() = default;
  explicit TensorMap(std::vector<Entry> entries) : entries_(std::move(entries)) {
    // A map outlives the call that made it: it must not hold arena memory.
    for (Entry& e : entries_) {
      e.key = e.key.Retainable();
      e.value = e.value.Retainable();
    }
  }

  const std::vector<Entry>& entries() const { return entries_; }
  int64_t size() const { return static_cast<int64_t>(entries_.size()); }
  // The position of the entry whose key equals `key`, or -1.
  int64_t Find(const Tensor& key) const;

  // TF's TensorKey equality (see the file comment).
  static bool KeysEqual(const Tensor& a, const Tensor& b);

  std::string TypeName() const override { return kTypeName; }
  std::string DebugString() const override;

  // A scalar DT_VARIANT tensor holding `map`.
  static Tensor Wrap(std::shared_ptr<const TensorMap> map);
  // The map held by `t`; errors name `input`.
  static Result<const TensorMap*> From(const Tensor& t, std::string_view input);

 private:
  std::vector<Entry> entries_;
};

}  // namespace kiln::exec
