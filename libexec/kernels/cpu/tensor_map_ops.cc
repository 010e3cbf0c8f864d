// The CPU kernels of the TensorMap ops in kernels/tensor_map_ops.cc: Insert and Erase return a
// new map sharing the key and value buffers.
#include "kernels/tensor_map_ops.h"

#include <memory>
#include <utility>
#include <vector>

#include "kernels/array_util.h"
#include "kernels/kernel_util.h"
#include "kernels/tensor_map.h"

namespace kiln::exec {
namespace {

using tensor_map_ops::MapState;

const MapState& StateOf(const KernelContext& ctx) { return ctx.state<MapState>(); }

Result<const TensorMap*> InputMap(const KernelContext& ctx) {
  KILN_ASSIGN_OR_RETURN_CTX(const TensorMap* map, TensorMap::From(ctx.input(0), "input_handle"),
                            "node '", ctx.node_name(), "'");
  return map;
}

// ---- EmptyTensorMap, TensorMapSize -----------------------------------------------------------

Status ComputeEmpty(const KernelContext& ctx) {
  ctx.SetOutput(0, TensorMap::Wrap(std::make_shared<const TensorMap>()));
  return OkStatus();
}

Status ComputeSize(const KernelContext& ctx) {
  KILN_ASSIGN_OR_RETURN(const TensorMap* map, InputMap(ctx));
  KILN_ASSIGN_OR_RETURN(Tensor * out, ctx.AllocateOutput(0, Shape()));
  out->scalar<int32_t>() = static_cast<int32_t>(map->size());
  return OkStatus();
}

// ---- TensorMapInsert, TensorMapErase ---------------------------------------------------------

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

Status ComputeHasKey(const KernelContext& ctx) {
  KILN_ASSIGN_OR_RETURN(const TensorMap* map, InputMap(ctx));
  KILN_ASSIGN_OR_RETURN(Tensor * out, ctx.AllocateOutput(0, Shape()));
  out->scalar<bool>() = map->Find(ctx.input(1)) >= 0;
  return OkStatus();
}

// ---- TensorMapStackKeys ----------------------------------------------------------------------

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

constexpr KernelEntry kCpu[] = {
    {"EmptyTensorMap", ComputeEmpty},         {"TensorMapSize", ComputeSize},
    {"TensorMapInsert", ComputeInsert},       {"TensorMapErase", ComputeErase},
    {"TensorMapLookup", ComputeLookup},       {"TensorMapHasKey", ComputeHasKey},
    {"TensorMapStackKeys", ComputeStackKeys},
};

}  // namespace

std::span<const KernelEntry> TensorMapCpuKernels() { return kCpu; }

}  // namespace kiln::exec
