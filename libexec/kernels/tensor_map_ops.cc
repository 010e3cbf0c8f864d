// TensorMap ops (tf's map_ops.py): EmptyTensorMap, TensorMapInsert, TensorMapLookup,
// TensorMapErase, TensorMapHasKey, TensorMapSize, TensorMapStackKeys. A map is a scalar
// DT_VARIANT tensor holding an immutable TensorMap (tensor_map.h); Insert and Erase return a
// new map sharing the key and value buffers.
#include <cstring>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "kernels/array_util.h"
#include "kernels/kernel_util.h"
#include "kernels/tensor_map.h"

namespace kiln::exec {

// ---- TensorMap -------------------------------------------------------------------------------

bool TensorMap::KeysEqual(const Tensor& a, const Tensor& b) {
  if (a.dtype() != b.dtype() || a.shape() != b.shape()) return false;
  const int64_t n = a.NumElements();
  if (DTypeIsPod(a.dtype()))
    return n == 0 || std::memcmp(a.raw_data(), b.raw_data(),
                                 static_cast<size_t>(n) * DTypeSize(a.dtype())) == 0;
  if (a.dtype() == DType::kString) {
    for (int64_t i = 0; i < n; ++i)
      if (a.data<std::string>()[i] != b.data<std::string>()[i]) return false;
    return true;
  }
  return false;  // handles never compare equal (TF's TensorKey does not implement them)
}

int64_t TensorMap::Find(const Tensor& key) const {
  for (size_t i = 0; i < entries_.size(); ++i)
    if (KeysEqual(entries_[i].key, key)) return static_cast<int64_t>(i);
  return -1;
}

std::string TensorMap::DebugString() const {
  return internal::StrCat("TensorMap<size=", entries_.size(), ">");
}

Tensor TensorMap::Wrap(std::shared_ptr<const TensorMap> map) {
  Tensor t(DType::kVariant, Shape());
  t.scalar<std::shared_ptr<const VariantBase>>() = std::move(map);
  return t;
}

Result<const TensorMap*> TensorMap::From(const Tensor& t, std::string_view input) {
  if (t.dtype() != DType::kVariant)
    return InvalidArgument("input '", input, "': expected a variant holding a TensorMap, got ",
                           DTypeShortName(t.dtype()));
  if (t.rank() != 0)
    return InvalidArgument("input '", input,
                           "': Input map must be a scalar. Saw: ", t.shape().ToString());
  const auto& v = t.scalar<std::shared_ptr<const VariantBase>>();
  if (v == nullptr) return InvalidArgument("input '", input, "': the variant is empty");
  const auto* map = dynamic_cast<const TensorMap*>(v.get());
  if (map == nullptr)
    return InvalidArgument("input '", input, "': Input handle is not a map. Saw: '", v->TypeName(),
                           "'");
  return map;
}

namespace {

struct MapState : OpState {
  DType key_dtype = DType::kInvalid;
  DType value_dtype = DType::kInvalid;
};

const MapState& StateOf(const KernelContext& ctx) { return ctx.state<MapState>(); }

TensorSpec MapSpec() { return TensorSpec{DType::kVariant, PartialShape::Scalar()}; }

Result<const TensorMap*> InputMap(const KernelContext& ctx) {
  KILN_ASSIGN_OR_RETURN_CTX(const TensorMap* map, TensorMap::From(ctx.input(0), "input_handle"),
                            "node '", ctx.node_name(), "'");
  return map;
}

// Keys hold data TF can hash: numbers, bools and strings.
Status ExpectKeyDType(const PrepareContext& ctx, DType t) {
  if (HoldsData(t)) return OkStatus();
  return ctx.Error("attr 'key_dtype': map keys must be numbers, bools or strings, got ",
                   DTypeShortName(t));
}

// input_handle (a variant) and, when `with_key`, a key of attr key_dtype; reads value_dtype
// when `with_value`.
Status PrepareMapInputs(PrepareContext& ctx, int inputs, bool with_key, bool with_value,
                        std::shared_ptr<MapState>* state) {
  KILN_RETURN_IF_ERROR(ctx.ExpectInputs(inputs));
  *state = std::make_shared<MapState>();
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 0, "input_handle", DType::kVariant));
  if (with_key) {
    KILN_PREPARE_ASSIGN(ctx, (*state)->key_dtype, ctx.attrs.GetType("key_dtype"));
    KILN_RETURN_IF_ERROR(ExpectKeyDType(ctx, (*state)->key_dtype));
    KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 1, "key", (*state)->key_dtype));
  }
  if (with_value) {
    KILN_PREPARE_ASSIGN(ctx, (*state)->value_dtype, ctx.attrs.GetType("value_dtype"));
  }
  return OkStatus();
}

