// Prepare-time fusion (fusion.h), attention: on a load with an accelerator, the core of
// scaled dot-product attention (scores of query and key, a constant scale, an optional additive
// mask, softmax, the product with the values) becomes one _KilnAttention
// (kernels/attention_ops.cc), which never writes the [batch, heads, target, source] scores: two
// batched products, a scale, a softmax and their launches become one kernel. The spellings:
// Keras's MultiHeadAttention (Keras 3's equations "BTNH,BSNH->BNTS" and "BNTS,BSNH->BTNH", Keras
// 2's "aecd,abcd->acbe" and "acbe,aecd->abcd", recognised by the role of each letter); Hugging
// Face's TF models (BatchMatMul with adj_y of [0, 2, 1, 3]-transposed heads, a division by
// sqrt(d), the mask added, softmax of logits + 1e-9, the result transposed back); Keras's
// Attention layer (rank-3 BatchMatMul, one head). Mixed precision's Cast to float32 after the
// scores and back before the second product are absorbed (the kernel's softmax is float32
// inside), as are Identity nodes (dropout at inference).
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

// The head dim of a [batch, length, (heads,) dim] operand when it is known and fits the
// kernels' registers (the GPU's takes up to 256), else -1.
int64_t Fuser::HeadDim(const Edge& e) const {
  const PartialShape* s = ShapeOf(e);
  if (s == nullptr || s->unknown_rank() || (s->rank() != 4 && s->rank() != 3)) return -1;
  const int64_t d = s->dim(s->rank() - 1);
  return d > 0 && d <= 256 ? d : -1;
}

namespace {

bool IsBatchMatMul(std::string_view op) {
  return op == "BatchMatMul" || op == "BatchMatMulV2" || op == "BatchMatMulV3";
}

bool BoolAttr(const FlatNode& n, const char* name) {
  if (n.attrs == nullptr) return false;
  auto it = n.attrs->find(name);
  return it != n.attrs->end() && it->second.b();
}

}  // namespace

// The node reading v alone (output 0), past Identity nodes (absorbed into `nodes`); -1 when
// there is none.
int Fuser::NextPastIdentities(int v, std::vector<int>* nodes) const {
  int c = SoleConsumer(v);
  while (c >= 0 && Live(c) && g_.nodes[c].op == "Identity") {
    nodes->push_back(c);
    c = SoleConsumer(c);
  }
  return c >= 0 && Live(c) ? c : -1;
}

// Whether e is a Transpose of a rank-4 value by [0, 2, 1, 3] that only `reader` reads; its input
// into *from.
bool Fuser::SwapsMiddleDims(const Edge& e, int reader, Edge* from) const {
  const FlatNode& t = g_.nodes[e.node];
  if (e.output != 0 || t.op != "Transpose" || t.inputs.size() != 2 ||
      SoleConsumer(e.node) != reader)
    return false;
  if (IntValues(t.inputs[1]) != std::vector<int64_t>{0, 2, 1, 3}) return false;
  *from = t.inputs[0];
  return true;
}

