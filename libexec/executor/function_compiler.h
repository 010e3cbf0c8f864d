// The compiler behind PreparedFunction::Prepare and PrepareGraph (executor.h): turns a
// FunctionDef, or a graph imported and fused before, into a flat schedule. Its phases are listed
// in prepared_function.cc, which holds them up to the steps built; prepared_function_finish.cc
// holds those after (outputs bound, releases and arenas planned, placement counted, the final
// graph). Compiled with and without KILN_NO_PROTOBUF, as both files are.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "executor/execution_state.h"
#include "graph/flat_graph.h"
#include "graph/fusion.h"
#include "kiln/exec/executor.h"

namespace kiln::internal {

// The compiler's way into PreparedFunction (executor.h names it as its one friend): the types
// of what it builds, and the function made from them.
struct PreparedFunctionAccess {
  using PreparedFunction = exec::PreparedFunction;
  using Compiled = PreparedFunction::Compiled;
  using Step = PreparedFunction::Step;
  static std::shared_ptr<const PreparedFunction> Make(Compiled compiled) {
    return std::shared_ptr<const PreparedFunction>(new PreparedFunction(std::move(compiled)));
  }
};

}  // namespace kiln::internal

namespace kiln::exec {

class FunctionCompiler {
 public:
#ifndef KILN_NO_PROTOBUF
  // From a FunctionDef: imported and inlined here, then fused.
  FunctionCompiler(const tensorflow::FunctionDef& fdef, const FunctionLibrary& library,
                   const PrepareOptions& options);
#endif
  // From a graph that was imported and fused before (a serving plan's): used as it is.
  FunctionCompiler(std::shared_ptr<const FlatGraph> graph,
                   std::shared_ptr<const FunctionInterface> iface, const FunctionLibrary& library,
                   const PrepareOptions& options);

  Result<std::shared_ptr<const PreparedFunction>> Compile(std::span<const TensorSpec> arg_specs);

 private:
  using Compiled = internal::PreparedFunctionAccess::Compiled;
  using Step = internal::PreparedFunctionAccess::Step;

  // prepared_function.cc
  Status ResolveArgSpecs(std::span<const TensorSpec> arg_specs);
  void MarkLive();
  Status TopologicalOrder();
  int32_t NewSlot(const TensorSpec& spec, int device = -1);
  int32_t AddConstant(const Tensor& value);
  const Tensor* ConstantOf(int32_t slot) const;
  const Tensor* KnownValueOf(int32_t slot) const;
  std::optional<std::vector<Tensor>> TryFold(const FlatNode& node, const PrepareContext& ctx,
                                             ComputeFn compute, const std::vector<int32_t>& in,
                                             bool any_size);
  bool HasFusableNodes() const;
  bool AcceptsFloat(const FlatNode& node) const;
  std::vector<NodeFacts> Facts() const;
  void ResetPrepared();
  Status PrepareNodes(bool analysis);
  Result<bool> PrepareWidened(const FlatNode& node, int v, const std::vector<TensorSpec>& specs,
                              const std::vector<const Tensor*>& consts,
                              const std::vector<int32_t>& slots, bool analysis);
  Result<bool> PlaceHalfOnDevice(const FlatNode& node, int v, DType half,
                                 const std::vector<bool>& narrow,
                                 const std::vector<TensorSpec>& specs,
                                 const std::vector<const Tensor*>& consts,
                                 const std::vector<int32_t>& slots, PrepareContext& ctx);
  Result<int32_t> AddCastStep(const std::string& node_name, int32_t slot, DType to);
  PrepareContext ContextFor(const FlatNode& node, const AttrReader& attrs,
                            const std::vector<TensorSpec>& specs,
                            const std::vector<const Tensor*>& consts, bool analysis) const;
  Result<std::vector<int32_t>> AddStep(const std::string& node_name, std::string_view op,
                                       uint32_t flags, int device, const KernelEntry& kernel,
                                       std::shared_ptr<const OpState> state,
                                       std::vector<int32_t> in,
                                       const std::vector<TensorSpec>& outputs,
                                       int in_place_input = -1);
  Result<int32_t> Locate(int32_t slot, int want, const std::string& consumer);

  // prepared_function_finish.cc
  Status BindOutputs();
  void DropUnreadConstants();
  void PlanReleases();
  void PlanArgsInPlace();
  void PlanArena();
  void CountPlacement();
  void PlanDeviceGraph();
  std::shared_ptr<const FlatGraph> FinalGraph();

  const tensorflow::FunctionDef* fdef_ = nullptr;
  std::shared_ptr<const FlatGraph> source_graph_;
  std::shared_ptr<const FunctionInterface> iface_;
  const FunctionLibrary& library_;
  PrepareOptions options_;
  std::string fname_;
  Compiled compiled_;  // what Compile builds and hands to the PreparedFunction it makes
  FlatGraph graph_;
  std::vector<char> live_;
  std::vector<int> order_;
  std::vector<std::vector<int32_t>> out_slots_;        // per node
  std::vector<TensorSpec> slot_specs_;                 // per slot
  std::vector<int> slot_device_;                       // per slot: where its tensor lives
  std::map<std::pair<int32_t, int>, int32_t> copies_;  // (slot, device): the copy's slot
  int host_ = 0;                                       // the host's index in compiled_.devices
  bool fold_casts_ = true;  // false during the first look of the half-precision rewrite
  std::vector<const Tensor*> const_value_;  // per slot: the value when constant
  std::vector<const Tensor*> known_value_;  // per slot: a known argument's value
  std::vector<std::shared_ptr<Tensor>> const_storage_;
  std::vector<char> pinned_;
};

}  // namespace kiln::exec
