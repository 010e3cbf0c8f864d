// Ragged tensor ops: RaggedRange (a ragged tensor of ranges), RaggedGather (rows of a ragged
// tensor by index), RaggedTensorToSparse and RaggedTensorToTensor (to the sparse and padded
// dense forms). The CPU kernels are in kernels/cpu/ragged_ops.cc.
#include "kernels/ragged_ops.h"

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "kernels/array_util.h"
#include "kernels/kernel_util.h"

namespace kiln::exec {
namespace {

using ragged::GatherState;
using ragged::Partition;
using ragged::RangeTypes;
using ragged::ToTensorState;

Result<DType> SplitsDType(const PrepareContext& ctx) {
  KILN_PREPARE_ASSIGN(ctx, DType t, ctx.attrs.GetType("Tsplits", DType::kInt64));
  KILN_RETURN_IF_ERROR(ExpectAttrDTypeIn(ctx, "Tsplits", t, {DType::kInt32, DType::kInt64}));
  return t;
}

// A ragged-rank attr (`name`) at least `min`, and that many splits inputs from `first`.
Result<int> RaggedRankAttr(const PrepareContext& ctx, std::string_view name, int64_t min, int first,
                           DType splits) {
  KILN_PREPARE_ASSIGN(ctx, int64_t r, ctx.attrs.GetInt(name));
  if (r < min || r > kMaxRank) {
    return ctx.Error("attr '", name, "' must be in [", min, ", ", kMaxRank, "], got ", r);
  }
  for (int k = 0; k < r; ++k) {
    const int i = first + k;
    if (i >= static_cast<int>(ctx.inputs.size())) {
      return ctx.Error("expected ", r, " splits inputs (attr '", name, "'), got fewer inputs");
    }
    KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, i, internal::StrCat("splits:", k), splits));
    KILN_RETURN_IF_ERROR(ExpectInputRank(ctx, i, internal::StrCat("splits:", k), 1));
  }
  return static_cast<int>(r);
}

// Output specs of a ragged result: `n` splits vectors then values of [?] + inner dims.
void RaggedOutputs(PrepareContext& ctx, int n, DType splits, DType values,
                   const PartialShape& values_in) {
  ctx.outputs.assign(n, TensorSpec{splits, PartialShape{-1}});
  PartialShape v;
  if (!values_in.unknown_rank() && values_in.rank() >= 1) {
    std::vector<int64_t> dims(values_in.dims().begin(), values_in.dims().end());
    dims[0] = -1;
    v = *PartialShape::FromDims(dims);
  }
  ctx.outputs.push_back(TensorSpec{values, v});
}

// ---- RaggedRange -----------------------------------------------------------------------------

Status PrepareRaggedRange(PrepareContext& ctx) {
  KILN_RETURN_IF_ERROR(ctx.ExpectInputs(3));
  KILN_PREPARE_ASSIGN(ctx, DType t, ctx.attrs.GetType("T", DType::kInt32));
  KILN_RETURN_IF_ERROR(ExpectAttrDTypeIn(ctx, "T", t, RangeTypes::kDTypes));
  KILN_ASSIGN_OR_RETURN(DType splits, SplitsDType(ctx));
  const char* names[] = {"starts", "limits", "deltas"};
  for (int i = 0; i < 3; ++i) {
    KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, i, names[i], t));
    const PartialShape& s = ctx.inputs[i].shape;
    if (!s.unknown_rank() && s.rank() > 1) {
      return ctx.Error("input '", names[i], "' must be a scalar or vector, got ",
                       s.ToPythonString());
    }
  }
  ctx.outputs = {TensorSpec{splits, PartialShape{-1}}, TensorSpec{t, PartialShape{-1}}};
  return OkStatus();
}

// ---- RaggedGather ----------------------------------------------------------------------------