// The operands in the fused op's layout ([batch, length, heads, dim]) of the two products:
// Einsums whose letters say that layout (Keras), or batched matmuls of [batch, heads, length,
// dim] operands transposed from that layout, the result transposed back (Hugging Face), or of
// rank-3 operands (one head: Keras's Attention layer). `e1` reads (query, key), `e2`
// (probabilities on side `probs_side`, values).
bool Fuser::AttentionOperands(int e1, int e2, int probs_side, AttentionMatch* m) {
  const FlatNode& n1 = g_.nodes[e1];
  const FlatNode& n2 = g_.nodes[e2];
  if (n1.op == "Einsum" && n2.op == "Einsum") {
    const std::optional<std::string> eq1_text = EinsumEquation(e1);
    const std::optional<std::string> eq2_text = EinsumEquation(e2);
    if (!eq1_text || !eq2_text) return false;
    // Scores [b, n, tq, s]: b and n in both operands, tq in the query, s in the key, the
    // contracted head letter h in both operands only; each operand [b, length, n, h].
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
    // Probabilities [b, n, tq, s] (in its own letters) with values [b, s, n, hv] into
    // [b, tq, n, hv].
    const std::string& ps = probs_side == 0 ? q2->x : q2->y;
    const std::string& vs = probs_side == 0 ? q2->y : q2->x;
    const char pb = ps[0], pn = ps[1], pt = ps[2], psrc = ps[3];
    const char hv = vs[3];
    if (vs != std::string{pb, psrc, pn, hv} || q2->out != std::string{pb, pt, pn, hv} ||
        Has(ps, hv))
      return false;
    m->q = n1.inputs[query_side];
    m->k = n1.inputs[1 - query_side];
    m->v = n2.inputs[1 - probs_side];
    m->out = e2;
    return true;
  }
  if (!IsBatchMatMul(n1.op) || !IsBatchMatMul(n2.op) || probs_side != 0) return false;
  if (BoolAttr(n1, "adj_x") || !BoolAttr(n1, "adj_y") || BoolAttr(n2, "adj_x") ||
      BoolAttr(n2, "adj_y"))
    return false;
  const PartialShape* qs = ShapeOf(n1.inputs[0]);
  const PartialShape* ks = ShapeOf(n1.inputs[1]);
  const PartialShape* vs = ShapeOf(n2.inputs[1]);
  if (qs == nullptr || ks == nullptr || vs == nullptr || qs->unknown_rank() ||
      ks->rank() != qs->rank() || vs->rank() != qs->rank())
    return false;
  if (qs->rank() == 3) {
    m->q = n1.inputs[0];
    m->k = n1.inputs[1];
    m->v = n2.inputs[1];
    m->out = e2;
    return true;
  }
  // Rank 4: each operand a [0, 2, 1, 3] Transpose of [batch, length, heads, dim], the result
  // transposed back by the only reader of the second product.
  const int back = SoleConsumer(e2);
  Edge q, k, v;
  if (qs->rank() != 4 || back < 0 || !Live(back) || !SwapsMiddleDims(n1.inputs[0], e1, &q) ||
      !SwapsMiddleDims(n1.inputs[1], e1, &k) || !SwapsMiddleDims(n2.inputs[1], e2, &v))
    return false;
  const FlatNode& bt = g_.nodes[back];
  if (bt.op != "Transpose" || bt.inputs.size() != 2 || bt.inputs[0].node != e2 ||
      IntValues(bt.inputs[1]) != std::vector<int64_t>{0, 2, 1, 3})
    return false;
  m->nodes.insert(m->nodes.end(), {n1.inputs[0].node, n1.inputs[1].node, n2.inputs[1].node, e2});
  m->q = q;
  m->k = k;
  m->v = v;
  m->out = back;
  return true;
}

