// Prepare-time fusion (fusion.h), attention: on a load with an accelerator, the core of Keras's
// MultiHeadAttention (scores = einsum(query, key), a constant scale, an optional additive mask,
// softmax, einsum(probabilities, value)) becomes one _KilnAttention (kernels/attention_ops.cc),
// which never writes the [batch, heads, target, source] scores: two batched products, a scale,
// a softmax and their launches become one kernel. Keras 3's equations ("BTNH,BSNH->BNTS",
// "BNTS,BSNH->BTNH") and Keras 2's ("aecd,abcd->acbe", "acbe,aecd->abcd") are recognised by the
// role of each letter, so any spelling of the same layout is too; mixed precision's Cast to
// float32 after the scores and back before the second product are absorbed (the kernel's
// softmax is float32 inside).
#include <algorithm>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "graph/fusion_pass.h"
#include "kiln/core/proto_convert.h"

namespace kiln::exec::fusion_detail {
namespace {

// An einsum equation of two rank-4 operands and a rank-4 result: "ab..,cd..->ef..".
struct Equation {
  std::string x, y, out;
};

std::optional<Equation> ParseEquation(std::string_view eq) {
  const size_t comma = eq.find(','), arrow = eq.find("->");
  if (comma == std::string_view::npos || arrow == std::string_view::npos || arrow < comma)
    return std::nullopt;
  Equation e{std::string(eq.substr(0, comma)), std::string(eq.substr(comma + 1, arrow - comma - 1)),
             std::string(eq.substr(arrow + 2))};
  for (const std::string* s : {&e.x, &e.y, &e.out}) {
    if (s->size() != 4) return std::nullopt;
    for (char c : *s)
      if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')) ||
          std::count(s->begin(), s->end(), c) != 1)
        return std::nullopt;
  }
  return e;
}

bool Has(const std::string& s, char c) { return s.find(c) != std::string::npos; }

}  // namespace

// The node's einsum equation, when it is a two-operand Einsum.
std::optional<std::string> Fuser::EinsumEquation(int v) const {
  const FlatNode& n = g_.nodes[v];
  if (n.op != "Einsum" || n.inputs.size() != 2 || n.attrs == nullptr) return std::nullopt;
  auto it = n.attrs->find("equation");
  if (it == n.attrs->end()) return std::nullopt;
  return it->second.s();
}

// The head dim of a [batch, length, heads, dim] operand when it is known and fits the kernels'
// registers (the GPU's takes up to 256), else -1.
int64_t Fuser::HeadDim(const Edge& e) const {
  const PartialShape* s = ShapeOf(e);
  if (s == nullptr || s->unknown_rank() || s->rank() != 4) return -1;
  const int64_t d = s->dim(3);
  return d > 0 && d <= 256 ? d : -1;
}

