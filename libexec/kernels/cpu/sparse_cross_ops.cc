// The CPU kernels of SparseCross, SparseCrossV2 and SparseCrossHashed
// (kernels/sparse_cross_ops.cc): bit for bit those of tensorflow/core/kernels/sparse_cross_op.cc,
// since models look buckets up by these values.
#include "kernels/sparse_cross_ops.h"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "kernels/kernel_util.h"
#include "kernels/string_hash.h"

namespace kiln::exec {
namespace {

using sparse_cross::Cross;
using sparse_cross::CrossState;

uint64_t ShiftMix(uint64_t v) { return v ^ (v >> 47); }

uint64_t FingerprintCat64(uint64_t fp1, uint64_t fp2) {
  constexpr uint64_t kMul = 0xc6a4a7935bd1e995ULL;
  uint64_t r = fp1 ^ kMul;
  r ^= ShiftMix(fp2 * kMul) * kMul;
  r *= kMul;
  r = ShiftMix(r) * kMul;
  return ShiftMix(r);
}

// One input column: per row, its features [start[b], start[b] + count[b]) of `values` (sparse)
// or row b of a [batch, k] matrix (dense).
struct Column {
  const Tensor* values = nullptr;
  bool dense = false;
  int64_t width = 0;  // dense: features per row
  std::vector<int64_t> start, count;
  int64_t Count(int64_t b) const { return dense ? width : count[b]; }
  int64_t Index(int64_t b, int64_t k) const { return dense ? b * width + k : start[b] + k; }
  bool IsString() const { return values->dtype() == DType::kString; }
  const std::string& Str(int64_t b, int64_t k) const {
    return values->data<std::string>()[Index(b, k)];
  }
  int64_t Int(int64_t b, int64_t k) const { return values->data<int64_t>()[Index(b, k)]; }
};

// A feature's hash: Fingerprint64 of a string; an int64 as is, except in a sparse column of
// SparseCrossHashed (keyed), where TF fingerprints the int64's first sizeof(DataType) = 4 bytes.
uint64_t FeatureHash(const Column& c, int64_t b, int64_t k, bool keyed) {
  if (c.IsString()) return Fingerprint64(c.Str(b, k));
  const int64_t v = c.Int(b, k);
  if (!keyed || c.dense) return static_cast<uint64_t>(v);
  char bytes[8];
  std::memcpy(bytes, &v, sizeof(v));
  return Fingerprint64(std::string_view(bytes, 4));
}

std::string FeatureString(const Column& c, int64_t b, int64_t k) {
  return c.IsString() ? c.Str(b, k) : std::to_string(c.Int(b, k));
}

Status ComputeSparseCross(const KernelContext& ctx) {
  const auto& st = ctx.state<CrossState>();
  const int n = st.n_sparse, nd = st.n_dense, base = 3 * n + nd;
  // Batch size: the first sparse shape's, else the first dense input's.
  int64_t batch = 0;
  for (int i = 0; i < n; ++i) {
    const Tensor& idx = ctx.input(i);
    const Tensor& shape = ctx.input(2 * n + i);
    if (idx.rank() != 2 || idx.dim(1) != 2) {
      return ctx.Error("input 'indices' ", i, " must have shape [nnz, 2], got ",
                       idx.shape().ToString());
    }
    if (ctx.input(n + i).rank() != 1 || ctx.input(n + i).dim(0) != idx.dim(0)) {
      return ctx.Error("input 'values' ", i, " must have shape [", idx.dim(0), "], got ",
                       ctx.input(n + i).shape().ToString());
    }
    if (shape.rank() != 1 || shape.NumElements() != 2) {
      return ctx.Error("input 'shapes' ", i, " must hold 2 values, got shape ",
                       shape.shape().ToString());
    }
    if (i == 0) batch = shape.data<int64_t>()[0];
    if (shape.data<int64_t>()[0] != batch) {
      return ctx.Error("input 'shapes' ", i, ": expected batch size ", batch, ", got ",
                       shape.data<int64_t>()[0]);
    }
  }
  for (int i = 0; i < nd; ++i) {
    const Tensor& d = ctx.input(3 * n + i);
    if (d.rank() != 2) {
      return ctx.Error("input 'dense_inputs' ", i, " must be a matrix, got shape ",
                       d.shape().ToString());
    }
    if (n == 0 && i == 0) batch = d.dim(0);
    if (d.dim(0) != batch) {
      return ctx.Error("input 'dense_inputs' ", i, ": expected batch size ", batch, ", got ",
                       d.dim(0));
    }
  }
  if (batch < 0) return ctx.Error("the batch size must be non-negative, got ", batch);
  // Sparse features of row b: the run of entries whose row index is b, read in order (TF reads
  // them the same way; entries out of order or out of range belong to no row).
  std::vector<Column> cols(n + nd);
  for (int i = 0; i < n; ++i) {
    Column& c = cols[i];
    c.values = &ctx.input(n + i);
    const Tensor& idx = ctx.input(i);
    const int64_t* ix = idx.data<int64_t>();
    const int64_t nnz = idx.dim(0);
    c.start.resize(batch);
    c.count.resize(batch);
    int64_t at = 0;
    for (int64_t b = 0; b < batch; ++b) {
      c.start[b] = at;
      while (at < nnz && ix[at * 2] == b) ++at;
      c.count[b] = at - c.start[b];
    }
  }
  for (int i = 0; i < nd; ++i) {
    Column& c = cols[n + i];
    c.values = &ctx.input(3 * n + i);
    c.dense = true;
    c.width = c.values->dim(1);
  }
  int64_t num_buckets = st.num_buckets;
  std::string sep = "_X_";
  if (st.kind == Cross::kKeyedHash) {
    num_buckets = ctx.input(base).scalar<int64_t>();
    // TF 2.21's strong_hash path crashes the process (a model cannot rely on its values); its
    // salt only keys that path.
    if (ctx.input(base + 1).scalar<bool>()) {
      return ctx.Error(
          "input 'strong_hash' = true is not supported (TensorFlow 2.21 crashes on it)");
    }
    if (ctx.input(base + 2).NumElements() != 2) {
      return ctx.Error("input 'salt' must have 2 elements, got shape ",
                       ctx.input(base + 2).shape().ToString());
    }
  } else if (st.kind == Cross::kStringV2) {
    sep = ctx.input(base).scalar<std::string>();
  }
  // Output rows: the product of the columns' feature counts (0 if any is empty, or no column).
  std::vector<int64_t> row_start(batch + 1, 0);
  int64_t max_count = 0;
  for (int64_t b = 0; b < batch; ++b) {
    int64_t count = cols.empty() ? 0 : 1;
    for (const Column& c : cols) {
      if (__builtin_mul_overflow(count, c.Count(b), &count) ||
          count > std::numeric_limits<int32_t>::max()) {
        return ctx.Error("row ", b, " has too many feature crosses");
      }
    }
    max_count = std::max(max_count, count);
    if (__builtin_add_overflow(row_start[b], count, &row_start[b + 1]) ||
        row_start[b + 1] > (int64_t{1} << 40)) {
      return ctx.Error("too many feature crosses in all");
    }
  }
  const int64_t total = row_start[batch];
  KILN_ASSIGN_OR_RETURN(Tensor * out_idx, ctx.AllocateOutput(0, Shape{total, 2}));
  KILN_ASSIGN_OR_RETURN(Tensor * out_val, ctx.AllocateOutput(1, Shape{total}));
  KILN_ASSIGN_OR_RETURN(Tensor * out_shape, ctx.AllocateOutput(2, Shape{2}));
  out_shape->data<int64_t>()[0] = batch;
  out_shape->data<int64_t>()[1] = max_count;
  int64_t* oi = out_idx->data<int64_t>();
  const bool hashed = st.kind == Cross::kHash || st.kind == Cross::kKeyedHash;
  std::vector<int64_t> pick(cols.size());
  for (int64_t b = 0; b < batch; ++b) {
    const int64_t count = row_start[b + 1] - row_start[b];
    std::fill(pick.begin(), pick.end(), 0);
    for (int64_t j = 0; j < count; ++j) {
      const int64_t at = row_start[b] + j;
      oi[at * 2] = b;
      oi[at * 2 + 1] = j;
      if (hashed) {
        uint64_t h = 0;
        for (size_t i = 0; i < cols.size(); ++i) {
          if (st.kind == Cross::kHash) {
            h = FingerprintCat64(i == 0 ? st.hash_key : h, FeatureHash(cols[i], b, pick[i], false));
          } else {
            const uint64_t f = FeatureHash(cols[i], b, pick[i], true);
            h = i == 0 ? f : FingerprintCat64(h, f);
          }
        }
        const uint64_t mod = num_buckets > 0 ? static_cast<uint64_t>(num_buckets)
                                             : std::numeric_limits<int64_t>::max();
        out_val->data<int64_t>()[at] = static_cast<int64_t>(h % mod);
      } else {
        std::string s;
        for (size_t i = 0; i < cols.size(); ++i) {
          if (i > 0) s += sep;
          s += FeatureString(cols[i], b, pick[i]);
        }
        out_val->data<std::string>()[at] = std::move(s);
      }
      // Next combination: the last column varies fastest.
      for (int64_t i = static_cast<int64_t>(cols.size()) - 1; i >= 0; --i) {
        if (++pick[i] < cols[i].Count(b)) break;
        pick[i] = 0;
      }
    }
  }
  return OkStatus();
}

constexpr KernelEntry kCpu[] = {
    {"SparseCross", ComputeSparseCross},
    {"SparseCrossV2", ComputeSparseCross},
    {"SparseCrossHashed", ComputeSparseCross},
};

}  // namespace

std::span<const KernelEntry> SparseCrossCpuKernels() { return kCpu; }

}  // namespace kiln::exec
