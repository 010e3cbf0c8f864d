// Ragged tensors packed into variant tensors and back, as tf.map_fn and tf.data move ragged
// values: RaggedTensorToVariant (the whole tensor, or each row of it, as one variant element)
// and RaggedTensorFromVariant (a tensor of such elements stacked back into one ragged tensor).
#include <algorithm>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "kernels/array_util.h"
#include "kernels/ragged_util.h"

namespace kiln::exec {
namespace {

using VariantPtr = std::shared_ptr<const VariantBase>;

Result<DType> SplitsDType(const PrepareContext& ctx) {
  KILN_PREPARE_ASSIGN(ctx, DType t, ctx.attrs.GetType("Tsplits", DType::kInt64));
  KILN_RETURN_IF_ERROR(ExpectAttrDTypeIn(ctx, "Tsplits", t, {DType::kInt32, DType::kInt64}));
  return t;
}

// Rows [begin, end) of `values` as a new tensor.
Tensor ValueRows(const Tensor& values, int64_t begin, int64_t end) {
  Shape shape = values.shape();
  shape.set_dim(0, end - begin);
  Tensor out(values.dtype(), shape);
  const int64_t row = values.dim(0) == 0 ? 0 : values.NumElements() / values.dim(0);
  Status s = DispatchStorage(values.dtype(), [&](auto tag) {
    using U = typename decltype(tag)::type;
    std::copy(Elems<U>(values) + begin * row, Elems<U>(values) + end * row, Elems<U>(out));
    return OkStatus();
  });
  (void)s;  // every dtype has a storage type
  return out;
}

// ---- RaggedTensorToVariant -------------------------------------------------------------------

struct ToVariantState : OpState {
  int ragged_rank = 0;
  bool batched = false;
  DType splits = DType::kInt64;
};

Status PrepareToVariant(PrepareContext& ctx) {
  auto state = std::make_shared<ToVariantState>();
  KILN_ASSIGN_OR_RETURN(state->splits, SplitsDType(ctx));
  KILN_PREPARE_ASSIGN(ctx, int64_t r, ctx.attrs.GetInt("RAGGED_RANK"));
  if (r < 0 || r > kMaxRank) return ctx.Error("attr 'RAGGED_RANK' must be in [0, 8], got ", r);
  state->ragged_rank = static_cast<int>(r);
  if (!ctx.attrs.Has("batched_input")) return ctx.Error("attr 'batched_input' is missing");
  KILN_PREPARE_ASSIGN(ctx, state->batched, ctx.attrs.GetBool("batched_input", false));
  KILN_RETURN_IF_ERROR(ctx.ExpectInputs(state->ragged_rank + 1));
  for (int k = 0; k < state->ragged_rank; ++k) {
    KILN_RETURN_IF_ERROR(
        ExpectInputDType(ctx, k, internal::StrCat("rt_nested_splits:", k), state->splits));
    KILN_RETURN_IF_ERROR(ExpectInputRank(ctx, k, internal::StrCat("rt_nested_splits:", k), 1));
  }
  KILN_RETURN_IF_ERROR(ValueDType(ctx, state->ragged_rank, "rt_dense_values", "Tvalues").status());
  if (state->batched && state->ragged_rank == 0) {
    return ctx.Error("ragged_rank=0 is not supported when batched_input=true");
  }
  const PartialShape& values = ctx.inputs[state->ragged_rank].shape;
  if (!values.unknown_rank() && values.rank() == 0) {
    return ctx.Error("input 'rt_dense_values' must have rank at least 1, got a scalar");
  }
  PartialShape out = PartialShape::Scalar();
  if (state->batched) {
    const int64_t n = KnownLength(ctx.inputs[0].shape);
    out = PartialShape{n < 0 ? -1 : n - 1};
  }
  ctx.outputs = {TensorSpec{DType::kVariant, out}};
  ctx.state = std::move(state);
  return OkStatus();
}

Status ComputeToVariant(const KernelContext& ctx) {
  const auto& st = ctx.state<ToVariantState>();
  const int r = st.ragged_rank;
  const Tensor& values = ctx.input(r);
  if (values.rank() == 0) return ctx.Error("rt_dense_values must have rank at least 1");
  const std::vector<Splits> splits = ReadSplits(ctx, 0, r);
  Status valid = ValidateNestedSplits(splits, values.dim(0), "rt_nested_splits");
  if (!valid.ok()) return Wrap(ctx, valid);
  if (!st.batched) {
    std::vector<Tensor> s;
    for (int k = 0; k < r; ++k) s.push_back(ctx.input(k));
    KILN_ASSIGN_OR_RETURN(Tensor * out, ctx.AllocateOutput(0, Shape()));
    out->scalar<VariantPtr>() = std::make_shared<const RaggedVariant>(std::move(s), values);
    return OkStatus();
  }
  // One element per row of the outer dim: its nested splits rebased to start at 0.
  const int64_t rows = static_cast<int64_t>(splits[0].size()) - 1;
  KILN_ASSIGN_OR_RETURN(Tensor * out, ctx.AllocateOutput(0, Shape{rows}));
  for (int64_t row = 0; row < rows; ++row) {
    int64_t begin = splits[0][row], end = splits[0][row + 1];
    std::vector<Tensor> s;
    for (int k = 1; k < r; ++k) {
      Splits sub(splits[k].begin() + begin, splits[k].begin() + end + 1);
      for (int64_t& x : sub) x -= splits[k][begin];
      s.push_back(SplitsTensor(st.splits, sub));
      begin = splits[k][begin];
      end = splits[k][end];
    }
    out->data<VariantPtr>()[row] =
        std::make_shared<const RaggedVariant>(std::move(s), ValueRows(values, begin, end));
  }
  return OkStatus();
}

// ---- RaggedTensorFromVariant -----------------------------------------------------------------

struct FromVariantState : OpState {
  int64_t input_ragged_rank = -1;
  int output_ragged_rank = 0;
  DType values = DType::kInvalid;
  DType splits = DType::kInt64;
};

Status PrepareFromVariant(PrepareContext& ctx) {
  auto state = std::make_shared<FromVariantState>();
  KILN_RETURN_IF_ERROR(ctx.ExpectInputs(1));
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 0, "encoded_ragged", DType::kVariant));
  KILN_ASSIGN_OR_RETURN(state->splits, SplitsDType(ctx));
  KILN_PREPARE_ASSIGN(ctx, state->values, ctx.attrs.GetType("Tvalues"));
  KILN_PREPARE_ASSIGN(ctx, state->input_ragged_rank, ctx.attrs.GetInt("input_ragged_rank"));
  KILN_PREPARE_ASSIGN(ctx, int64_t out_rank, ctx.attrs.GetInt("output_ragged_rank"));
  if (out_rank < 0 || out_rank > kMaxRank) {
    return ctx.Error("attr 'output_ragged_rank' must be in [0, ", kMaxRank, "], got ", out_rank);
  }
  if (state->input_ragged_rank < -1 || state->input_ragged_rank > out_rank) {
    return ctx.Error("attr 'input_ragged_rank' must be in [-1, output_ragged_rank], got ",
                     state->input_ragged_rank);
  }
  state->output_ragged_rank = static_cast<int>(out_rank);
  const PartialShape& in = ctx.inputs[0].shape;
  if (!in.unknown_rank() && state->input_ragged_rank >= 0 &&
      in.rank() != out_rank - state->input_ragged_rank) {
    return ctx.Error("input 'encoded_ragged' must have rank output_ragged_rank - ",
                     "input_ragged_rank = ", out_rank - state->input_ragged_rank, ", got ",
                     in.ToPythonString());
  }
  ctx.outputs.assign(out_rank, TensorSpec{state->splits, PartialShape{-1}});
  ctx.outputs.push_back(TensorSpec{state->values, PartialShape::UnknownRank()});
  ctx.state = std::move(state);
  return OkStatus();
}

