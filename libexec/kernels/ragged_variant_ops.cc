// Ragged tensors packed into variant tensors and back, as tf.map_fn and tf.data move ragged
// values: RaggedTensorToVariant (the whole tensor, or each row of it, as one variant element)
// and RaggedTensorFromVariant (a tensor of such elements stacked back into one ragged tensor).
// Also any composite tensor's components as one variant (CompositeTensorVariantFromComponents,
// CompositeTensorVariantToComponents; see their section).
#include <algorithm>
#include <cstdint>
#include <iterator>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "bundle/coding.h"
#include "kernels/array_util.h"
#include "kernels/composite_tensor_variant.h"
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

}  // namespace

// ---- CompositeTensorVariantFromComponents, CompositeTensorVariantToComponents ----------------

// Composite tensors as variants (TF's composite_tensor_ops.cc), what tf.function's
// composite-tensor arguments and tf.data pass through variant-only paths:
// CompositeTensorVariantFromComponents wraps the component tensors and the metadata attr (a
// serialized CompositeTensorVariantMetadata) in a CompositeTensorVariant
// (composite_tensor_variant.h); CompositeTensorVariantToComponents gives them back, after TF's
// checks: the TypeSpec class of its metadata must be the variant's (TF compares only the class),
// and the components' count and dtypes must be Tcomponents'.

// ---- the metadata's wire format --------------------------------------------------------------

namespace {

using Wire = std::string_view;

// Valid UTF-8 (no overlong forms, surrogates or code points past U+10FFFF), as protobuf
// requires of a proto3 string field.
bool IsValidUtf8(Wire s) {
  for (size_t i = 0; i < s.size();) {
    const auto c = static_cast<unsigned char>(s[i]);
    int n = 0;
    uint32_t cp = 0;
    if (c < 0x80) {
      ++i;
      continue;
    }
    if (c >= 0xC2 && c <= 0xDF) {
      n = 1;
      cp = c & 0x1F;
    } else if (c >= 0xE0 && c <= 0xEF) {
      n = 2;
      cp = c & 0x0F;
    } else if (c >= 0xF0 && c <= 0xF4) {
      n = 3;
      cp = c & 0x07;
    } else {
      return false;
    }
    if (i + n >= s.size()) return false;
    for (int k = 1; k <= n; ++k) {
      const auto t = static_cast<unsigned char>(s[i + k]);
      if ((t & 0xC0) != 0x80) return false;
      cp = (cp << 6) | (t & 0x3F);
    }
    if ((n == 2 && cp < 0x800) || (n == 3 && (cp < 0x10000 || cp > 0x10FFFF)) ||
        (cp >= 0xD800 && cp <= 0xDFFF))
      return false;
    i += n + 1;
  }
  return true;
}

// One field of a message: its number, wire type and (length-delimited) payload.
struct Field {
  uint32_t number = 0;
  uint32_t wire = 0;
  uint64_t varint = 0;
  Wire payload;
};

constexpr int kMaxGroupDepth = 100;  // protobuf's recursion limit

bool ReadField(Wire* in, Field* f, int depth = 0);

// A group's fields up to its end tag (wire type 4) with the same number.
bool SkipGroup(Wire* in, uint32_t number, int depth) {
  if (depth > kMaxGroupDepth) return false;
  while (!in->empty()) {
    Field f;
    const Wire before = *in;
    uint64_t tag = 0;
    if (!coding::GetVarint64(in, &tag)) return false;
    if ((tag & 7) == 4) return (tag >> 3) == number;
    *in = before;
    if (!ReadField(in, &f, depth + 1)) return false;
  }
  return false;
}

// Reads the next field; false when the bytes are malformed (as protobuf's parser fails).
bool ReadField(Wire* in, Field* f, int depth) {
  uint64_t tag = 0;
  if (!coding::GetVarint64(in, &tag) || tag > 0xffffffffu || (tag >> 3) == 0) return false;
  f->number = static_cast<uint32_t>(tag >> 3);
  f->wire = static_cast<uint32_t>(tag & 7);
  switch (f->wire) {
    case 0:
      return coding::GetVarint64(in, &f->varint);
    case 1:
    case 5: {
      const size_t n = f->wire == 1 ? 8 : 4;
      if (in->size() < n) return false;
      in->remove_prefix(n);
      return true;
    }
    case 2: {
      uint64_t n = 0;
      if (!coding::GetVarint64(in, &n) || n > in->size()) return false;
      f->payload = in->substr(0, n);
      in->remove_prefix(n);
      return true;
    }
    case 3:
      return SkipGroup(in, f->number, depth);
    default:  // an end tag without a group, or wire types 6 and 7
      return false;
  }
}

// TypeSpecProto: type_spec_class = 1 (enum), type_state = 2 (StructuredValue),
// type_spec_class_name = 3 (string), num_flat_components = 4 (int32). Later fields override.
bool ParseTypeSpec(Wire in, int* type_spec_class) {
  while (!in.empty()) {
    Field f;
    if (!ReadField(&in, &f)) return false;
    if (f.number == 1 && f.wire == 0) *type_spec_class = static_cast<int32_t>(f.varint);
    if (f.number == 3 && f.wire == 2 && !IsValidUtf8(f.payload)) return false;
  }
  return true;
}

}  // namespace

