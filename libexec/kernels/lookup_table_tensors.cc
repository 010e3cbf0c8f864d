// The tables whose values are tensors: MutableHashTableOfTensors (a map from a key to a vector)
// and MutableDenseHashTable (TF's open-addressing table: the bucket arrays, their hashing,
// probing, growth and export layout follow tensorflow/core/kernels/lookup_table_op.cc, so an
// export gives TF's bucket order).
// Op families: Lookup
#include <algorithm>
#include <mutex>
#include <shared_mutex>
#include <unordered_map>
#include <vector>

#include "kernels/lookup_table.h"
#include "kernels/string_hash.h"

namespace kiln::exec {
namespace {

// Element j of the default for key i: `dflt` is one value (value_size elements) or one per key.
template <typename V>
const V& DefaultAt(const Tensor& dflt, int64_t i, int64_t j, int64_t value_size) {
  const bool per_key = dflt.NumElements() > value_size;
  return dflt.data<V>()[(per_key ? i * value_size : 0) + j];
}

template <typename K, typename V>
class TensorHashTable final : public LookupTable {
 public:
  using LookupTable::LookupTable;

  int64_t Size() const override {
    std::shared_lock lock(mu_);
    return static_cast<int64_t>(map_.size());
  }
  bool initialized() const override { return true; }

  Status Find(const Tensor& keys, const Tensor& dflt, Tensor* out) const override {
    const int64_t d = value_shape().num_elements();
    const K* k = keys.data<K>();
    V* o = out->data<V>();
    std::shared_lock lock(mu_);
    for (int64_t i = 0; i < keys.NumElements(); ++i) {
      auto it = map_.find(k[i]);
      for (int64_t j = 0; j < d; ++j)
        o[i * d + j] =
            it != map_.end() ? it->second[static_cast<size_t>(j)] : DefaultAt<V>(dflt, i, j, d);
    }
    return OkStatus();
  }

  Status Import(const Tensor& keys, const Tensor& values) override {
    std::unique_lock lock(mu_);
    map_.clear();
    Put(keys, values);
    return OkStatus();
  }
  Status Insert(const Tensor& keys, const Tensor& values) override {
    std::unique_lock lock(mu_);
    Put(keys, values);
    return OkStatus();
  }
  Status Remove(const Tensor& keys) override {
    const K* k = keys.data<K>();
    std::unique_lock lock(mu_);
    for (int64_t i = 0; i < keys.NumElements(); ++i) map_.erase(k[i]);
    return OkStatus();
  }

  // keys [n], values [n, d].
  void Export(Tensor* keys, Tensor* values) const override {
    std::shared_lock lock(mu_);
    std::vector<const std::pair<const K, std::vector<V>>*> entries;
    entries.reserve(map_.size());
    for (const auto& e : map_) entries.push_back(&e);
    std::sort(entries.begin(), entries.end(),
              [](const auto* a, const auto* b) { return a->first < b->first; });
    const int64_t n = static_cast<int64_t>(entries.size());
    const int64_t d = value_shape().num_elements();
    *keys = Tensor(key_dtype(), Shape{n});
    *values = Tensor(value_dtype(), Shape{n, d});
    for (int64_t i = 0; i < n; ++i) {
      const auto& e = *entries[static_cast<size_t>(i)];
      keys->data<K>()[i] = e.first;
      std::copy(e.second.begin(), e.second.end(), values->data<V>() + i * d);
    }
  }

 private:
  void Put(const Tensor& keys, const Tensor& values) {
    const int64_t d = value_shape().num_elements();
    const K* k = keys.data<K>();
    const V* v = values.data<V>();
    for (int64_t i = 0; i < keys.NumElements(); ++i) map_[k[i]].assign(v + i * d, v + (i + 1) * d);
  }

