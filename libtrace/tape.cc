// GradientTape: recording ops and walking them backwards.
#include "tape.h"

#include <algorithm>
#include <utility>

#include "gradients/grad_ops.h"
#include "kiln/core/proto_convert.h"
#include "kiln/trace/array_ops.h"
#include "kiln/trace/gradient_tape.h"
#include "kiln/trace/op_builder.h"

namespace kiln::trace {
namespace internal {
namespace {

thread_local std::vector<TapeState*> g_tapes;

std::string SpecText(const Value& v) {
  return DTypeShortName(v.dtype()) + " " + v.shape().ToPythonString();
}

// The sum of the gradients that reached one value (AddN, as TensorFlow aggregates them).
Result<Value> Aggregate(Values& contributions) {
  if (contributions.empty()) return Value();
  if (contributions.size() == 1) return contributions[0];
  Value sum = AddN(contributions);
  KILN_RETURN_IF_ERROR_CTX(sum.status(), "adding up the gradients of a value used ",
                           contributions.size(), " times");
  contributions = Values{sum};
  return sum;
}

}  // namespace

bool IsDifferentiable(DType t) {
  switch (t) {
    case DType::kFloat:
    case DType::kDouble:
    case DType::kHalf:
    case DType::kBFloat16:
    case DType::kComplex64:
    case DType::kComplex128:
      return true;
    default:
      return false;
  }
}

// ---- TapeState ----------------------------------------------------------------------------

TapeState::TapeState(Graph* graph, bool persistent, bool watch_accessed_variables)
    : graph_(graph), persistent_(persistent), watch_accessed_variables_(watch_accessed_variables) {}

TapeState::~TapeState() = default;

void TapeState::WatchValue(const Value& x) {
  if (x.ok() && x.id() != 0) tracked_.insert(x.id());
}

uint64_t TapeState::WatchVariable(const std::shared_ptr<VariableState>& var) {
  auto it = var_ids_.find(var.get());
  if (it != var_ids_.end()) return it->second;
  const uint64_t id = NextValueId();
  var_ids_.emplace(var.get(), id);
  watched_vars_.push_back(var);
  tracked_.insert(id);
  return id;
}

uint64_t TapeState::VariableId(const VariableState* var) const {
  auto it = var_ids_.find(var);
  return it == var_ids_.end() ? 0 : it->second;
}

bool TapeState::ShouldRecord(std::span<const Value> inputs) const {
  if (!recording_ || Graph::Current() != graph_) return false;
  return std::any_of(inputs.begin(), inputs.end(), [this](const Value& v) {
    return IsTracked(v.id()) && IsDifferentiable(v.dtype());
  });
}

void TapeState::Record(TapeEntry entry, std::vector<uint64_t> input_ids) {
  const int index = static_cast<int>(entries_.size());
  for (const Value& out : entry.outputs) {
    if (out.id() == 0) continue;
    tracked_.insert(out.id());
    producer_[out.id()] = index;
  }
  entries_.push_back(std::move(entry));
  entry_input_ids_.push_back(std::move(input_ids));
}

void TapeState::Reset() {
  tracked_.clear();
  producer_.clear();
  entries_.clear();
  entry_input_ids_.clear();
  watched_vars_.clear();
  var_ids_.clear();
  used_ = false;
}

Result<Values> TapeState::Gradient(const Value& target, const std::vector<uint64_t>& source_ids,
                                   const Values& source_like,
                                   const std::vector<std::string>& source_names,
                                   const Value& output_gradient, bool zeros_for_unconnected) {
  if (used_ && !persistent_) {
    return FailedPrecondition(
        "GradientTape::Gradient can only be called once on a non-persistent tape; make it "
        "persistent (GradientTapeOptions::persistent) to compute several gradients");
  }
  if (Graph::Current() != graph_) {
    return FailedPrecondition("GradientTape::Gradient was called ",
                              Graph::Current() == nullptr ? "eagerly" : "inside a trace",
                              " but the tape records ",
                              graph_ == nullptr ? "eager ops" : "a trace's ops",
                              ": compute the gradient where the tape was made");
  }
  KILN_RETURN_IF_ERROR_CTX(target.status(), "GradientTape::Gradient: the target");
  if (!IsDifferentiable(target.dtype())) {
    return InvalidArgument("GradientTape::Gradient: the target is ", SpecText(target),
                           "; gradients exist only for floating-point values");
  }
  Value seed = output_gradient;
  if (seed.empty()) {
    if (target.shape().unknown_rank() || target.shape().rank() != 0) {
      return InvalidArgument(
          "GradientTape::Gradient: the target (loss) must be a scalar, got ", SpecText(target),
          "; reduce it first (e.g. Mean or Sum), or give GradientOptions::output_gradient");
    }
    seed = OnesLike(target);
  } else {
    KILN_RETURN_IF_ERROR_CTX(seed.status(), "GradientTape::Gradient: output_gradient");
    if (seed.dtype() != target.dtype() || !seed.shape().IsCompatibleWith(target.shape())) {
      return InvalidArgument("GradientTape::Gradient: output_gradient is ", SpecText(seed),
                             " but the target is ", SpecText(target));
    }
  }
  for (size_t i = 0; i < source_ids.size(); ++i) {
    if (source_ids[i] == 0 || !IsTracked(source_ids[i])) {
      return InvalidArgument(
          "GradientTape::Gradient: ", source_names[i],
          " is not on the tape: it was neither watched nor computed while the tape recorded. "
          "Watch it (GradientTape::Watch) before computing the target from it");
    }
  }
  used_ = true;
  PauseTape pause(this);
  KILN_RETURN_IF_ERROR(seed.status());
  KILN_ASSIGN_OR_RETURN(Values grads, Backprop(Values{target}, Values{seed}, source_ids));
  Values out;
  for (size_t i = 0; i < source_ids.size(); ++i) {
    Value g = grads[i];
    if (g.empty() && zeros_for_unconnected) g = ZerosLike(source_like[i]);
    KILN_RETURN_IF_ERROR_CTX(g.ok() || g.empty() ? OkStatus() : g.status(), "gradient of ",
                             source_names[i]);
    out.push_back(g);
  }
  if (graph_ != nullptr && graph_->status().ok() == false) return graph_->status();
  return out;
}

Result<Values> TapeState::Backprop(const Values& targets, const Values& seeds,
                                   const std::vector<uint64_t>& source_ids) {
  PauseTape pause(this);
  const int n = static_cast<int>(entries_.size());
  // Entries whose inputs depend on a source (recording order is a topological order).
  std::unordered_set<uint64_t> depends(source_ids.begin(), source_ids.end());
  std::vector<bool> entry_depends(n, false);
  for (int e = 0; e < n; ++e) {
    for (uint64_t id : entry_input_ids_[e]) {
      if (depends.count(id) != 0) entry_depends[e] = true;
    }
    if (entry_depends[e]) {
      for (const Value& out : entries_[e].outputs) depends.insert(out.id());
    }
  }
  // Entries the target depends on.
  std::vector<bool> entry_needed(n, false);
  std::vector<uint64_t> stack;
  for (const Value& t : targets) stack.push_back(t.id());
  while (!stack.empty()) {
    const uint64_t id = stack.back();
    stack.pop_back();
    auto it = producer_.find(id);
    if (it == producer_.end() || entry_needed[it->second]) continue;
    entry_needed[it->second] = true;
    for (uint64_t in : entry_input_ids_[it->second]) stack.push_back(in);
  }

  std::unordered_set<uint64_t> sources(source_ids.begin(), source_ids.end());
  std::unordered_map<uint64_t, Values> contributions;
  for (size_t i = 0; i < targets.size() && i < seeds.size(); ++i) {
    if (!seeds[i].empty() && targets[i].id() != 0)
      contributions[targets[i].id()].push_back(seeds[i]);
  }
  for (int e = n - 1; e >= 0; --e) {
    if (!entry_needed[e] || !entry_depends[e]) continue;
    const TapeEntry& entry = entries_[e];
    const std::vector<uint64_t>& input_ids = entry_input_ids_[e];
    Values grads;
    bool any = false;
    for (const Value& out : entry.outputs) {
      auto it = contributions.find(out.id());
      if (it == contributions.end()) {
        grads.emplace_back();
        continue;
      }
      KILN_ASSIGN_OR_RETURN(Value g, Aggregate(it->second));
      any = any || !g.empty();
      grads.push_back(g);
      if (sources.count(out.id()) == 0) contributions.erase(it);
    }
    if (!any) continue;
    std::vector<bool> needs(entry.inputs.size(), false);
    for (size_t i = 0; i < entry.inputs.size(); ++i) {
      // An empty input stands for a variable (its reads), and so does a resource input that
      // is on the tape (a variable captured by an If / While): always differentiable.
      needs[i] = depends.count(input_ids[i]) != 0 &&
                 (entry.inputs[i].empty() || entry.inputs[i].dtype() == DType::kResource ||
                  IsDifferentiable(entry.inputs[i].dtype()));
    }
    const std::string where = "computing the gradient of op '" + entry.op + "'" +
                              (entry.node_name.empty() ? "" : " (node '" + entry.node_name + "')");
    Result<Values> in_grads = Values{};
    {
      std::unique_ptr<NameScope> scope;
      if (graph_ != nullptr) {
        scope = std::make_unique<NameScope>("gradient_tape/" +
                                            (entry.node_name.empty() ? entry.op : entry.node_name));
      }
      if (entry.custom) {
        in_grads = entry.custom(grads);
      } else {
        const GradientDef* def = FindGradient(entry.op);
        if (def == nullptr) {
          return Unimplemented(
              "GradientTape::Gradient: no gradient is defined for op '", entry.op, "'",
              entry.node_name.empty() ? "" : " (node '" + entry.node_name + "')",
              ", which lies between the target and a source; stop the gradient before it "
              "(StopGradient) or compute that part outside the tape");
        }
        if (def->fn == nullptr) continue;  // not differentiable: nothing flows through
        GradContext ctx;
        ctx.op = entry.op;
        ctx.node_name = entry.node_name;
        ctx.attrs = &entry.attrs;
        ctx.inputs = &entry.inputs;
        ctx.outputs = &entry.outputs;
        ctx.needs = needs;
        in_grads = def->fn(ctx, grads);
      }
    }
    KILN_RETURN_IF_ERROR_CTX(in_grads.status(), where);
    for (size_t i = 0; i < entry.inputs.size() && i < in_grads->size(); ++i) {
      const Value& g = (*in_grads)[i];
      if (!needs[i] || g.empty()) continue;
      KILN_RETURN_IF_ERROR_CTX(g.status(), where, ": input ", i);
      contributions[input_ids[i]].push_back(g);
    }
  }

  Values out;
  for (uint64_t id : source_ids) {
    auto it = contributions.find(id);
    Value g;
    if (it != contributions.end()) {
      KILN_ASSIGN_OR_RETURN(g, Aggregate(it->second));
    }
    out.push_back(g);
  }
  return out;
}

// ---- hooks --------------------------------------------------------------------------------

void PushTape(TapeState* tape) { g_tapes.push_back(tape); }

void PopTape(TapeState* tape) {
  auto it = std::find(g_tapes.begin(), g_tapes.end(), tape);
  if (it != g_tapes.end()) g_tapes.erase(it);
}

bool AnyTapeRecording() {
  for (const TapeState* t : g_tapes) {
    if (t->recording()) return true;
  }
  return false;
}

namespace {

std::string NodeNameOf(const Values& outputs) {
  for (const Value& v : outputs) {
    if (v.is_symbolic() && ValueAccess::node(v) >= 0) {
      return ValueAccess::graph(v)->node_name(ValueAccess::node(v));
    }
  }
  return {};
}

std::vector<uint64_t> IdsOf(std::span<const Value> inputs) {
  std::vector<uint64_t> ids;
  ids.reserve(inputs.size());
  for (const Value& v : inputs) ids.push_back(v.id());
  return ids;
}

}  // namespace

void RecordOperation(std::string_view op, const AttrMap& attrs, std::span<const Value> inputs,
                     const Values& outputs) {
  if (outputs.empty()) return;
  for (TapeState* t : g_tapes) {
    if (!t->ShouldRecord(inputs)) continue;
    TapeEntry e;
    e.op = std::string(op);
    e.node_name = NodeNameOf(outputs);
    e.attrs = attrs;
    e.inputs.assign(inputs.begin(), inputs.end());
    e.outputs = outputs;
    t->Record(std::move(e), IdsOf(inputs));
  }
}

void RecordCustom(std::string_view op, std::span<const Value> inputs, const Values& outputs,
                  const CustomGradient& gradient) {
  if (outputs.empty()) return;
  for (TapeState* t : g_tapes) {
    if (!t->ShouldRecord(inputs)) continue;
    TapeEntry e;
    e.op = std::string(op);
    e.node_name = NodeNameOf(outputs);
    e.inputs.assign(inputs.begin(), inputs.end());
    e.outputs = outputs;
    e.custom = gradient;
    t->Record(std::move(e), IdsOf(inputs));
  }
}

std::shared_ptr<VariableState> CapturedVariableOf(const Value& handle) {
  if (!handle.is_symbolic() || ValueAccess::node(handle) >= 0) return nullptr;
  const std::vector<GraphArg>& args = ValueAccess::graph(handle)->args();
  const int index = ValueAccess::index(handle);
  return index >= 0 && index < static_cast<int>(args.size()) ? args[index].variable : nullptr;
}

void RecordFunctional(std::string_view op, const AttrMap& attrs, std::span<const Value> inputs,
                      const Values& outputs) {
  if (outputs.empty()) return;
  for (TapeState* t : g_tapes) {
    if (!t->recording() || Graph::Current() != t->graph()) continue;
    std::vector<uint64_t> ids;
    bool any = false;
    for (const Value& v : inputs) {
      uint64_t id = v.id();
      if (v.dtype() == DType::kResource) {
        id = 0;
        if (std::shared_ptr<VariableState> var = CapturedVariableOf(v)) {
          id = t->VariableId(var.get());
          if (id == 0 && t->watch_accessed_variables() && var->trainable) {
            id = t->WatchVariable(var);
          }
        }
      }
      if (t->IsTracked(id) && (v.dtype() == DType::kResource || IsDifferentiable(v.dtype()))) {
        any = true;
      }
      ids.push_back(id);
    }
    if (!any) continue;
    TapeEntry e;
    e.op = std::string(op);
    e.node_name = NodeNameOf(outputs);
    e.attrs = attrs;
    e.inputs.assign(inputs.begin(), inputs.end());
    e.outputs = outputs;
    t->Record(std::move(e), std::move(ids));
  }
}

void RecordVariableRead(const std::shared_ptr<VariableState>& var, const Value& value) {
  if (!value.ok()) return;
  for (TapeState* t : g_tapes) {
    if (!t->recording() || Graph::Current() != t->graph()) continue;
    uint64_t id = t->VariableId(var.get());
    if (id == 0) {
      if (!t->watch_accessed_variables() || !var->trainable) continue;
      id = t->WatchVariable(var);
    }
    TapeEntry e;
    e.op = "ReadVariableOp";
    e.node_name = NodeNameOf(Values{value});
    e.outputs = Values{value};
    e.inputs = Values{Value()};  // the variable itself (no tensor)
    e.custom = [](const Values& grads) -> Result<Values> { return Values{grads[0]}; };
    t->Record(std::move(e), {id});
  }
}

PauseTape::PauseTape(TapeState* tape) : tape_(tape), was_(tape->recording()) {
  tape->set_recording(false);
}
PauseTape::~PauseTape() { tape_->set_recording(was_); }

// ---- GradContext --------------------------------------------------------------------------

const tensorflow::AttrValue* GradContext::Find(std::string_view name) const {
  auto it = attrs->find(std::string(name));
  return it == attrs->end() ? nullptr : &it->second;
}
int64_t GradContext::Int(std::string_view name, int64_t dflt) const {
  const auto* a = Find(name);
  return a != nullptr ? a->i() : dflt;
}
bool GradContext::Bool(std::string_view name, bool dflt) const {
  const auto* a = Find(name);
  return a != nullptr ? a->b() : dflt;
}
float GradContext::Float(std::string_view name, float dflt) const {
  const auto* a = Find(name);
  return a != nullptr ? a->f() : dflt;
}
std::string GradContext::String(std::string_view name, std::string_view dflt) const {
  const auto* a = Find(name);
  return a != nullptr ? a->s() : std::string(dflt);
}
std::vector<int64_t> GradContext::IntList(std::string_view name) const {
  const auto* a = Find(name);
  if (a == nullptr) return {};
  return {a->list().i().begin(), a->list().i().end()};
}
DType GradContext::Type(std::string_view name, DType dflt) const {
  const auto* a = Find(name);
  if (a == nullptr) return dflt;
  Result<DType> t = DTypeFromProto(a->type());
  return t.ok() ? *t : dflt;
}

}  // namespace internal

// ---- GradientTape -------------------------------------------------------------------------

GradientTape::GradientTape(GradientTapeOptions options)
    : state_(std::make_unique<internal::TapeState>(internal::Graph::Current(), options.persistent,
                                                   options.watch_accessed_variables)) {
  internal::PushTape(state_.get());
}

GradientTape::~GradientTape() { internal::PopTape(state_.get()); }

void GradientTape::Watch(const Value& x) { state_->WatchValue(x); }

void GradientTape::Watch(const Variable& v) {
  if (v.valid()) state_->WatchVariable(internal::VariableAccess::State(v));
}

std::vector<Variable> GradientTape::watched_variables() const {
  std::vector<Variable> out;
  for (const auto& s : state_->watched_variables())
    out.push_back(internal::VariableAccess::Make(s));
  return out;
}

Result<Values> GradientTape::Gradient(const Value& target, const Values& sources,
                                      const GradientOptions& options) {
  std::vector<uint64_t> ids;
  std::vector<std::string> names;
  for (size_t i = 0; i < sources.size(); ++i) {
    KILN_RETURN_IF_ERROR_CTX(sources[i].status(), "GradientTape::Gradient: source ", i);
    if (!internal::IsDifferentiable(sources[i].dtype())) {
      return InvalidArgument("GradientTape::Gradient: source ", i, " is ",
                             DTypeShortName(sources[i].dtype()),
                             "; gradients exist only for floating-point values");
    }
    ids.push_back(sources[i].id());
    names.push_back("source " + std::to_string(i) + " (" + DTypeShortName(sources[i].dtype()) +
                    " " + sources[i].shape().ToPythonString() + ")");
  }
  return state_->Gradient(target, ids, sources, names, options.output_gradient,
                          options.unconnected == UnconnectedGradients::kZero);
}

Result<Values> GradientTape::Gradient(const Value& target, const std::vector<Variable>& sources,
                                      const GradientOptions& options) {
  std::vector<uint64_t> ids;
  std::vector<std::string> names;
  Values like;
  for (size_t i = 0; i < sources.size(); ++i) {
    const Variable& v = sources[i];
    KILN_RETURN_IF_ERROR_CTX(v.status(), "GradientTape::Gradient: variable ", i);
    if (!internal::IsDifferentiable(v.dtype())) {
      return InvalidArgument("GradientTape::Gradient: variable '", v.name(), "' is ",
                             DTypeShortName(v.dtype()),
                             "; gradients exist only for floating-point values");
    }
    ids.push_back(state_->VariableId(internal::VariableAccess::State(v).get()));
    names.push_back("variable '" + v.name() + "'");
    // Zeros for an unconnected variable come from a read of it (made only when needed).
    like.push_back(options.unconnected == UnconnectedGradients::kZero ? v.Read() : Value());
  }
  return state_->Gradient(target, ids, like, names, options.output_gradient,
                          options.unconnected == UnconnectedGradients::kZero);
}

void GradientTape::Reset() { state_->Reset(); }

GradientTape::StopRecording::StopRecording(GradientTape& tape)
    : state_(tape.state_.get()), was_recording_(state_->recording()) {
  state_->set_recording(false);
}
GradientTape::StopRecording::~StopRecording() { state_->set_recording(was_recording_); }

Value StopGradient(const Value& x) {
  return OpBuilder("StopGradient").Input(x).Attr("T", x.dtype()).BuildOne();
}

std::vector<std::string> OpsWithGradient() {
  std::vector<std::string> ops;
  for (const internal::GradientDef& d : internal::AllGradients()) {
    if (d.fn != nullptr) ops.emplace_back(d.op);
  }
  std::sort(ops.begin(), ops.end());
  return ops;
}

}  // namespace kiln::trace
