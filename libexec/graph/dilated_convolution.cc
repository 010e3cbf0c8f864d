#include "graph/dilated_convolution.h"

#include <algorithm>
#include <string>

#include "executor/half_precision.h"

namespace kiln::exec {
// Named, not anonymous: unity builds compile this file beside others whose helpers may share
// these names.
namespace dilated_convolution {

std::vector<int64_t> KnownInts(const std::vector<NodeFacts>& facts, const Edge& e) {
  const Tensor* t = ValueAt(facts, e);
  if (t == nullptr || (t->dtype() != DType::kInt32 && t->dtype() != DType::kInt64)) return {};
  Result<Tensor> v = CastNow(*t, DType::kInt64);
  if (!v.ok()) return {};
  return {v->data<int64_t>(), v->data<int64_t>() + v->NumElements()};
}

// Whether the list attr `name` is absent or all ones.
bool AllOnes(const AttrReader& a, const char* name) {
  const Result<std::vector<int64_t>> list = a.GetIntList(name, {});
  return list.ok() && std::all_of(list->begin(), list->end(), [](int64_t v) { return v == 1; });
}

class Folder {
 public:
  Folder(FlatGraph* g, const std::vector<NodeFacts>& facts, const std::vector<char>& live)
      : g_(*g), facts_(facts), live_(live), readers_(g->nodes.size(), 0) {
    for (size_t v = 0; v < g_.nodes.size(); ++v) {
      if (!Live(static_cast<int>(v))) continue;
      for (const Edge& e : g_.nodes[v].inputs) ++readers_[e.node];
    }
    for (const Edge& e : g_.outputs) readers_[e.node] += 2;  // never a sole reader
    for (int k : g_.keep) readers_[k] += 2;
  }

  int Run() {
    int folded = 0;
    for (int b = 0; b < static_cast<int>(g_.nodes.size()); ++b)
      if (Live(b) && g_.nodes[b].op == "BatchToSpaceND" && Fold(b)) ++folded;
    return folded;
  }

 private:
  bool Live(int v) const { return v < static_cast<int>(live_.size()) && live_[v] != 0; }

  // Node `v` read by one input of `reader` alone (its output 0), and by nothing else.
  bool ReadOnlyBy(int v, int reader) const {
    if (readers_[v] != 1) return false;
    const FlatNode& r = g_.nodes[reader];
    return std::any_of(r.inputs.begin(), r.inputs.end(),
                       [&](const Edge& e) { return e.node == v && e.output == 0; });
  }