  mutable std::shared_mutex mu_;
  std::unordered_map<K, std::vector<V>> map_;
};

// TF's HashScalar: integers hash to themselves, strings through Hash64.
template <typename K>
uint64_t HashScalar(const K& k) {
  if constexpr (std::is_same_v<K, std::string>) {
    return LegacyHash64(k);
  } else {
    return static_cast<uint64_t>(k);
  }
}

template <typename K, typename V>
class DenseHashTable final : public LookupTable {
  // Bucket storage: bytes for bool (std::vector<bool> has no data()).
  using Slot = std::conditional_t<std::is_same_v<V, bool>, uint8_t, V>;

 public:
  DenseHashTable(std::string name, DType key, DType value, const DenseTableOptions& o)
      : LookupTable(std::move(name), key, value, false, o.value_shape),
        empty_(o.empty_key.data<K>()[0]),
        deleted_(o.deleted_key.data<K>()[0]),
        max_load_factor_(o.max_load_factor),
        value_size_(o.value_shape.num_elements()) {
    Allocate(o.initial_num_buckets);
  }

  bool dense() const override { return true; }
  int64_t Size() const override {
    std::shared_lock lock(mu_);
    return num_entries_;
  }
  bool initialized() const override { return true; }

  Status Find(const Tensor& keys, const Tensor& dflt, Tensor* out) const override {
    KILN_RETURN_IF_ERROR(CheckKeyShape(keys));
    const K* k = keys.data<K>();
    V* o = out->data<V>();
    std::shared_lock lock(mu_);
    for (int64_t i = 0; i < keys.NumElements(); ++i) {
      KILN_RETURN_IF_ERROR(CheckKey(k[i]));
      KILN_ASSIGN_OR_RETURN(int64_t b, Probe(k[i]));
      for (int64_t j = 0; j < value_size_; ++j)
        o[i * value_size_ + j] = keys_[static_cast<size_t>(b)] == k[i]
                                     ? values_[static_cast<size_t>(b * value_size_ + j)]
                                     : dflt.data<V>()[j];  // TF uses the first default only
    }
    return OkStatus();
  }

  Status Insert(const Tensor& keys, const Tensor& values) override {
    KILN_RETURN_IF_ERROR(CheckKeyShape(keys));
    std::unique_lock lock(mu_);
    // As TF: grow for the case that every key is new.
    const int64_t pending = num_entries_ + keys.NumElements();
    if (static_cast<double>(pending) > static_cast<double>(num_buckets()) * max_load_factor_) {
      int64_t n = num_buckets();
      do {
        n <<= 1;
      } while (static_cast<double>(pending) > static_cast<double>(n) * max_load_factor_);
      std::vector<K> old_keys = std::move(keys_);
      std::vector<Slot> old_values = std::move(values_);
      Allocate(n);
      KILN_RETURN_IF_ERROR(Put(old_keys.data(), old_values.data(),
                               static_cast<int64_t>(old_keys.size()), /*skip_markers=*/true));
    }
    return Put(keys.data<K>(), values.data<V>(), keys.NumElements(), false);
  }

  Status Remove(const Tensor& keys) override {
    KILN_RETURN_IF_ERROR(CheckKeyShape(keys));
    const K* k = keys.data<K>();
    std::unique_lock lock(mu_);
    for (int64_t i = 0; i < keys.NumElements(); ++i) {
      KILN_RETURN_IF_ERROR(CheckKey(k[i]));
      KILN_ASSIGN_OR_RETURN(int64_t b, Probe(k[i]));
      if (keys_[static_cast<size_t>(b)] == k[i]) {
        keys_[static_cast<size_t>(b)] = deleted_;
        --num_entries_;
      }
    }
    return OkStatus();
  }

  // keys [B, 1] and values [B, value size]: the bucket arrays as TF restores them.
  Shape ValuesShapeFor(const Shape& keys, bool import) const override {
    if (!import) return LookupTable::ValuesShapeFor(keys, false);
    Shape s = keys;
    if (s.rank() > 0) s.set_rank(s.rank() - 1);
    s.AddDim(value_size_);
    return s;
  }

