#include "graph/half_in_float.h"

#include <algorithm>
#include <map>
#include <string>
#include <string_view>
#include <utility>

#include "executor/half_precision.h"

namespace kiln::exec {
namespace {

// Ops kept in half precision although they take float32: their results' structure depends on
// which values are exactly equal, which rounding decides; or they jump where a value crosses an
// integer or zero, so the half rounding of their input decides the result (TF's floor of
// cast(0.99999, float16) is 1, of the float32 value 0).
bool KeepsHalf(std::string_view op) {
  static constexpr std::string_view kKeep[] = {"Unique",
                                               "UniqueV2",
                                               "UniqueWithCounts",
                                               "UniqueWithCountsV2",
                                               "Floor",
                                               "Ceil",
                                               "Round",
                                               "Rint",
                                               "Sign",
                                               "FloorDiv",
                                               "FloorMod",
                                               "Mod",
                                               "TruncateDiv",
                                               "TruncateMod"};
  for (std::string_view k : kKeep)
    if (op == k) return true;
  return false;
}

// Ops that read only their input's shape: a region's value serves them as it is.
bool ReadsShapeOnly(std::string_view op) { return op == "Shape" || op == "Size" || op == "Rank"; }

bool CallsFunctions(const ProtoAttrMap& attrs) {
  for (const auto& [name, value] : attrs)
    if (value.has_func() || value.list().func_size() > 0) return true;
  return false;
}

class HalfInFloat {
 public:
  HalfInFloat(FlatGraph* g, const std::vector<NodeFacts>& facts, const std::vector<char>& live)
      : g_(*g), facts_(facts), live_(live), half_(g->nodes.size(), DType::kInvalid) {}

  int Run(FunctionRef<bool(int)> accepts_float) {
    const int n = static_cast<int>(g_.nodes.size());
    for (int v = 0; v < n; ++v) {
      half_[v] = Candidate(v);
      if (half_[v] != DType::kInvalid && !accepts_float(v)) half_[v] = DType::kInvalid;
    }
    // Regions of candidates joined by half values. A lone node gains nothing over its own
    // kernel (or the widening between casts) unless it is worth it alone (LoneWorthIt).
    std::vector<int> parent(n);
    for (int v = 0; v < n; ++v) parent[v] = v;
    auto find = [&](int v) {
      while (parent[v] != v) v = parent[v] = parent[parent[v]];
      return v;
    };
    for (int v = 0; v < n; ++v) {
      if (half_[v] == DType::kInvalid) continue;
      for (const Edge& e : g_.nodes[v].inputs)
        if (e.node < n && half_[e.node] == half_[v] && Converted(e)) parent[find(e.node)] = find(v);
    }
    std::vector<int> size(n, 0);
    for (int v = 0; v < n; ++v)
      if (half_[v] != DType::kInvalid) ++size[find(v)];
    std::vector<std::vector<int>> readers(n);
    for (int v = 0; v < n; ++v)
      for (const Edge& e : g_.nodes[v].inputs)
        if (e.node < n) readers[e.node].push_back(v);
    for (const Edge& e : g_.outputs)
      if (e.node < n) readers[e.node].push_back(-1);
    std::vector<char> lone_ok(n, 0);
    for (int v = 0; v < n; ++v)
      lone_ok[v] = half_[v] != DType::kInvalid && size[find(v)] < 2 && LoneWorthIt(v, readers[v]);
    int converted = 0;
    for (int v = 0; v < n; ++v) {
      if (half_[v] != DType::kInvalid && size[find(v)] < 2 && !lone_ok[v])
        half_[v] = DType::kInvalid;
      converted += half_[v] != DType::kInvalid;
    }
    if (converted == 0) return 0;
    for (int v = 0; v < n; ++v) {
      if (!live_[v]) continue;
      if (half_[v] != DType::kInvalid) {
        Convert(v);
      } else {
        for (size_t i = 0; i < g_.nodes[v].inputs.size(); ++i) LeaveRegion(v, i);
      }
    }
    for (Edge& e : g_.outputs)
      if (Converted(e)) e = HalfOf(e);
    ReadThroughForwardedCasts();
    ForgetBypassedCasts();
    return converted;
  }

