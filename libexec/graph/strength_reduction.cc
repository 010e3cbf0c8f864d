#include "graph/strength_reduction.h"

#include <string>
#include <utility>

#include "executor/half_precision.h"

namespace kiln::exec {
// Named, not anonymous: unity builds compile this file beside others whose helpers may share
// these names.
namespace strength_reduction {

bool IsFloatType(DType t) {
  return t == DType::kFloat || t == DType::kDouble || t == DType::kHalf || t == DType::kBFloat16;
}

// Whether each node's value derives from Const nodes alone (TF's IsReallyConstant after its
// constant folding): memoised over the graph.
class ReallyConstant {
 public:
  explicit ReallyConstant(const FlatGraph& g) : g_(g), memo_(g.nodes.size(), kUnknown) {}
  bool operator()(int v) {
    if (v < 0 || v >= static_cast<int>(g_.nodes.size())) return false;
    if (memo_[v] != kUnknown) return memo_[v] == kYes;
    memo_[v] = kNo;  // a cycle (loops are functions, never edges here) proves nothing
    const FlatNode& n = g_.nodes[v];
    bool yes = false;
    if (n.op == "Const") {
      yes = n.inputs.empty();
    } else if (n.def != nullptr && !n.stateful && !n.inputs.empty() && n.op != "_Arg") {
      yes = true;
      for (const Edge& e : n.inputs) yes = yes && (*this)(e.node);
    }
    memo_[v] = yes ? kYes : kNo;
    return yes;
  }

 private:
  enum : char { kUnknown, kYes, kNo };
  const FlatGraph& g_;
  std::vector<char> memo_;
};

bool IsCandidate(const FlatNode& n) {
  return (n.op == "RealDiv" || n.op == "Div" || n.op == "Pow") && n.inputs.size() == 2 &&
         IsFloatType(n.TypeAttr());
}

// 1 / c elementwise in c's type (half types: in float32, rounded once, as Eigen divides them).
Result<Tensor> Reciprocal(const Tensor& c) {
  if (c.dtype() == DType::kDouble) {
    Tensor r(DType::kDouble, c.shape());
    for (int64_t i = 0; i < c.NumElements(); ++i) r.data<double>()[i] = 1.0 / c.data<double>()[i];
    return r;
  }
  // A fresh tensor: CastNow of a float32 tensor may share the constant's own buffer, which
  // other readers keep reading.
  KILN_ASSIGN_OR_RETURN(const Tensor f, CastNow(c, DType::kFloat));
  Tensor r(DType::kFloat, c.shape());
  for (int64_t i = 0; i < f.NumElements(); ++i) r.data<float>()[i] = 1.0f / f.data<float>()[i];
  if (c.dtype() == DType::kFloat) return r;
  return CastNow(r, c.dtype());
}

// The one value every element of `t` holds, as a double; false when they differ (or none).
bool UniformValue(const Tensor& t, double* value) {
  if (t.NumElements() == 0) return false;
  Result<Tensor> d = CastNow(t, DType::kDouble);
  if (!d.ok()) return false;
  const double first = d->data<double>()[0];
  for (int64_t i = 1; i < d->NumElements(); ++i)
    if (d->data<double>()[i] != first) return false;
  *value = first;
  return true;
}

// The output's shape is the base's: the exponent broadcasts nothing into it.
bool BaseHasOutputShape(const std::vector<NodeFacts>& facts, const Edge& x, int pow_node) {
  const TensorSpec* xs = SpecAt(facts, x);
  const TensorSpec* out = SpecAt(facts, Edge{pow_node, 0});
  return xs != nullptr && out != nullptr && !xs->shape.unknown_rank() &&
         !out->shape.unknown_rank() && xs->shape == out->shape;
}

void BecomeUnary(FlatNode* n, const char* op) {
  n->op = op;
  n->def = FindOp(op);
  n->inputs.resize(1);
}

}  // namespace strength_reduction

namespace sr = strength_reduction;

bool HasStrengthReductions(const FlatGraph& g, const std::vector<char>& live) {
  sr::ReallyConstant constant(g);
  for (size_t v = 0; v < g.nodes.size(); ++v) {
    const FlatNode& n = g.nodes[v];
    if (v < live.size() && live[v] && sr::IsCandidate(n) && constant(n.inputs[1].node) &&
        !constant(n.inputs[0].node))
      return true;
  }
  return false;
}

int ReduceStrength(FlatGraph* g, const std::vector<NodeFacts>& facts,
                   const std::vector<char>& live) {
  sr::ReallyConstant constant(*g);
  int rewrites = 0;
  const int n_nodes = static_cast<int>(std::min(facts.size(), live.size()));
  for (int v = 0; v < n_nodes; ++v) {
    if (!live[v] || !sr::IsCandidate(g->nodes[v])) continue;
    const Edge x = g->nodes[v].inputs[0], y = g->nodes[v].inputs[1];
    const Tensor* c = ValueAt(facts, y);
    if (c == nullptr || !sr::IsFloatType(c->dtype()) || !constant(y.node) || constant(x.node))
      continue;
    if (g->nodes[v].op != "Pow") {
      Result<Tensor> r = sr::Reciprocal(*c);
      if (!r.ok()) continue;
      const Edge recip = AddConstNode(g, g->nodes[v].name + "/_recip", std::move(*r));
      FlatNode& n = g->nodes[v];  // AddConstNode may move the nodes
      n.op = "Mul";
      n.def = FindOp("Mul");
      n.inputs[1] = recip;
      ++rewrites;
      continue;
    }
    double p = 0;
    if (!sr::UniformValue(*c, &p) || !sr::BaseHasOutputShape(facts, x, v)) continue;
    if (p == 2) {
      sr::BecomeUnary(&g->nodes[v], "Square");
    } else if (p == 0.5) {
      sr::BecomeUnary(&g->nodes[v], "Sqrt");
    } else if (p == -0.5) {
      sr::BecomeUnary(&g->nodes[v], "Rsqrt");
    } else if (p == -1) {
      sr::BecomeUnary(&g->nodes[v], "Reciprocal");
    } else if (p == 1) {
      sr::BecomeUnary(&g->nodes[v], "Identity");
    } else if (p == 3) {
      FlatNode square = g->nodes[v];
      square.name += "_inner";
      sr::BecomeUnary(&square, "Square");
      g->nodes.push_back(std::move(square));
      FlatNode& n = g->nodes[v];
      n.op = "Mul";
      n.def = FindOp("Mul");
      n.inputs[1] = Edge{static_cast<int>(g->nodes.size()) - 1, 0};
    } else {
      continue;
    }
    ++rewrites;
  }
  return rewrites;
}

}  // namespace kiln::exec