Status PrepareRaggedGather(PrepareContext& ctx) {
  KILN_ASSIGN_OR_RETURN(DType splits, SplitsDType(ctx));
  auto state = std::make_shared<GatherState>();
  KILN_ASSIGN_OR_RETURN(state->params_ragged_rank,
                        RaggedRankAttr(ctx, "PARAMS_RAGGED_RANK", 1, 0, splits));
  const int p = state->params_ragged_rank;
  KILN_RETURN_IF_ERROR(ctx.ExpectInputs(p + 2));
  KILN_ASSIGN_OR_RETURN(DType t, ValueDType(ctx, p, "params_dense_values", "Tvalues"));
  KILN_RETURN_IF_ERROR(IndexInputDType(ctx, p + 1, "indices", "Tindices").status());
  KILN_PREPARE_ASSIGN(ctx, int64_t out_rank, ctx.attrs.GetInt("OUTPUT_RAGGED_RANK"));
  if (out_rank < 0 || out_rank > kMaxRank) {
    return ctx.Error("attr 'OUTPUT_RAGGED_RANK' must be in [0, ", kMaxRank, "], got ", out_rank);
  }
  const PartialShape& values = ctx.inputs[p].shape;
  if (!values.unknown_rank() && values.rank() == 0) {
    return ctx.Error("input 'params_dense_values' must have rank at least 1, got a scalar");
  }
  const PartialShape& indices = ctx.inputs[p + 1].shape;
  if (!indices.unknown_rank() && out_rank != indices.rank() - 1 + p) {
    return ctx.Error("attr 'OUTPUT_RAGGED_RANK' is ", out_rank, " but must be indices.rank - 1 + ",
                     "PARAMS_RAGGED_RANK = ", indices.rank() - 1 + p);
  }
  RaggedOutputs(ctx, static_cast<int>(out_rank), splits, t, values);
  ctx.state = std::move(state);
  return OkStatus();
}

// ---- RaggedTensorToSparse --------------------------------------------------------------------

Status PrepareToSparse(PrepareContext& ctx) {
  KILN_ASSIGN_OR_RETURN(DType splits, SplitsDType(ctx));
  KILN_ASSIGN_OR_RETURN(int r, RaggedRankAttr(ctx, "RAGGED_RANK", 1, 0, splits));
  KILN_RETURN_IF_ERROR(ctx.ExpectInputs(r + 1));
  KILN_ASSIGN_OR_RETURN(DType t, ValueDType(ctx, r, "rt_dense_values"));
  const PartialShape& values = ctx.inputs[r].shape;
  if (!values.unknown_rank() && values.rank() == 0) {
    return ctx.Error("input 'rt_dense_values' must have rank at least 1, got a scalar");
  }
  const int64_t dense_rank = values.unknown_rank() ? -1 : values.rank() + r;
  ctx.outputs = {TensorSpec{DType::kInt64, PartialShape{-1, dense_rank}},
                 TensorSpec{t, PartialShape{-1}},
                 TensorSpec{DType::kInt64, PartialShape{dense_rank}}};
  return OkStatus();
}

// ---- RaggedTensorToTensor --------------------------------------------------------------------