 private:
  // The half type node v computes in when it is to compute in float32 instead, else kInvalid.
  DType Candidate(int v) const {
    const FlatNode& node = g_.nodes[v];
    if (!live_[v] || node.def == nullptr || node.attrs == nullptr || node.stateful ||
        (node.def->flags & kOpStateful) != 0 || !MayWiden(node.op) || KeepsHalf(node.op) ||
        CallsFunctions(*node.attrs) || v >= static_cast<int>(facts_.size()))
      return DType::kInvalid;
    std::vector<TensorSpec> inputs;
    for (const Edge& e : node.inputs) {
      const TensorSpec* s = SpecAt(facts_, e);
      if (s == nullptr) return DType::kInvalid;
      inputs.push_back(*s);
    }
    const DType half = HalfTypeOf(node.reader(), inputs);
    if (half == DType::kInvalid) return half;
    // Only nodes that make a half value (not Shape or Equal of one), and none that hold lists
    // or resources whose element types another node decides.
    bool makes_half = false;
    auto opaque = [](const TensorSpec& s) {
      return s.dtype == DType::kVariant || s.dtype == DType::kResource;
    };
    for (const TensorSpec& s : facts_[v].specs) {
      makes_half |= s.dtype == half;
      if (opaque(s)) return DType::kInvalid;
    }
    for (const TensorSpec& s : inputs)
      if (opaque(s)) return DType::kInvalid;
    return makes_half ? half : DType::kInvalid;
  }

  // A node alone is worth computing in float32 where that adds no Cast: each of its half
  // inputs is a Cast from float32 (read around) and each reader a Cast to float32 (read
  // through), as Keras's mixed-precision convolution without a bias sits between its AutoCasts
  // and the batch norm's float32 Cast. A matrix product or convolution always is: the host's
  // float32 kernels for those are far faster than its half ones, and the float32 form lets the
  // batch norm after it fold in.
  bool LoneWorthIt(int v, const std::vector<int>& readers) const {
    static constexpr std::string_view kHeavy[] = {
        "Conv2D",        "Conv3D",      "DepthwiseConv2dNative",
        "MatMul",        "BatchMatMul", "BatchMatMulV2",
        "BatchMatMulV3", "Einsum",      "Conv2DBackpropInput"};
    const FlatNode& node = g_.nodes[v];
    if (std::find(std::begin(kHeavy), std::end(kHeavy), node.op) != std::end(kHeavy)) return true;
    for (const Edge& e : node.inputs) {
      const TensorSpec* s = SpecAt(facts_, e);
      if (s != nullptr && s->dtype == half_[v] && !CastFrom(e.node, DType::kFloat)) return false;
    }
    for (int r : readers)
      if (r < 0 || !IsCastTo(r, DType::kFloat)) return false;
    return true;
  }

  // Whether node c is a Cast of one float32 value (CastFrom) or to float32 (IsCastTo). A Cast
  // with Truncate=True is no CastFrom: a region reads its truncated result, not around it.
  bool CastFrom(int c, DType from) const {
    const FlatNode& p = g_.nodes[c];
    if (p.op != "Cast" || p.inputs.size() != 1) return false;
    if (p.attrs != nullptr)
      if (auto t = p.attrs->find("Truncate"); t != p.attrs->end() && t->second.b()) return false;
    const TensorSpec* s = SpecAt(facts_, p.inputs[0]);
    return s != nullptr && s->dtype == from;
  }
  bool IsCastTo(int c, DType to) const {
    const FlatNode& p = g_.nodes[c];
    return p.op == "Cast" && p.inputs.size() == 1 && p.attrs != nullptr &&
           p.attrs->find("DstT") != p.attrs->end() &&
           p.attrs->at("DstT").type() == DTypeToProto(to);
  }

  bool Converted(const Edge& e) const {
    if (e.node >= static_cast<int>(half_.size()) || half_[e.node] == DType::kInvalid) return false;
    const TensorSpec* s = SpecAt(facts_, e);
    return s != nullptr && s->dtype == half_[e.node];
  }

