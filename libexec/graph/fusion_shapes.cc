// Prepare-time fusion (fusion.h): a proof that two tensors have the same shape when the shapes the
// first look found leave dims unknown. A residual Add fuses into the producer only when its
// operands' shapes are equal; a Keras model's batch dim is unknown until a call, so equal known
// dims alone prove nothing. An unknown dim is traced back through the ops that pass it on
// unchanged to the tensor it comes from; two unknown dims with the same source are equal, as
// grappler's symbolic shapes decide TF's own _FusedConv2D with an Add.
#include <algorithm>
#include <array>
#include <string_view>

#include "graph/fusion_pass.h"

namespace kiln::exec::fusion_detail {
namespace {

// Deeper than this, a dim is its own source: no proof, no fusion (and a bounded stack).
constexpr int kMaxDepth = 256;

// Ops whose output 0 has input 0's shape.
bool KeepsShape(std::string_view op) {
  static constexpr std::array<std::string_view, 28> kOps = {
      "Identity", "Snapshot", "StopGradient", "Relu", "Relu6", "Elu", "Selu", "LeakyRelu", "Tanh",
      "Sigmoid", "Cast", "Neg", "Abs", "Exp", "Softplus", "Softsign", "Square", "Sqrt", "Rsqrt",
      "Erf", "BiasAdd", "FusedBatchNorm", "FusedBatchNormV2", "FusedBatchNormV3",
      // an int8 bundle's activations
      "FakeQuantWithMinMaxArgs", "FakeQuantWithMinMaxVars", "FakeQuantWithMinMaxVarsPerChannel",
      "CheckNumerics"};
  return std::find(kOps.begin(), kOps.end(), op) != kOps.end();
}

// Element-wise binary ops, whose output's dims broadcast their inputs'.
bool Broadcasts(std::string_view op) {
  static constexpr std::array<std::string_view, 9> kOps = {
      "AddV2",   "Add", "Sub", "Mul", "RealDiv", "Maximum", "Minimum", "SquaredDifference",
      "DivNoNan"};
  return std::find(kOps.begin(), kOps.end(), op) != kOps.end();
}

// NHWC windows: the batch passes through, and a spatial dim where the stride is 1 and the
// padding keeps the size (SAME, or VALID with a window of 1).
bool IsWindowOp(std::string_view op) {
  return op == "Conv2D" || op == "_FusedConv2D" || op == "DepthwiseConv2dNative" ||
         op == "_FusedDepthwiseConv2dNative" || op == "MaxPool" || op == "AvgPool";
}

}  // namespace

const PartialShape* Fuser::ShapeOf(const Edge& e) const {
  if (e.node < 0 || e.node >= static_cast<int>(facts_.size())) return nullptr;
  const std::vector<TensorSpec>& specs = facts_[e.node].specs;
  return e.output < static_cast<int>(specs.size()) ? &specs[e.output].shape : nullptr;
}

Fuser::DimSource Fuser::SourceOf(const Edge& e, int d, int depth) {
  const DimSource self{e.node, e.output, d};
  if (e.node < 0 || e.node >= static_cast<int>(facts_.size()) || depth > kMaxDepth) return self;
  const auto key = std::make_tuple(e.node, e.output, d);
  if (auto it = dim_sources_.find(key); it != dim_sources_.end()) return it->second;
  const FlatNode& n = g_.nodes[e.node];
  const PartialShape* out = ShapeOf(e);
  DimSource found = self;
  if (out == nullptr || out->unknown_rank() || d >= out->rank() || out->dim(d) >= 0 ||
      n.inputs.empty()) {
    // Known, or nothing to trace.
  } else if (e.output == 0 && KeepsShape(n.op)) {
    const PartialShape* in = ShapeOf(n.inputs[0]);
    if (in != nullptr && in->rank() == out->rank()) found = SourceOf(n.inputs[0], d, depth + 1);
  } else if (e.output == 0 && Broadcasts(n.op) && n.inputs.size() == 2) {
    // The inputs that can make this dim: unknown there (a known 1 or a missing dim broadcasts).
    std::vector<DimSource> from;
    bool no_proof = false;  // an input of unknown rank, or a known size above 1 sets the dim
    for (const Edge& in : n.inputs) {
      const PartialShape* s = ShapeOf(in);
      if (s == nullptr || s->unknown_rank()) {
        no_proof = true;
        break;
      }
      const int at = d - (out->rank() - s->rank());
      if (at < 0 || s->dim(at) == 1) continue;
      if (s->dim(at) > 1) {
        no_proof = true;
        break;
      }
      from.push_back(SourceOf(in, at, depth + 1));
    }
    if (!no_proof && !from.empty() &&
        std::all_of(from.begin(), from.end(), [&](const DimSource& s) { return s == from[0]; }))
      found = from[0];
  } else if (e.output == 0 && IsWindowOp(n.op) && out->rank() == 4) {
    const AttrReader attrs = n.reader();
    const Result<std::string> format = attrs.GetString("data_format", "NHWC");
    const Result<std::string> padding = attrs.GetString("padding", "");
    const Result<std::vector<int64_t>> strides = attrs.GetIntList("strides");
    const PartialShape* in = ShapeOf(n.inputs[0]);
    if (format.ok() && *format == "NHWC" && in != nullptr && in->rank() == 4) {
      bool keeps = d == 0;
      if (d == 1 || d == 2) {
        const bool conv = n.op.find("Conv") != std::string_view::npos;
        const PartialShape* filter = conv && n.inputs.size() > 1 ? ShapeOf(n.inputs[1]) : nullptr;
        Result<std::vector<int64_t>> ksize = attrs.GetIntList("ksize");
        const int64_t window =
            conv ? (filter != nullptr && filter->rank() == 4 ? filter->dim(d - 1) : -1)
                 : (ksize.ok() && ksize->size() == 4 ? (*ksize)[d] : -1);
        const bool stride1 = strides.ok() && strides->size() == 4 && (*strides)[d] == 1;
        keeps =
            stride1 && padding.ok() && (*padding == "SAME" || (*padding == "VALID" && window == 1));
      }
      if (keeps) found = SourceOf(n.inputs[0], d, depth + 1);
    }
  } else if (e.output == 0 && (n.op == "MatMul" || n.op == "_FusedMatMul") && d == 0 &&
             out->rank() == 2) {
    const Result<bool> transpose_a = n.reader().GetBool("transpose_a", false);
    if (transpose_a.ok() && !*transpose_a) found = SourceOf(n.inputs[0], 0, depth + 1);
  }
  dim_sources_[key] = found;
  return found;
}

bool Fuser::SameShape(const Edge& a, const Edge& b) {
  const PartialShape* sa = ShapeOf(a);
  const PartialShape* sb = ShapeOf(b);
  if (sa == nullptr || sb == nullptr || sa->unknown_rank() || sa->rank() != sb->rank())
    return false;
  for (int d = 0; d < sa->rank(); ++d) {
    if (sa->dim(d) >= 0 || sb->dim(d) >= 0) {
      if (sa->dim(d) != sb->dim(d)) return false;
    } else if (!(SourceOf(a, d) == SourceOf(b, d))) {
      return false;
    }
  }
  return true;
}

}  // namespace kiln::exec::fusion_detail