  Status Import(const Tensor& keys, const Tensor& values) override {
    if (keys.rank() != 2 || keys.shape().dim(1) != 1)
      return InvalidArgument("table '", name(), "': expected imported keys of shape (buckets, 1), ",
                             "got ", keys.shape().ToString());
    const int64_t n = keys.shape().dim(0);
    if (n < 4 || (n & (n - 1)) != 0)
      return InvalidArgument("table '", name(),
                             "': the number of imported buckets must be at least 4 and a power "
                             "of 2, got ",
                             n);
    std::unique_lock lock(mu_);
    keys_.assign(keys.data<K>(), keys.data<K>() + n);
    values_.assign(values.data<V>(), values.data<V>() + n * value_size_);
    num_entries_ = 0;
    for (const K& k : keys_) num_entries_ += k == empty_ || k == deleted_ ? 0 : 1;
    return OkStatus();
  }

  void Export(Tensor* keys, Tensor* values) const override {
    std::shared_lock lock(mu_);
    const int64_t n = num_buckets();
    *keys = Tensor(key_dtype(), Shape{n, 1});
    *values = Tensor(value_dtype(), Shape{n, value_size_});
    std::copy(keys_.begin(), keys_.end(), keys->data<K>());
    std::copy(values_.begin(), values_.end(), values->data<V>());
  }

 private:
  int64_t num_buckets() const { return static_cast<int64_t>(keys_.size()); }

  void Allocate(int64_t n) {
    keys_.assign(static_cast<size_t>(n), empty_);
    values_.assign(static_cast<size_t>(n * value_size_), Slot());
    num_entries_ = 0;
  }

  Status CheckKeyShape(const Tensor& keys) const {
    if (keys.rank() > 1)
      return InvalidArgument("table '", name(), "': expected key shape (", keys.shape().dim(0),
                             ",), got ", keys.shape().ToString());
    return OkStatus();
  }
  Status CheckKey(const K& k) const {
    if (k == empty_) return InvalidArgument("Using the empty_key as a table key is not allowed");
    if (k == deleted_)
      return InvalidArgument("Using the deleted_key as a table key is not allowed");
    return OkStatus();
  }

  // The bucket holding `k`, or the first empty one on its probe sequence (quadratic probing).
  Result<int64_t> Probe(const K& k) const {
    const int64_t mask = num_buckets() - 1;
    int64_t b = static_cast<int64_t>(HashScalar(k) & static_cast<uint64_t>(mask));
    for (int64_t probes = 0;;) {
      const K& at = keys_[static_cast<size_t>(b)];
      if (at == k || at == empty_) return b;
      ++probes;
      b = (b + probes) & mask;
      if (probes >= num_buckets()) return Internal("table '", name(), "': no free bucket");
    }
  }

  template <typename T>
  Status Put(const K* k, const T* v, int64_t n, bool skip_markers) {
    const int64_t mask = num_buckets() - 1;
    for (int64_t i = 0; i < n; ++i) {
      if (skip_markers && (k[i] == empty_ || k[i] == deleted_)) continue;
      KILN_RETURN_IF_ERROR(CheckKey(k[i]));
      // Unlike Probe, a deleted bucket is reused, as TF's insert does.
      int64_t b = static_cast<int64_t>(HashScalar(k[i]) & static_cast<uint64_t>(mask));
      for (int64_t probes = 0;;) {
        K& at = keys_[static_cast<size_t>(b)];
        if (at == k[i] || at == empty_ || at == deleted_) {
          if (!(at == k[i])) {
            at = k[i];
            ++num_entries_;
          }
          std::copy(v + i * value_size_, v + (i + 1) * value_size_,
                    values_.begin() + b * value_size_);
          break;
        }
        ++probes;
        b = (b + probes) & mask;
        if (probes >= num_buckets()) return Internal("table '", name(), "': no free bucket");
      }
    }
    return OkStatus();
  }