  // Node v's type attrs read float32 for its half type; its half inputs read float32 values.
  void Convert(int v) {
    const DType half = half_[v];
    const int half_proto = DTypeToProto(half);
    g_.owned_attrs.push_back(*g_.nodes[v].attrs);
    ProtoAttrMap& attrs = g_.owned_attrs.back();
    for (auto& [name, value] : attrs) {
      if (value.value_case() == tensorflow::AttrValue::kType && value.type() == half_proto)
        value.set_type(tensorflow::DT_FLOAT);
      if (value.has_list())
        for (int i = 0; i < value.list().type_size(); ++i)
          if (value.list().type(i) == half_proto)
            value.mutable_list()->set_type(i, tensorflow::DT_FLOAT);
    }
    g_.nodes[v].attrs = &attrs;
    for (size_t i = 0; i < g_.nodes[v].inputs.size(); ++i) {
      const Edge e = g_.nodes[v].inputs[i];
      const TensorSpec* s = SpecAt(facts_, e);
      if (s == nullptr || s->dtype != half || Converted(e)) continue;
      const Edge wide = FloatOf(e);  // may move the nodes
      g_.nodes[v].inputs[i] = wide;
    }
  }

  // Input i of node v, kept in half precision, reads a converted node: a Cast to float32 reads
  // the float32 value itself; anything else reads it cast back.
  void LeaveRegion(int v, size_t i) {
    const Edge e = g_.nodes[v].inputs[i];
    if (!Converted(e)) {
      ShapeOfCast(v, i);
      return;
    }
    FlatNode& node = g_.nodes[v];
    // A Cast to float32: its readers read the region's value (so fusion chains continue).
    if (IsCastTo(v, DType::kFloat)) {
      forwarded_.push_back(v);
      bypassed_.push_back(v);
      return;
    }
    if (ReadsShapeOnly(node.op) && node.attrs != nullptr) {  // the same shape in float32
      g_.owned_attrs.push_back(*node.attrs);
      ProtoAttrMap& attrs = g_.owned_attrs.back();
      attrs["T"].set_type(tensorflow::DT_FLOAT);
      g_.nodes[v].attrs = &attrs;
      return;
    }
    const Edge half = HalfOf(e);  // may move the nodes
    g_.nodes[v].inputs[i] = half;
  }

  // Readers of a Cast to float32 of a region's value read that value itself.
  void ReadThroughForwardedCasts() {
    std::vector<char> forwarded(g_.nodes.size(), 0);
    for (int c : forwarded_) forwarded[c] = 1;
    auto through = [&](Edge& e) {
      if (forwarded[e.node]) e = g_.nodes[e.node].inputs[0];
    };
    for (FlatNode& node : g_.nodes)
      for (Edge& e : node.inputs) through(e);
    for (Edge& e : g_.outputs) through(e);
  }

  // A Cast that converted nodes now read around, and nothing else reads, would
  // still run for the inliner's "call done" sinks, which wait on every node of a call: they wait
  // for the Cast's input instead.
  void ForgetBypassedCasts() {
    std::sort(bypassed_.begin(), bypassed_.end());
    bypassed_.erase(std::unique(bypassed_.begin(), bypassed_.end()), bypassed_.end());
    std::vector<char> read(g_.nodes.size(), 0);
    for (const FlatNode& node : g_.nodes)
      for (const Edge& e : node.inputs) read[e.node] = 1;
    for (const Edge& e : g_.outputs) read[e.node] = 1;
    std::vector<int> instead(g_.nodes.size(), -1);
    bool any = false;
    for (int c : bypassed_) {
      if (read[c]) continue;
      instead[c] = g_.nodes[c].inputs[0].node;
      any = true;
    }
    if (!any) return;
    for (int v = 0; v < static_cast<int>(g_.nodes.size()); ++v) {
      std::vector<int>& waits = g_.nodes[v].control_inputs;
      bool changed = false;
      for (int& c : waits)
        if (instead[c] >= 0) {
          c = instead[c];
          changed = true;
        }
      if (!changed) continue;
      std::erase(waits, v);
      std::sort(waits.begin(), waits.end());
      waits.erase(std::unique(waits.begin(), waits.end()), waits.end());
    }
  }

