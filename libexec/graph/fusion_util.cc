// Prepare-time fusion (fusion.h), the helpers fusion.cc and fusion_norms.cc share: who reads
// each node, a node's types, per-channel constants, and Fuser's graph queries and edits (known
// values, sole consumers, moving control edges, adding constants).
#include <algorithm>
#include <deque>
#include <optional>
#include <string>
#include <vector>

#include "executor/half_precision.h"
#include "graph/fusion_pass.h"
#include "kiln/core/proto_convert.h"

namespace kiln::exec::fusion_detail {
namespace {

DType FromProto(int t) {
  Result<DType> d = DTypeFromProto(t);
  return d.ok() ? *d : DType::kInvalid;
}

}  // namespace

Uses FindUses(const FlatGraph& g, const std::vector<char>& live) {
  const int n = static_cast<int>(g.nodes.size());
  Uses u;
  u.data.resize(n);
  u.control_dependents.assign(n, 0);
  u.is_output.assign(n, 0);
  for (int v = 0; v < n; ++v) {
    // Nodes fusion added (constants, past `live`) are live.
    if (v < static_cast<int>(live.size()) && !live[v]) continue;
    const FlatNode& node = g.nodes[v];
    for (size_t i = 0; i < node.inputs.size(); ++i)
      u.data[node.inputs[i].node].emplace_back(v, static_cast<int>(i));
    for (int c : node.control_inputs) ++u.control_dependents[c];
  }
  for (const Edge& e : g.outputs) u.is_output[e.node] = 1;
  for (int k : g.keep) u.is_output[k] = 1;
  return u;
}

// The node's type attr T as a DType (kInvalid when it has none).
DType TypeOf(const FlatNode& n) { return n.TypeAttr(); }

// A Cast's source and destination types (kInvalid when not a Cast of one input, or a Cast with
// Truncate=True: its kernel alone truncates, so no fusion may take it for a rounding one).
std::pair<DType, DType> CastTypes(const FlatNode& n) {
  if (n.op != "Cast" || n.inputs.size() != 1 || n.attrs == nullptr)
    return {DType::kInvalid, DType::kInvalid};
  auto src = n.attrs->find("SrcT"), dst = n.attrs->find("DstT");
  if (src == n.attrs->end() || dst == n.attrs->end()) return {DType::kInvalid, DType::kInvalid};
  if (auto t = n.attrs->find("Truncate"); t != n.attrs->end() && t->second.b())
    return {DType::kInvalid, DType::kInvalid};
  return {FromProto(src->second.type()), FromProto(dst->second.type())};
}

bool IsHalfType(DType t) { return t == DType::kHalf || t == DType::kBFloat16; }

// A float constant that is a per-channel vector for C channels: shape [C] or [1, ..., 1, C],
// or a scalar (broadcast to every channel).
const Tensor* ChannelVector(const Tensor* t, int64_t channels) {
  if (t == nullptr || t->dtype() != DType::kFloat) return nullptr;
  if (t->NumElements() == 1) return t;
  if (t->NumElements() != channels || t->rank() == 0) return nullptr;
  for (int i = 0; i + 1 < t->rank(); ++i)
    if (t->dim(i) != 1) return nullptr;
  return t;
}

float ChannelValue(const Tensor& t, int64_t c) {
  return t.NumElements() == 1 ? t.data<float>()[0] : t.data<float>()[c];
}

const Tensor* Fuser::Value(const Edge& e) const { return ValueAt(facts_, e); }

const Tensor* Fuser::KnownValue(const Edge& e) const {
  if (const Tensor* t = Value(e); t != nullptr) return t;
  const FlatNode& n = g_.nodes[e.node];
  return n.op == "Const" && e.output == 0 ? n.value : nullptr;
}

// The value of `e` as float32 where it is a known float32, float16 or bfloat16 tensor (half
// constants of a half-precision chain: a bias, a batch norm's vectors).
const Tensor* Fuser::FloatValue(const Edge& e) {
  const Tensor* t = Value(e);
  if (t == nullptr || t->dtype() == DType::kFloat || !IsHalfType(t->dtype())) return t;
  Result<Tensor> f = CastNow(*t, DType::kFloat);
  if (!f.ok()) return nullptr;
  converted_.push_back(*std::move(f));
  return &converted_.back();
}

void Fuser::SortUnique(std::vector<int>* v) {
  std::sort(v->begin(), v->end());
  v->erase(std::unique(v->begin(), v->end()), v->end());
}

// A constant integer vector or matrix's values, row-major; empty when not known.
std::vector<int64_t> Fuser::IntValues(const Edge& e) const {
  const Tensor* t = Value(e);
  std::vector<int64_t> v;
  if (t == nullptr) return v;
  if (t->dtype() == DType::kInt32) {
    v.assign(t->data<int32_t>(), t->data<int32_t>() + t->NumElements());
  } else if (t->dtype() == DType::kInt64) {
    v.assign(t->data<int64_t>(), t->data<int64_t>() + t->NumElements());
  }
  return v;
}

// The one consumer of `v`'s output 0, when that is all that reads `v`.
int Fuser::SoleConsumer(int v) const {
  if (uses_.is_output[v] || uses_.data[v].size() != 1) return -1;
  const auto [c, index] = uses_.data[v][0];
  const Edge& e = g_.nodes[c].inputs[index];
  return e.output == 0 ? c : -1;
}

// The other input of binary node n, when `from` (output 0) is one of its inputs.
std::optional<Edge> Fuser::OtherInput(const FlatNode& n, int from) {
  if (n.inputs.size() != 2) return std::nullopt;
  if (n.inputs[0].node == from && n.inputs[0].output == 0) return n.inputs[1];
  if (n.inputs[1].node == from && n.inputs[1].output == 0) return n.inputs[0];
  return std::nullopt;
}

// What the absorbed nodes waited for, node `into` waits for; what waited for them waits for
// `into` (the inliner's "call done" sinks wait on every inner node).
void Fuser::MoveWaits(const std::vector<int>& nodes, int into) {
  std::vector<char> absorbed(g_.nodes.size(), 0);
  for (int a : nodes) absorbed[a] = 1;
  std::vector<int>& waits = g_.nodes[into].control_inputs;
  for (int a : nodes)
    for (int c : g_.nodes[a].control_inputs) waits.push_back(c);
  for (FlatNode& n : g_.nodes) {
    bool changed = false;
    for (int& c : n.control_inputs)
      if (c < static_cast<int>(absorbed.size()) && absorbed[c]) {
        c = into;
        changed = true;
      }
    if (changed) SortUnique(&n.control_inputs);
  }
  std::erase(g_.nodes[into].control_inputs, into);
  SortUnique(&g_.nodes[into].control_inputs);
}

// What the executor keeps after fusion (FunctionCompiler::MarkLive): the outputs, kept nodes
// and stateful nodes, and everything they read or wait for.
std::vector<char> Fuser::Reachable() const {
  std::vector<char> reach(g_.nodes.size(), 0);
  std::vector<int> stack;
  for (const Edge& e : g_.outputs) stack.push_back(e.node);
  for (int k : g_.keep) stack.push_back(k);
  for (size_t v = 0; v < g_.nodes.size(); ++v)
    if (g_.nodes[v].stateful && Live(static_cast<int>(v))) stack.push_back(static_cast<int>(v));
  while (!stack.empty()) {
    const int v = stack.back();
    stack.pop_back();
    if (reach[v]) continue;
    reach[v] = 1;
    for (const Edge& e : g_.nodes[v].inputs) stack.push_back(e.node);
    for (int c : g_.nodes[v].control_inputs) stack.push_back(c);
  }
  return reach;
}

// An owned constant node holding `t`.
Edge Fuser::AddConstant(const std::string& name, Tensor t) {
  return AddConstNode(&g_, name, std::move(t));
}

}  // namespace kiln::exec::fusion_detail