  const K empty_;
  const K deleted_;
  const float max_load_factor_;
  const int64_t value_size_;
  mutable std::shared_mutex mu_;
  std::vector<K> keys_;       // one per bucket; empty_ or deleted_ marks a free one
  std::vector<Slot> values_;  // value_size_ per bucket
  int64_t num_entries_ = 0;
};

// Calls make.template operator()<K, V>() for the table's dtypes.
template <typename K, typename Make>
Result<std::shared_ptr<LookupTable>> WithValue(DType value, Make make) {
  switch (value) {
    case DType::kBool:
      return make.template operator()<K, bool>();
    case DType::kFloat:
      return make.template operator()<K, float>();
    case DType::kDouble:
      return make.template operator()<K, double>();
    case DType::kInt32:
      return make.template operator()<K, int32_t>();
    case DType::kInt64:
      return make.template operator()<K, int64_t>();
    case DType::kString:
      return make.template operator()<K, std::string>();
    default:
      return InvalidArgument("lookup tables cannot hold values of dtype ", DTypeShortName(value),
                             " (supported: bool, float32, float64, int32, int64, string)");
  }
}

template <typename Make>
Result<std::shared_ptr<LookupTable>> WithTypes(DType key, DType value, Make make) {
  switch (key) {
    case DType::kInt32:
      return WithValue<int32_t>(value, make);
    case DType::kInt64:
      return WithValue<int64_t>(value, make);
    case DType::kString:
      return WithValue<std::string>(value, make);
    default:
      return InvalidArgument("lookup tables cannot have keys of dtype ", DTypeShortName(key),
                             " (supported: int32, int64, string)");
  }
}

}  // namespace

Result<std::shared_ptr<LookupTable>> MakeTensorLookupTable(std::string name, DType key_dtype,
                                                           DType value_dtype, Shape value_shape) {
  if (value_shape.rank() != 1)
    return InvalidArgument("attr 'value_shape': expected a vector, got ", value_shape.ToString());
  return WithTypes(key_dtype, value_dtype, [&]<typename K, typename V>() {
    return std::shared_ptr<LookupTable>(
        new TensorHashTable<K, V>(std::move(name), key_dtype, value_dtype, false, value_shape));
  });
}

Result<std::shared_ptr<LookupTable>> MakeDenseLookupTable(std::string name, DType key_dtype,
                                                          DType value_dtype,
                                                          const DenseTableOptions& o) {
  if (!(o.max_load_factor > 0 && o.max_load_factor < 1))
    return InvalidArgument("attr 'max_load_factor' must be between 0 and 1, got ",
                           o.max_load_factor);
  if (o.value_shape.rank() > 1)
    return InvalidArgument("attr 'value_shape' must be a scalar or a vector, got ",
                           o.value_shape.ToString());
  const int64_t n = o.initial_num_buckets;
  if (n < 4 || (n & (n - 1)) != 0)
    return InvalidArgument(
        "attr 'initial_num_buckets': the number of buckets must be at least 4 and a power of 2, "
        "got ",
        n);
  for (const Tensor* t : {&o.empty_key, &o.deleted_key}) {
    if (t->dtype() != key_dtype || t->rank() != 0)
      return InvalidArgument("input '", t == &o.empty_key ? "empty_key" : "deleted_key",
                             "': expected a ", DTypeShortName(key_dtype),
                             " scalar (vector keys are not supported), got ", t->DebugString());
  }
  return WithTypes(key_dtype, value_dtype,
                   [&]<typename K, typename V>() -> Result<std::shared_ptr<LookupTable>> {
                     if (o.empty_key.data<K>()[0] == o.deleted_key.data<K>()[0])
                       return InvalidArgument("Empty and deleted keys cannot be equal");
                     return std::shared_ptr<LookupTable>(
                         new DenseHashTable<K, V>(std::move(name), key_dtype, value_dtype, o));
                   });
}

}  // namespace kiln::exec
