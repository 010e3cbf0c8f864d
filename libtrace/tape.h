// The tape behind GradientTape: what is recorded, the hooks that record it, and the gradient
// functions (one per differentiable op, gradients/*.cc, listed in gradients/gradient_table.cc).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "graph.h"
#include "kiln/core/status.h"
#include "kiln/trace/value.h"

namespace kiln::trace::internal {

// The gradient of a composite recorded op (a Cond): given one gradient per output (empty where
// none flows), one per input (empty: none).
using CustomGradient = std::function<Result<Values>(const Values& output_grads)>;

// One recorded op.
struct TapeEntry {
  std::string op;
  std::string node_name;  // of the forward node while tracing (scopes the gradient's names)
  AttrMap attrs;
  Values inputs;
  Values outputs;
  CustomGradient custom;  // set for composite ops and variable reads
};

class TapeState {
 public:
  TapeState(Graph* graph, bool persistent, bool watch_accessed_variables);
  ~TapeState();

  Graph* graph() const { return graph_; }
  bool recording() const { return recording_; }
  void set_recording(bool r) { recording_ = r; }
  bool persistent() const { return persistent_; }
  bool watch_accessed_variables() const { return watch_accessed_variables_; }

  bool IsTracked(uint64_t id) const { return id != 0 && tracked_.count(id) != 0; }
  void WatchValue(const Value& x);
  // The pseudo id standing for a variable's value (the source of its reads).
  uint64_t WatchVariable(const std::shared_ptr<VariableState>& var);
  uint64_t VariableId(const VariableState* var) const;  // 0 when not watched
  const std::vector<std::shared_ptr<VariableState>>& watched_variables() const {
    return watched_vars_;
  }

  // Whether an op with these inputs is recorded: some input is on the tape and differentiable.
  bool ShouldRecord(std::span<const Value> inputs) const;
  void Record(TapeEntry entry, std::vector<uint64_t> input_ids);

  Result<Values> Gradient(const Value& target, const std::vector<uint64_t>& source_ids,
                          const Values& source_like, const std::vector<std::string>& source_names,
                          const Value& output_gradient, bool zeros_for_unconnected);
  // The vector-Jacobian product behind Gradient: seeds[i] flows into targets[i] (an empty seed:
  // none), one gradient per source comes back (empty: unconnected). Control-flow gradients take
  // it of a replayed branch or loop body on a tape of their own.
  Result<Values> Backprop(const Values& targets, const Values& seeds,
                          const std::vector<uint64_t>& source_ids);
  void Reset();

 private:
  Graph* graph_;
  bool persistent_;
  bool watch_accessed_variables_;
  bool recording_ = true;
  bool used_ = false;
  std::unordered_set<uint64_t> tracked_;
  std::unordered_map<uint64_t, int> producer_;  // value id -> entry
  std::vector<TapeEntry> entries_;
  std::vector<std::vector<uint64_t>> entry_input_ids_;
  std::vector<std::shared_ptr<VariableState>> watched_vars_;
  std::unordered_map<const VariableState*, uint64_t> var_ids_;
};

// ---- hooks (OpBuilder, Variable, control flow) ---------------------------------------------

// True when some tape on this thread records now (a cheap check before copying attrs).
bool AnyTapeRecording();
// Records an op on every tape of this thread that records in the current graph and watches one
// of its inputs.
void RecordOperation(std::string_view op, const AttrMap& attrs, std::span<const Value> inputs,
                     const Values& outputs);
// Records a composite op (inputs -> outputs) with its own gradient.
void RecordCustom(std::string_view op, std::span<const Value> inputs, const Values& outputs,
                  const CustomGradient& gradient);
// A functional If / While node: like RecordOperation, but a resource input standing for a
// captured variable is the variable itself (its reads inside the branch or body), so gradients
// reach variables used there; tapes that watch accessed variables watch a trainable one.
void RecordFunctional(std::string_view op, const AttrMap& attrs, std::span<const Value> inputs,
                      const Values& outputs);
// The variable a resource value of a trace stands for (a captured variable), or nullptr.
std::shared_ptr<VariableState> CapturedVariableOf(const Value& handle);
// A read of `var` produced `value`: tapes that watch accessed variables watch a trainable one.
void RecordVariableRead(const std::shared_ptr<VariableState>& var, const Value& value);

// Pauses every tape of this thread while it lives (gradient computations of inner tapes do not
// record into outer ones unless they ask; used by Gradient itself for its own tape).
class PauseTape {
 public:
  explicit PauseTape(TapeState* tape);
  ~PauseTape();
  PauseTape(const PauseTape&) = delete;
  PauseTape& operator=(const PauseTape&) = delete;

 private:
  TapeState* tape_;
  bool was_;
};

void PushTape(TapeState* tape);
void PopTape(TapeState* tape);

// ---- gradient functions -------------------------------------------------------------------

struct GradContext {
  std::string_view op;
  std::string_view node_name;
  const AttrMap* attrs = nullptr;
  const Values* inputs = nullptr;
  const Values* outputs = nullptr;
  std::vector<bool> needs;  // whether input i needs a gradient

  const Value& input(size_t i) const { return (*inputs)[i]; }
  const Value& output(size_t i) const { return (*outputs)[i]; }
  size_t num_inputs() const { return inputs->size(); }
  bool need(size_t i) const { return i < needs.size() && needs[i]; }
  // Attrs with TensorFlow's defaults.
  int64_t Int(std::string_view name, int64_t dflt = 0) const;
  bool Bool(std::string_view name, bool dflt = false) const;
  float Float(std::string_view name, float dflt = 0) const;
  std::string String(std::string_view name, std::string_view dflt = {}) const;
  std::vector<int64_t> IntList(std::string_view name) const;
  DType Type(std::string_view name, DType dflt = DType::kInvalid) const;
  const tensorflow::AttrValue* Find(std::string_view name) const;
};

// One gradient per input (an empty Value where none flows). `grads` has one per output; an
// empty one means no gradient flows into that output (use ZerosIfEmpty when needed).
using GradFn = Result<Values> (*)(const GradContext& ctx, const Values& grads);

struct GradientDef {
  const char* op;
  GradFn fn;  // nullptr: not differentiable (no gradient flows through, not an error)
};

// The op's entry in the gradient table; nullptr when the op has no gradient function at all.
const GradientDef* FindGradient(std::string_view op);
// Every entry (for tests: the numerical check covers each differentiable op).
std::span<const GradientDef> AllGradients();

// Families (gradients/*.cc).
std::span<const GradientDef> MathGradients();
std::span<const GradientDef> NnGradients();
std::span<const GradientDef> ArrayGradients();
std::span<const GradientDef> ControlFlowGradients();  // If, While (control_flow_grad.cc)

// Floating-point (and complex) dtypes carry gradients.
bool IsDifferentiable(DType t);

}  // namespace kiln::trace::internal
