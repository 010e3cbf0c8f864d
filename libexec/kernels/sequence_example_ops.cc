// tf.train.SequenceExample parsing, as TensorFlow's fast parser does it
// (FastParseSequenceExample in example_proto_fast_parsing.cc): ParseSequenceExampleV2 (what
// tf.io.parse_sequence_example and parse_single_sequence_example write in TF 2: keys as inputs,
// ragged features), ParseSequenceExample (TF 1: keys in attrs, a batch) and
// ParseSingleSequenceExample (TF 1: one scalar record, keys as scalar inputs).
//  - context dense: [batch] + shape; a missing feature takes its default (none: required);
//    every record's values must fill the shape;
//  - context sparse: indices (record, position), shape (batch, longest); ragged: row splits;
//  - feature-list dense: [batch, longest] + shape, each step exactly one `shape` of values,
//    shorter lists padded with 0 / ""; lengths gives each record's steps; a missing list is an
//    error unless feature_list_dense_missing_assumed_empty names it;
//  - feature-list sparse: indices (record, step, position), shape (batch, most steps, longest
//    step); ragged: values, inner splits per step and outer splits per record.
// A scalar `serialized` drops the record dim everywhere (ragged outer splits are then a 0).
// Errors are TF's, naming the key, the record (debug_name or <unknown>) and the step.
// The CPU kernels are in kernels/cpu/sequence_example_ops.cc.
#include "kernels/sequence_example_ops.h"

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "kernels/kernel_util.h"