  // A Shape (Size, Rank) of a half value cast from float32 takes the float32 value's shape, so
  // the Cast need not run for it (Keras's Tensordot takes the Shape of each Dense's input).
  void ShapeOfCast(int v, size_t i) {
    const Edge e = g_.nodes[v].inputs[i];
    const FlatNode& p = g_.nodes[e.node];
    if (!ReadsShapeOnly(g_.nodes[v].op) || g_.nodes[v].attrs == nullptr || p.op != "Cast" ||
        p.inputs.size() != 1)
      return;
    const TensorSpec* from = SpecAt(facts_, p.inputs[0]);
    const TensorSpec* half = SpecAt(facts_, e);
    if (from == nullptr || half == nullptr || from->dtype != DType::kFloat ||
        (half->dtype != DType::kHalf && half->dtype != DType::kBFloat16))
      return;
    const Edge wide = p.inputs[0];
    bypassed_.push_back(e.node);
    g_.owned_attrs.push_back(*g_.nodes[v].attrs);
    g_.owned_attrs.back()["T"].set_type(tensorflow::DT_FLOAT);
    g_.nodes[v].attrs = &g_.owned_attrs.back();
    g_.nodes[v].inputs[i] = wide;
  }

  // The float32 form of half value `e` that a converted node reads.
  Edge FloatOf(const Edge& e) {
    if (CastFrom(e.node, DType::kFloat)) {
      bypassed_.push_back(e.node);
      return g_.nodes[e.node].inputs[0];
    }
    return CastOf(e, SpecAt(facts_, e)->dtype, DType::kFloat, &to_float_);
  }

  // The half form of converted value `e` that a node kept in half precision (or the function's
  // result) reads.
  Edge HalfOf(const Edge& e) { return CastOf(e, DType::kFloat, half_[e.node], &to_half_); }

  // One Cast node per value and direction.
  Edge CastOf(const Edge& e, DType from, DType to, std::map<std::pair<int, int>, int>* made) {
    const auto key = std::make_pair(e.node, e.output);
    if (auto it = made->find(key); it != made->end()) return Edge{it->second, 0};
    const Edge cast =
        AddCastNode(&g_, e, from, to,
                    g_.nodes[e.node].name + (to == DType::kFloat ? "/as_float32_" : "/as_half_") +
                        std::to_string(e.output));
    made->emplace(key, cast.node);
    return cast;
  }

  FlatGraph& g_;
  const std::vector<NodeFacts>& facts_;
  const std::vector<char>& live_;
  std::vector<DType> half_;  // per original node: the half type it computes in float32 instead
  std::map<std::pair<int, int>, int> to_float_, to_half_;
  std::vector<int> bypassed_;   // Casts that converted nodes or their readers read around
  std::vector<int> forwarded_;  // Casts to float32 of a region's value
};

}  // namespace

int ComputeHalfInFloat(FlatGraph* g, const std::vector<NodeFacts>& facts,
                       const std::vector<char>& live, FunctionRef<bool(int)> accepts_float) {
  return HalfInFloat(g, facts, live).Run(accepts_float);
}

bool HasHalfTypeAttrs(const FlatGraph& g, const std::vector<char>& live) {
  for (size_t v = 0; v < g.nodes.size(); ++v) {
    const FlatNode& node = g.nodes[v];
    if (!live[v] || node.attrs == nullptr) continue;
    for (const auto& [name, value] : *node.attrs) {
      if (value.type() == tensorflow::DT_HALF || value.type() == tensorflow::DT_BFLOAT16)
        return true;
      for (int t : value.list().type())
        if (t == tensorflow::DT_HALF || t == tensorflow::DT_BFLOAT16) return true;
    }
  }
  return false;
}

}  // namespace kiln::exec
