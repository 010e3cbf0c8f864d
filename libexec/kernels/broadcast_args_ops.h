// What BroadcastArgs and BroadcastGradientArgs' definitions (kernels/broadcast_args_ops.cc) and
// CPU kernels (kernels/cpu/broadcast_args_ops.cc) share: the broadcast of two shape vectors and
// the writing of its results.
#pragma once

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "kernels/array_util.h"

namespace kiln::exec::broadcast_args {

// "[2,3]" as TF's messages print shapes.
inline std::string Bracket(const std::vector<int64_t>& v) {
  std::string s = "[";
  for (size_t i = 0; i < v.size(); ++i) s += (i ? "," : "") + std::to_string(v[i]);
  return s + "]";
}

// The broadcast of two shape vectors and, per output dim, whether each side is 1 there
// (right-aligned, missing leading dims count as 1).
struct BroadcastResult {
  std::vector<int64_t> shape;
  std::vector<int64_t> reduce0, reduce1;
};

inline Result<BroadcastResult> Broadcast(const std::vector<int64_t>& a,
                                         const std::vector<int64_t>& b) {
  for (const auto* v : {&a, &b}) {
    for (int64_t d : *v) {
      if (d < 0) {
        return InvalidArgument("shape ", Bracket(*v), " has a negative dimension");
      }
    }
  }
  const size_t rank = std::max(a.size(), b.size());
  BroadcastResult r;
  for (size_t i = 0; i < rank; ++i) {
    const int64_t da = i + a.size() >= rank ? a[i + a.size() - rank] : 1;
    const int64_t db = i + b.size() >= rank ? b[i + b.size() - rank] : 1;
    if (da != db && da != 1 && db != 1) {
      return InvalidArgument("Incompatible shapes: ", Bracket(a), " vs. ", Bracket(b));
    }
    r.shape.push_back(da == 1 ? db : da);
    if (da == 1) r.reduce0.push_back(static_cast<int64_t>(i));
    if (db == 1) r.reduce1.push_back(static_cast<int64_t>(i));
  }
  return r;
}

inline Status WriteVector(const std::vector<int64_t>& v, Tensor* out) {
  if (out->dtype() == DType::kInt64) {
    std::copy(v.begin(), v.end(), out->data<int64_t>());
    return OkStatus();
  }
  for (size_t i = 0; i < v.size(); ++i) {
    if (v[i] > INT32_MAX) return InvalidArgument("dimension ", v[i], " does not fit int32");
    out->data<int32_t>()[i] = static_cast<int32_t>(v[i]);
  }
  return OkStatus();
}

// BroadcastArgs gives the shape; BroadcastGradientArgs the dims each side is 1 in.
inline std::vector<std::vector<int64_t>> Outputs(bool args, const BroadcastResult& r) {
  if (args) return {r.shape};
  return {r.reduce0, r.reduce1};
}

}  // namespace kiln::exec::broadcast_args
