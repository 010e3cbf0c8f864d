// Prepare-time fusion (fusion.h): the driver, FuseGraph and Fuser::Run; the rewrite before
// the main pass (a zero Pad folded into a convolution's padding; identity_forwarding.cc has the
// others); and the main pass: following a matrix product's or convolution's chain of
// element-wise ops (biases, per-channel scales and shifts, batch norms, a residual add, a view,
// an activation) and rewriting it into one fused node. The activations written as several ops
// (swish, GELU, hard_swish) are matched in fusion_activations.cc, layer norms and the
// half-precision narrowing in fusion_norms.cc; shared helpers are in fusion_util.cc.
#include "graph/fusion.h"

#include <algorithm>
#include <cmath>
#include <deque>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "executor/half_precision.h"
#include "graph/fusion_pass.h"
#include "kiln/core/proto_convert.h"

namespace kiln::exec {
namespace fusion_detail {
namespace {

std::optional<std::string> StringAttr(const FlatNode& n, const std::string& name) {
  if (n.attrs == nullptr) return std::nullopt;
  auto it = n.attrs->find(name);
  if (it == n.attrs->end()) return std::nullopt;
  return it->second.s();
}

bool IsFloat(const FlatNode& n, const char* attr = "T") {
  if (std::string_view(attr) == "T") return n.TypeAttr() == DType::kFloat;
  if (n.attrs == nullptr) return false;
  auto it = n.attrs->find(attr);
  return it != n.attrs->end() && it->second.type() == tensorflow::DT_FLOAT;
}

bool IsNhwc(const FlatNode& n) {
  auto f = StringAttr(n, "data_format");
  return !f || *f == "NHWC";
}

// Whether `target` is among the transitive inputs of `from` (a fused input must not depend on
// the node it is fused into).
bool DependsOn(const FlatGraph& g, int from, int target) {
  std::vector<int> stack = {from};
  std::vector<char> seen(g.nodes.size(), 0);
  while (!stack.empty()) {
    const int v = stack.back();
    stack.pop_back();
    if (v == target) return true;
    if (seen[v]) continue;
    seen[v] = 1;
    for (const Edge& e : g.nodes[v].inputs) stack.push_back(e.node);
    for (int c : g.nodes[v].control_inputs) stack.push_back(c);
  }
  return false;
}

const char* ActName(Act a) {
  switch (a) {
    case Act::kRelu:
      return "Relu";
    case Act::kRelu6:
      return "Relu6";
    case Act::kElu:
      return "Elu";
    case Act::kLeakyRelu:
      return "LeakyRelu";
    case Act::kTanh:
      return "Tanh";
    case Act::kSigmoid:
      return "Sigmoid";
    case Act::kSwish:
      return "_MklSwish";
    case Act::kGeluExact:
      return "GeluExact";
    case Act::kGeluApproximate:
      return "GeluApproximate";
    case Act::kHardSwish:
      return "_KilnHardSwish";
    case Act::kNone:
      break;
  }
  return "";
}

// Weights with a batch norm's scale folded in, shared by every function prepared from the same
// weights and scale: a SavedModel's signatures, its restored functions and each shape
// specialisation fold the same variables, and each would otherwise hold its own copy (a Keras
// ResNet50 held four, 94 MB each). Entries hold the source weakly (a buffer freed and reused at
// the same address is not mistaken for it) and the result weakly (it lives as long as a
// function holds it).
class ScaledWeightsCache {
 public:
  static ScaledWeightsCache& Get() {
    static ScaledWeightsCache* cache = new ScaledWeightsCache();  // never destroyed: used at exit
    return *cache;
  }

  // `make` computes the scaled copy when no live entry has it.
  template <typename Make>
  Tensor Find(const Tensor& weights, const std::vector<float>& scale, bool transposed,
              Make&& make) {
    std::lock_guard lock(mu_);
    std::erase_if(entries_,
                  [](const Entry& e) { return e.source.expired() || e.result.expired(); });
    for (const Entry& e : entries_) {
      if (e.source.lock() != weights.buffer() || e.shape != weights.shape() ||
          e.transposed != transposed || e.scale != scale)
        continue;
      if (std::shared_ptr<TensorBuffer> result = e.result.lock())
        return Tensor(weights.dtype(), e.shape, std::move(result));
    }
    Tensor t = make();
    entries_.push_back(Entry{weights.buffer(), weights.shape(), transposed, scale, t.buffer()});
    return t;
  }

