// The state a CPU kernel reads when it keeps objects of its own (oneDNN primitives per shape,
// packed weights): the op definition's state (what the op's Prepare built, device-free)
// extended with them. The kernel's CreateState makes it in place of the prepared state.
#pragma once

#include <memory>
#include <optional>
#include <typeinfo>
#include <utility>

#include "kiln/exec/op_table.h"

namespace kiln::exec::cpu {

// For a CreateState: replaces ctx.state, the `S::Prepared` the op's Prepare built, with an `S`
// made from a copy of it (S derives from S::Prepared and is constructed from one), and returns
// that for CreateState to complete: nothing else holds it yet.
template <typename S>
S* ReplaceWithCpuState(PrepareContext& ctx) {
  auto st = std::make_shared<S>(static_cast<const typename S::Prepared&>(*ctx.state));
  S* completed = st.get();
  ctx.state = std::move(st);
  return completed;
}

// For a compute function: the `S` CreateState made. Where it did not run (a constant folded
// while the executor first analyses a graph, or a device table that runs the CPU kernel
// without its CreateState), one made in `*local` from the prepared state, whose objects last
// this call only.
template <typename S>
const S& CpuStateOf(const KernelContext& ctx, std::optional<S>* local) {
  const auto& prepared = ctx.state<typename S::Prepared>();
  // An exact type check, not a dynamic_cast: this runs on every call of small products, where
  // the cast's walk of the class hierarchy was 3% of a 10x10 int32 MatMul.
  if (typeid(prepared) == typeid(S)) return static_cast<const S&>(prepared);
  return local->emplace(prepared);
}

}  // namespace kiln::exec::cpu