// ---- EmptyTensorMap, TensorMapSize -----------------------------------------------------------

Status PrepareEmpty(PrepareContext& ctx) {
  KILN_RETURN_IF_ERROR(ctx.ExpectInputs(0));
  ctx.outputs = {MapSpec()};
  return OkStatus();
}

Status ComputeEmpty(const KernelContext& ctx) {
  ctx.SetOutput(0, TensorMap::Wrap(std::make_shared<const TensorMap>()));
  return OkStatus();
}

Status PrepareSize(PrepareContext& ctx) {
  std::shared_ptr<MapState> state;
  KILN_RETURN_IF_ERROR(PrepareMapInputs(ctx, 1, false, false, &state));
  ctx.outputs = {TensorSpec{DType::kInt32, PartialShape::Scalar()}};
  return OkStatus();
}

Status ComputeSize(const KernelContext& ctx) {
  KILN_ASSIGN_OR_RETURN(const TensorMap* map, InputMap(ctx));
  KILN_ASSIGN_OR_RETURN(Tensor * out, ctx.AllocateOutput(0, Shape()));
  out->scalar<int32_t>() = static_cast<int32_t>(map->size());
  return OkStatus();
}

// ---- TensorMapInsert, TensorMapErase ---------------------------------------------------------

Status PrepareInsert(PrepareContext& ctx) {
  std::shared_ptr<MapState> state;
  KILN_RETURN_IF_ERROR(PrepareMapInputs(ctx, 3, true, true, &state));
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 2, "value", state->value_dtype));
  ctx.outputs = {MapSpec()};
  ctx.state = std::move(state);
  return OkStatus();
}

// Adds the entry, or replaces the value of an equal key (TF's TensorMap::replace).
Status ComputeInsert(const KernelContext& ctx) {
  KILN_ASSIGN_OR_RETURN(const TensorMap* map, InputMap(ctx));
  std::vector<TensorMap::Entry> entries = map->entries();  // shares the buffers
  const int64_t at = map->Find(ctx.input(1));
  if (at >= 0) {
    entries[at].value = ctx.input(2);
  } else {
    entries.push_back({ctx.input(1), ctx.input(2)});
  }
  ctx.SetOutput(0, TensorMap::Wrap(std::make_shared<const TensorMap>(std::move(entries))));
  return OkStatus();
}

Status PrepareErase(PrepareContext& ctx) {
  std::shared_ptr<MapState> state;
  KILN_RETURN_IF_ERROR(PrepareMapInputs(ctx, 2, true, true, &state));
  ctx.outputs = {MapSpec()};
  ctx.state = std::move(state);
  return OkStatus();
}

Status ComputeErase(const KernelContext& ctx) {
  KILN_ASSIGN_OR_RETURN(const TensorMap* map, InputMap(ctx));
  const int64_t at = map->Find(ctx.input(1));
  if (at < 0)
    return ctx.Error("Trying to erase non-existent item. Could not find key \"",
                     ctx.input(1).SummarizeValue(100), "\".");
  std::vector<TensorMap::Entry> entries = map->entries();
  entries.erase(entries.begin() + at);
  ctx.SetOutput(0, TensorMap::Wrap(std::make_shared<const TensorMap>(std::move(entries))));
  return OkStatus();
}

// ---- TensorMapLookup, TensorMapHasKey --------------------------------------------------------

Status PrepareLookup(PrepareContext& ctx) {
  std::shared_ptr<MapState> state;
  KILN_RETURN_IF_ERROR(PrepareMapInputs(ctx, 2, true, true, &state));
  ctx.outputs = {TensorSpec{state->value_dtype, PartialShape::UnknownRank()}};
  ctx.state = std::move(state);
  return OkStatus();
}

Status ComputeLookup(const KernelContext& ctx) {
  KILN_ASSIGN_OR_RETURN(const TensorMap* map, InputMap(ctx));
  const int64_t at = map->Find(ctx.input(1));
  if (at < 0)
    return ctx.Error("Trying to lookup non-existent key. Could not find key \"",
                     ctx.input(1).SummarizeValue(100), "\".");
  const Tensor& value = map->entries()[at].value;
  if (value.dtype() != StateOf(ctx).value_dtype)
    return ctx.Error("Type mismatch: actual ", DTypeShortName(value.dtype()), " vs. expect ",
                     DTypeShortName(StateOf(ctx).value_dtype), " (attr value_dtype)");
  ctx.SetOutput(0, value);
  return OkStatus();
}