bool Fuser::MatchAttention(int sm, AttentionMatch* m) {
  const FlatNode& softmax = g_.nodes[sm];
  if (softmax.inputs.size() != 1 || softmax.inputs[0].output != 0 ||
      (TypeOf(softmax) != DType::kFloat && !IsHalfType(TypeOf(softmax))))
    return false;
  std::vector<int>& nodes = m->nodes;
  nodes = {sm};
  // Down: [a Cast back to the half type], then the product with the values.
  int probs = sm;
  int down = SoleConsumer(sm);
  DType half = DType::kInvalid;
  if (down >= 0 && g_.nodes[down].op == "Cast") {
    const auto [from, to] = CastTypes(g_.nodes[down]);
    if (from != DType::kFloat || !IsHalfType(to)) return false;
    half = to;
    nodes.push_back(down);
    probs = down;
    down = SoleConsumer(down);
  }
  if (down < 0 || !Live(down)) return false;
  const std::optional<std::string> eq2_text = EinsumEquation(down);
  if (!eq2_text) return false;
  const FlatNode& e2 = g_.nodes[down];
  const int probs_side = e2.inputs[0].node == probs ? 0 : 1;
  if (e2.inputs[probs_side].node != probs || e2.inputs[probs_side].output != 0) return false;
  const DType t = TypeOf(e2);
  if (half != DType::kInvalid ? t != half : t != TypeOf(softmax)) return false;
  // Up: [an additive bias], [a constant scalar scale], [a Cast from the half type], the scores.
  Edge cur = softmax.inputs[0];
  int next = sm;
  if (IsAdd(cur.node) && SoleConsumer(cur.node) == next && cur.output == 0) {
    const FlatNode& add = g_.nodes[cur.node];
    if (add.inputs.size() != 2) return false;
    // The chain goes on through the side a Mul, Cast or Einsum produced; the other is the bias.
    auto chain_op = [&](const Edge& e) {
      const std::string& op = g_.nodes[e.node].op;
      return e.output == 0 && (op == "Mul" || op == "Cast" || op == "Einsum");
    };
    const int side = chain_op(add.inputs[0]) ? 0 : chain_op(add.inputs[1]) ? 1 : -1;
    if (side < 0) return false;
    const Edge bias = add.inputs[1 - side];
    const PartialShape* bs = ShapeOf(bias);
    if (bs == nullptr || bs->unknown_rank() || bs->rank() > 4 ||
        facts_[bias.node].specs[bias.output].dtype != DType::kFloat)
      return false;
    m->bias = bias;
    nodes.push_back(cur.node);
    next = cur.node;
    cur = add.inputs[side];
  }
  if (cur.output == 0 && g_.nodes[cur.node].op == "Mul" && SoleConsumer(cur.node) == next) {
    const FlatNode& mul = g_.nodes[cur.node];
    if (mul.inputs.size() != 2) return false;
    int side = -1;
    for (int i = 0; i < 2 && side < 0; ++i) {
      const Tensor* c = FloatValue(mul.inputs[1 - i]);
      if (c != nullptr && c->NumElements() == 1) {
        m->scale = c->data<float>()[0];
        side = i;
      }
    }
    if (side < 0) return false;
    nodes.push_back(cur.node);
    next = cur.node;
    cur = mul.inputs[side];
  }
  if (half != DType::kInvalid) {
    if (cur.output != 0 || CastFromHalf(cur.node) != half || SoleConsumer(cur.node) != next)
      return false;
    nodes.push_back(cur.node);
    next = cur.node;
    cur = g_.nodes[cur.node].inputs[0];
  }
  const std::optional<std::string> eq1_text =
      cur.output == 0 ? EinsumEquation(cur.node) : std::nullopt;
  if (!eq1_text || SoleConsumer(cur.node) != next || TypeOf(g_.nodes[cur.node]) != t) return false;
  const int e1 = cur.node;
  nodes.push_back(e1);
  // The letters' roles. Scores [b, n, tq, s]: b and n in both operands, tq in the query, s in the
  // key, the contracted head letter h in both operands only; each operand laid out
  // [b, length, n, h].
  const std::optional<Equation> q1 = ParseEquation(*eq1_text);
  const std::optional<Equation> q2 = ParseEquation(*eq2_text);
  if (!q1 || !q2) return false;
  const std::string& sc = q1->out;
  const char b = sc[0], n = sc[1], tq = sc[2], s = sc[3];
  char h = 0;
  for (char c : q1->x)
    if (Has(q1->y, c) && !Has(sc, c)) h = c;
  if (h == 0) return false;
  const int query_side = Has(q1->x, tq) ? 0 : 1;
  const std::string& qs = query_side == 0 ? q1->x : q1->y;
  const std::string& ks = query_side == 0 ? q1->y : q1->x;
  if (qs != std::string{b, tq, n, h} || ks != std::string{b, s, n, h}) return false;
  // The second product: probabilities [b, n, tq, s] (its own letters) with values [b, s, n, hv]
  // into [b, tq, n, hv].
  const std::string& ps = probs_side == 0 ? q2->x : q2->y;
  const std::string& vs = probs_side == 0 ? q2->y : q2->x;
  const char b2 = ps[0], n2 = ps[1], t2 = ps[2], s2 = ps[3];
  const char hv = vs[3];
  if (vs != std::string{b2, s2, n2, hv} || q2->out != std::string{b2, t2, n2, hv} || Has(ps, hv))
    return false;
  m->q = g_.nodes[e1].inputs[query_side];
  m->k = g_.nodes[e1].inputs[1 - query_side];
  m->v = e2.inputs[1 - probs_side];
  if (HeadDim(m->q) < 0 || HeadDim(m->v) < 0) return false;
  // What the pattern absorbs is read by the pattern alone.
  for (int v : nodes)
    if (v != down && (uses_.is_output[v] || uses_.data[v].size() != 1)) return false;
  m->out = down;
  m->dtype = t;
  return true;
}

void Fuser::RewriteAttention(const AttentionMatch& m) {
  g_.owned_attrs.emplace_back();
  ProtoAttrMap& attrs = g_.owned_attrs.back();
  attrs["T"].set_type(static_cast<tensorflow::DataType>(DTypeToProto(m.dtype)));
  attrs["scale"].set_f(m.scale);
  attrs["has_bias"].set_b(m.bias.has_value());
  FlatNode& out = g_.nodes[m.out];
  out.op = "_KilnAttention";
  out.def = FindOp(out.op);
  out.attrs = &attrs;
  out.inputs = {m.q, m.k, m.v};
  if (m.bias) out.inputs.push_back(*m.bias);
  MoveWaits(m.nodes, m.out);
}

// On a load with an accelerator (and with pruning: the absorbed nodes must not run), each
// attention core becomes one _KilnAttention. On the host alone oneDNN's batched products
// compute the scores faster than a fused loop would, so the graph stays as it is.
int Fuser::FuseAttention() {
  if (!half_ || !pruned_ || FindOp("_KilnAttention") == nullptr) return 0;
  int fused = 0;
  for (int v = 0; v < static_cast<int>(g_.nodes.size()); ++v) {
    if (!Live(v) || g_.nodes[v].op != "Softmax") continue;
    AttentionMatch match;
    if (!MatchAttention(v, &match)) continue;
    RewriteAttention(match);
    uses_ = FindUses(g_, live_);
    ++fused;
  }
  return fused;
}

}  // namespace kiln::exec::fusion_detail