Result<int> TypeSpecClassOf(std::string_view metadata) {
  // CompositeTensorVariantMetadata: type_spec_proto = 1; repeats merge into one message.
  int type_spec_class = 0;
  while (!metadata.empty()) {
    Field f;
    if (!ReadField(&metadata, &f))
      return InvalidArgument("not a serialized CompositeTensorVariantMetadata");
    if (f.number == 1 && f.wire == 2 && !ParseTypeSpec(f.payload, &type_spec_class))
      return InvalidArgument("its type_spec_proto is not a serialized TypeSpecProto");
  }
  return type_spec_class;
}

std::string_view TypeSpecClassName(int type_spec_class) {
  constexpr std::string_view kNames[] = {"UNKNOWN",
                                         "SPARSE_TENSOR_SPEC",
                                         "INDEXED_SLICES_SPEC",
                                         "RAGGED_TENSOR_SPEC",
                                         "TENSOR_ARRAY_SPEC",
                                         "DATA_DATASET_SPEC",
                                         "DATA_ITERATOR_SPEC",
                                         "OPTIONAL_SPEC",
                                         "PER_REPLICA_SPEC",
                                         "VARIABLE_SPEC",
                                         "ROW_PARTITION_SPEC",
                                         "",
                                         "REGISTERED_TYPE_SPEC",
                                         "EXTENSION_TYPE_SPEC"};
  constexpr int kCount = static_cast<int>(std::size(kNames));
  return type_spec_class >= 0 && type_spec_class < kCount ? kNames[type_spec_class] : "";
}

std::string CompositeTensorVariant::DebugString() const {
  std::string s =
      "<CompositeTensorVariant type=" + std::string(TypeSpecClassName(type_spec_class_));
  s += ", components=[";
  for (size_t i = 0; i < components_.size(); ++i)
    s += (i ? ", " : "") + components_[i].DebugString();
  return s + "]>";
}

namespace {

struct CompositeState : OpState {
  std::string metadata;
  int type_spec_class = 0;
  std::vector<DType> components;
};

const CompositeState& StateOf(const KernelContext& ctx) { return ctx.state<CompositeState>(); }

// The metadata and Tcomponents attrs; `parse_error` is TF's message for unparsable metadata.
Result<std::shared_ptr<CompositeState>> ReadAttrs(PrepareContext& ctx,
                                                  std::string_view parse_error) {
  auto st = std::make_shared<CompositeState>();
  KILN_PREPARE_ASSIGN(ctx, st->metadata, ctx.attrs.GetString("metadata"));
  KILN_PREPARE_ASSIGN(ctx, st->components, ctx.attrs.GetTypeList("Tcomponents"));
  Result<int> c = TypeSpecClassOf(st->metadata);
  if (!c.ok()) return ctx.Error(parse_error, " (", c.status().message(), ")");
  st->type_spec_class = *c;
  return st;
}

// ---- CompositeTensorVariantFromComponents ----------------------------------------------------

Status PrepareFromComponents(PrepareContext& ctx) {
  KILN_ASSIGN_OR_RETURN(auto st, ReadAttrs(ctx, "Error parsing metadata"));
  const int n = static_cast<int>(st->components.size());
  KILN_RETURN_IF_ERROR(ctx.ExpectInputs(n));
  for (int i = 0; i < n; ++i)
    KILN_RETURN_IF_ERROR(
        ExpectInputDType(ctx, i, "components:" + std::to_string(i), st->components[i]));
  ctx.outputs = {TensorSpec{DType::kVariant, PartialShape::Scalar()}};
  ctx.state = std::move(st);
  return OkStatus();
}

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

Status PrepareToComponents(PrepareContext& ctx) {
  KILN_ASSIGN_OR_RETURN(auto st, ReadAttrs(ctx, "Error parsing `metadata`"));
  KILN_RETURN_IF_ERROR(ctx.ExpectInputs(1));
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 0, "encoded", DType::kVariant));
  ctx.outputs.clear();
  for (DType t : st->components) ctx.outputs.push_back(TensorSpec{t, PartialShape::UnknownRank()});
  ctx.state = std::move(st);
  return OkStatus();
}

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

constexpr OpDefinition kDefs[] = {
    {"RaggedTensorToVariant", "encoded_ragged", kOpFreshOutputs, PrepareToVariant},
    // Not fresh: a single encoded element's values pass through as they are.
    {"RaggedTensorFromVariant", "output_nested_splits*output_ragged_rank,output_dense_values",
     kOpNone, PrepareFromVariant},
    {"CompositeTensorVariantFromComponents", "encoded", kOpNone, PrepareFromComponents},
    {"CompositeTensorVariantToComponents", "components", kOpNone, PrepareToComponents},
};

constexpr KernelEntry kCpu[] = {
    {"RaggedTensorToVariant", ComputeToVariant},
    {"RaggedTensorFromVariant", ComputeFromVariant},
    {"CompositeTensorVariantFromComponents", ComputeFromComponents},
    {"CompositeTensorVariantToComponents", ComputeToComponents},
};

}  // namespace

std::span<const OpDefinition> RaggedVariantOpDefs() { return kDefs; }
std::span<const KernelEntry> RaggedVariantCpuKernels() { return kCpu; }

}  // namespace kiln::exec
