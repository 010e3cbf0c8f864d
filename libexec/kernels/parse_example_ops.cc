// tf.Example parsing, as TensorFlow's fast parser does it (example_proto_fast_parsing.cc):
// ParseExampleV2 (what tf.io.parse_example writes in TF 2: keys as inputs, dense, sparse and
// ragged features), ParseExample (TF 1: one input per key) and ParseSingleExample (one
// scalar record, keys in attrs).
//  - dense: shape [batch] + dense_shape; a missing feature takes its default (an empty default
//    makes it required); a shape whose first dim is unknown (FixedLenSequenceFeature) takes any
//    multiple of the rest and pads to the longest with the default;
//  - sparse: values in record order, indices (record, position), shape (batch, longest);
//  - ragged: values, and row splits per record.
// Errors are TF's, naming the key and the record.
// The CPU kernels are in kernels/cpu/parse_example_ops.cc.
#include "kernels/parse_example_ops.h"

#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "kernels/kernel_util.h"

namespace kiln::exec {
namespace {

using parse_example::Form;
using parse_example::Inputs;
using parse_example::InputsOf;
using parse_example::ParseState;

constexpr DType kFeatureDTypes[] = {DType::kFloat, DType::kInt64, DType::kString};

Status CheckTypes(const PrepareContext& ctx, std::string_view attr, const std::vector<DType>& ts) {
  for (DType t : ts) KILN_RETURN_IF_ERROR(ExpectAttrDTypeIn(ctx, attr, t, kFeatureDTypes));
  return OkStatus();
}

template <Form kForm>
Status PrepareParse(PrepareContext& ctx) {
  auto st = std::make_shared<ParseState>();
  st->form = kForm;
  KILN_PREPARE_ASSIGN(ctx, st->sparse_types, ctx.attrs.GetTypeList("sparse_types"));
  KILN_PREPARE_ASSIGN(ctx, st->dense_types, ctx.attrs.GetTypeList("Tdense"));
  KILN_PREPARE_ASSIGN(ctx, st->dense_shapes, ctx.attrs.GetShapeList("dense_shapes"));
  KILN_RETURN_IF_ERROR(CheckTypes(ctx, "sparse_types", st->sparse_types));
  KILN_RETURN_IF_ERROR(CheckTypes(ctx, "Tdense", st->dense_types));
  if (kForm == Form::kV2) {
    KILN_PREPARE_ASSIGN(ctx, st->ragged_types, ctx.attrs.GetTypeList("ragged_value_types"));
    KILN_PREPARE_ASSIGN(ctx, st->split_types, ctx.attrs.GetTypeList("ragged_split_types"));
    KILN_RETURN_IF_ERROR(CheckTypes(ctx, "ragged_value_types", st->ragged_types));
    for (DType t : st->split_types)
      KILN_RETURN_IF_ERROR(
          ExpectAttrDTypeIn(ctx, "ragged_split_types", t, {DType::kInt32, DType::kInt64}));
    if (st->ragged_types.size() != st->split_types.size())
      return ctx.Error("attrs 'ragged_value_types' and 'ragged_split_types' differ in length");
  }
  if (kForm == Form::kSingle) {
    KILN_PREPARE_ASSIGN(ctx, st->sparse_keys, ctx.attrs.GetStringList("sparse_keys"));
    KILN_PREPARE_ASSIGN(ctx, st->dense_keys, ctx.attrs.GetStringList("dense_keys"));
  }
  st->num_sparse = static_cast<int>(st->sparse_types.size());
  st->num_dense = static_cast<int>(st->dense_types.size());
  st->num_ragged = static_cast<int>(st->ragged_types.size());
  if (st->dense_shapes.size() != st->dense_types.size())
    return ctx.Error("attr 'dense_shapes' has ", st->dense_shapes.size(), " shapes for ",
                     st->dense_types.size(), " dense features");
  const Inputs in = InputsOf(*st);
  KILN_RETURN_IF_ERROR(ctx.ExpectInputs(in.defaults + st->num_dense));
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 0, "serialized", DType::kString));
  for (int k = 1; k < in.defaults; ++k)
    KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, k, "keys", DType::kString));
  for (int d = 0; d < st->num_dense; ++d)
    KILN_RETURN_IF_ERROR(
        ExpectInputDType(ctx, in.defaults + d, "dense_defaults", st->dense_types[d]));
  const PartialShape& ser = ctx.inputs[0].shape;
  if (kForm == Form::kSingle && !ser.unknown_rank() && ser.rank() != 0)
    return ctx.Error("input 'serialized' must be a scalar, got ", ser.ToPythonString());
  if (!ser.unknown_rank() && ser.rank() > 1)
    return ctx.Error("input 'serialized' must be a scalar or a vector, got ", ser.ToPythonString());
  const int rank = ser.unknown_rank() ? -1 : ser.rank();
  const int64_t batch = rank == 1 ? ser.dim(0) : rank == 0 ? 1 : -1;
  auto with_batch = [&](std::vector<int64_t> dims) -> PartialShape {
    if (rank < 0) return PartialShape::UnknownRank();
    if (rank == 1) dims.insert(dims.begin(), batch);
    auto r = PartialShape::FromDims(dims);
    return r.ok() ? *r : PartialShape::UnknownRank();
  };
  std::vector<TensorSpec> out;
  for (int s = 0; s < st->num_sparse; ++s)
    out.push_back({DType::kInt64, rank < 0 ? PartialShape{-1, -1} : PartialShape{-1, rank + 1}});
  for (int s = 0; s < st->num_sparse; ++s) out.push_back({st->sparse_types[s], PartialShape{-1}});
  for (int s = 0; s < st->num_sparse; ++s)
    out.push_back({DType::kInt64, PartialShape{rank < 0 ? -1 : rank + 1}});
  for (int d = 0; d < st->num_dense; ++d) {
    const PartialShape& ds = st->dense_shapes[d];
    out.push_back({st->dense_types[d], ds.unknown_rank()
                                           ? PartialShape::UnknownRank()
                                           : with_batch({ds.dims().begin(), ds.dims().end()})});
  }
  for (int r = 0; r < st->num_ragged; ++r) out.push_back({st->ragged_types[r], PartialShape{-1}});
  for (int r = 0; r < st->num_ragged; ++r)
    out.push_back({st->split_types[r], PartialShape{batch < 0 ? -1 : batch + 1}});
  ctx.outputs = std::move(out);
  ctx.state = std::move(st);
  return OkStatus();
}

constexpr OpDefinition kDefs[] = {
    {"ParseExampleV2",
     "sparse_indices*num_sparse,sparse_values*sparse_types,sparse_shapes*num_sparse,"
     "dense_values*Tdense,ragged_values*ragged_value_types,ragged_row_splits*ragged_split_types",
     kOpFreshOutputs, PrepareParse<Form::kV2>},
    {"ParseExample",
     "sparse_indices*Nsparse,sparse_values*sparse_types,sparse_shapes*Nsparse,dense_values*Tdense",
     kOpFreshOutputs, PrepareParse<Form::kV1>},
    {"ParseSingleExample",
     "sparse_indices*num_sparse,sparse_values*sparse_types,sparse_shapes*num_sparse,"
     "dense_values*Tdense",
     kOpFreshOutputs, PrepareParse<Form::kSingle>},
};

}  // namespace

std::span<const OpDefinition> ParseExampleOpDefs() { return kDefs; }

}  // namespace kiln::exec
