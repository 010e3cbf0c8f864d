// Ragged tensors as TF's ragged ops take them: nested row splits (one int32/int64 vector per
// ragged dim, each starting at 0, non-decreasing, ending at the size of the next level) over
// a dense values tensor. Shared by the ragged families (ragged_ops, ragged_variant_ops).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "kernels/array_util.h"

namespace kiln::exec {

using Splits = std::vector<int64_t>;

// Checks splits[k] (named by `what`, "rt_nested_splits") level by level: non-empty, starting
// at 0, non-decreasing, the last entry equal to the next level's row count (the values' first
// dim for the innermost level). Kernels rely on this to stay in bounds.
inline Status ValidateNestedSplits(const std::vector<Splits>& splits, int64_t num_values,
                                   std::string_view what) {
  for (size_t k = 0; k < splits.size(); ++k) {
    const Splits& s = splits[k];
    if (s.empty()) return InvalidArgument(what, "[", k, "] must not be empty");
    if (s[0] != 0) return InvalidArgument(what, "[", k, "] must start with 0, got ", s[0]);
    for (size_t i = 1; i < s.size(); ++i) {
      if (s[i] < s[i - 1]) {
        return InvalidArgument(what, "[", k, "] must be sorted in ascending order, but entry ", i,
                               " (", s[i], ") < entry ", i - 1, " (", s[i - 1], ")");
      }
    }
    const int64_t next =
        k + 1 < splits.size() ? static_cast<int64_t>(splits[k + 1].size()) - 1 : num_values;
    if (s.back() != next) {
      return InvalidArgument(what, "[", k, "] ends at ", s.back(), " but the next level has ", next,
                             k + 1 < splits.size() ? " rows" : " values");
    }
  }
  return OkStatus();
}

// Splits of inputs [first, first + n) as int64 vectors.
inline std::vector<Splits> ReadSplits(const KernelContext& ctx, int first, int n) {
  std::vector<Splits> s(n);
  for (int k = 0; k < n; ++k) s[k] = IndexValues(ctx.input(first + k));
  return s;
}

// Output `i` (a splits vector of the prepared dtype, int32 or int64) holding `s`.
inline Status WriteSplitsOutput(const KernelContext& ctx, int i, const Splits& s) {
  KILN_ASSIGN_OR_RETURN(Tensor * out, ctx.AllocateOutput(i, Shape{static_cast<int64_t>(s.size())}));
  if (out->dtype() == DType::kInt64) {
    std::copy(s.begin(), s.end(), out->data<int64_t>());
    return OkStatus();
  }
  for (size_t j = 0; j < s.size(); ++j) {
    if (s[j] > INT32_MAX) {
      return ctx.Error("row split ", s[j], " does not fit Tsplits int32; use int64 splits");
    }
    out->data<int32_t>()[j] = static_cast<int32_t>(s[j]);
  }
  return OkStatus();
}

// A tensor of dtype `dt` (int32 or int64) holding `s`, for values kept outside the frame.
inline Tensor SplitsTensor(DType dt, const Splits& s) {
  Tensor t(dt, Shape{static_cast<int64_t>(s.size())});
  for (size_t j = 0; j < s.size(); ++j) {
    if (dt == DType::kInt64) {
      t.data<int64_t>()[j] = s[j];
    } else {
      t.data<int32_t>()[j] = static_cast<int32_t>(s[j]);
    }
  }
  return t;
}

// Output `i` with rows [begin, end) of each range of `values` (rows = slices along dim 0),
// concatenated in order. The output's shape is [total rows] + values.shape[1:].
inline Status WriteValueRows(const KernelContext& ctx, int i, const Tensor& values,
                             const std::vector<std::pair<int64_t, int64_t>>& ranges) {
  int64_t rows = 0;
  for (const auto& r : ranges) rows += r.second - r.first;
  Shape shape = values.shape();
  shape.set_dim(0, rows);
  KILN_ASSIGN_OR_RETURN(Tensor * out, ctx.AllocateOutput(i, shape));
  const int64_t row = values.dim(0) == 0 ? 0 : values.NumElements() / values.dim(0);
  if (out->NumElements() == 0) return OkStatus();
  return DispatchStorage(values.dtype(), [&](auto tag) {
    using U = typename decltype(tag)::type;
    const U* src = Elems<U>(values);
    U* dst = Elems<U>(*out);
    for (const auto& r : ranges) {
      dst = std::copy(src + r.first * row, src + r.second * row, dst);
    }
    return OkStatus();
  });
}

// The value a ragged variant tensor holds (RaggedTensorToVariant's output): one ragged
// tensor, its splits and values kept as tensors.
class RaggedVariant final : public VariantBase {
 public:
  static constexpr const char* kTypeName = "tensorflow::RaggedTensorVariant";
  RaggedVariant(std::vector<Tensor> splits, Tensor values)
      : splits_(std::move(splits)), values_(std::move(values)) {
    // A variant outlives the call that made it: it must not hold arena memory.
    for (Tensor& t : splits_) t = t.Retainable();
    values_ = values_.Retainable();
  }
  const std::vector<Tensor>& splits() const { return splits_; }
  const Tensor& values() const { return values_; }
  int ragged_rank() const { return static_cast<int>(splits_.size()); }

  std::string TypeName() const override { return kTypeName; }
  std::string DebugString() const override {
    return internal::StrCat("RaggedTensorVariant(dtype=", DTypeShortName(values_.dtype()),
                            ", ragged_rank=", splits_.size(), ")");
  }

 private:
  std::vector<Tensor> splits_;
  Tensor values_;
};

}  // namespace kiln::exec
