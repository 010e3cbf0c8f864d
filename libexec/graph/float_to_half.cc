#include "graph/float_to_half.h"

#include <map>
#include <string>
#include <string_view>
#include <utility>

#include "executor/half_precision.h"
#include "kiln/core/proto_convert.h"

namespace kiln::exec {
namespace {

// Ops that compute in the half type (the GPU's kernels accumulate in float32 inside): TF's AMP
// allow and infer lists, less what loses accuracy there. Only ops typed by one attr "T" (ops
// with several type attrs, such as GatherV2 and BatchMatMulV3, are left as they are).
bool ComputesInHalf(std::string_view op) {
  static constexpr std::string_view kOps[] = {"Add",
                                              "AddN",
                                              "AddV2",
                                              "AvgPool",
                                              "BatchMatMul",
                                              "BatchMatMulV2",
                                              "BiasAdd",
                                              "ConcatV2",
                                              "Conv2D",
                                              "Conv2DBackpropInput",
                                              "DepthToSpace",
                                              "DepthwiseConv2dNative",
                                              "Einsum",
                                              "Elu",
                                              "Erf",
                                              "ExpandDims",
                                              "Identity",
                                              "LeakyRelu",
                                              "MatMul",
                                              "MaxPool",
                                              "Maximum",
                                              "Mean",
                                              "Minimum",
                                              "Mul",
                                              "Neg",
                                              "Pack",
                                              "Pad",
                                              "PadV2",
                                              "RealDiv",
                                              "Relu",
                                              "Relu6",
                                              "Reshape",
                                              "ResizeNearestNeighbor",
                                              "Rsqrt",
                                              "Selu",
                                              "Sigmoid",
                                              "Slice",
                                              "Softmax",
                                              "SpaceToDepth",
                                              "Split",
                                              "SplitV",
                                              "Square",
                                              "SquaredDifference",
                                              "Squeeze",
                                              "StopGradient",
                                              "StridedSlice",
                                              "Sub",
                                              "Tanh",
                                              "Tile",
                                              "Transpose",
                                              "Unpack"};
  for (std::string_view o : kOps)
    if (o == op) return true;
  return false;
}

class FloatToHalf {
 public:
  FloatToHalf(FlatGraph* g, const std::vector<NodeFacts>& facts, const std::vector<char>& live,
              DType half)
      : g_(*g), facts_(facts), live_(live), half_(half) {}

  int Run() {
    const int n = static_cast<int>(g_.nodes.size());
    converted_.assign(static_cast<size_t>(n), 0);
    int count = 0;
    for (int v = 0; v < n; ++v) {
      const FlatNode& node = g_.nodes[v];
      if (!live_[v] || !ComputesInHalf(node.op) || node.TypeAttr() != DType::kFloat) continue;
      converted_[v] = 1;
      ++count;
    }
    if (count == 0) return 0;
    // Readers first (their inputs still name the original nodes), then the converted nodes'
    // types, then the results.
    for (int v = 0; v < n; ++v) {
      if (!live_[v]) continue;
      FlatNode& node = g_.nodes[v];
      for (Edge& e : node.inputs) {
        if (!IsFloat(e)) continue;
        if (converted_[v] && !converted_[e.node])
          e = HalfOf(e);
        else if (!converted_[v] && converted_[e.node])
          e = FloatOf(e);
      }
    }
    for (Edge& e : g_.outputs)
      if (e.node < n && converted_[e.node] && IsFloat(e)) e = FloatOf(e);
    for (int v = 0; v < n; ++v) {
      if (!converted_[v]) continue;
      FlatNode& node = g_.nodes[v];
      g_.owned_attrs.push_back(*node.attrs);
      g_.owned_attrs.back()["T"].set_type(static_cast<tensorflow::DataType>(DTypeToProto(half_)));
      node.attrs = &g_.owned_attrs.back();
    }
    return count;
  }

 private:
  // Whether the value on edge e is float32 (as the analysis found it).
  bool IsFloat(const Edge& e) const {
    const TensorSpec* s = SpecAt(facts_, e);
    return s != nullptr && s->dtype == DType::kFloat;
  }

  // The half form of float32 value e: a constant rounded once, or a Cast (one per value).
  Edge HalfOf(const Edge& e) {
    const auto key = std::make_pair(e.node, e.output);
    if (auto it = to_half_.find(key); it != to_half_.end()) return Edge{it->second, 0};
    const Tensor* value = ValueAt(facts_, e);
    const std::string name = g_.nodes[e.node].name + "/as_half_" + std::to_string(e.output);
    Edge made;
    Result<Tensor> rounded =
        value != nullptr ? CastNow(*value, half_) : Result<Tensor>(NotFound("not a constant"));
    if (rounded.ok()) {
      made = AddConstNode(&g_, name, std::move(*rounded));
    } else {
      made = AddCastNode(&g_, e, DType::kFloat, half_, name);
    }
    to_half_.emplace(key, made.node);
    return made;
  }

  // The float32 form of converted value e, for a reader kept in float32 or a result.
  Edge FloatOf(const Edge& e) {
    const auto key = std::make_pair(e.node, e.output);
    if (auto it = to_float_.find(key); it != to_float_.end()) return Edge{it->second, 0};
    const Edge made =
        AddCastNode(&g_, e, half_, DType::kFloat,
                    g_.nodes[e.node].name + "/as_float32_" + std::to_string(e.output));
    to_float_.emplace(key, made.node);
    return made;
  }

  FlatGraph& g_;
  const std::vector<NodeFacts>& facts_;
  const std::vector<char>& live_;
  const DType half_;
  std::vector<char> converted_;
  std::map<std::pair<int, int>, int> to_half_, to_float_;
};

}  // namespace

int ComputeFloatToHalf(FlatGraph* g, const std::vector<NodeFacts>& facts,
                       const std::vector<char>& live, DType half) {
  return FloatToHalf(g, facts, live, half).Run();
}

int MarkTf32(FlatGraph* g, const std::vector<char>& live) {
  static constexpr std::string_view kOps[] = {"MatMul",
                                              "_FusedMatMul",
                                              "BatchMatMul",
                                              "BatchMatMulV2",
                                              "Einsum",
                                              "Conv2D",
                                              "_FusedConv2D",
                                              "DepthwiseConv2dNative",
                                              "_FusedDepthwiseConv2dNative",
                                              "Conv2DBackpropInput"};
  int marked = 0;
  for (int v = 0; v < static_cast<int>(g->nodes.size()); ++v) {
    FlatNode& n = g->nodes[v];
    if ((v < static_cast<int>(live.size()) && !live[v]) || n.TypeAttr() != DType::kFloat) continue;
    bool product = false;
    for (std::string_view op : kOps) product = product || op == n.op;
    if (!product) continue;
    g->owned_attrs.push_back(*n.attrs);
    g->owned_attrs.back()["_kiln_allow_tf32"].set_b(true);
    n.attrs = &g->owned_attrs.back();
    ++marked;
  }
  return marked;
}

}  // namespace kiln::exec