Status PrepareHasKey(PrepareContext& ctx) {
  std::shared_ptr<MapState> state;
  KILN_RETURN_IF_ERROR(PrepareMapInputs(ctx, 2, true, false, &state));
  ctx.outputs = {TensorSpec{DType::kBool, PartialShape::Scalar()}};
  ctx.state = std::move(state);
  return OkStatus();
}

Status ComputeHasKey(const KernelContext& ctx) {
  KILN_ASSIGN_OR_RETURN(const TensorMap* map, InputMap(ctx));
  KILN_ASSIGN_OR_RETURN(Tensor * out, ctx.AllocateOutput(0, Shape()));
  out->scalar<bool>() = map->Find(ctx.input(1)) >= 0;
  return OkStatus();
}

// ---- TensorMapStackKeys ----------------------------------------------------------------------

Status PrepareStackKeys(PrepareContext& ctx) {
  std::shared_ptr<MapState> state;
  KILN_RETURN_IF_ERROR(PrepareMapInputs(ctx, 1, false, false, &state));
  KILN_PREPARE_ASSIGN(ctx, state->key_dtype, ctx.attrs.GetType("key_dtype"));
  KILN_RETURN_IF_ERROR(ExpectKeyDType(ctx, state->key_dtype));
  ctx.outputs = {TensorSpec{state->key_dtype, PartialShape::UnknownRank()}};
  ctx.state = std::move(state);
  return OkStatus();
}

// The keys stacked along a new leading dim, in the map's (insertion) order.
Status ComputeStackKeys(const KernelContext& ctx) {
  KILN_ASSIGN_OR_RETURN(const TensorMap* map, InputMap(ctx));
  if (map->size() == 0) return ctx.Error("TensorMapStackKeys cannot be called on empty map.");
  const Shape& key_shape = map->entries()[0].key.shape();
  for (const TensorMap::Entry& e : map->entries()) {
    if (e.key.dtype() != StateOf(ctx).key_dtype)
      return ctx.Error("Key does not match requested dtype: a key is ",
                       DTypeShortName(e.key.dtype()), ", attr key_dtype is ",
                       DTypeShortName(StateOf(ctx).key_dtype));
    if (e.key.shape() != key_shape)
      return ctx.Error("Keys must all have the same shape: ", e.key.shape().ToString(), " vs ",
                       key_shape.ToString());
  }
  if (key_shape.rank() + 1 > kMaxRank)
    return ctx.Error("stacking keys of rank ", key_shape.rank(), " exceeds the maximum rank ",
                     kMaxRank);
  Shape out_shape;
  out_shape.AddDim(map->size());
  for (int d = 0; d < key_shape.rank(); ++d) out_shape.AddDim(key_shape.dim(d));
  KILN_ASSIGN_OR_RETURN(Tensor * out, ctx.AllocateOutput(0, out_shape));
  const int64_t per = key_shape.num_elements();
  for (int64_t i = 0; i < map->size(); ++i)
    CopyElementRange(map->entries()[i].key, 0, out, i * per, per);
  return OkStatus();
}

// ---- tables ----------------------------------------------------------------------------------

constexpr OpDefinition kDefs[] = {
    {"EmptyTensorMap", "handle", kOpNone, PrepareEmpty},
    {"TensorMapSize", "size", kOpFreshOutputs, PrepareSize},
    {"TensorMapInsert", "output_handle", kOpNone, PrepareInsert},
    {"TensorMapErase", "output_handle", kOpNone, PrepareErase},
    {"TensorMapLookup", "value", kOpNone, PrepareLookup},
    {"TensorMapHasKey", "has_key", kOpFreshOutputs, PrepareHasKey},
    {"TensorMapStackKeys", "keys", kOpFreshOutputs, PrepareStackKeys},
};

constexpr KernelEntry kCpu[] = {
    {"EmptyTensorMap", ComputeEmpty},         {"TensorMapSize", ComputeSize},
    {"TensorMapInsert", ComputeInsert},       {"TensorMapErase", ComputeErase},
    {"TensorMapLookup", ComputeLookup},       {"TensorMapHasKey", ComputeHasKey},
    {"TensorMapStackKeys", ComputeStackKeys},
};

}  // namespace

std::span<const OpDefinition> TensorMapOpDefs() { return kDefs; }
std::span<const KernelEntry> TensorMapCpuKernels() { return kCpu; }

}  // namespace kiln::exec
