// Feature crosses of 2-D sparse and dense columns (tensorflow/core/kernels/sparse_cross_op.cc):
// SparseCross, SparseCrossV2 and SparseCrossHashed. Row b of the output holds every combination
// of one feature of row b from each column (sparse columns first, then dense, the last column
// varying fastest), as a 2-D SparseTensor [batch, max crosses]. A cross is
// - a string: the features (int64 in decimal) joined by "_X_" (SparseCross) or `sep` (V2);
// - a hash (SparseCross hashed_output): FingerprintCat64 folded from hash_key over the features
//   (a string's Fingerprint64, an int64 as is), modulo num_buckets (or int64 max);
// - SparseCrossHashed: folded from the first feature's hash; a sparse int64 feature hashes as
//   Fingerprint64 of its first 4 bytes (TF hashes sizeof(DataType) bytes). strong_hash (SipHash
//   under `salt`) is refused: TF 2.21 crashes on it.
// All of this is bit-for-bit TF's, since models look buckets up by these values. (Keras'
// HashedCrossing runs SparseCross with hashed_output.) The CPU kernels are in
// kernels/cpu/sparse_cross_ops.cc.
#include "kernels/sparse_cross_ops.h"

#include <cstdint>
#include <memory>
#include <utility>
#include <vector>

#include "kernels/array_util.h"
#include "kernels/kernel_util.h"

namespace kiln::exec {
namespace {

using sparse_cross::Cross;
using sparse_cross::CrossState;

template <Cross kKind>
Status PrepareSparseCross(PrepareContext& ctx) {
  auto st = std::make_shared<CrossState>();
  st->kind = kKind;
  KILN_PREPARE_ASSIGN(ctx, std::vector<DType> sparse_types, ctx.attrs.GetTypeList("sparse_types"));
  KILN_PREPARE_ASSIGN(ctx, std::vector<DType> dense_types, ctx.attrs.GetTypeList("dense_types"));
  st->n_sparse = static_cast<int>(sparse_types.size());
  st->n_dense = static_cast<int>(dense_types.size());
  for (DType t : sparse_types) {
    if (t != DType::kInt64 && t != DType::kString) {
      return ctx.Error("attr 'sparse_types' must hold int64 or string, got ", DTypeShortName(t));
    }
  }
  for (DType t : dense_types) {
    if (t != DType::kInt64 && t != DType::kString) {
      return ctx.Error("attr 'dense_types' must hold int64 or string, got ", DTypeShortName(t));
    }
  }
  DType out = DType::kString;
  if (kKind == Cross::kString) {
    KILN_PREPARE_ASSIGN(ctx, bool hashed, ctx.attrs.GetBool("hashed_output", false));
    KILN_PREPARE_ASSIGN(ctx, st->num_buckets, ctx.attrs.GetInt("num_buckets"));
    KILN_PREPARE_ASSIGN(ctx, int64_t key, ctx.attrs.GetInt("hash_key"));
    st->hash_key = static_cast<uint64_t>(key);
    KILN_PREPARE_ASSIGN(ctx, out, ctx.attrs.GetType("out_type"));
    KILN_PREPARE_ASSIGN(ctx, DType internal, ctx.attrs.GetType("internal_type"));
    if (out != (hashed ? DType::kInt64 : DType::kString)) {
      return ctx.Error("attr 'out_type' must be ", hashed ? "int64" : "string",
                       " with hashed_output=", hashed ? "true" : "false", ", got ",
                       DTypeShortName(out));
    }
    if (internal != DType::kInt64 && internal != DType::kString) {
      return ctx.Error("attr 'internal_type' must be int64 or string, got ",
                       DTypeShortName(internal));
    }
    if (st->num_buckets < 0) {
      return ctx.Error("attr 'num_buckets' must be non-negative, got ", st->num_buckets);
    }
    if (internal == DType::kString) {
      for (DType t : sparse_types) {
        if (t == DType::kInt64) return ctx.Error("sparse int64 values with internal_type string");
      }
      for (DType t : dense_types) {
        if (t == DType::kInt64) return ctx.Error("dense int64 inputs with internal_type string");
      }
    }
    if (hashed) st->kind = Cross::kHash;
  } else if (kKind == Cross::kKeyedHash) {
    out = DType::kInt64;
  }
  const int extra = kKind == Cross::kKeyedHash ? 3 : kKind == Cross::kStringV2 ? 1 : 0;
  const int n = st->n_sparse, base = 3 * n + st->n_dense;
  KILN_RETURN_IF_ERROR(ctx.ExpectInputs(base + extra));
  for (int i = 0; i < n; ++i) {
    KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, i, "indices", DType::kInt64));
    KILN_RETURN_IF_ERROR(ExpectInputRank(ctx, i, "indices", 2));
    KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, n + i, "values", sparse_types[i]));
    KILN_RETURN_IF_ERROR(ExpectInputRank(ctx, n + i, "values", 1));
    KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 2 * n + i, "shapes", DType::kInt64));
    KILN_RETURN_IF_ERROR(ExpectInputRank(ctx, 2 * n + i, "shapes", 1));
  }
  for (int i = 0; i < st->n_dense; ++i) {
    KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 3 * n + i, "dense_inputs", dense_types[i]));
    KILN_RETURN_IF_ERROR(ExpectInputRank(ctx, 3 * n + i, "dense_inputs", 2));
  }
  if (kKind == Cross::kKeyedHash) {
    KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, base, "num_buckets", DType::kInt64));
    KILN_RETURN_IF_ERROR(ExpectInputRank(ctx, base, "num_buckets", 0));
    KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, base + 1, "strong_hash", DType::kBool));
    KILN_RETURN_IF_ERROR(ExpectInputRank(ctx, base + 1, "strong_hash", 0));
    KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, base + 2, "salt", DType::kInt64));
  } else if (kKind == Cross::kStringV2) {
    KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, base, "sep", DType::kString));
    KILN_RETURN_IF_ERROR(ExpectInputRank(ctx, base, "sep", 0));
  }
  ctx.outputs = {TensorSpec{DType::kInt64, PartialShape{-1, 2}}, TensorSpec{out, UnknownDims(1)},
                 TensorSpec{DType::kInt64, PartialShape{2}}};
  ctx.state = std::move(st);
  return OkStatus();
}

constexpr OpDefinition kDefs[] = {
    {"SparseCross", "output_indices,output_values,output_shape", kOpFreshOutputs,
     PrepareSparseCross<Cross::kString>},
    {"SparseCrossV2", "output_indices,output_values,output_shape", kOpFreshOutputs,
     PrepareSparseCross<Cross::kStringV2>},
    {"SparseCrossHashed", "output_indices,output_values,output_shape", kOpFreshOutputs,
     PrepareSparseCross<Cross::kKeyedHash>},
};

}  // namespace

std::span<const OpDefinition> SparseCrossOpDefs() { return kDefs; }

}  // namespace kiln::exec
