// The activations a fused chain may end in that are several ops in the graph (fusion.h):
// swish, TF's exact and tanh-approximated GELU, and Keras's hard_swish. Each matcher starts at
// the value the activation reads and returns the nodes it would absorb.
#include <optional>
#include <string_view>
#include <vector>

#include "graph/fusion_pass.h"

namespace kiln::exec::fusion_detail {

// The Mul of x * sigmoid(x) when `x` (output 0) feeds only a Sigmoid and that Mul, or (Keras
// 3's swish, beta 1) a Mul by 1 that only the Sigmoid reads, and that Mul. `nodes` gets them.
int Fuser::SwishAfter(int x, std::vector<int>* nodes) {
  if (uses_.is_output[x] || uses_.data[x].size() != 2) return -1;
  int sig = -1, mul = -1, scaled = -1;
  for (const auto& [c, index] : uses_.data[x]) {
    const FlatNode& n = g_.nodes[c];
    if (n.inputs[index].output != 0) return -1;
    if (n.op == "Sigmoid" && TypeOf(n) == DType::kFloat) {
      sig = c;
    } else if (n.op == "Mul" && TypeOf(n) == DType::kFloat) {
      const std::optional<Edge> other = OtherInput(n, x);
      const int reader = SoleConsumer(c);
      if (other && IsScalar(*other, 1.0) && reader >= 0 && g_.nodes[reader].op == "Sigmoid" &&
          TypeOf(g_.nodes[reader]) == DType::kFloat) {
        scaled = c;
        sig = reader;
      } else {
        mul = c;
      }
    }
  }
  if (sig < 0 || mul < 0 || !Live(sig) || !Live(mul)) return -1;
  if (SoleConsumer(sig) != mul) return -1;
  *nodes = {sig, mul};
  if (scaled >= 0) nodes->push_back(scaled);
  return mul;
}

// Whether scalar constant `e` is `want` (within float16's rounding of it).
bool Fuser::IsScalar(const Edge& e, double want) {
  const Tensor* t = FloatValue(e);
  return t != nullptr && t->NumElements() == 1 && t->dtype() == DType::kFloat &&
         std::abs(t->data<float>()[0] - want) <= 1e-3 * std::abs(want);
}

// The Mul that ends a GELU: `half` (x / 2) times `last` (erfc(-x / sqrt(2)), or 1 + tanh of
// the cubic), each read by it alone; -1 when there is none.
int Fuser::GeluProduct(int half, int last) const {
  const int out = SoleConsumer(last);
  if (out < 0 || out != SoleConsumer(half) || g_.nodes[out].op != "Mul" ||
      TypeOf(g_.nodes[out]) != dtype_)
    return -1;
  const std::optional<Edge> e = OtherInput(g_.nodes[out], half);
  return e && e->node == last ? out : -1;
}

// TF's exact GELU of x (tf.nn.gelu, what Keras's "gelu" runs): 0.5 * x * erfc(-x / sqrt(2)),
// as Mul(0.5, x), Neg(x), Mul(., 1 / sqrt(2)), Erfc, Mul of both, every node of x's type and
// read only there. On a match `nodes` holds them, the final Mul last.
bool Fuser::GeluAfter(int x, std::vector<int>* nodes) {
  if (uses_.is_output[x] || uses_.data[x].size() != 2) return false;
  int half = -1, neg = -1;
  for (const auto& [c, index] : uses_.data[x]) {
    const FlatNode& n = g_.nodes[c];
    if (!Live(c) || n.inputs[index].output != 0 || TypeOf(n) != dtype_) return false;
    if (n.op == "Neg") {
      neg = c;
    } else if (n.op == "Mul") {
      const std::optional<Edge> o = OtherInput(n, x);
      if (o && IsScalar(*o, 0.5)) half = c;
    }
  }
  if (half < 0 || neg < 0) return false;
  const int scaled = SoleConsumer(neg);
  if (scaled < 0 || g_.nodes[scaled].op != "Mul" || TypeOf(g_.nodes[scaled]) != dtype_)
    return false;
  const std::optional<Edge> k = OtherInput(g_.nodes[scaled], neg);
  if (!k || !IsScalar(*k, 0.7071067811865476)) return false;
  const int erfc = SoleConsumer(scaled);
  if (erfc < 0 || g_.nodes[erfc].op != "Erfc" || TypeOf(g_.nodes[erfc]) != dtype_) return false;
  const int out = GeluProduct(half, erfc);
  if (out < 0) return false;
  *nodes = {half, neg, scaled, erfc, out};
  return true;
}

// The sole consumer of v when it is `op` of v and a scalar constant `k`, else -1.
int Fuser::ScalarOpAfter(int v, std::string_view op, double k) {
  const int c = SoleConsumer(v);
  if (c < 0 || !Live(c) || g_.nodes[c].op != op || TypeOf(g_.nodes[c]) != dtype_) return -1;
  const std::optional<Edge> o = OtherInput(g_.nodes[c], v);
  return o && IsScalar(*o, k) ? c : -1;
}

// TF's tanh-approximated GELU of x (tf.nn.gelu(approximate=True), Hugging Face's "gelu_new"):
// 0.5 * x * (1 + tanh(sqrt(2 / pi) * (x + 0.044715 * x^3))), as Mul(0.5, x), Pow(x, 3),
// Mul(0.044715, .), Add(x, .), Mul(sqrt(2 / pi), .), Tanh, Add(1, .), Mul of the two halves.
bool Fuser::GeluTanhAfter(int x, std::vector<int>* nodes) {
  if (uses_.is_output[x] || uses_.data[x].size() != 3) return false;
  int half = -1, pow = -1, sum = -1;
  for (const auto& [c, index] : uses_.data[x]) {
    const FlatNode& n = g_.nodes[c];
    if (!Live(c) || n.inputs[index].output != 0 || TypeOf(n) != dtype_) return false;
    const std::optional<Edge> o = OtherInput(n, x);
    if (n.op == "Mul" && o && IsScalar(*o, 0.5)) {
      half = c;
    } else if (n.op == "Pow" && index == 0 && o && IsScalar(*o, 3)) {
      pow = c;
    } else if (IsAdd(c)) {
      sum = c;
    }
  }
  if (half < 0 || pow < 0 || sum < 0) return false;
  const int cube = ScalarOpAfter(pow, "Mul", 0.044715);
  if (cube < 0 || SoleConsumer(cube) != sum) return false;
  const std::optional<Edge> cube_in = OtherInput(g_.nodes[sum], x);
  if (!cube_in || cube_in->node != cube) return false;
  const int scaled = ScalarOpAfter(sum, "Mul", 0.7978845608028654);
  const int tanh = scaled < 0 ? -1 : SoleConsumer(scaled);
  if (tanh < 0 || g_.nodes[tanh].op != "Tanh" || TypeOf(g_.nodes[tanh]) != dtype_) return false;
  int one = -1;
  if (const int c = SoleConsumer(tanh); c >= 0 && IsAdd(c) && TypeOf(g_.nodes[c]) == dtype_) {
    const std::optional<Edge> o = OtherInput(g_.nodes[c], tanh);
    one = o && IsScalar(*o, 1.0) ? c : -1;
  }
  if (one < 0) return false;
  const int out = GeluProduct(half, one);
  if (out < 0) return false;
  *nodes = {half, pow, cube, sum, scaled, tanh, one, out};
  return true;
}

// Keras's hard_swish of x, x * (relu6(x + 3) / 6) (MobileNetV3) or (x * relu6(x + 3)) / 6, when
// `x` (output 0) feeds only the Add of 3 and the product; the division may be a product by 1/6.
// `nodes` gets the pattern's nodes, the last one last.
bool Fuser::HardSwishAfter(int x, std::vector<int>* nodes) {
  if (uses_.is_output[x] || uses_.data[x].size() != 2) return false;
  int add = -1, mul = -1;
  for (const auto& [c, index] : uses_.data[x]) {
    const FlatNode& n = g_.nodes[c];
    if (!Live(c) || n.inputs[index].output != 0 || TypeOf(n) != dtype_) return false;
    const std::optional<Edge> o = OtherInput(n, x);
    if (IsAdd(c) && o && IsScalar(*o, 3.0)) {
      add = c;
    } else if (n.op == "Mul" && o) {
      mul = c;
    }
  }
  const int relu6 = add < 0 ? -1 : SoleConsumer(add);
  if (mul < 0 || relu6 < 0 || g_.nodes[relu6].op != "Relu6" || TypeOf(g_.nodes[relu6]) != dtype_)
    return false;
  // The sixth of relu6 (RealDiv by 6 or Mul by 1/6), or of the product.
  auto sixth = [&](int v) {
    const int d = ScalarOpAfter(v, "RealDiv", 6.0);
    return d >= 0 ? d : ScalarOpAfter(v, "Mul", 1.0 / 6.0);
  };
  if (const int scaled = sixth(relu6); scaled >= 0) {  // x * (relu6(x + 3) / 6)
    const std::optional<Edge> o = OtherInput(g_.nodes[mul], x);
    if (!o || o->node != scaled || SoleConsumer(scaled) != mul) return false;
    *nodes = {add, relu6, scaled, mul};
    return true;
  }
  const std::optional<Edge> o = OtherInput(g_.nodes[mul], x);  // (x * relu6(x + 3)) / 6
  if (!o || o->node != relu6 || SoleConsumer(relu6) != mul) return false;
  const int scaled = sixth(mul);
  if (scaled < 0) return false;
  *nodes = {add, relu6, mul, scaled};
  return true;
}

}  // namespace kiln::exec::fusion_detail
