// TensorMap ops (tf's map_ops.py): EmptyTensorMap, TensorMapInsert, TensorMapLookup,
// TensorMapErase, TensorMapHasKey, TensorMapSize, TensorMapStackKeys. A map is a scalar
// DT_VARIANT tensor holding an immutable TensorMap (tensor_map.h); Insert and Erase return a
// new map sharing the key and value buffers.
// The TensorMap value itself (tensor_map.h) is defined here too; the CPU kernels are in
// kernels/cpu/tensor_map_ops.cc.
#include "kernels/tensor_map_ops.h"

#include <cstring>
#include <memory>
#include <string>
#include <string_view>
#include <utility>

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

using tensor_map_ops::MapState;

TensorSpec MapSpec() { return TensorSpec{DType::kVariant, PartialShape::Scalar()}; }

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

Status PrepareSize(PrepareContext& ctx) {
  std::shared_ptr<MapState> state;
  KILN_RETURN_IF_ERROR(PrepareMapInputs(ctx, 1, false, false, &state));
  ctx.outputs = {TensorSpec{DType::kInt32, PartialShape::Scalar()}};
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

Status PrepareErase(PrepareContext& ctx) {
  std::shared_ptr<MapState> state;
  KILN_RETURN_IF_ERROR(PrepareMapInputs(ctx, 2, true, true, &state));
  ctx.outputs = {MapSpec()};
  ctx.state = std::move(state);
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

Status PrepareHasKey(PrepareContext& ctx) {
  std::shared_ptr<MapState> state;
  KILN_RETURN_IF_ERROR(PrepareMapInputs(ctx, 2, true, false, &state));
  ctx.outputs = {TensorSpec{DType::kBool, PartialShape::Scalar()}};
  ctx.state = std::move(state);
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

}  // namespace

std::span<const OpDefinition> TensorMapOpDefs() { return kDefs; }

}  // namespace kiln::exec