  bool Fold(int b) {
    const FlatNode& bn = g_.nodes[b];
    if (bn.inputs.size() != 3 || bn.inputs[0].output != 0) return false;
    // The convolution, and a Squeeze after it.
    int squeeze = -1, conv = bn.inputs[0].node;
    if (g_.nodes[conv].op == "Squeeze") {
      squeeze = conv;
      if (g_.nodes[squeeze].inputs.size() != 1 || g_.nodes[squeeze].inputs[0].output != 0 ||
          !ReadOnlyBy(squeeze, b))
        return false;
      conv = g_.nodes[squeeze].inputs[0].node;
    }
    std::vector<int64_t> squeezed;  // dims of the convolution's output, in (0, 4)
    if (squeeze >= 0) {
      const Result<std::vector<int64_t>> dims =
          g_.nodes[squeeze].reader().GetIntList("squeeze_dims", {});
      // Squeezing every size-1 dim would squeeze a batch of 1 once unblocked.
      if (!dims.ok() || dims->empty()) return false;
      for (int64_t d : *dims) squeezed.push_back(d < 0 ? d + 4 : d);
      if (std::any_of(squeezed.begin(), squeezed.end(), [](int64_t d) { return d <= 0 || d >= 4; }))
        return false;
    }
    FlatNode& c = g_.nodes[conv];
    if ((c.op != "Conv2D" && c.op != "DepthwiseConv2dNative") || c.inputs.size() != 2 ||
        c.attrs == nullptr || !ReadOnlyBy(conv, squeeze >= 0 ? squeeze : b))
      return false;
    const AttrReader a = c.reader();
    const Result<DType> type = a.GetType("T");
    const Result<std::string> format = a.GetString("data_format", "NHWC");
    const Result<std::string> padding = a.GetString("padding");
    if (!type.ok() ||
        (*type != DType::kFloat && *type != DType::kHalf && *type != DType::kBFloat16) ||
        !format.ok() || *format != "NHWC" || !padding.ok() || *padding != "VALID" ||
        !AllOnes(a, "strides") || !AllOnes(a, "dilations"))
      return false;
    // An ExpandDims of axis 1 before it (a Conv1D), and the SpaceToBatchND.
    int expand = -1, s2b = c.inputs[0].node;
    if (c.inputs[0].output != 0) return false;
    if (g_.nodes[s2b].op == "ExpandDims") {
      expand = s2b;
      const FlatNode& en = g_.nodes[expand];
      const std::vector<int64_t> axis =
          en.inputs.size() == 2 ? KnownInts(facts_, en.inputs[1]) : std::vector<int64_t>{};
      if (axis.size() != 1 || (axis[0] != 1 && axis[0] != -3) || en.inputs[0].output != 0 ||
          !ReadOnlyBy(expand, conv))
        return false;
      s2b = en.inputs[0].node;
    }
    const FlatNode& sn = g_.nodes[s2b];
    if (sn.op != "SpaceToBatchND" || sn.inputs.size() != 3 ||
        !ReadOnlyBy(s2b, expand >= 0 ? expand : conv))
      return false;
    // Its input's blocked dims (known), block, paddings and crops.
    const TensorSpec* x = SpecAt(facts_, sn.inputs[0]);
    const std::vector<int64_t> block = KnownInts(facts_, sn.inputs[1]);
    const std::vector<int64_t> paddings = KnownInts(facts_, sn.inputs[2]);
    const std::vector<int64_t> crops = KnownInts(facts_, bn.inputs[2]);
    const size_t rank = expand >= 0 ? 3 : 4;
    const size_t m = block.size();
    if (x == nullptr || x->shape.unknown_rank() || x->shape.rank() != static_cast<int>(rank) ||
        m == 0 || m > rank - 2 || KnownInts(facts_, bn.inputs[1]) != block ||
        paddings.size() != 2 * m || crops.size() != 2 * m)
      return false;
    // The convolution's H and W: its dilations and explicit padding. A Conv1D's one blocked
    // dim is W (the ExpandDims made H of size 1).
    std::vector<int64_t> dilations = {1, 1, 1, 1}, pads(8, 0);
    for (size_t i = 0; i < m; ++i) {
      const int64_t len = x->shape.dim(static_cast<int>(i) + 1);
      const int64_t before = paddings[2 * i] - crops[2 * i];
      const int64_t after = paddings[2 * i + 1] - crops[2 * i + 1];
      if (block[i] < 1 || len < 0 || paddings[2 * i] < 0 || paddings[2 * i + 1] < 0 || before < 0 ||
          after < 0 || (len + paddings[2 * i] + paddings[2 * i + 1]) % block[i] != 0)
        return false;
      const size_t dim = expand >= 0 ? 2 : i + 1;  // in NHWC
      if (std::find(squeezed.begin(), squeezed.end(), static_cast<int64_t>(dim)) != squeezed.end())
        return false;
      dilations[dim] = block[i];
      pads[2 * dim] = before;
      pads[2 * dim + 1] = after;
    }
    // Rewrite: the convolution (or its ExpandDims) reads x; readers of the BatchToSpaceND read
    // the convolution (or its Squeeze).
    g_.owned_attrs.push_back(*c.attrs);
    ProtoAttrMap& attrs = g_.owned_attrs.back();
    attrs["padding"].set_s("EXPLICIT");
    auto* list = attrs["explicit_paddings"].mutable_list();
    list->Clear();
    for (int64_t p : pads) list->add_i(p);
    auto* dl = attrs["dilations"].mutable_list();
    dl->Clear();
    for (int64_t d : dilations) dl->add_i(d);
    c.attrs = &attrs;
    const int first = expand >= 0 ? expand : conv;
    const int last = squeeze >= 0 ? squeeze : conv;
    g_.nodes[first].inputs[0] = sn.inputs[0];
    Replace(s2b, first, /*reads=*/false);
    Replace(b, last, /*reads=*/true);
    return true;
  }

  // What `from` waited for, `to` waits for; what waited for `from` waits for `to`; with
  // `reads`, readers of `from`'s output 0 read `to`'s.
  void Replace(int from, int to, bool reads) {
    std::vector<int>& waits = g_.nodes[to].control_inputs;
    for (int c : g_.nodes[from].control_inputs) waits.push_back(c);
    std::sort(waits.begin(), waits.end());
    waits.erase(std::unique(waits.begin(), waits.end()), waits.end());
    for (size_t v = 0; v < g_.nodes.size(); ++v) {
      FlatNode& n = g_.nodes[v];
      if (!Live(static_cast<int>(v)) || static_cast<int>(v) == from) continue;
      if (reads)
        for (Edge& e : n.inputs)
          if (e.node == from) e = Edge{to, 0};
      if (static_cast<int>(v) == to) {
        std::erase(n.control_inputs, from);
      } else if (std::find(n.control_inputs.begin(), n.control_inputs.end(), from) !=
                 n.control_inputs.end()) {
        std::replace(n.control_inputs.begin(), n.control_inputs.end(), from, to);
        std::sort(n.control_inputs.begin(), n.control_inputs.end());
        n.control_inputs.erase(std::unique(n.control_inputs.begin(), n.control_inputs.end()),
                               n.control_inputs.end());
      }
    }
    if (reads)
      for (Edge& e : g_.outputs)
        if (e.node == from) e = Edge{to, 0};
  }

  FlatGraph& g_;
  const std::vector<NodeFacts>& facts_;
  const std::vector<char>& live_;
  std::vector<int> readers_;  // per node: edges that read it (outputs count twice)
};

}  // namespace dilated_convolution

bool HasSpaceToBatch(const FlatGraph& g, const std::vector<char>& live) {
  for (size_t v = 0; v < g.nodes.size(); ++v)
    if (v < live.size() && live[v] && g.nodes[v].op == "SpaceToBatchND") return true;
  return false;
}

int FoldSpaceToBatchConvolutions(FlatGraph* g, const std::vector<NodeFacts>& facts,
                                 const std::vector<char>& live) {
  return dilated_convolution::Folder(g, facts, live).Run();
}

}  // namespace kiln::exec