namespace kiln::exec {
namespace {

using sequence_example::Form;
using sequence_example::Group;
using sequence_example::Inputs;
using sequence_example::InputsOf;
using sequence_example::SeqState;

constexpr DType kFeatureDTypes[] = {DType::kFloat, DType::kInt64, DType::kString};

// Every list attr of these ops defaults to empty in TF's OpDef.
Status ReadGroup(PrepareContext& ctx, Group* g, const char* types, const char* splits,
                 const char* shapes, const char* keys) {
  if (ctx.attrs.Has(types)) {
    KILN_PREPARE_ASSIGN(ctx, g->types, ctx.attrs.GetTypeList(types));
  }
  for (DType t : g->types) KILN_RETURN_IF_ERROR(ExpectAttrDTypeIn(ctx, types, t, kFeatureDTypes));
  if (splits) {
    if (ctx.attrs.Has(splits)) {
      KILN_PREPARE_ASSIGN(ctx, g->split_types, ctx.attrs.GetTypeList(splits));
    }
    for (DType t : g->split_types)
      KILN_RETURN_IF_ERROR(ExpectAttrDTypeIn(ctx, splits, t, {DType::kInt32, DType::kInt64}));
    if (g->split_types.size() != g->types.size())
      return ctx.Error("attrs '", types, "' and '", splits, "' differ in length");
  }
  if (shapes) {
    if (ctx.attrs.Has(shapes)) {
      KILN_PREPARE_ASSIGN(ctx, g->shapes, ctx.attrs.GetShapeList(shapes));
    }
    if (g->shapes.size() != g->types.size())
      return ctx.Error("attr '", shapes, "' has ", g->shapes.size(), " shapes for ",
                       g->types.size(), " features");
    for (const PartialShape& s : g->shapes)
      if (!s.IsFullyDefined())
        return ctx.Error("attr '", shapes, "': shapes must be fully defined, got ",
                         s.ToPythonString());
  }
  if (keys) {
    if (ctx.attrs.Has(keys)) {
      KILN_PREPARE_ASSIGN(ctx, g->keys, ctx.attrs.GetStringList(keys));
    }
    if (g->keys.size() != g->types.size())
      return ctx.Error("attr '", keys, "' has ", g->keys.size(), " keys for ", g->types.size(),
                       " features");
  }
  return OkStatus();
}

template <Form kForm>
Status PrepareSequence(PrepareContext& ctx) {
  auto st = std::make_shared<SeqState>();
  st->form = kForm;
  const bool v1 = kForm == Form::kV1;
  KILN_RETURN_IF_ERROR(ReadGroup(ctx, &st->cs, "context_sparse_types", nullptr, nullptr,
                                 v1 ? "context_sparse_keys" : nullptr));
  KILN_RETURN_IF_ERROR(ReadGroup(ctx, &st->cd, "Tcontext_dense", nullptr, "context_dense_shapes",
                                 v1 ? "context_dense_keys" : nullptr));
  KILN_RETURN_IF_ERROR(ReadGroup(ctx, &st->fs, "feature_list_sparse_types", nullptr, nullptr,
                                 v1 ? "feature_list_sparse_keys" : nullptr));
  KILN_RETURN_IF_ERROR(ReadGroup(ctx, &st->fd, "feature_list_dense_types", nullptr,
                                 "feature_list_dense_shapes",
                                 v1 ? "feature_list_dense_keys" : nullptr));
  if (kForm == Form::kV2) {
    KILN_RETURN_IF_ERROR(ReadGroup(ctx, &st->cr, "context_ragged_value_types",
                                   "context_ragged_split_types", nullptr, nullptr));
    KILN_RETURN_IF_ERROR(ReadGroup(ctx, &st->fr, "feature_list_ragged_value_types",
                                   "feature_list_ragged_split_types", nullptr, nullptr));
  }
  if (v1 && ctx.attrs.Has("feature_list_dense_missing_assumed_empty")) {
    KILN_PREPARE_ASSIGN(ctx, st->missing_ok,
                        ctx.attrs.GetStringList("feature_list_dense_missing_assumed_empty"));
  }
  const Inputs in = InputsOf(*st);
  const int n_inputs = kForm == Form::kSingle ? in.debug_name + 1 : in.defaults + st->cd.size();
  KILN_RETURN_IF_ERROR(ctx.ExpectInputs(n_inputs));
  for (int i = 0; i < n_inputs; ++i) {
    if (i >= in.defaults && i < in.defaults + st->cd.size()) {
      const int d = i - in.defaults;
      KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, i, "context_dense_defaults", st->cd.types[d]));
    } else if (i == in.missing && kForm == Form::kV2) {
      KILN_RETURN_IF_ERROR(
          ExpectInputDType(ctx, i, "feature_list_dense_missing_assumed_empty", DType::kBool));
    } else {
      KILN_RETURN_IF_ERROR(
          ExpectInputDType(ctx, i, i == 0 ? "serialized" : "keys or debug_name", DType::kString));
    }
  }
  const PartialShape& ser = ctx.inputs[0].shape;
  if (kForm == Form::kSingle && !ser.unknown_rank() && ser.rank() != 0)
    return ctx.Error("input 'serialized' must be a scalar, got ", ser.ToPythonString());
  if (!ser.unknown_rank() && ser.rank() > 1)
    return ctx.Error("input 'serialized' must be a scalar or a vector, got ", ser.ToPythonString());
  const int rank = ser.unknown_rank() ? -1 : ser.rank();
  const int64_t batch = rank == 1 ? ser.dim(0) : -1;
  // [batch] + dims when serialized is a vector; dims alone for a scalar.
  auto batched = [&](std::vector<int64_t> dims) -> PartialShape {
    if (rank < 0) return PartialShape::UnknownRank();
    if (rank == 1) dims.insert(dims.begin(), batch);
    auto r = PartialShape::FromDims(dims);
    return r.ok() ? *r : PartialShape::UnknownRank();
  };
  auto index_shape = [&](int extra) {
    return rank < 0 ? PartialShape{-1, -1} : PartialShape{-1, rank + extra};
  };
  auto shape_shape = [&](int extra) {
    return rank < 0 ? PartialShape{-1} : PartialShape{rank + extra};
  };
  std::vector<TensorSpec> out;
  auto sparse = [&](const Group& g, int extra) {
    for (int s = 0; s < g.size(); ++s) out.push_back({DType::kInt64, index_shape(extra)});
    for (int s = 0; s < g.size(); ++s) out.push_back({g.types[s], PartialShape{-1}});
    for (int s = 0; s < g.size(); ++s) out.push_back({DType::kInt64, shape_shape(extra)});
  };
  auto splits = [&](const Group& g) {
    for (int r = 0; r < g.size(); ++r)
      out.push_back({g.split_types[r], rank == 1   ? PartialShape{batch < 0 ? -1 : batch + 1}
                                       : rank == 0 ? PartialShape::Scalar()
                                                   : PartialShape::UnknownRank()});
  };
  sparse(st->cs, 1);
  for (int d = 0; d < st->cd.size(); ++d) {
    const auto dims = st->cd.shapes[d].dims();
    out.push_back({st->cd.types[d], batched({dims.begin(), dims.end()})});
  }
  if (kForm == Form::kV2) {
    for (int r = 0; r < st->cr.size(); ++r) out.push_back({st->cr.types[r], PartialShape{-1}});
    splits(st->cr);
  }
  sparse(st->fs, 2);
  for (int d = 0; d < st->fd.size(); ++d) {
    std::vector<int64_t> dims = {-1};
    for (int64_t x : st->fd.shapes[d].dims()) dims.push_back(x);
    out.push_back({st->fd.types[d], batched(dims)});
  }
  if (kForm != Form::kSingle)
    for (int d = 0; d < st->fd.size(); ++d) out.push_back({DType::kInt64, batched({})});
  if (kForm == Form::kV2) {
    for (int r = 0; r < st->fr.size(); ++r) out.push_back({st->fr.types[r], PartialShape{-1}});
    splits(st->fr);
    for (int r = 0; r < st->fr.size(); ++r)
      out.push_back({st->fr.split_types[r], PartialShape{-1}});
  }
  ctx.outputs = std::move(out);
  ctx.state = std::move(st);
  return OkStatus();
}

