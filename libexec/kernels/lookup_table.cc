// Op families: Lookup
#include "kernels/lookup_table.h"

#include <algorithm>
#include <mutex>
#include <shared_mutex>
#include <sstream>
#include <unordered_map>
#include <vector>

#include "kernels/kernel_util.h"

namespace kiln::exec {
namespace {

// "a", 3, true: how TF's messages print keys and values.
template <typename T>
std::string Show(const T& v) {
  if constexpr (std::is_same_v<T, bool>) {
    return v ? "true" : "false";
  } else if constexpr (std::is_same_v<T, std::string>) {
    return v;
  } else {
    std::ostringstream os;
    os << v;
    return os.str();
  }
}

template <typename K, typename V>
class HashTable final : public LookupTable {
 public:
  using LookupTable::LookupTable;

  int64_t Size() const override {
    std::shared_lock lock(mu_);
    return static_cast<int64_t>(map_.size());
  }
  bool initialized() const override {
    std::shared_lock lock(mu_);
    return initialized_;
  }

  Status Find(const Tensor& keys, const Tensor& dflt, Tensor* out) const override {
    const K* k = keys.data<K>();
    const V* d = dflt.data<V>();
    V* o = out->data<V>();
    const int64_t n = keys.NumElements();
    const bool per_key = dflt.NumElements() == n && dflt.rank() > 0;
    std::shared_lock lock(mu_);
    if (initializable() && !initialized_)
      return FailedPrecondition("table '", name(), "' is not initialized");
    for (int64_t i = 0; i < n; ++i) {
      auto it = map_.find(k[i]);
      o[i] = it != map_.end() ? it->second : d[per_key ? i : 0];
    }
    return OkStatus();
  }

  Status Import(const Tensor& keys, const Tensor& values) override {
    const K* k = keys.data<K>();
    const V* v = values.data<V>();
    const int64_t n = keys.NumElements();
    std::unique_lock lock(mu_);
    if (!initializable()) {
      map_.clear();
      for (int64_t i = 0; i < n; ++i) map_[k[i]] = v[i];
      return OkStatus();
    }
    if (initialized_) {
      bool same = static_cast<int64_t>(map_.size()) == n;
      for (int64_t i = 0; same && i < n; ++i) {
        auto it = map_.find(k[i]);
        same = it != map_.end() && it->second == v[i];
      }
      if (!same)
        return FailedPrecondition("table '", name(),
                                  "' was already initialized with different data");
      return OkStatus();
    }
    for (int64_t i = 0; i < n; ++i) {
      auto [it, inserted] = map_.emplace(k[i], v[i]);
      if (!inserted && !(it->second == v[i])) {
        Status s = FailedPrecondition("table '", name(), "': key ", Show(k[i]), " has value ",
                                      Show(it->second), " and is given value ", Show(v[i]));
        map_.clear();
        return s;
      }
    }
    initialized_ = true;
    return OkStatus();
  }

  Status Insert(const Tensor& keys, const Tensor& values) override {
    if (initializable()) return ReadOnly("insert into");
    const K* k = keys.data<K>();
    const V* v = values.data<V>();
    std::unique_lock lock(mu_);
    for (int64_t i = 0; i < keys.NumElements(); ++i) map_[k[i]] = v[i];
    return OkStatus();
  }

  Status Remove(const Tensor& keys) override {
    if (initializable()) return ReadOnly("remove from");
    const K* k = keys.data<K>();
    std::unique_lock lock(mu_);
    for (int64_t i = 0; i < keys.NumElements(); ++i) map_.erase(k[i]);
    return OkStatus();
  }

  void Export(Tensor* keys, Tensor* values) const override {
    std::shared_lock lock(mu_);
    std::vector<const std::pair<const K, V>*> entries;
    entries.reserve(map_.size());
    for (const auto& e : map_) entries.push_back(&e);
    std::sort(entries.begin(), entries.end(),
              [](const auto* a, const auto* b) { return a->first < b->first; });
    const int64_t n = static_cast<int64_t>(entries.size());
    *keys = Tensor(key_dtype(), Shape{n});
    *values = Tensor(value_dtype(), Shape{n});
    for (int64_t i = 0; i < n; ++i) {
      keys->data<K>()[i] = entries[static_cast<size_t>(i)]->first;
      values->data<V>()[i] = entries[static_cast<size_t>(i)]->second;
    }
  }

 private:
  Status ReadOnly(std::string_view what) const {
    return FailedPrecondition("cannot ", what, " table '", name(),
                              "': it is a static table, filled once by its initializer");
  }

  mutable std::shared_mutex mu_;
  std::unordered_map<K, V> map_;
  bool initialized_ = false;
};

template <typename K>
Result<std::shared_ptr<LookupTable>> MakeWithKey(std::string name, DType key, DType value,
                                                 bool initializable) {
  switch (value) {
#define KILN_VALUE(e, V)                 \
  case DType::e:                         \
    return std::shared_ptr<LookupTable>( \
        new HashTable<K, V>(std::move(name), key, value, initializable));
    KILN_VALUE(kBool, bool)
    KILN_VALUE(kFloat, float)
    KILN_VALUE(kDouble, double)
    KILN_VALUE(kInt32, int32_t)
    KILN_VALUE(kInt64, int64_t)
    KILN_VALUE(kString, std::string)
#undef KILN_VALUE
    default:
      return InvalidArgument("lookup tables cannot hold values of dtype ", DTypeShortName(value),
                             " (supported: bool, float32, float64, int32, int64, string)");
  }
}

}  // namespace

std::string LookupTable::DebugString() const {
  return "LookupTable '" + name_ + "' " + DTypeShortName(key_dtype_) + " -> " +
         DTypeShortName(value_dtype_) + (initializable_ ? "" : " (mutable)");
}

Shape LookupTable::ValuesShapeFor(const Shape& keys, bool /*import*/) const {
  Shape s = keys;
  for (int64_t d : value_shape_.dims()) s.AddDim(d);
  return s;
}

bool LookupKeyDTypeSupported(DType t) {
  return t == DType::kInt32 || t == DType::kInt64 || t == DType::kString;
}
bool LookupValueDTypeSupported(DType t) {
  return t == DType::kBool || t == DType::kFloat || t == DType::kDouble || t == DType::kInt32 ||
         t == DType::kInt64 || t == DType::kString;
}

Result<std::shared_ptr<LookupTable>> MakeLookupTable(std::string name, DType key_dtype,
                                                     DType value_dtype, bool initializable) {
  switch (key_dtype) {
    case DType::kInt32:
      return MakeWithKey<int32_t>(std::move(name), key_dtype, value_dtype, initializable);
    case DType::kInt64:
      return MakeWithKey<int64_t>(std::move(name), key_dtype, value_dtype, initializable);
    case DType::kString:
      return MakeWithKey<std::string>(std::move(name), key_dtype, value_dtype, initializable);
    default:
      return InvalidArgument("lookup tables cannot have keys of dtype ", DTypeShortName(key_dtype),
                             " (supported: int32, int64, string)");
  }
}

}  // namespace kiln::exec