Status ComputeFromVariant(const KernelContext& ctx) {
  const auto& st = ctx.state<FromVariantState>();
  const Tensor& encoded = ctx.input(0);
  const int outer = encoded.rank();
  const int64_t in_rank =
      st.input_ragged_rank >= 0 ? st.input_ragged_rank : st.output_ragged_rank - outer;
  if (in_rank < 0 || in_rank + outer != st.output_ragged_rank) {
    return ctx.Error("encoded_ragged has rank ", outer, ", which does not fit ",
                     "output_ragged_rank ", st.output_ragged_rank, " and input_ragged_rank ",
                     st.input_ragged_rank);
  }
  // Decode and check every element.
  const int64_t n = encoded.NumElements();
  std::vector<const RaggedVariant*> parts(n);
  std::vector<std::vector<Splits>> part_splits(n);
  for (int64_t i = 0; i < n; ++i) {
    const VariantPtr& v = encoded.data<VariantPtr>()[i];
    const auto* rv = dynamic_cast<const RaggedVariant*>(v.get());
    if (rv == nullptr) {
      return ctx.Error("encoded_ragged[", i, "] does not hold a ragged tensor (",
                       v ? v->TypeName() : std::string("empty"), ")");
    }
    if (rv->values().dtype() != st.values) {
      return ctx.Error("encoded_ragged[", i, "] holds ", DTypeShortName(rv->values().dtype()),
                       " values, expected ", DTypeShortName(st.values), " (attr 'Tvalues')");
    }
    if (rv->ragged_rank() != in_rank) {
      return ctx.Error("encoded_ragged[", i, "] has ragged rank ", rv->ragged_rank(), ", expected ",
                       in_rank, " (input_ragged_rank)");
    }
    for (const Tensor& s : rv->splits()) {
      if (s.dtype() != st.splits) {
        return ctx.Error("encoded_ragged[", i, "] has ", DTypeShortName(s.dtype()),
                         " splits, expected ", DTypeShortName(st.splits), " (attr 'Tsplits')");
      }
      part_splits[i].push_back(IndexValues(s));
    }
    if (rv->values().rank() == 0) {
      return ctx.Error("encoded_ragged[", i, "] holds scalar values");
    }
    Status valid = ValidateNestedSplits(part_splits[i], rv->values().dim(0), "encoded splits");
    if (!valid.ok()) return Wrap(ctx, valid);
    if (i > 0) {
      const Shape& a = parts[0]->values().shape();
      const Shape& b = rv->values().shape();
      bool same = a.rank() == b.rank();
      for (int d = 1; same && d < a.rank(); ++d) same = a.dim(d) == b.dim(d);
      if (!same) {
        return ctx.Error("encoded_ragged elements have values of shapes ", a.ToString(), " and ",
                         b.ToString(), ", which differ beyond the first dim");
      }
    }
    parts[i] = rv;
  }
  int out = 0;
  if (outer == 0) {  // a single ragged tensor: its own splits and values
    for (const Splits& s : part_splits[0]) KILN_RETURN_IF_ERROR(WriteSplitsOutput(ctx, out++, s));
    ctx.SetOutput(out, parts[0]->values());
    return OkStatus();
  }
  // The encoded tensor's own dims: uniform splits for all but its last, whose rows are the
  // elements (each as long as its outer dim).
  int64_t count = 1;
  for (int d = 0; d + 1 < outer; ++d) {
    count *= encoded.dim(d);
    const int64_t len = encoded.dim(d + 1);
    Splits s(count + 1);
    for (int64_t i = 0; i <= count; ++i) s[i] = i * len;
    KILN_RETURN_IF_ERROR(WriteSplitsOutput(ctx, out++, s));
  }
  Splits rows = {0};
  for (int64_t i = 0; i < n; ++i) {
    const int64_t len = in_rank > 0 ? static_cast<int64_t>(part_splits[i][0].size()) - 1
                                    : parts[i]->values().dim(0);
    rows.push_back(rows.back() + len);
  }
  KILN_RETURN_IF_ERROR(WriteSplitsOutput(ctx, out++, rows));
  // The elements' own levels, concatenated and rebased.
  for (int64_t k = 0; k < in_rank; ++k) {
    Splits s = {0};
    for (int64_t i = 0; i < n; ++i) {
      const Splits& p = part_splits[i][k];
      const int64_t base = s.back();
      for (size_t j = 1; j < p.size(); ++j) s.push_back(base + p[j]);
    }
    KILN_RETURN_IF_ERROR(WriteSplitsOutput(ctx, out++, s));
  }
  // Values: every element's values, one after another.
  Shape shape;
  int64_t total = 0;
  for (int64_t i = 0; i < n; ++i) total += parts[i]->values().dim(0);
  shape.AddDim(total);
  if (n > 0) {
    for (int d = 1; d < parts[0]->values().rank(); ++d) shape.AddDim(parts[0]->values().dim(d));
  }
  KILN_ASSIGN_OR_RETURN(Tensor * values, ctx.AllocateOutput(out, shape));
  return DispatchStorage(st.values, [&](auto tag) {
    using U = typename decltype(tag)::type;
    U* dst = Elems<U>(*values);
    for (int64_t i = 0; i < n; ++i) {
      const Tensor& v = parts[i]->values();
      dst = std::copy(Elems<U>(v), Elems<U>(v) + v.NumElements(), dst);
    }
    return OkStatus();
  });
}

// ---- tables ----------------------------------------------------------------------------------

constexpr OpDefinition kDefs[] = {
    {"RaggedTensorToVariant", "encoded_ragged", kOpFreshOutputs, PrepareToVariant},
    // Not fresh: a single encoded element's values pass through as they are.
    {"RaggedTensorFromVariant", "output_nested_splits*output_ragged_rank,output_dense_values",
     kOpNone, PrepareFromVariant},
};

constexpr KernelEntry kCpu[] = {
    {"RaggedTensorToVariant", ComputeToVariant},
    {"RaggedTensorFromVariant", ComputeFromVariant},
};

}  // namespace

std::span<const OpDefinition> RaggedVariantOpDefs() { return kDefs; }
std::span<const KernelEntry> RaggedVariantCpuKernels() { return kCpu; }

}  // namespace kiln::exec
