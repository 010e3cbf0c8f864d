// int8 SavedModels (`savedmodel-cli quantize --mode int8`, docs/quantize.md) hold each product's
// input as FakeQuantWithMinMaxArgs(x) and its weights as int8 levels times per-channel scales
// (quantization-aware training's graphs likewise, with FakeQuantWithMinMaxVars and weights
// through a per-channel FakeQuant of constants, which prepare folds to such levels).
// Where both hold, a Conv2D, DepthwiseConv2dNative or MatMul (fused or not) becomes the integer
// form of kernels/cpu/int8_product_ops.cc, which reads x and the FakeQuant's range and rounds x
// itself, and takes its weights as int8 levels with the scales in attr weight_scales; a
// FakeQuant nothing else reads is then pruned, and a zero Pad before it becomes the product's
// padding. Products chained through one range then pass its levels from one to the next as
// bytes (ChainInt8Products).
#include <algorithm>
#include <map>
#include <optional>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "graph/fusion_pass.h"
#include "kernels/int8_weights.h"

namespace kiln::exec::fusion_detail {
namespace {

bool Flag(const AttrReader& a, std::string_view name) {
  const Result<bool> b = a.GetBool(name, false);
  return b.ok() && *b;
}

// A convolution's layout: NHWC unless data_format says otherwise.
bool ChannelsLast(const AttrReader& a) {
  if (!a.Has("data_format")) return true;
  const Result<std::string> f = a.GetString("data_format");
  return f.ok() && *f == "NHWC";
}

// An integer product of QuantizeProducts.
bool IsInt8Product(const FlatNode& n) { return n.op.starts_with("_KilnInt8"); }

}  // namespace

// Whether node `fq` is an 8-bit FakeQuant of a range integer kernels take without a zero point:
// [0, max] with 256 levels, or [-max, max] with 255 (narrow). FakeQuantWithMinMaxArgs holds the
// range in attrs (savedmodel-cli quantize); FakeQuantWithMinMaxVars in scalar inputs known at
// prepare time (quantization-aware training's variables, read-only once loaded).
bool Fuser::Int8Range(int fq, float* lo, float* hi, bool* narrow) const {
  const FlatNode& n = g_.nodes[fq];
  const bool vars = n.op == "FakeQuantWithMinMaxVars";
  if ((n.op != "FakeQuantWithMinMaxArgs" && !vars) || n.attrs == nullptr || !Live(fq)) return false;
  const AttrReader a = n.reader();
  const Result<int64_t> bits = a.GetInt("num_bits", 8);
  Result<float> min = a.GetFloat("min", -6.f), max = a.GetFloat("max", 6.f);
  if (vars) {
    if (n.inputs.size() != 3) return false;
    const Tensor* tmin = KnownValue(n.inputs[1]);
    const Tensor* tmax = KnownValue(n.inputs[2]);
    if (tmin == nullptr || tmax == nullptr || tmin->dtype() != DType::kFloat ||
        tmax->dtype() != DType::kFloat || tmin->NumElements() != 1 || tmax->NumElements() != 1)
      return false;
    min = tmin->data<float>()[0];
    max = tmax->data<float>()[0];
  }
  const Result<bool> nr = a.GetBool("narrow_range", false);
  if (!bits.ok() || !min.ok() || !max.ok() || !nr.ok() || *bits != 8 || !(*max > 0)) return false;
  if (*min != (*nr ? -*max : 0.f)) return false;
  *lo = *min;
  *hi = *max;
  *narrow = *nr;
  return true;
}

// The channels (last dim) of an NHWC tensor, as the first look found them, or -1. A Reshape to
// a shape computed at run time (Keras 3's Reshape layer: Pack(batch, *target_shape), as a
// squeeze-excite block's (1, 1, C)) has them from the Pack's last, constant element.
int64_t Fuser::InputChannels(const Edge& x) const {
  if (x.node >= static_cast<int>(facts_.size()) ||
      facts_[x.node].specs.size() <= static_cast<size_t>(x.output))
    return -1;
  const PartialShape& in = facts_[x.node].specs[x.output].shape;
  if (in.unknown_rank() || in.rank() != 4) return -1;
  if (in.dim(3) >= 0) return in.dim(3);
  const FlatNode& r = g_.nodes[x.node];
  if (r.op != "Reshape" || r.inputs.size() != 2) return -1;
  const FlatNode& pack = g_.nodes[r.inputs[1].node];
  if (pack.op != "Pack" || pack.inputs.size() != 4) return -1;
  const std::vector<int64_t> c = IntValues(pack.inputs[3]);
  return c.size() == 1 && c[0] > 0 ? c[0] : -1;
}

int Fuser::QuantizeProducts() {
  // The integer kernels are the host's; a load with an accelerator keeps the float ops.
  if (half_) return 0;
  int rewritten = 0;
  // The int8 weights made so far: by float32 weights, channels and layout.
  std::map<std::tuple<const Tensor*, int64_t, bool>, std::pair<Edge, std::vector<float>>> levels;
  const int n = static_cast<int>(g_.nodes.size());
  for (int v = 0; v < n; ++v) {
    if (!Live(v)) continue;
    const FlatNode& p = g_.nodes[v];
    const std::string& op = p.op;
    const bool conv = op == "Conv2D" || op == "_FusedConv2D";
    const bool depthwise = op == "DepthwiseConv2dNative" || op == "_FusedDepthwiseConv2dNative";
    // A batched product by one weight matrix (Keras's EinsumDense) is a matrix product of
    // the batches' rows.
    const bool batched = op == "BatchMatMul" || op == "BatchMatMulV2";
    const bool matmul = op == "MatMul" || op == "_FusedMatMul" || batched;
    if (!(conv || depthwise || matmul) || p.attrs == nullptr || TypeOf(p) != DType::kFloat ||
        p.inputs.size() < 2)
      continue;
    const AttrReader a = p.reader();
    if ((matmul && Flag(a, batched ? "adj_x" : "transpose_a")) || (!matmul && !ChannelsLast(a)))
      continue;
    if (a.Has("fused_ops")) {
      const auto fused = a.GetStringList("fused_ops");
      // The int8 kernels take a bias, an addend and an activation only.
      const auto has = [&](const char* op) {
        return std::find(fused->begin(), fused->end(), op) != fused->end();
      };
      if (!fused.ok() || has("FusedBatchNorm") || has("_KilnScaleShift") || has("_KilnShift"))
        continue;
    }
    float lo = 0, hi = 0;
    bool narrow = false;
    const int fq = p.inputs[0].node;
    if (!Int8Range(fq, &lo, &hi, &narrow)) continue;
    const Tensor* w = KnownValue(p.inputs[1]);
    if (w == nullptr || w->dtype() != DType::kFloat || w->NumElements() == 0) continue;
    // Whether a node other than this product still reads the FakeQuant (products rewritten
    // before read their own input).
    bool shared = false;
    for (const auto& [c, i] : uses_.data[fq])
      shared |= c != v && Live(c) && g_.nodes[c].inputs.size() > static_cast<size_t>(i) &&
                g_.nodes[c].inputs[i].node == fq;
    // A zero Pad only the FakeQuant reads (Keras's ZeroPadding2D before MobileNet's strided
    // depthwise convolutions) becomes the product's padding, as FoldPads does for floats: the
    // FakeQuant of 0 is 0 (TF nudges the range to hold it), level 0 here.
    Edge x = g_.nodes[fq].inputs[0];
    std::optional<std::vector<int64_t>> pads;
    const int pad = x.node;
    if ((conv || depthwise) && SoleConsumer(fq) == v && IsSolePad(x, fq)) {
      pads = PaddingWith(p, IntValues(g_.nodes[pad].inputs[1]));
      if (pads.has_value()) x = g_.nodes[pad].inputs[0];
    }
    // One group: the input's channels are the filter's (the kernel takes no groups).
    if (conv || depthwise) {
      if (w->rank() != 4 || InputChannels(x) != w->dim(2)) continue;
    } else if (w->rank() != 2) {
      continue;
    }
    // oneDNN has no fast integer kernel for a depth multiplier above 1 (its reference
    // gemm_s8s8s32 path ran 3-8x slower than the float convolution): those stay float.
    if (depthwise && w->dim(3) != 1) continue;
    const bool transpose_b = matmul && Flag(a, batched ? "adj_y" : "transpose_b");
    const int64_t channels = conv        ? w->dim(3)
                             : depthwise ? w->dim(2) * w->dim(3)
                                         : w->dim(transpose_b ? 0 : 1);
    // The weights as int8 levels, scales in attr weight_scales (the kernel's own form; one
    // constant for products sharing the weights): the float32 weights the load folded need not
    // live on, and the kernel does not search their grid again.
    const auto key = std::tuple(w, channels, transpose_b);
    auto found = levels.find(key);
    if (found == levels.end()) {
      Int8Weights q;
      if (!QuantizeOnGrid(w->data<float>(), w->NumElements(), channels, transpose_b, &q)) continue;
      Tensor t(DType::kInt8, w->shape());
      std::copy(q.levels.begin(), q.levels.end(), t.data<int8_t>());
      const std::string name = p.name + "/int8_weights";
      found = levels.emplace(key, std::pair(AddConstant(name, std::move(t)), std::move(q.scales)))
                  .first;
    }
    const auto& [weights, scales] = found->second;

    const FlatNode& pp = g_.nodes[v];  // AddConstant may have moved the nodes
    g_.owned_attrs.push_back(*pp.attrs);
    ProtoAttrMap& attrs = g_.owned_attrs.back();
    auto* scale_list = attrs["weight_scales"].mutable_list();
    for (float sc : scales) scale_list->add_f(sc);
    attrs["fq_min"].set_f(lo);
    attrs["fq_max"].set_f(hi);
    attrs["fq_narrow_range"].set_b(narrow);
    if (pads.has_value()) SetExplicitPadding(*pads, &attrs);
    if (batched) {
      attrs["batched"].set_b(true);
      attrs["transpose_a"].set_b(false);
      attrs["transpose_b"].set_b(transpose_b);
    }
    FlatNode& q = g_.nodes[v];
    q.op = conv        ? "_KilnInt8Conv2D"
           : depthwise ? "_KilnInt8DepthwiseConv2dNative"
                       : "_KilnInt8MatMul";
    q.def = FindOp(q.op);
    q.attrs = &attrs;
    q.inputs[0] = x;
    q.inputs[1] = weights;
    ++rewritten;
    // A FakeQuant (and Pad) no one reads any more goes; what waited for it waits for the
    // product.
    if (pads.has_value()) {
      MoveWaits({fq, pad}, v);
    } else if (!shared) {
      MoveWaits({fq}, v);
    }
  }
  return rewritten;
}

// Products whose result every reader takes as an integer product's input through the same
// FakeQuant range (MobileNet's expand, depthwise and project convolutions in a row, a Dense
// after a Dense) hand the levels over as bytes: the producer rounds its result to that range
// (attrs out_fq_*), its readers take the bytes (attr input_levels). The float result is never
// written, read back and rounded by each reader. A residual Add, a function output or any other
// reader keeps the floats.
int Fuser::ChainInt8Products() {
  if (!pruned_) return 0;  // unread nodes would still run, on bytes where they expect floats
  const std::vector<char> reach = Reachable();
  const Uses uses = FindUses(g_, reach);
  int chained = 0;
  for (int v = 0; v < static_cast<int>(g_.nodes.size()); ++v) {
    if (!reach[v] || !IsInt8Product(g_.nodes[v]) || uses.is_output[v]) continue;
    const AttrReader a = g_.nodes[v].reader();
    if (a.Has("out_fq_max")) continue;
    if (a.Has("fused_ops")) {
      const auto fused = a.GetStringList("fused_ops");
      if (!fused.ok() || std::find(fused->begin(), fused->end(), "Add") != fused->end()) continue;
    }
    // Its readers, past the Identity the fused chain's last node became.
    std::vector<int> via = {v}, readers;
    bool ok = true;
    for (size_t k = 0; k < via.size() && ok; ++k)
      for (const auto& [c, i] : uses.data[via[k]]) {
        const FlatNode& r = g_.nodes[c];
        if (r.op == "Identity" && r.inputs.size() == 1 && !uses.is_output[c] &&
            uses.control_dependents[c] == 0) {
          via.push_back(c);
        } else if (i == 0 && IsInt8Product(r)) {
          readers.push_back(c);
        } else {
          ok = false;
          break;
        }
      }
    if (!ok || readers.empty()) continue;
    float lo = 0, hi = 0;
    bool narrow = false;
    for (size_t k = 0; k < readers.size() && ok; ++k) {
      const AttrReader r = g_.nodes[readers[k]].reader();
      const Result<float> rlo = r.GetFloat("fq_min", 0.f), rhi = r.GetFloat("fq_max", 0.f);
      const Result<bool> rn = r.GetBool("fq_narrow_range", false);
      ok = rlo.ok() && rhi.ok() && rn.ok();
      if (ok && k == 0) std::tie(lo, hi, narrow) = std::tuple(*rlo, *rhi, *rn);
      ok = ok && *rlo == lo && *rhi == hi && *rn == narrow;
    }
    if (!ok) continue;

    g_.owned_attrs.push_back(*g_.nodes[v].attrs);
    ProtoAttrMap& attrs = g_.owned_attrs.back();
    attrs["out_fq_min"].set_f(lo);
    attrs["out_fq_max"].set_f(hi);
    attrs["out_fq_narrow_range"].set_b(narrow);
    g_.nodes[v].attrs = &attrs;
    for (int c : readers) {
      g_.owned_attrs.push_back(*g_.nodes[c].attrs);
      g_.owned_attrs.back()["input_levels"].set_b(true);
      g_.nodes[c].attrs = &g_.owned_attrs.back();
      g_.nodes[c].inputs[0] = Edge{v, 0};
    }
    ++chained;
  }
  return chained;
}

}  // namespace kiln::exec::fusion_detail
