// Sparse tensors as TensorProto bytes, as TensorFlow's serialize_sparse_op.cc and
// deserialize_sparse_string_op.cc do it: SerializeSparse (indices, values, shape: three
// serialized tensors), SerializeManySparse (one such triple per row of the first dim; the
// indices must be sorted and in bounds), DeserializeSparse and DeserializeManySparse (triples
// back to one sparse tensor: the triples' dims lead, each dim of the rest is the largest of the
// triples'). Only out_type / Tserialized string: the variant form (tensors held in a variant,
// for tf.data) is not supported.
// The CPU kernels are in kernels/cpu/full/sparse_serialize_ops.cc.
#include <cstdint>
#include <memory>

#include "kernels/array_util.h"
#include "kernels/kernel_util.h"

namespace kiln::exec {
namespace {

bool Serializable(DType t) { return t == DType::kString || DTypeIsPod(t); }

// ---- SerializeSparse / SerializeManySparse ---------------------------------------------------

template <bool kMany>
Status PrepareSerialize(PrepareContext& ctx) {
  KILN_RETURN_IF_ERROR(ctx.ExpectInputs(3));
  KILN_PREPARE_ASSIGN(ctx, DType t, ctx.attrs.GetType("T"));
  KILN_PREPARE_ASSIGN(ctx, DType out_type, ctx.attrs.GetType("out_type", DType::kString));
  if (!Serializable(t))
    return ctx.Error("attr 'T': serializing ", DTypeShortName(t), " values is not supported");
  if (out_type != DType::kString)
    return ctx.Error("attr 'out_type' is ", DTypeShortName(out_type),
                     ": only string is supported (the variant form is not)");
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 0, "sparse_indices", DType::kInt64));
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 1, "sparse_values", t));
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 2, "sparse_shape", DType::kInt64));
  KILN_RETURN_IF_ERROR(ExpectInputRank(ctx, 0, "sparse_indices", 2));
  KILN_RETURN_IF_ERROR(ExpectInputRank(ctx, 1, "sparse_values", 1));
  KILN_RETURN_IF_ERROR(ExpectInputRank(ctx, 2, "sparse_shape", 1));
  int64_t n = -1;
  if (const Tensor* shape = ConstantInput(ctx, 2); shape && shape->NumElements() > 0)
    n = shape->data<int64_t>()[0];
  ctx.outputs = {TensorSpec{DType::kString, kMany ? PartialShape{n, 3} : PartialShape{3}}};
  return OkStatus();
}

// ---- DeserializeSparse / DeserializeManySparse -----------------------------------------------

template <bool kMany>
Status PrepareDeserialize(PrepareContext& ctx) {
  KILN_RETURN_IF_ERROR(ctx.ExpectInputs(1));
  KILN_PREPARE_ASSIGN(ctx, DType t, ctx.attrs.GetType("dtype"));
  if (!Serializable(t))
    return ctx.Error("attr 'dtype': deserializing ", DTypeShortName(t), " values is not supported");
  if (!kMany) {
    KILN_PREPARE_ASSIGN(ctx, DType ser, ctx.attrs.GetType("Tserialized", DType::kString));
    if (ser != DType::kString)
      return ctx.Error("attr 'Tserialized' is ", DTypeShortName(ser),
                       ": only string is supported (the variant form is not)");
  }
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 0, "serialized_sparse", DType::kString));
  if (kMany) KILN_RETURN_IF_ERROR(ExpectInputRank(ctx, 0, "serialized_sparse", 2));
  ctx.outputs = {TensorSpec{DType::kInt64, PartialShape{-1, -1}}, TensorSpec{t, PartialShape{-1}},
                 TensorSpec{DType::kInt64, PartialShape{-1}}};
  ctx.state = std::make_shared<TypedOpState<DType>>(t);
  return OkStatus();
}

constexpr OpDefinition kDefs[] = {
    {"SerializeSparse", "serialized_sparse", kOpFreshOutputs, PrepareSerialize<false>},
    {"SerializeManySparse", "serialized_sparse", kOpFreshOutputs, PrepareSerialize<true>},
    {"DeserializeSparse", "sparse_indices,sparse_values,sparse_shape", kOpFreshOutputs,
     PrepareDeserialize<false>},
    {"DeserializeManySparse", "sparse_indices,sparse_values,sparse_shape", kOpFreshOutputs,
     PrepareDeserialize<true>},
};

}  // namespace

std::span<const OpDefinition> SparseSerializeOpDefs() { return kDefs; }

}  // namespace kiln::exec