constexpr OpDefinition kDefs[] = {
    {"ParseSequenceExampleV2",
     "context_sparse_indices*Ncontext_sparse,context_sparse_values*context_sparse_types,"
     "context_sparse_shapes*Ncontext_sparse,context_dense_values*Tcontext_dense,"
     "context_ragged_values*context_ragged_value_types,"
     "context_ragged_row_splits*context_ragged_split_types,"
     "feature_list_sparse_indices*Nfeature_list_sparse,"
     "feature_list_sparse_values*feature_list_sparse_types,"
     "feature_list_sparse_shapes*Nfeature_list_sparse,"
     "feature_list_dense_values*feature_list_dense_types,"
     "feature_list_dense_lengths*Nfeature_list_dense,"
     "feature_list_ragged_values*feature_list_ragged_value_types,"
     "feature_list_ragged_outer_splits*feature_list_ragged_split_types,"
     "feature_list_ragged_inner_splits*feature_list_ragged_split_types",
     kOpFreshOutputs, PrepareSequence<Form::kV2>},
    {"ParseSequenceExample",
     "context_sparse_indices*Ncontext_sparse,context_sparse_values*context_sparse_types,"
     "context_sparse_shapes*Ncontext_sparse,context_dense_values*Tcontext_dense,"
     "feature_list_sparse_indices*Nfeature_list_sparse,"
     "feature_list_sparse_values*feature_list_sparse_types,"
     "feature_list_sparse_shapes*Nfeature_list_sparse,"
     "feature_list_dense_values*feature_list_dense_types,"
     "feature_list_dense_lengths*Nfeature_list_dense",
     kOpFreshOutputs, PrepareSequence<Form::kV1>},
    {"ParseSingleSequenceExample",
     "context_sparse_indices*Ncontext_sparse,context_sparse_values*context_sparse_types,"
     "context_sparse_shapes*Ncontext_sparse,context_dense_values*Tcontext_dense,"
     "feature_list_sparse_indices*Nfeature_list_sparse,"
     "feature_list_sparse_values*feature_list_sparse_types,"
     "feature_list_sparse_shapes*Nfeature_list_sparse,"
     "feature_list_dense_values*feature_list_dense_types",
     kOpFreshOutputs, PrepareSequence<Form::kSingle>},
};

}  // namespace

std::span<const OpDefinition> SequenceExampleOpDefs() { return kDefs; }

}  // namespace kiln::exec