Status PrepareToTensor(PrepareContext& ctx) {
  auto state = std::make_shared<ToTensorState>();
  KILN_PREPARE_ASSIGN(ctx, std::vector<std::string> names,
                      ctx.attrs.GetStringList("row_partition_types"));
  KILN_PREPARE_ASSIGN(ctx, int64_t n, ctx.attrs.GetInt("num_row_partition_tensors"));
  if (names.empty()) return ctx.Error("attr 'row_partition_types' must not be empty");
  if (n != static_cast<int64_t>(names.size())) {
    return ctx.Error("attr 'num_row_partition_tensors' (", n,
                     ") does not equal the number of row_partition_types (", names.size(), ")");
  }
  for (size_t i = 0; i < names.size(); ++i) {
    Partition p;
    if (names[i] == "FIRST_DIM_SIZE") {
      p = Partition::kFirstDimSize;
    } else if (names[i] == "VALUE_ROWIDS") {
      p = Partition::kValueRowIds;
    } else if (names[i] == "ROW_SPLITS") {
      p = Partition::kRowSplits;
    } else {
      return ctx.Error("attr 'row_partition_types'[", i, "] = \"", names[i],
                       "\" is not supported (FIRST_DIM_SIZE, VALUE_ROWIDS or ROW_SPLITS)");
    }
    if (p == Partition::kFirstDimSize && i != 0) {
      return ctx.Error("FIRST_DIM_SIZE must be the first row partition type");
    }
    state->types.push_back(p);
  }
  if (state->types[0] == Partition::kValueRowIds) {
    return ctx.Error("VALUE_ROWIDS cannot be the first row partition type");
  }
  if (state->types[0] == Partition::kFirstDimSize &&
      (state->types.size() < 2 || state->types[1] != Partition::kValueRowIds)) {
    return ctx.Error("FIRST_DIM_SIZE must be followed by VALUE_ROWIDS");
  }
  const int ragged_rank =
      static_cast<int>(n) - (state->types[0] == Partition::kFirstDimSize ? 1 : 0);
  KILN_RETURN_IF_ERROR(ctx.ExpectInputs(3 + static_cast<int>(n)));
  KILN_RETURN_IF_ERROR(IndexInputDType(ctx, 0, "shape", "Tshape").status());
  KILN_ASSIGN_OR_RETURN(DType t, ValueDType(ctx, 1, "values"));
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 2, "default_value", t));
  KILN_PREPARE_ASSIGN(ctx, DType tindex, ctx.attrs.GetType("Tindex"));
  KILN_RETURN_IF_ERROR(ExpectAttrDTypeIn(ctx, "Tindex", tindex, {DType::kInt32, DType::kInt64}));
  for (int i = 0; i < n; ++i) {
    const std::string name = internal::StrCat("row_partition_tensors:", i);
    KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 3 + i, name, tindex));
    KILN_RETURN_IF_ERROR(
        ExpectInputRank(ctx, 3 + i, name, state->types[i] == Partition::kFirstDimSize ? 0 : 1));
  }
  const PartialShape& values = ctx.inputs[1].shape;
  if (!values.unknown_rank() && values.rank() == 0) {
    return ctx.Error("input 'values' must have rank at least 1, got a scalar");
  }
  PartialShape out;
  if (!values.unknown_rank()) {
    std::vector<int64_t> dims(1 + ragged_rank, -1);
    dims.insert(dims.end(), values.dims().begin() + 1, values.dims().end());
    if (dims.size() > static_cast<size_t>(kMaxRank)) return ctx.Error("result rank too large");
    if (const Tensor* s = ConstantInput(ctx, 0); s != nullptr && s->rank() == 1) {
      std::vector<int64_t> want = IndexValues(*s);
      if (want.size() != dims.size()) {
        return ctx.Error("input 'shape' ", DimsString(want), " must have rank ", dims.size());
      }
      for (size_t d = 0; d < dims.size(); ++d) {
        if (want[d] < -1) return ctx.Error("input 'shape' ", DimsString(want), " is invalid");
        if (d > static_cast<size_t>(ragged_rank) && want[d] >= 0 && dims[d] >= 0 &&
            want[d] != dims[d]) {
          return ctx.Error("rt_input.shape and shape=", DimsString(want),
                           " are incompatible: rt_input.shape[", d, "] = ", dims[d], " but shape[",
                           d, "] = ", want[d]);
        }
        if (want[d] >= 0) dims[d] = want[d];
      }
    }
    out = *PartialShape::FromDims(dims);
  }
  ctx.outputs = {TensorSpec{t, out}};
  ctx.state = std::move(state);
  return OkStatus();
}

// ---- tables ----------------------------------------------------------------------------------

constexpr OpDefinition kDefs[] = {
    {"RaggedRange", "rt_nested_splits,rt_dense_values", kOpFreshOutputs, PrepareRaggedRange},
    {"RaggedGather", "output_nested_splits*OUTPUT_RAGGED_RANK,output_dense_values", kOpFreshOutputs,
     PrepareRaggedGather},
    {"RaggedTensorToSparse", "sparse_indices,sparse_values,sparse_dense_shape", kOpFreshOutputs,
     PrepareToSparse},
    {"RaggedTensorToTensor", "result", kOpFreshOutputs, PrepareToTensor},
};

}  // namespace

std::span<const OpDefinition> RaggedOpDefs() { return kDefs; }

}  // namespace kiln::exec