bool Fuser::MatchAttention(int sm, AttentionMatch* m) {
  const FlatNode& softmax = g_.nodes[sm];
  if (softmax.inputs.size() != 1 || softmax.inputs[0].output != 0 ||
      (TypeOf(softmax) != DType::kFloat && !IsHalfType(TypeOf(softmax))))
    return false;
  std::vector<int>& nodes = m->nodes;
  nodes = {sm};
  // Down: [Identities (dropout at inference)], [a Cast back to the half type], the second
  // product.
  int probs = sm;
  int down = NextPastIdentities(sm, &nodes);
  if (down >= 0 && !nodes.empty() && nodes.back() != sm) probs = nodes.back();
  DType half = DType::kInvalid;
  if (down >= 0 && g_.nodes[down].op == "Cast") {
    const auto [from, to] = CastTypes(g_.nodes[down]);
    if (from != DType::kFloat || !IsHalfType(to)) return false;
    half = to;
    nodes.push_back(down);
    probs = down;
    const size_t before = nodes.size();
    down = NextPastIdentities(down, &nodes);
    if (nodes.size() > before) probs = nodes.back();
  }
  if (down < 0) return false;
  const FlatNode& e2 = g_.nodes[down];
  if (e2.inputs.size() != 2 || (e2.op != "Einsum" && !IsBatchMatMul(e2.op))) return false;
  const int probs_side = e2.inputs[0].node == probs ? 0 : 1;
  if (e2.inputs[probs_side].node != probs || e2.inputs[probs_side].output != 0) return false;
  const DType t = TypeOf(e2);
  if (half != DType::kInvalid ? t != half : t != TypeOf(softmax)) return false;
  // Up, in any order: Identities; additions of a scalar constant (a softmax does not change:
  // Hugging Face's stable_softmax adds 1e-9) or of one bias tensor; a product with or a
  // division by a scalar constant (the scale); a Cast from the half type; then the scores.
  Edge cur = softmax.inputs[0];
  int next = sm;
  bool cast_up = false;
  for (;;) {
    if (cur.output != 0 || SoleConsumer(cur.node) != next || !Live(cur.node)) return false;
    const FlatNode& n = g_.nodes[cur.node];
    const int at = cur.node;
    if (n.op == "Identity") {
      cur = n.inputs[0];
    } else if (IsAdd(at) && n.inputs.size() == 2) {
      int side = -1;  // the side the chain goes on through
      for (int i = 0; i < 2 && side < 0; ++i) {
        const Tensor* c = FloatValue(n.inputs[1 - i]);
        if (c != nullptr && c->NumElements() == 1) side = i;
      }
      if (side < 0) {
        if (m->bias) return false;
        // The chain goes on through the side a scale, Cast, product or Identity produced.
        auto chain_op = [&](const Edge& e) {
          const std::string& op = g_.nodes[e.node].op;
          return e.output == 0 && (op == "Mul" || op == "RealDiv" || op == "Cast" ||
                                   op == "Einsum" || IsBatchMatMul(op) || op == "Identity");
        };
        side = chain_op(n.inputs[0]) ? 0 : chain_op(n.inputs[1]) ? 1 : -1;
        if (side < 0) return false;
        const Edge bias = n.inputs[1 - side];
        const PartialShape* bs = ShapeOf(bias);
        if (bs == nullptr || bs->unknown_rank() || bs->rank() > 4 ||
            facts_[bias.node].specs[bias.output].dtype != DType::kFloat)
          return false;
        m->bias = bias;
      }
      cur = n.inputs[side];
    } else if ((n.op == "Mul" || n.op == "RealDiv") && n.inputs.size() == 2) {
      int side = -1;
      for (int i = 0; i < 2 && side < 0; ++i) {
        if (n.op == "RealDiv" && i == 1) break;  // only a divisor may be the constant
        const Tensor* c = FloatValue(n.inputs[1 - i]);
        if (c != nullptr && c->NumElements() == 1) {
          const float k = c->data<float>()[0];
          if (n.op == "RealDiv" && k == 0.0f) return false;
          m->scale = n.op == "Mul" ? m->scale * k : m->scale / k;
          side = i;
        }
      }
      if (side < 0) return false;
      cur = n.inputs[side];
    } else if (n.op == "Cast") {
      if (half == DType::kInvalid || cast_up || CastFromHalf(at) != half) return false;
      cast_up = true;
      cur = n.inputs[0];
    } else {
      break;
    }
    nodes.push_back(at);
    next = at;
  }
  if (half != DType::kInvalid && !cast_up) return false;
  const int e1 = cur.node;
  const FlatNode& n1 = g_.nodes[e1];
  if (cur.output != 0 || SoleConsumer(e1) != next || n1.inputs.size() != 2 || TypeOf(n1) != t ||
      (n1.op != "Einsum" && !IsBatchMatMul(n1.op)))
    return false;
  nodes.push_back(e1);
  if (!AttentionOperands(e1, down, probs_side, m)) return false;
  if (HeadDim(m->q) < 0 || HeadDim(m->v) < 0) return false;
  // What the pattern absorbs is read by the pattern alone.
  for (int v : nodes)
    if (uses_.is_output[v] || uses_.data[v].size() != 1) return false;
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
