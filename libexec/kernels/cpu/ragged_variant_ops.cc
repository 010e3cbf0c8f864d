// The CPU kernels of the ragged and composite variant ops in kernels/ragged_variant_ops.cc.
#include "kernels/ragged_variant_ops.h"

#include <algorithm>
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "kernels/array_util.h"
#include "kernels/composite_tensor_variant.h"
#include "kernels/kernel_util.h"
#include "kernels/ragged_util.h"

namespace kiln::exec {
namespace {

using ragged_variant::CompositeState;
using ragged_variant::FromVariantState;
using ragged_variant::ToVariantState;

using VariantPtr = std::shared_ptr<const VariantBase>;

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

// ---- CompositeTensorVariantFromComponents, CompositeTensorVariantToComponents ----------------

const CompositeState& StateOf(const KernelContext& ctx) { return ctx.state<CompositeState>(); }

// ---- CompositeTensorVariantFromComponents ----------------------------------------------------

Status ComputeFromComponents(const KernelContext& ctx) {
  const CompositeState& st = StateOf(ctx);
  std::vector<Tensor> components;
  components.reserve(static_cast<size_t>(ctx.num_inputs()));
  for (int i = 0; i < ctx.num_inputs(); ++i) components.push_back(ctx.input(i));
  Tensor out(DType::kVariant, Shape());
  out.scalar<std::shared_ptr<const VariantBase>>() = std::make_shared<const CompositeTensorVariant>(
      st.metadata, st.type_spec_class, std::move(components));
  ctx.SetOutput(0, std::move(out));
  return OkStatus();
}

// ---- CompositeTensorVariantToComponents ------------------------------------------------------

Status ComputeToComponents(const KernelContext& ctx) {
  const CompositeState& st = StateOf(ctx);
  const Tensor& t = ctx.input(0);
  if (t.NumElements() == 0)
    return ctx.Error("Input `encoded` must not be an empty variant tensor, but got ",
                     t.DebugString());
  const auto& v = t.data<std::shared_ptr<const VariantBase>>()[0];
  const auto* encoded = dynamic_cast<const CompositeTensorVariant*>(v.get());
  if (encoded == nullptr)
    return ctx.Error("The input `encoded` is not a valid CompositeTensorVariant tensor, got ",
                     t.DebugString());
  if (encoded->type_spec_class() != st.type_spec_class)
    return ctx.Error("Expected a ", TypeSpecClassName(st.type_spec_class),
                     " (based on `type_spec`), but `encoded` contains a ",
                     TypeSpecClassName(encoded->type_spec_class()));
  const std::vector<Tensor>& components = encoded->components();
  if (components.size() != st.components.size())
    return ctx.Error("Encoded value has ", components.size(), " tensor components; expected ",
                     st.components.size(), " components based on type_spec");
  for (size_t i = 0; i < components.size(); ++i) {
    if (components[i].dtype() != st.components[i])
      return ctx.Error("Tensor component ", i, " had dtype ", DTypeShortName(components[i].dtype()),
                       "; expected dtype ", DTypeShortName(st.components[i]));
    ctx.SetOutput(static_cast<int>(i), components[i]);
  }
  return OkStatus();
}

// ---- tables ----------------------------------------------------------------------------------

constexpr KernelEntry kCpu[] = {
    {"RaggedTensorToVariant", ComputeToVariant},
    {"RaggedTensorFromVariant", ComputeFromVariant},
    {"CompositeTensorVariantFromComponents", ComputeFromComponents},
    {"CompositeTensorVariantToComponents", ComputeToComponents},
};

}  // namespace

std::span<const KernelEntry> RaggedVariantCpuKernels() { return kCpu; }

}  // namespace kiln::exec
