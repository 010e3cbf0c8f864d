// Ragged tensors packed into variant tensors and back, as tf.map_fn and tf.data move ragged
// values: RaggedTensorToVariant (the whole tensor, or each row of it, as one variant element)
// and RaggedTensorFromVariant (a tensor of such elements stacked back into one ragged tensor).
// Also any composite tensor's components as one variant (CompositeTensorVariantFromComponents,
// CompositeTensorVariantToComponents; see their section).
// The CPU kernels are in kernels/cpu/ragged_variant_ops.cc.
#include "kernels/ragged_variant_ops.h"

#include <cstdint>
#include <iterator>
#include <memory>
#include <string>
#include <string_view>
#include <utility>

#include "bundle/coding.h"
#include "kernels/array_util.h"
#include "kernels/composite_tensor_variant.h"
#include "kernels/kernel_util.h"

namespace kiln::exec {
namespace {

using ragged_variant::CompositeState;
using ragged_variant::FromVariantState;
using ragged_variant::ToVariantState;

Result<DType> SplitsDType(const PrepareContext& ctx) {
  KILN_PREPARE_ASSIGN(ctx, DType t, ctx.attrs.GetType("Tsplits", DType::kInt64));
  KILN_RETURN_IF_ERROR(ExpectAttrDTypeIn(ctx, "Tsplits", t, {DType::kInt32, DType::kInt64}));
  return t;
}

// ---- RaggedTensorToVariant -------------------------------------------------------------------

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

// ---- RaggedTensorFromVariant -----------------------------------------------------------------

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

// ---- tables ----------------------------------------------------------------------------------

constexpr OpDefinition kDefs[] = {
    {"RaggedTensorToVariant", "encoded_ragged", kOpFreshOutputs, PrepareToVariant},
    // Not fresh: a single encoded element's values pass through as they are.
    {"RaggedTensorFromVariant", "output_nested_splits*output_ragged_rank,output_dense_values",
     kOpNone, PrepareFromVariant},
    {"CompositeTensorVariantFromComponents", "encoded", kOpNone, PrepareFromComponents},
    {"CompositeTensorVariantToComponents", "components", kOpNone, PrepareToComponents},
};

}  // namespace

std::span<const OpDefinition> RaggedVariantOpDefs() { return kDefs; }

}  // namespace kiln::exec