 private:
  struct Entry {
    std::weak_ptr<TensorBuffer> source;
    Shape shape;
    bool transposed;
    std::vector<float> scale;
    std::weak_ptr<TensorBuffer> result;
  };
  std::mutex mu_;
  std::vector<Entry> entries_;
};

}  // namespace

int Fuser::Run() {
  int fused = FoldPads();
  fused += ForwardIdentityTransposes();
  fused += FuseAttention();  // before the softmax narrowing, which would take its Casts
  fused += NarrowSoftmaxCasts();
  fused += FuseLayerNorms();
  const int n = static_cast<int>(g_.nodes.size());
  for (int v = 0; v < n; ++v) {
    if (!Live(v)) continue;
    const FlatNode& p = g_.nodes[v];
    const bool conv = p.op == "Conv2D" || p.op == "DepthwiseConv2dNative";
    dtype_ = TypeOf(p);
    const bool typed = dtype_ == DType::kFloat || (half_ && IsHalfType(dtype_));
    if (!(conv || p.op == "MatMul") || !typed || (conv && !IsNhwc(p))) continue;
    if (p.inputs.size() != 2 || facts_[v].specs.empty()) continue;
    const PartialShape& out = facts_[v].specs[0].shape;
    if (out.unknown_rank() || out.rank() < 1 || out.dim(out.rank() - 1) <= 0) continue;
    channels_ = out.dim(out.rank() - 1);
    weights_ = Value(p.inputs[1]);
    if (weights_ != nullptr && weights_->dtype() != dtype_) weights_ = nullptr;
    Chain chain = Follow(v);
    if (chain.absorbed == 0) continue;
    FoldPostScale(&chain);
    Rewrite(v, conv, chain);
    ++fused;
  }
  fused += QuantizeProducts();
  fused += ChainInt8Products();
  return fused;
}

// ---- pads and transposes -------------------------------------------------------------------

// A zero Pad of the spatial dims feeding only an NHWC float convolution (Keras's
// ZeroPadding2D before a strided Conv2D or DepthwiseConv2D, as in MobileNet and ResNet; a
// causal Conv1D's Pad of the time dim before the ExpandDims that makes it a Conv2D) becomes the
// convolution's explicit padding, which oneDNN applies as it reads: no padded copy of the
// activations is written and read back.
int Fuser::FoldPads() {
  int folded = 0;
  for (int v = 0; v < static_cast<int>(g_.nodes.size()); ++v) {
    FlatNode& conv = g_.nodes[v];
    if (!Live(v) || (conv.op != "Conv2D" && conv.op != "DepthwiseConv2dNative") || !IsFloat(conv) ||
        !IsNhwc(conv) || conv.inputs.size() != 2 || conv.attrs == nullptr)
      continue;
    const std::optional<std::string> padding = StringAttr(conv, "padding");
    if (padding != "VALID" && padding != "EXPLICIT") continue;
    // The Pad's node, the node that reads it (the convolution, or an ExpandDims of axis 1
    // between them) and the pads as the convolution's 8 explicit paddings.
    int pad_index = conv.inputs[0].node, reader = v;
    std::vector<int64_t> pads;
    if (!IsSolePad(conv.inputs[0], v)) {
      const Edge e = conv.inputs[0];
      const FlatNode& expand = g_.nodes[e.node];
      if (expand.op != "ExpandDims" || e.output != 0 || expand.inputs.size() != 2 ||
          SoleConsumer(e.node) != v || !IsSolePad(expand.inputs[0], e.node))
        continue;
      const std::vector<int64_t> axis = IntValues(expand.inputs[1]);
      if (axis.size() != 1 || (axis[0] != 1 && axis[0] != -3)) continue;
      const std::vector<int64_t> p3 = IntValues(g_.nodes[expand.inputs[0].node].inputs[1]);
      if (p3.size() != 6) continue;
      pad_index = expand.inputs[0].node;
      reader = e.node;
      pads = {p3[0], p3[1], 0, 0, p3[2], p3[3], p3[4], p3[5]};
    } else {
      pads = IntValues(g_.nodes[pad_index].inputs[1]);
    }
    const std::optional<std::vector<int64_t>> total = PaddingWith(conv, pads);
    if (!total.has_value()) continue;
    g_.owned_attrs.push_back(*conv.attrs);
    SetExplicitPadding(*total, &g_.owned_attrs.back());
    conv.attrs = &g_.owned_attrs.back();
    Bypass(pad_index, reader);
    ++folded;
  }
  return folded;
}

// A convolution's 8 explicit paddings with the zero Pad `pads` (NHWC: only the spatial dims,
// none negative) folded in: the Pad's plus its own (VALID or EXPLICIT). None where it cannot
// take them.
std::optional<std::vector<int64_t>> Fuser::PaddingWith(const FlatNode& conv,
                                                       std::vector<int64_t> pads) const {
  const std::optional<std::string> padding = StringAttr(conv, "padding");
  if (padding != "VALID" && padding != "EXPLICIT") return std::nullopt;
  if (pads.size() != 8 || pads[0] != 0 || pads[1] != 0 || pads[6] != 0 || pads[7] != 0 ||
      *std::min_element(pads.begin(), pads.end()) < 0)
    return std::nullopt;
  if (padding == "EXPLICIT") {
    const auto it = conv.attrs->find("explicit_paddings");
    if (it == conv.attrs->end() || it->second.list().i_size() != 8) return std::nullopt;
    for (int i = 0; i < 8; ++i) pads[i] += it->second.list().i(i);
  }
  return pads;
}

void Fuser::SetExplicitPadding(const std::vector<int64_t>& pads, ProtoAttrMap* attrs) {
  (*attrs)["padding"].set_s("EXPLICIT");
  auto* list = (*attrs)["explicit_paddings"].mutable_list();
  list->Clear();
  for (int64_t p : pads) list->add_i(p);
}

// Whether `e` is output 0 of a Pad (x, paddings) that only `reader` reads.
bool Fuser::IsSolePad(const Edge& e, int reader) const {
  const FlatNode& pad = g_.nodes[e.node];
  return pad.op == "Pad" && e.output == 0 && pad.inputs.size() == 2 &&
         SoleConsumer(e.node) == reader;
}

// `reader` reads the Pad's input instead of the Pad. What the Pad waited for, the reader
// waits for; what waited for the Pad (the inliner's "call done" sinks wait on every inner
// node) waits for the reader.
void Fuser::Bypass(int pad_index, int reader) {
  FlatNode& r = g_.nodes[reader];
  r.inputs[0] = g_.nodes[pad_index].inputs[0];
  for (int c : g_.nodes[pad_index].control_inputs) r.control_inputs.push_back(c);
  SortUnique(&r.control_inputs);
  if (uses_.control_dependents[pad_index] == 0) return;
  for (int u = 0; u < static_cast<int>(g_.nodes.size()); ++u) {
    std::vector<int>& waits = g_.nodes[u].control_inputs;
    if (std::find(waits.begin(), waits.end(), pad_index) == waits.end()) continue;
    if (u == reader) {
      std::erase(waits, pad_index);  // it reads the Pad's input itself now
    } else {
      std::replace(waits.begin(), waits.end(), pad_index, reader);
      SortUnique(&waits);
    }
  }
}

// ---- the chain after a producer ------------------------------------------------------------

// Folds y -> y * s per channel.
void Fuser::Scale(Chain* ch, const Tensor& s) {
  if (ch->scale.empty()) ch->scale.assign(channels_, 1.f);
  for (int64_t c = 0; c < channels_; ++c) {
    const float f = ChannelValue(s, c);
    ch->scale[c] *= f;
    if (!ch->bias.empty()) ch->bias[c] *= f;
  }
}

void Fuser::Shift(Chain* ch, const Tensor& b, float sign) {
  if (ch->bias.empty()) ch->bias.assign(channels_, 0.f);
  for (int64_t c = 0; c < channels_; ++c) ch->bias[c] += sign * ChannelValue(b, c);
}

// A half-precision producer's chain may pass through Keras's mixed-precision batch norm,
// which casts to float32, scales and shifts, and casts back: `wide` while the chain's value
// is float32. The chain ends where its value is in the producer's type again (`whole`), and
// the fused node computes the float32 part in the producer's type, as TF's GPU remapper fuses
// a float16 convolution and batch norm.
Chain Fuser::Follow(int p) {
  Chain ch, whole;
  int cur = p;
  bool wide = false;
  auto typed = [&](const FlatNode& n) { return wide ? IsFloat(n) : TypeOf(n) == dtype_; };
  for (;;) {
    const int next = SoleConsumer(cur);
    if (next < 0 || !Live(next)) {
      // x * sigmoid(x): `cur` feeds exactly a Sigmoid and the Mul of both.
      std::vector<int> swish_nodes;
      const int swish =
          ch.act == Act::kNone && dtype_ == DType::kFloat ? SwishAfter(cur, &swish_nodes) : -1;
      if (swish >= 0) {
        ch.act = Act::kSwish;
        ch.last = swish;
        for (int c : swish_nodes) ch.nodes.push_back(c);
        ++ch.absorbed;
      } else if (std::vector<int> act_nodes; ch.act == Act::kNone && !wide) {
        if (GeluAfter(cur, &act_nodes)) {
          ch.act = Act::kGeluExact;
        } else if (GeluTanhAfter(cur, &act_nodes)) {
          ch.act = Act::kGeluApproximate;
        } else if (HardSwishAfter(cur, &act_nodes)) {
          ch.act = Act::kHardSwish;
        }
        if (ch.act != Act::kNone) {
          ch.last = act_nodes.back();
          ch.nodes.insert(ch.nodes.end(), act_nodes.begin(), act_nodes.end());
          ++ch.absorbed;
        }
      }
      break;
    }
    const FlatNode& n = g_.nodes[next];
    // After the activation only the Cast back to the producer's type (which commutes with it).
    const bool casts_back = wide && CastTypes(n) == std::make_pair(DType::kFloat, dtype_);
    bool waits_on_p = false;
    for (int c : n.control_inputs) waits_on_p |= DependsOn(g_, c, p);
    if (waits_on_p) break;
    if (ch.act != Act::kNone && !casts_back) {
      if (!TakeAfterActivation(n, cur, &ch)) break;
      ch.last = next;
      ch.nodes.push_back(next);
      ++ch.absorbed;
      cur = next;
      continue;
    }
    const bool constants_ok = !ch.bias_edge && !ch.add_edge;
    // The other operand of a binary op, and which input it is.
    auto other = [&](int* which) -> std::optional<Edge> {
      const std::optional<Edge> o = OtherInput(n, cur);
      if (o) *which = n.inputs[0].node == cur && n.inputs[0].output == 0 ? 1 : 0;
      return o;
    };
    int which = -1;
    bool took = false;
    const auto [cast_from, cast_to] = CastTypes(n);
    if (cast_from != DType::kInvalid && dtype_ != DType::kFloat && n.inputs[0].node == cur &&
        n.inputs[0].output == 0) {
      // Into float32 from the producer's type, or back.
      if (!wide && cast_from == dtype_ && cast_to == DType::kFloat) {
        wide = true;
        took = true;
      } else if (wide && cast_from == DType::kFloat && cast_to == dtype_) {
        wide = false;
        took = true;
      }
    } else if (n.op == "BiasAdd" && typed(n) && IsNhwc(n) && n.inputs[0].node == cur) {
      const Edge b = n.inputs[1];
      if (const Tensor* t = ChannelVector(FloatValue(b), channels_); t && constants_ok) {
        Shift(&ch, *t, 1.f);
        took = true;
      } else if (!wide && ch.bias.empty() && ch.scale.empty() && !ch.bias_edge && !ch.add_edge &&
                 !DependsOn(g_, b.node, p)) {
        ch.bias_edge = b;
        took = true;
      }
    } else if ((n.op == "AddV2" || n.op == "Add") && typed(n)) {
      if (auto o = other(&which)) {
        if (const Tensor* t = ChannelVector(FloatValue(*o), channels_); t && constants_ok) {
          Shift(&ch, *t, 1.f);
          took = true;
        } else if (!wide && !ch.add_edge && ch.view < 0 && SameShape(*o, Edge{cur, 0}) &&
                   SameShape(Edge{next, 0}, Edge{cur, 0}) && !DependsOn(g_, o->node, p)) {
          ch.add_edge = *o;  // a residual connection
          took = true;
        }
      }
    } else if (n.op == "Sub" && typed(n) && n.inputs[0].node == cur && constants_ok) {
      if (const Tensor* t = ChannelVector(FloatValue(n.inputs[1]), channels_)) {
        Shift(&ch, *t, -1.f);
        took = true;
      }
    } else if ((n.op == "Mul" || n.op == "RealDiv") && typed(n) && constants_ok &&
               weights_ != nullptr) {
      if (auto o = other(&which); o && (n.op == "Mul" || which == 1)) {
        if (const Tensor* t = ChannelVector(FloatValue(*o), channels_)) {
          if (n.op == "Mul") {
            Scale(&ch, *t);
          } else {
            Tensor inv(DType::kFloat, t->shape());
            for (int64_t i = 0; i < t->NumElements(); ++i)
              inv.data<float>()[i] = 1.f / t->data<float>()[i];
            Scale(&ch, inv);
          }
          took = true;
        }
      }
    } else if ((n.op == "FusedBatchNorm" || n.op == "FusedBatchNormV2" ||
                n.op == "FusedBatchNormV3") &&
               typed(n) && IsNhwc(n) && n.inputs.size() == 5 && n.inputs[0].node == cur &&
               constants_ok && weights_ != nullptr && OnlyOutputZeroUsed(next)) {
      bool training = true;
      if (n.attrs != nullptr) {
        auto it = n.attrs->find("is_training");
        training = it == n.attrs->end() ? true : it->second.b();
      }
      const Tensor* s = ChannelVector(Value(n.inputs[1]), channels_);
      const Tensor* o = ChannelVector(Value(n.inputs[2]), channels_);
      const Tensor* m = ChannelVector(Value(n.inputs[3]), channels_);
      const Tensor* var = ChannelVector(Value(n.inputs[4]), channels_);
      if (!training && s && o && m && var) {
        float eps = 0.0001f;
        if (auto it = n.attrs->find("epsilon"); it != n.attrs->end()) eps = it->second.f();
        Tensor k(DType::kFloat, Shape{channels_}), b(DType::kFloat, Shape{channels_});
        for (int64_t c = 0; c < channels_; ++c) {
          const float f = ChannelValue(*s, c) / std::sqrt(ChannelValue(*var, c) + eps);
          k.data<float>()[c] = f;
          b.data<float>()[c] = ChannelValue(*o, c) - ChannelValue(*m, c) * f;
        }
        Scale(&ch, k);
        Shift(&ch, b, 1.f);
        took = true;
      }
    } else if ((n.op == "Squeeze" || n.op == "Reshape") && ch.view < 0 && !ch.add_edge && !wide &&
               typed(n) && !n.inputs.empty() && n.inputs[0].node == cur &&
               n.inputs[0].output == 0 &&
               (n.op == "Squeeze" ? n.inputs.size() == 1 && SqueezesSpatialDim(cur, next)
                                  : n.inputs.size() == 2 && KeepsChannelsInnermost(cur, next))) {
      // Per-channel ops commute with dropping a size-1 spatial dim, or with a reshape that
      // keeps the channels innermost: the fused kernel runs them on its own result and the
      // view moves after it.
      ch.view = next;
      ch.last_before_view = ch.last;
      took = true;
    } else if (n.inputs.size() == 1 && n.inputs[0].node == cur && typed(n)) {
      const std::string& op = n.op;
      ch.act = op == "Relu"        ? Act::kRelu
               : op == "Relu6"     ? Act::kRelu6
               : op == "Elu"       ? Act::kElu
               : op == "LeakyRelu" ? Act::kLeakyRelu
               : op == "Tanh"      ? Act::kTanh
               : op == "Sigmoid"   ? Act::kSigmoid
                                   : Act::kNone;
      if (ch.act == Act::kLeakyRelu && n.attrs != nullptr)
        if (auto it = n.attrs->find("alpha"); it != n.attrs->end())
          ch.leakyrelu_alpha = it->second.f();
      took = ch.act != Act::kNone;
    }
    if (!took) break;
    ch.last = next;
    ch.nodes.push_back(next);
    ++ch.absorbed;
    cur = next;
    if (!wide) whole = ch;
  }
  if (wide) ch = whole;
  if (ch.view >= 0 && ch.view == ch.last) {
    // Nothing followed the Squeeze: leave it where it is.
    ch.nodes.pop_back();
    --ch.absorbed;
    ch.last = ch.last_before_view;
    ch.view = -1;
  }
  return ch;
}

// Whether Reshape `r` of `in`'s result keeps the channels as the innermost dim of both. The
// Reshape's last dim is read from its shape input where the inferred shape lacks it:
// Tensordot's shape is ConcatV2(the input's free dims, a constant [channels]).
bool Fuser::KeepsChannelsInnermost(int in, int r) const {
  if (facts_[in].specs.empty() || facts_[r].specs.empty()) return false;
  const PartialShape& a = facts_[in].specs[0].shape;
  const PartialShape& b = facts_[r].specs[0].shape;
  if (a.unknown_rank() || a.rank() < 1 || a.dim(a.rank() - 1) != channels_) return false;
  if (!b.unknown_rank() && b.rank() >= 1 && b.dim(b.rank() - 1) == channels_) return true;
  Edge shape = g_.nodes[r].inputs[1];
  const FlatNode& concat = g_.nodes[shape.node];
  if (Value(shape) == nullptr && concat.op == "ConcatV2" && concat.inputs.size() >= 3) {
    const std::vector<int64_t> axis = IntValues(concat.inputs.back());
    if (axis.size() != 1 || axis[0] != 0) return false;
    shape = concat.inputs[concat.inputs.size() - 2];  // the last piece of the shape
  }
  const std::vector<int64_t> dims = IntValues(shape);
  return !dims.empty() && dims.back() == channels_;
}

// Whether `squeeze` turns `in`'s 4-D NHWC result into 3-D by dropping dim 1 or 2 (size 1),
// keeping the channels last.
bool Fuser::SqueezesSpatialDim(int in, int squeeze) const {
  if (facts_[in].specs.empty() || facts_[squeeze].specs.empty()) return false;
  const PartialShape& a = facts_[in].specs[0].shape;
  const PartialShape& b = facts_[squeeze].specs[0].shape;
  if (a.unknown_rank() || b.unknown_rank() || a.rank() != 4 || b.rank() != 3) return false;
  if (a.dim(3) != channels_ || b.dim(2) != channels_) return false;
  const FlatNode& n = g_.nodes[squeeze];
  if (n.attrs == nullptr) return false;
  const auto it = n.attrs->find("squeeze_dims");
  if (it == n.attrs->end() || it->second.list().i_size() != 1) return false;
  const int64_t d = it->second.list().i(0);
  const int64_t axis = d < 0 ? d + 4 : d;
  return (axis == 1 || axis == 2) && a.dim(static_cast<int>(axis)) == 1;
}

bool Fuser::OnlyOutputZeroUsed(int v) const {
  if (uses_.is_output[v]) return false;
  for (const auto& [c, index] : uses_.data[v])
    if (g_.nodes[c].inputs[index].output != 0) return false;
  return true;
}

// After the activation: a product, quotient, sum or difference by a constant per-channel
// vector (Keras's batch norm after Conv or Dense(activation=...) is x * s + t), folded into
// the chain's post_scale and post_shift. Not for half-precision chains or a load with another
// device (cuDNN has no such epilogue).
bool Fuser::TakeAfterActivation(const FlatNode& n, int cur, Chain* ch) {
  if (half_ || dtype_ != DType::kFloat || !IsFloat(n)) return false;
  const bool mul = n.op == "Mul", div = n.op == "RealDiv", sub = n.op == "Sub";
  if (!(mul || div || sub || n.op == "Add" || n.op == "AddV2")) return false;
  const std::optional<Edge> o = OtherInput(n, cur);
  if (!o || ((div || sub) && n.inputs[0].node != cur)) return false;
  const Tensor* t = ChannelVector(FloatValue(*o), channels_);
  const PartialShape* shape = ShapeOf(Edge{cur, 0});
  if (t == nullptr || shape == nullptr || shape->unknown_rank() || t->rank() > shape->rank())
    return false;
  if (ch->post_scale.empty()) {
    ch->post_scale.assign(channels_, 1.f);
    ch->post_shift.assign(channels_, 0.f);
  }
  for (int64_t c = 0; c < channels_; ++c) {
    const float v = ChannelValue(*t, c);
    if (mul || div) {
      const float f = mul ? v : 1.f / v;
      ch->post_scale[c] *= f;
      ch->post_shift[c] *= f;
    } else {
      ch->post_shift[c] += sub ? -v : v;
    }
  }
  return true;
}

// A positive post-activation scale commutes with ReLU and LeakyReLU (relu(z) * s = relu(z * s)
// for s > 0): it folds into constant weights and bias, leaving the shift alone to apply after
// the activation (one oneDNN post-op instead of two). Batch norms' scales are positive in
// nearly every trained model. Not with a bias or addend known only at run time.
void Fuser::FoldPostScale(Chain* ch) {
  if (ch->post_scale.empty() || (ch->act != Act::kRelu && ch->act != Act::kLeakyRelu) ||
      weights_ == nullptr || ch->bias_edge || ch->add_edge)
    return;
  Tensor s(DType::kFloat, Shape{channels_});
  for (int64_t c = 0; c < channels_; ++c) {
    const float v = ch->post_scale[c];
    if (!(v > 0 && std::isfinite(v))) return;
    s.data<float>()[c] = v;
  }
  Scale(ch, s);
  ch->post_scale.clear();
  if (std::all_of(ch->post_shift.begin(), ch->post_shift.end(), [](float v) { return v == 0; }))
    ch->post_shift.clear();
}

// ---- the rewrite ---------------------------------------------------------------------------

void Fuser::Rewrite(int p_index, bool conv, const Chain& ch) {
  FlatNode& p = g_.nodes[p_index];
  const bool depthwise = p.op == "DepthwiseConv2dNative";
  const std::string base = p.name;
  std::vector<Edge> inputs = {p.inputs[0], p.inputs[1]};
  // Weights with the per-channel scale folded in.
  if (!ch.scale.empty()) {
    bool transpose_b = false;
    if (p.attrs != nullptr)
      if (auto it = p.attrs->find("transpose_b"); it != p.attrs->end())
        transpose_b = it->second.b();
    const bool outer = !conv && transpose_b;
    const int64_t channels = channels_;
    Tensor w = ScaledWeightsCache::Get().Find(*weights_, ch.scale, outer, [&] {
      // Half-precision weights scale in float32 and round once.
      const Tensor source =
          weights_->dtype() == DType::kFloat ? *weights_ : *CastNow(*weights_, DType::kFloat);
      auto allocated = Tensor::Allocate(CpuAllocator(), DType::kFloat, source.shape());
      Tensor copy = allocated.ok() ? *std::move(allocated) : Tensor(DType::kFloat, source.shape());
      const float* w = source.data<float>();
      float* d = copy.data<float>();
      const float* scale = ch.scale.data();
      const int64_t total = copy.NumElements();
      // The output channel is the innermost index ([kh, kw, in, out], [kh, kw, c, m] and
      // [k, n]), or the outermost of a transposed MatMul's [n, k]. Rows of channels, or runs
      // of one channel: loops the compiler vectorises (an index divided per element took
      // 60 ms of a ResNet50's load).
      if (channels > 0 && outer) {
        const int64_t inner = total / channels;
        for (int64_t c = 0; c < channels; ++c)
          for (int64_t i = c * inner; i < (c + 1) * inner; ++i) d[i] = w[i] * scale[c];
      } else if (channels > 0) {
        for (int64_t row = 0; row + channels <= total; row += channels)
          for (int64_t c = 0; c < channels; ++c) d[row + c] = w[row + c] * scale[c];
      }
      weights_->buffer()->ReleasePages();  // a mapped bundle's: the scaled copy replaces it
      return weights_->dtype() == DType::kFloat ? copy : *CastNow(copy, weights_->dtype());
    });
    inputs[1] = AddConstant(base + "/fused_weights", std::move(w));
  }
  std::vector<std::string> fused;
  if (ch.bias_edge) {
    inputs.push_back(*ch.bias_edge);
  } else {
    Tensor b(DType::kFloat, Shape{channels_});
    for (int64_t c = 0; c < channels_; ++c) b.data<float>()[c] = ch.bias.empty() ? 0 : ch.bias[c];
    if (dtype_ != DType::kFloat) b = *CastNow(b, dtype_);
    inputs.push_back(AddConstant(base + "/fused_bias", std::move(b)));
  }
  fused.push_back("BiasAdd");
  // The post-activation scale and shift: inputs before the addend (kernels/epilogue.h).
  auto vector_input = [&](const std::vector<float>& v, const char* name) {
    Tensor t(DType::kFloat, Shape{channels_});
    std::copy(v.begin(), v.end(), t.data<float>());
    inputs.push_back(AddConstant(base + name, std::move(t)));
  };
  if (!ch.post_scale.empty()) vector_input(ch.post_scale, "/fused_post_scale");
  if (!ch.post_shift.empty()) vector_input(ch.post_shift, "/fused_post_shift");
  if (ch.add_edge) {
    inputs.push_back(*ch.add_edge);
    fused.push_back("Add");
  }
  if (ch.act != Act::kNone) fused.push_back(ActName(ch.act));
  if (!ch.post_shift.empty())
    fused.push_back(ch.post_scale.empty() ? "_KilnShift" : "_KilnScaleShift");

  FlatNode& pp = g_.nodes[p_index];  // AddConstant may have moved the vector
  g_.owned_attrs.push_back(*pp.attrs);
  ProtoAttrMap& attrs = g_.owned_attrs.back();
  auto* list = attrs["fused_ops"].mutable_list();
  list->Clear();
  for (const std::string& f : fused) list->add_s(f);
  attrs["num_args"].set_i(static_cast<int64_t>(inputs.size()) - 2);
  attrs["epsilon"].set_f(0.0001f);
  attrs["leakyrelu_alpha"].set_f(ch.leakyrelu_alpha);
  pp.op = depthwise ? "_FusedDepthwiseConv2dNative" : conv ? "_FusedConv2D" : "_FusedMatMul";
  pp.def = FindOp(pp.op);
  pp.attrs = &attrs;
  pp.inputs = std::move(inputs);

  MoveWaits(ch.nodes, p_index);

  // The chain's last node passes the fused result on (through the view the chain passed).
  FlatNode& last = g_.nodes[ch.last];
  const FlatNode& view = g_.nodes[ch.view >= 0 ? ch.view : ch.last];
  if (ch.view >= 0) {
    last.op = view.op;
    last.def = view.def;
    last.attrs = view.attrs;
  } else {
    g_.owned_attrs.emplace_back();
    g_.owned_attrs.back()["T"].set_type(static_cast<tensorflow::DataType>(DTypeToProto(dtype_)));
    last.op = "Identity";
    last.def = FindOp("Identity");
    last.attrs = &g_.owned_attrs.back();
  }
  if (ch.view >= 0 && view.op == "Reshape") {
    last.inputs = {Edge{p_index, 0}, view.inputs[1]};
  } else {
    last.inputs = {Edge{p_index, 0}};
  }
  last.stateful = false;
}

}  // namespace fusion_detail

int FuseGraph(FlatGraph* g, const std::vector<NodeFacts>& facts, const std::vector<char>& live,
              bool half, bool pruned) {
  std::vector<char> fusion_live = live;
  const int forwarded = fusion_detail::ForwardIdentityN(g, &fusion_live);
  const int fused = fusion_detail::Fuser(g, facts, fusion_live, half, pruned).Run();
  // Moved edges change the graph as a fusion does: the caller takes a fresh look.
  return fused + (forwarded > 0 ? 1 : 0);
}

}  // namespace kiln::exec
