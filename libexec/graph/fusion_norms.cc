// Prepare-time fusion (fusion.h), the normalizations: Keras's layer normalization over the last
// axis becomes TF's fused _MklLayerNorm, and on a load with an accelerator a float32 softmax or
// layer norm between a Cast from a half type and a Cast back runs in the half type.
#include <algorithm>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "executor/half_precision.h"
#include "graph/fusion_pass.h"
#include "kiln/core/proto_convert.h"

namespace kiln::exec::fusion_detail {

// ---- layer normalization ------------------------------------------------------------------

// Keras's LayerNormalization over the last axis (Keras 3: ops.moments, then
// x * inv + (beta - mean * inv) as x * inv + (-mean * inv + beta), inv = rsqrt(var + eps) *
// gamma; also tf.nn.batch_normalization's beta - mean * inv) becomes TF's _MklLayerNorm, as
// TF's own remapper fuses it: ten element-wise kernels and two reductions become one pass.
int Fuser::FuseLayerNorms() {
  if (FindOp("_MklLayerNorm") == nullptr) return 0;  // a build without the family
  int fused = 0;
  const int n = static_cast<int>(g_.nodes.size());
  for (int m = 0; m < n; ++m) {
    if (!Live(m) || g_.nodes[m].op != "Mean") continue;
    LayerNormMatch match;
    if (!MatchLayerNorm(m, &match)) continue;
    RewriteLayerNorm(match);
    ++fused;
  }
  if (fused > 0) uses_ = FindUses(g_, live_);
  return fused;
}

// Whether node v is a Cast from a half type to float32 (that type), or kInvalid.
DType Fuser::CastFromHalf(int v) const {
  const auto [from, to] = CastTypes(g_.nodes[v]);
  return IsHalfType(from) && to == DType::kFloat ? from : DType::kInvalid;
}

// The sole consumer of v when it is a Cast from float32 to `half`, else -1.
int Fuser::CastBackTo(int v, DType half) const {
  const int c = SoleConsumer(v);
  return c >= 0 && Live(c) && CastTypes(g_.nodes[c]) == std::make_pair(DType::kFloat, half) ? c
                                                                                            : -1;
}

// Cast node `back` passes node v's value on (v now computes in the half type).
void Fuser::BecomeIdentity(int back, int v, DType half) {
  g_.owned_attrs.emplace_back();
  g_.owned_attrs.back()["T"].set_type(static_cast<tensorflow::DataType>(DTypeToProto(half)));
  FlatNode& b = g_.nodes[back];
  b.op = "Identity";
  b.def = FindOp("Identity");
  b.attrs = &g_.owned_attrs.back();
  b.inputs = {Edge{v, 0}};
}

// On a device load, a float32 Softmax or LogSoftmax between a Cast from a half type and a Cast
// back to it (Keras's mixed precision keeps softmax in float32) runs in the half type itself:
// its kernels compute in float32 inside and round once, as the Cast back did, so only the two
// casts' passes over the attention scores go.
int Fuser::NarrowSoftmaxCasts() {
  if (!half_) return 0;
  int narrowed = 0;
  for (int v = 0; v < static_cast<int>(g_.nodes.size()); ++v) {
    FlatNode& n = g_.nodes[v];
    if (!Live(v) || (n.op != "Softmax" && n.op != "LogSoftmax") || TypeOf(n) != DType::kFloat ||
        n.inputs.size() != 1 || n.inputs[0].output != 0)
      continue;
    const int up = n.inputs[0].node;
    const DType half = CastFromHalf(up);
    if (half == DType::kInvalid || SoleConsumer(up) != v) continue;
    const int back = CastBackTo(v, half);
    if (back < 0) continue;
    g_.owned_attrs.push_back(*n.attrs);
    g_.owned_attrs.back()["T"].set_type(static_cast<tensorflow::DataType>(DTypeToProto(half)));
    n.attrs = &g_.owned_attrs.back();
    n.inputs[0] = g_.nodes[up].inputs[0];
    BecomeIdentity(back, v, half);
    MoveWaits({up}, v);
    ++narrowed;
  }
  if (narrowed > 0) uses_ = FindUses(g_, live_);
  return narrowed;
}

bool Fuser::Reads(const FlatNode& n, int v) {
  for (const Edge& e : n.inputs)
    if (e.node == v && e.output == 0) return true;
  return false;
}

bool Fuser::SameEdge(const Edge& a, const Edge& b) {
  return a.node == b.node && a.output == b.output;
}

// The consumer of v (output 0) that is `op` and reads v, else -1.
int Fuser::ConsumerOp(int v, std::string_view op) const {
  for (const auto& [c, index] : uses_.data[v])
    if (Live(c) && g_.nodes[c].op == op && g_.nodes[c].inputs[index].output == 0) return c;
  return -1;
}

// A reduction over exactly the last axis of a value of `rank` dims, keeping it.
bool Fuser::ReducesLastAxis(const FlatNode& mean, int rank) const {
  if (mean.inputs.size() != 2 || mean.attrs == nullptr) return false;
  const auto keep = mean.attrs->find("keep_dims");
  if (keep == mean.attrs->end() || !keep->second.b()) return false;
  const std::vector<int64_t> axes = IntValues(mean.inputs[1]);
  return axes.size() == 1 && (axes[0] == rank - 1 || axes[0] == -1);
}

// The values of a constant per-channel vector of `c` channels (scalar broadcast), or empty.
std::vector<float> Fuser::ChannelValues(const Edge& e, int64_t c) {
  const Tensor* t = ChannelVector(FloatValue(e), c);
  std::vector<float> v;
  if (t == nullptr) return v;
  for (int64_t i = 0; i < c; ++i) v.push_back(ChannelValue(*t, i));
  return v;
}

bool Fuser::MatchLayerNorm(int m, LayerNormMatch* match) {
  const FlatNode& mean = g_.nodes[m];
  const DType t = TypeOf(mean);
  if (t != DType::kFloat && !(half_ && IsHalfType(t))) return false;
  const Edge x = mean.inputs.empty() ? Edge{} : mean.inputs[0];
  if (x.node < 0 || x.node >= static_cast<int>(facts_.size()) ||
      x.output >= static_cast<int>(facts_[x.node].specs.size()))
    return false;
  const PartialShape& xs = facts_[x.node].specs[x.output].shape;
  if (xs.unknown_rank() || xs.rank() < 1) return false;
  // The channels: x's last dim, or (where shape inference lost it) the length of gamma or beta.
  int64_t c = xs.dim(xs.rank() - 1);
  if (!ReducesLastAxis(mean, xs.rank())) return false;
  auto learn_channels = [&](const std::optional<Edge>& e) {
    const Tensor* v = e ? Value(*e) : nullptr;
    if (c <= 0 && v != nullptr && v->NumElements() > 1) c = v->NumElements();
  };
  auto typed = [&](int v) { return v >= 0 && Live(v) && TypeOf(g_.nodes[v]) == t; };
  std::vector<int>& nodes = match->nodes;
  nodes = {m};
  // The variance: mean((x - stop_gradient(mean))^2) over the same axis.
  int s = ConsumerOp(m, "StopGradient");
  if (s >= 0) {
    if (!typed(s)) return false;
    nodes.push_back(s);
  } else {
    s = m;
  }
  const int sqd = ConsumerOp(s, "SquaredDifference");
  if (!typed(sqd) || g_.nodes[sqd].inputs.size() != 2) return false;
  const Edge& d0 = g_.nodes[sqd].inputs[0];
  const Edge& d1 = g_.nodes[sqd].inputs[1];
  if (!((SameEdge(d0, x) && d1.node == s) || (SameEdge(d1, x) && d0.node == s))) return false;
  const int var = SoleConsumer(sqd);
  if (!typed(var) || g_.nodes[var].op != "Mean" || !ReducesLastAxis(g_.nodes[var], xs.rank()))
    return false;
  const int add_eps = SoleConsumer(var);
  if (!typed(add_eps) || !IsAdd(add_eps)) return false;
  const std::optional<Edge> eps = OtherInput(g_.nodes[add_eps], var);
  const Tensor* eps_value = eps ? FloatValue(*eps) : nullptr;
  if (eps_value == nullptr || eps_value->NumElements() != 1 || eps_value->dtype() != DType::kFloat)
    return false;
  match->epsilon = eps_value->data<float>()[0];
  const int rsqrt = SoleConsumer(add_eps);
  if (!typed(rsqrt) || g_.nodes[rsqrt].op != "Rsqrt") return false;
  nodes.insert(nodes.end(), {sqd, var, add_eps, rsqrt});
  // inv = rsqrt * gamma, or rsqrt alone.
  int inv = rsqrt;
  if (const int scaled = SoleConsumer(rsqrt);
      scaled >= 0 && typed(scaled) && g_.nodes[scaled].op == "Mul") {
    const std::optional<Edge> gamma = OtherInput(g_.nodes[scaled], rsqrt);
    learn_channels(gamma);
    match->gamma = gamma ? ChannelValues(*gamma, c) : std::vector<float>{};
    if (match->gamma.empty()) return false;
    inv = scaled;
    nodes.push_back(scaled);
  }
  // x * inv, and the shift: -mean * inv (+ beta), or beta - mean * inv.
  if (uses_.is_output[inv] || uses_.data[inv].size() != 2) return false;
  int x_inv = -1, mean_inv = -1;
  for (const auto& [u, index] : uses_.data[inv]) {
    const FlatNode& n = g_.nodes[u];
    if (!typed(u) || n.op != "Mul" || n.inputs.size() != 2) return false;
    const Edge& other = n.inputs[1 - index];
    if (SameEdge(other, x)) {
      x_inv = u;
    } else {
      mean_inv = u;
    }
  }
  if (x_inv < 0 || mean_inv < 0) return false;
  const std::optional<Edge> mean_side = OtherInput(g_.nodes[mean_inv], inv);
  if (!mean_side) return false;
  int shift = -1;
  if (mean_side->node == m && mean_side->output == 0) {  // beta - mean * inv
    shift = SoleConsumer(mean_inv);
    if (!typed(shift) || g_.nodes[shift].op != "Sub" || !Reads(g_.nodes[shift], mean_inv) ||
        g_.nodes[shift].inputs[1].node != mean_inv)
      return false;
    learn_channels(g_.nodes[shift].inputs[0]);
    match->beta = ChannelValues(g_.nodes[shift].inputs[0], c);
    if (match->beta.empty()) return false;
    nodes.insert(nodes.end(), {mean_inv, shift});
  } else {  // -mean * inv (+ beta)
    const int neg = mean_side->node;
    if (!typed(neg) || g_.nodes[neg].op != "Neg" || mean_side->output != 0 ||
        !Reads(g_.nodes[neg], m) || SoleConsumer(neg) != mean_inv)
      return false;
    nodes.insert(nodes.end(), {neg, mean_inv});
    shift = mean_inv;
    if (const int plus = SoleConsumer(mean_inv); plus >= 0 && typed(plus) && IsAdd(plus)) {
      const std::optional<Edge> beta = OtherInput(g_.nodes[plus], mean_inv);
      learn_channels(beta);
      std::vector<float> b = beta ? ChannelValues(*beta, c) : std::vector<float>{};
      if (!b.empty()) {
        match->beta = std::move(b);
        shift = plus;
        nodes.push_back(plus);
      }
    }
  }
  nodes.push_back(x_inv);
  const int out = SoleConsumer(x_inv);
  if (!typed(out) || !IsAdd(out) || SoleConsumer(shift) != out) return false;
  const std::optional<Edge> o = OtherInput(g_.nodes[out], x_inv);
  if (!o || o->node != shift || o->output != 0) return false;
  // The mean (and its StopGradient) are read by the pattern alone.
  for (const int v : {m, s}) {
    if (uses_.is_output[v]) return false;
    for (const auto& [u, index] : uses_.data[v])
      if (std::find(nodes.begin(), nodes.end(), u) == nodes.end()) return false;
  }
  if (c <= 0) return false;
  match->x = x;
  match->channels = c;
  match->out = out;
  return true;
}

void Fuser::RewriteLayerNorm(const LayerNormMatch& match) {
  DType t = TypeOf(g_.nodes[match.out]);
  const int64_t c = match.channels;
  // On a device load a float32 layer norm between a Cast from a half type and a Cast back
  // (Keras's mixed precision) runs in the half type: the kernel computes in float32 inside;
  // the scale and offset round to the half type.
  Edge x = match.x;
  std::vector<int> absorbed = match.nodes;
  int back = -1;
  if (half_ && t == DType::kFloat && x.output == 0) {
    const DType half = CastFromHalf(x.node);
    bool only_pattern = half != DType::kInvalid && !uses_.is_output[x.node];
    for (const auto& [u, index] : uses_.data[x.node])
      only_pattern =
          only_pattern && std::find(absorbed.begin(), absorbed.end(), u) != absorbed.end();
    back = only_pattern ? CastBackTo(match.out, half) : -1;
    if (back >= 0) {
      absorbed.push_back(x.node);
      x = g_.nodes[x.node].inputs[0];
      t = half;
    }
  }
  auto vector = [&](const std::vector<float>& v, float dflt) {
    Tensor f(DType::kFloat, Shape{c});
    for (int64_t i = 0; i < c; ++i) f.data<float>()[i] = v.empty() ? dflt : v[i];
    return t == DType::kFloat ? f : *CastNow(f, t);
  };
  const std::string base = g_.nodes[match.out].name;
  const Edge gamma = AddConstant(base + "/layer_norm_scale", vector(match.gamma, 1.0f));
  const Edge beta = AddConstant(base + "/layer_norm_offset", vector(match.beta, 0.0f));
  g_.owned_attrs.emplace_back();
  ProtoAttrMap& attrs = g_.owned_attrs.back();
  attrs["T"].set_type(static_cast<tensorflow::DataType>(DTypeToProto(t)));
  attrs["epsilon"].set_f(match.epsilon);
  FlatNode& out = g_.nodes[match.out];
  out.op = "_MklLayerNorm";
  out.def = FindOp(out.op);
  out.attrs = &attrs;
  out.inputs = {x, gamma, beta};
  if (back >= 0) BecomeIdentity(back, match.out, t);
  MoveWaits(absorbed, match.out);
}

}  // namespace kiln::exec::fusion_detail
