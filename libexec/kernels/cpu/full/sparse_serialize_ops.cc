// The CPU kernels of SerializeSparse, SerializeManySparse, DeserializeSparse and
// DeserializeManySparse (kernels/full/sparse_serialize_ops.cc): each tensor of a triple as
// TensorProto bytes (kernels/full/tensor_proto_bytes.h), checked as TensorFlow checks them.
#include <algorithm>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "kernels/array_util.h"
#include "kernels/full/tensor_proto_bytes.h"
#include "kernels/kernel_util.h"
#include "kernels/sparse_util.h"

namespace kiln::exec {
namespace {

std::string IndexString(const int64_t* idx, int64_t rank) {
  std::string s = "[";
  for (int64_t d = 0; d < rank; ++d) s += (d ? "," : "") + std::to_string(idx[d]);
  return s + "]";
}

// ---- SerializeSparse / SerializeManySparse ---------------------------------------------------

Status CheckSparseInputs(const KernelContext& ctx) {
  const Tensor& indices = ctx.input(0);
  const Tensor& values = ctx.input(1);
  const Tensor& shape = ctx.input(2);
  if (indices.rank() != 2)
    return ctx.Error("Input indices should be a matrix but received shape ",
                     indices.shape().ToString());
  if (values.rank() != 1)
    return ctx.Error("Input values should be a vector but received shape ",
                     values.shape().ToString());
  if (shape.rank() != 1)
    return ctx.Error("Input shape should be a vector but received shape ",
                     shape.shape().ToString());
  return OkStatus();
}

Status SerializeInto(const KernelContext& ctx, const Tensor& t, std::string* out) {
  Status s = SerializeTensorProto(t, /*string_content=*/true, out);
  return s.ok() ? s : ctx.Error(s.message());
}

Status ComputeSerializeSparse(const KernelContext& ctx) {
  KILN_RETURN_IF_ERROR(CheckSparseInputs(ctx));
  KILN_ASSIGN_OR_RETURN(Tensor * out, ctx.AllocateOutput(0, Shape{3}));
  for (int i = 0; i < 3; ++i)
    KILN_RETURN_IF_ERROR(SerializeInto(ctx, ctx.input(i), &out->data<std::string>()[i]));
  return OkStatus();
}

Status ComputeSerializeManySparse(const KernelContext& ctx) {
  KILN_RETURN_IF_ERROR(CheckSparseInputs(ctx));
  const Tensor& indices = ctx.input(0);
  const Tensor& values = ctx.input(1);
  const Tensor& shape_t = ctx.input(2);
  const int64_t rank = shape_t.NumElements();
  if (rank <= 1) return ctx.Error("Rank of input SparseTensor should be > 1, but saw rank: ", rank);
  const int64_t nnz = indices.dim(0);
  if (indices.dim(1) != rank || values.dim(0) != nnz)
    return ctx.Error("sparse_indices ", indices.shape().ToString(), ", sparse_values ",
                     values.shape().ToString(), " and sparse_shape ", shape_t.shape().ToString(),
                     " do not describe one sparse tensor");
  const int64_t* shape = shape_t.data<int64_t>();
  const int64_t* idx = indices.data<int64_t>();
  // TF's IndicesValid: in bounds, sorted, no repeats.
  for (int64_t i = 0; i < nnz; ++i) {
    const int64_t* row = idx + i * rank;
    for (int64_t d = 0; d < rank; ++d)
      if (row[d] < 0 || row[d] >= shape[d])
        return ctx.Error("indices[", i, "] = ", IndexString(row, rank),
                         " is out of bounds: need 0 <= index < ", IndexString(shape, rank));
    if (i == 0) continue;
    const int c = std::lexicographical_compare(row - rank, row, row, row + rank) ? -1
                  : std::equal(row - rank, row, row)                             ? 0
                                                                                 : 1;
    if (c == 0) return ctx.Error("indices[", i, "] = ", IndexString(row, rank), " is repeated");
    if (c > 0)
      return ctx.Error("indices[", i, "] = ", IndexString(row, rank),
                       " is out of order. Many sparse ops require sorted indices. Use "
                       "`tf.sparse.reorder` to create a correctly ordered copy.");
  }
  const int64_t n = shape[0];
  if (n < 0) return ctx.Error("input 'sparse_shape' has a negative first dim: ", n);
  KILN_ASSIGN_OR_RETURN(Tensor * out, ctx.AllocateOutput(0, Shape{n, 3}));
  std::string* o = out->data<std::string>();
  // Every row starts empty, with the shape of the rest.
  Tensor rest(DType::kInt64, Shape{rank - 1});
  std::copy_n(shape + 1, rank - 1, rest.data<int64_t>());
  std::string empty_idx, empty_val, rest_shape;
  KILN_RETURN_IF_ERROR(SerializeInto(ctx, Tensor(DType::kInt64, Shape{0, rank - 1}), &empty_idx));
  KILN_RETURN_IF_ERROR(SerializeInto(ctx, Tensor(values.dtype(), Shape{0}), &empty_val));
  KILN_RETURN_IF_ERROR(SerializeInto(ctx, rest, &rest_shape));
  for (int64_t b = 0; b < n; ++b) {
    o[b * 3] = empty_idx;
    o[b * 3 + 1] = empty_val;
    o[b * 3 + 2] = rest_shape;
  }
  KILN_RETURN_IF_ERROR(ForEachSparseBatchRow(
      idx, nnz, rank, values, [&](int64_t b, const Tensor& sub_idx, const Tensor& sub_val) {
        KILN_RETURN_IF_ERROR(SerializeInto(ctx, sub_idx, &o[b * 3]));
        return SerializeInto(ctx, sub_val, &o[b * 3 + 1]);
      }));
  return OkStatus();
}

// ---- DeserializeSparse / DeserializeManySparse -----------------------------------------------

struct Triple {
  Tensor indices, values, shape;
};

Result<Triple> ParseTriple(const KernelContext& ctx, const std::string* s, int64_t i, DType dtype) {
  Triple t;
  Tensor* parts[] = {&t.indices, &t.values, &t.shape};
  for (int k = 0; k < 3; ++k) {
    Result<Tensor> r = ParseTensorProto(s[k]);
    if (!r.ok()) return ctx.Error("serialized_sparse[", i, ", ", k, "]: ", r.status().message());
    *parts[k] = std::move(r).value();
  }
  if (t.indices.rank() != 2 || t.indices.dtype() != DType::kInt64)
    return ctx.Error("Expected serialized_sparse[", i,
                     ", 0] to represent an int64 index matrix but received ",
                     DTypeShortName(t.indices.dtype()), " ", t.indices.shape().ToString());
  if (t.values.rank() != 1)
    return ctx.Error("Expected serialized_sparse[", i,
                     ", 1] to represent a values vector but received shape ",
                     t.values.shape().ToString());
  if (t.values.dtype() != dtype)
    return ctx.Error("Requested SparseTensor of type ", DTypeShortName(dtype), " but SparseTensor[",
                     i, "].values.dtype() == ", DTypeShortName(t.values.dtype()));
  if (t.indices.dim(0) != t.values.dim(0))
    return ctx.Error("Expected row counts of SparseTensor[", i, "].indices and SparseTensor[", i,
                     "].values to match but they do not: ", t.indices.dim(0), " vs. ",
                     t.values.dim(0));
  if (t.shape.rank() != 1 || t.shape.dtype() != DType::kInt64)
    return ctx.Error("Expected serialized_sparse[", i,
                     ", 2] to be an int64 shape vector but it is ", DTypeShortName(t.shape.dtype()),
                     " ", t.shape.shape().ToString());
  if (t.indices.dim(1) != t.shape.dim(0))
    return ctx.Error("Expected column counts of SparseTensor[", i,
                     "].indices to match size of SparseTensor[", i,
                     "].shape but they do not: ", t.indices.dim(1), " vs. ", t.shape.dim(0));
  return t;
}

Status ComputeDeserialize(const KernelContext& ctx) {
  const DType dtype = ctx.state<TypedOpState<DType>>().value;
  const Tensor& ser = ctx.input(0);
  const int ndims = ser.rank();
  if (ndims == 0)
    return ctx.Error("Serialized sparse should have non-zero rank ", ser.shape().ToString());
  if (ser.dim(ndims - 1) != 3)
    return ctx.Error("Serialized sparse should have 3 as the last dimension ",
                     ser.shape().ToString());
  const int64_t num = ser.NumElements() / 3;
  if (num == 0)
    return ctx.Error(
        "Serialized sparse should have at least 1 serialized tensor, but has a zero "
        "dimension ",
        ser.shape().ToString());
  std::vector<Triple> triples;
  for (int64_t i = 0; i < num; ++i) {
    KILN_ASSIGN_OR_RETURN(Triple t, ParseTriple(ctx, ser.data<std::string>() + i * 3, i, dtype));
    if (!triples.empty() && t.shape.dim(0) != triples[0].shape.dim(0))
      return ctx.Error("Inconsistent shape across SparseTensors: rank prior to SparseTensor[", i,
                       "] was: ", triples[0].shape.dim(0), " but rank of SparseTensor[", i,
                       "] is: ", t.shape.dim(0));
    triples.push_back(std::move(t));
  }
  const int64_t rank = triples[0].shape.dim(0);
  const int64_t lead = ndims - 1;  // the triples' dims
  const int64_t out_rank = lead + rank;
  int64_t total = 0;
  std::vector<int64_t> dims(static_cast<size_t>(out_rank), 0);
  for (int64_t d = 0; d < lead; ++d) dims[d] = ser.dim(static_cast<int>(d));
  for (const Triple& t : triples) {
    total += t.values.dim(0);
    for (int64_t d = 0; d < rank; ++d)
      dims[lead + d] = std::max(dims[lead + d], t.shape.data<int64_t>()[d]);
  }
  if (lead == 0) {  // one triple: as it is
    for (int64_t d = 0; d < rank; ++d) dims[d] = triples[0].shape.data<int64_t>()[d];
  }
  KILN_ASSIGN_OR_RETURN(Tensor * out_idx, ctx.AllocateOutput(0, Shape{total, out_rank}));
  KILN_ASSIGN_OR_RETURN(Tensor * out_val, ctx.AllocateOutput(1, Shape{total}));
  KILN_ASSIGN_OR_RETURN(Tensor * out_shape, ctx.AllocateOutput(2, Shape{out_rank}));
  std::copy(dims.begin(), dims.end(), out_shape->data<int64_t>());
  int64_t at = 0;
  std::vector<int64_t> prefix(static_cast<size_t>(lead), 0);
  for (int64_t i = 0; i < num; ++i) {
    const Triple& t = triples[i];
    // The triple's position in the leading dims.
    for (int64_t d = lead - 1, rem = i; d >= 0; --d) {
      prefix[d] = rem % dims[d];
      rem /= dims[d];
    }
    const int64_t m = t.values.dim(0);
    for (int64_t k = 0; k < m; ++k) {
      int64_t* row = out_idx->data<int64_t>() + (at + k) * out_rank;
      std::copy(prefix.begin(), prefix.end(), row);
      std::copy_n(t.indices.data<int64_t>() + k * rank, rank, row + lead);
    }
    CopyElementRange(t.values, 0, out_val, at, m);
    at += m;
  }
  return OkStatus();
}

constexpr KernelEntry kCpu[] = {
    {"SerializeSparse", ComputeSerializeSparse},
    {"SerializeManySparse", ComputeSerializeManySparse},
    {"DeserializeSparse", ComputeDeserialize},
    {"DeserializeManySparse", ComputeDeserialize},
};

}  // namespace

std::span<const KernelEntry> SparseSerializeCpuKernels() { return kCpu; }

}  // namespace kiln::exec
