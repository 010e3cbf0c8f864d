#include "executor/fusion.h"

#include <algorithm>
#include <cmath>
#include <deque>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "executor/half_precision.h"
#include "kiln/core/proto_convert.h"

namespace kiln::exec {
namespace {

// Who reads each node's outputs.
struct Uses {
  std::vector<std::vector<std::pair<int, int>>> data;  // per node: (consumer, input index)
  std::vector<int> control_dependents;                 // per node: how many
  std::vector<char> is_output;                         // per node: a function output
};

Uses FindUses(const FlatGraph& g, const std::vector<char>& live) {
  const int n = static_cast<int>(g.nodes.size());
  Uses u;
  u.data.resize(n);
  u.control_dependents.assign(n, 0);
  u.is_output.assign(n, 0);
  for (int v = 0; v < n; ++v) {
    // Nodes fusion added (constants, past `live`) are live.
    if (v < static_cast<int>(live.size()) && !live[v]) continue;
    const FlatNode& node = g.nodes[v];
    for (size_t i = 0; i < node.inputs.size(); ++i)
      u.data[node.inputs[i].node].emplace_back(v, static_cast<int>(i));
    for (int c : node.control_inputs) ++u.control_dependents[c];
  }
  for (const Edge& e : g.outputs) u.is_output[e.node] = 1;
  for (int k : g.keep) u.is_output[k] = 1;
  return u;
}

std::optional<std::string> StringAttr(const FlatNode& n, const std::string& name) {
  if (n.attrs == nullptr) return std::nullopt;
  auto it = n.attrs->find(name);
  if (it == n.attrs->end()) return std::nullopt;
  return it->second.s();
}

bool IsFloat(const FlatNode& n, const char* attr = "T") {
  if (n.attrs == nullptr) return false;
  auto it = n.attrs->find(attr);
  return it != n.attrs->end() && it->second.type() == tensorflow::DT_FLOAT;
}

DType FromProto(int t) {
  Result<DType> d = DTypeFromProto(t);
  return d.ok() ? *d : DType::kInvalid;
}

// The node's type attr T as a DType (kInvalid when it has none).
DType TypeOf(const FlatNode& n) {
  if (n.attrs == nullptr) return DType::kInvalid;
  auto it = n.attrs->find("T");
  if (it == n.attrs->end() || it->second.value_case() != tensorflow::AttrValue::kType)
    return DType::kInvalid;
  return FromProto(it->second.type());
}

// A Cast's source and destination types (kInvalid when not a Cast of one input).
std::pair<DType, DType> CastTypes(const FlatNode& n) {
  if (n.op != "Cast" || n.inputs.size() != 1 || n.attrs == nullptr)
    return {DType::kInvalid, DType::kInvalid};
  auto src = n.attrs->find("SrcT"), dst = n.attrs->find("DstT");
  if (src == n.attrs->end() || dst == n.attrs->end()) return {DType::kInvalid, DType::kInvalid};
  return {FromProto(src->second.type()), FromProto(dst->second.type())};
}

bool IsHalfType(DType t) { return t == DType::kHalf || t == DType::kBFloat16; }

bool IsNhwc(const FlatNode& n) {
  auto f = StringAttr(n, "data_format");
  return !f || *f == "NHWC";
}

// A float constant that is a per-channel vector for C channels: shape [C] or [1, ..., 1, C],
// or a scalar (broadcast to every channel).
const Tensor* ChannelVector(const Tensor* t, int64_t channels) {
  if (t == nullptr || t->dtype() != DType::kFloat) return nullptr;
  if (t->NumElements() == 1) return t;
  if (t->NumElements() != channels || t->rank() == 0) return nullptr;
  for (int i = 0; i + 1 < t->rank(); ++i)
    if (t->dim(i) != 1) return nullptr;
  return t;
}

float ChannelValue(const Tensor& t, int64_t c) {
  return t.NumElements() == 1 ? t.data<float>()[0] : t.data<float>()[c];
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

enum class Act {
  kNone,
  kRelu,
  kRelu6,
  kElu,
  kLeakyRelu,
  kTanh,
  kSigmoid,
  kSwish,
  kGeluExact,
  kGeluApproximate
};

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
    case Act::kNone:
      break;
  }
  return "";
}

// What a chain folds into its producer.
struct Chain {
  int last = -1;                  // the last absorbed node
  std::vector<int> nodes;         // every absorbed node
  std::vector<float> scale;       // per output channel, empty: none
  std::vector<float> bias;        // per output channel (constant), empty: none
  std::optional<Edge> bias_edge;  // a bias known only at run time
  std::optional<Edge> add_edge;   // a residual addend
  Act act = Act::kNone;
  float leakyrelu_alpha = 0.2f;
  int absorbed = 0;
  // A view the chain passed through: a Squeeze of a size-1 spatial dim (Keras 3's Conv1D is
  // ExpandDims, Conv2D, Squeeze, then its bias and activation) or a Reshape that keeps the
  // channels innermost (Keras's Dense on a sequence is Tensordot: MatMul, Reshape, then its
  // bias and activation). Per-channel ops commute with it; the last node becomes it.
  int view = -1;
  int last_before_view = -1;
};

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

class Fuser {
 public:
  Fuser(FlatGraph* g, const std::vector<NodeFacts>& facts, const std::vector<char>& live, bool half)
      : g_(*g), facts_(facts), live_(live), uses_(FindUses(*g, live)), half_(half) {}

  int Run() {
    int fused = FoldPads();
    fused += ForwardIdentityTransposes();
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
      Rewrite(v, conv, chain);
      ++fused;
    }
    return fused;
  }

 private:
  // Whether node v is live: what the first look found, or a node fusion added (a constant).
  bool Live(int v) const { return v >= static_cast<int>(live_.size()) || live_[v] != 0; }

  const Tensor* Value(const Edge& e) const {
    if (e.node >= static_cast<int>(facts_.size())) return nullptr;
    const auto& values = facts_[e.node].values;
    return e.output < static_cast<int>(values.size()) ? values[e.output] : nullptr;
  }

  // The value of `e` as float32 where it is a known float32, float16 or bfloat16 tensor (half
  // constants of a half-precision chain: a bias, a batch norm's vectors).
  const Tensor* FloatValue(const Edge& e) {
    const Tensor* t = Value(e);
    if (t == nullptr || t->dtype() == DType::kFloat || !IsHalfType(t->dtype())) return t;
    Result<Tensor> f = CastNow(*t, DType::kFloat);
    if (!f.ok()) return nullptr;
    converted_.push_back(*std::move(f));
    return &converted_.back();
  }

  static void SortUnique(std::vector<int>* v) {
    std::sort(v->begin(), v->end());
    v->erase(std::unique(v->begin(), v->end()), v->end());
  }

  // A constant integer vector or matrix's values, row-major; empty when not known.
  std::vector<int64_t> IntValues(const Edge& e) const {
    const Tensor* t = Value(e);
    std::vector<int64_t> v;
    if (t == nullptr) return v;
    if (t->dtype() == DType::kInt32) {
      v.assign(t->data<int32_t>(), t->data<int32_t>() + t->NumElements());
    } else if (t->dtype() == DType::kInt64) {
      v.assign(t->data<int64_t>(), t->data<int64_t>() + t->NumElements());
    }
    return v;
  }

  // A zero Pad of the spatial dims feeding only an NHWC float convolution (Keras's
  // ZeroPadding2D before a strided Conv2D or DepthwiseConv2D, as in MobileNet and ResNet; a
  // causal Conv1D's Pad of the time dim before the ExpandDims that makes it a Conv2D) becomes the
  // convolution's explicit padding, which oneDNN applies as it reads: no padded copy of the
  // activations is written and read back.
  int FoldPads() {
    int folded = 0;
    for (int v = 0; v < static_cast<int>(g_.nodes.size()); ++v) {
      FlatNode& conv = g_.nodes[v];
      if (!Live(v) || (conv.op != "Conv2D" && conv.op != "DepthwiseConv2dNative") ||
          !IsFloat(conv) || !IsNhwc(conv) || conv.inputs.size() != 2 || conv.attrs == nullptr)
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
      if (pads.size() != 8 || pads[0] != 0 || pads[1] != 0 || pads[6] != 0 || pads[7] != 0 ||
          *std::min_element(pads.begin(), pads.end()) < 0)
        continue;
      std::vector<int64_t> total = pads;
      if (padding == "EXPLICIT") {
        const auto it = conv.attrs->find("explicit_paddings");
        if (it == conv.attrs->end() || it->second.list().i_size() != 8) continue;
        for (int i = 0; i < 8; ++i) total[i] += it->second.list().i(i);
      }
      g_.owned_attrs.push_back(*conv.attrs);
      ProtoAttrMap& attrs = g_.owned_attrs.back();
      attrs["padding"].set_s("EXPLICIT");
      auto* list = attrs["explicit_paddings"].mutable_list();
      list->Clear();
      for (int64_t p : total) list->add_i(p);
      conv.attrs = &attrs;
      Bypass(pad_index, reader);
      ++folded;
    }
    return folded;
  }

  // Whether `e` is output 0 of a Pad (x, paddings) that only `reader` reads.
  bool IsSolePad(const Edge& e, int reader) const {
    const FlatNode& pad = g_.nodes[e.node];
    return pad.op == "Pad" && e.output == 0 && pad.inputs.size() == 2 &&
           SoleConsumer(e.node) == reader;
  }

  // `reader` reads the Pad's input instead of the Pad. What the Pad waited for, the reader
  // waits for; what waited for the Pad (the inliner's "call done" sinks wait on every inner
  // node) waits for the reader.
  void Bypass(int pad_index, int reader) {
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

  // A Transpose by a constant identity permutation (Keras's Tensordot emits one per Dense on a
  // sequence) passes its input on instead of copying it.
  int ForwardIdentityTransposes() {
    int forwarded = 0;
    for (int v = 0; v < static_cast<int>(g_.nodes.size()); ++v) {
      FlatNode& t = g_.nodes[v];
      if (!Live(v) || t.op != "Transpose" || t.inputs.size() != 2 || t.attrs == nullptr) continue;
      const std::vector<int64_t> perm = IntValues(t.inputs[1]);
      const Edge x = t.inputs[0];
      if (Value(t.inputs[1]) == nullptr || x.node >= static_cast<int>(facts_.size()) ||
          x.output >= static_cast<int>(facts_[x.node].specs.size()))
        continue;
      // Only where the input's rank is known to match (a mismatch is the kernel's error).
      const PartialShape& xs = facts_[x.node].specs[x.output].shape;
      if (xs.unknown_rank() || xs.rank() != static_cast<int>(perm.size())) continue;
      bool identity = true;
      for (size_t i = 0; i < perm.size(); ++i)
        identity = identity && perm[i] == static_cast<int64_t>(i);
      const auto it = t.attrs->find("T");
      if (!identity || it == t.attrs->end()) continue;
      g_.owned_attrs.emplace_back();
      g_.owned_attrs.back()["T"] = it->second;
      t.op = "Identity";
      t.def = FindOp("Identity");
      t.attrs = &g_.owned_attrs.back();
      t.inputs.resize(1);
      ++forwarded;
    }
    return forwarded;
  }

  // The one consumer of `v`'s output 0, when that is all that reads `v`.
  int SoleConsumer(int v) const {
    if (uses_.is_output[v] || uses_.data[v].size() != 1) return -1;
    const auto [c, index] = uses_.data[v][0];
    const Edge& e = g_.nodes[c].inputs[index];
    return e.output == 0 ? c : -1;
  }

  // Folds y -> y * s per channel.
  void Scale(Chain* ch, const Tensor& s) {
    if (ch->scale.empty()) ch->scale.assign(channels_, 1.f);
    for (int64_t c = 0; c < channels_; ++c) {
      const float f = ChannelValue(s, c);
      ch->scale[c] *= f;
      if (!ch->bias.empty()) ch->bias[c] *= f;
    }
  }
  void Shift(Chain* ch, const Tensor& b, float sign) {
    if (ch->bias.empty()) ch->bias.assign(channels_, 0.f);
    for (int64_t c = 0; c < channels_; ++c) ch->bias[c] += sign * ChannelValue(b, c);
  }

  // A half-precision producer's chain may pass through Keras's mixed-precision batch norm,
  // which casts to float32, scales and shifts, and casts back: `wide` while the chain's value
  // is float32. The chain ends where its value is in the producer's type again (`whole`), and
  // the fused node computes the float32 part in the producer's type, as TF's GPU remapper fuses
  // a float16 convolution and batch norm.
  Chain Follow(int p) {
    Chain ch, whole;
    int cur = p;
    bool wide = false;
    auto typed = [&](const FlatNode& n) { return wide ? IsFloat(n) : TypeOf(n) == dtype_; };
    for (;;) {
      const int next = SoleConsumer(cur);
      if (next < 0 || !Live(next)) {
        // x * sigmoid(x): `cur` feeds exactly a Sigmoid and the Mul of both.
        const int swish = ch.act == Act::kNone && dtype_ == DType::kFloat ? SwishAfter(cur) : -1;
        if (swish >= 0) {
          ch.act = Act::kSwish;
          ch.last = swish;
          for (const auto& [c, index] : uses_.data[cur]) ch.nodes.push_back(c);
          ++ch.absorbed;
        } else if (std::vector<int> gelu; ch.act == Act::kNone && !wide) {
          if (GeluAfter(cur, &gelu)) {
            ch.act = Act::kGeluExact;
          } else if (GeluTanhAfter(cur, &gelu)) {
            ch.act = Act::kGeluApproximate;
          }
          if (ch.act != Act::kNone) {
            ch.last = gelu.back();
            ch.nodes.insert(ch.nodes.end(), gelu.begin(), gelu.end());
            ++ch.absorbed;
          }
        }
        break;
      }
      const FlatNode& n = g_.nodes[next];
      // After the activation only the Cast back to the producer's type (which commutes with it).
      const bool casts_back = wide && CastTypes(n) == std::make_pair(DType::kFloat, dtype_);
      if (ch.act != Act::kNone && !casts_back) break;
      bool waits_on_p = false;
      for (int c : n.control_inputs) waits_on_p |= DependsOn(g_, c, p);
      if (waits_on_p) break;
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
          } else if (!wide && !ch.add_edge && ch.view < 0 && !facts_[next].specs.empty() &&
                     !facts_[o->node].specs.empty() &&
                     facts_[next].specs[0].shape.IsFullyDefined() &&
                     facts_[o->node].specs[o->output].shape == facts_[next].specs[0].shape &&
                     facts_[next].specs[0].shape == facts_[cur].specs[0].shape &&
                     !DependsOn(g_, o->node, p)) {
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
  bool KeepsChannelsInnermost(int in, int r) const {
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
  bool SqueezesSpatialDim(int in, int squeeze) const {
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

  bool OnlyOutputZeroUsed(int v) const {
    if (uses_.is_output[v]) return false;
    for (const auto& [c, index] : uses_.data[v])
      if (g_.nodes[c].inputs[index].output != 0) return false;
    return true;
  }

  // The Mul of x * sigmoid(x) when `x` (output 0) feeds only a Sigmoid and that Mul.
  int SwishAfter(int x) const {
    if (uses_.is_output[x] || uses_.data[x].size() != 2) return -1;
    int sig = -1, mul = -1;
    for (const auto& [c, index] : uses_.data[x]) {
      const FlatNode& n = g_.nodes[c];
      if (n.inputs[index].output != 0) return -1;
      if (n.op == "Sigmoid" && IsFloat(n)) sig = c;
      if (n.op == "Mul" && IsFloat(n)) mul = c;
    }
    if (sig < 0 || mul < 0 || !Live(sig) || !Live(mul)) return -1;
    if (SoleConsumer(sig) != mul) return -1;
    return mul;
  }

  // Whether scalar constant `e` is `want` (within float16's rounding of it).
  bool IsScalar(const Edge& e, double want) {
    const Tensor* t = FloatValue(e);
    return t != nullptr && t->NumElements() == 1 && t->dtype() == DType::kFloat &&
           std::abs(t->data<float>()[0] - want) <= 1e-3 * std::abs(want);
  }

  // The other input of binary node n, when `from` (output 0) is one of its inputs.
  static std::optional<Edge> OtherInput(const FlatNode& n, int from) {
    if (n.inputs.size() != 2) return std::nullopt;
    if (n.inputs[0].node == from && n.inputs[0].output == 0) return n.inputs[1];
    if (n.inputs[1].node == from && n.inputs[1].output == 0) return n.inputs[0];
    return std::nullopt;
  }

  // TF's exact GELU of x (tf.nn.gelu, what Keras's "gelu" runs): 0.5 * x * erfc(-x / sqrt(2)),
  // as Mul(0.5, x), Neg(x), Mul(., 1 / sqrt(2)), Erfc, Mul of both, every node of x's type and
  // read only there. On a match `nodes` holds them, the final Mul last.
  bool GeluAfter(int x, std::vector<int>* nodes) {
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
    const int out = SoleConsumer(erfc);
    if (out < 0 || out != SoleConsumer(half) || g_.nodes[out].op != "Mul" ||
        TypeOf(g_.nodes[out]) != dtype_)
      return false;
    const std::optional<Edge> e = OtherInput(g_.nodes[out], half);
    if (!e || e->node != erfc) return false;
    *nodes = {half, neg, scaled, erfc, out};
    return true;
  }

  // What the absorbed nodes waited for, node `into` waits for; what waited for them waits for
  // `into` (the inliner's "call done" sinks wait on every inner node).
  void MoveWaits(const std::vector<int>& nodes, int into) {
    std::vector<char> absorbed(g_.nodes.size(), 0);
    for (int a : nodes) absorbed[a] = 1;
    std::vector<int>& waits = g_.nodes[into].control_inputs;
    for (int a : nodes)
      for (int c : g_.nodes[a].control_inputs) waits.push_back(c);
    for (FlatNode& n : g_.nodes) {
      bool changed = false;
      for (int& c : n.control_inputs)
        if (c < static_cast<int>(absorbed.size()) && absorbed[c]) {
          c = into;
          changed = true;
        }
      if (changed) SortUnique(&n.control_inputs);
    }
    std::erase(g_.nodes[into].control_inputs, into);
    SortUnique(&g_.nodes[into].control_inputs);
  }

  // ---- layer normalization ------------------------------------------------------------------

  struct LayerNormMatch {
    Edge x;
    int64_t channels = -1;
    int out = -1;
    float epsilon = 0;
    std::vector<float> gamma, beta;  // empty: 1 and 0
    std::vector<int> nodes;          // the matched nodes but `out`
  };

  // Keras's LayerNormalization over the last axis (Keras 3: ops.moments, then
  // x * inv + (beta - mean * inv) as x * inv + (-mean * inv + beta), inv = rsqrt(var + eps) *
  // gamma; also tf.nn.batch_normalization's beta - mean * inv) becomes TF's _MklLayerNorm, as
  // TF's own remapper fuses it: ten element-wise kernels and two reductions become one pass.
  int FuseLayerNorms() {
    if (FindOp("_MklLayerNorm") == nullptr) return 0;  // a build without the family
    int fused = 0;
    const int n = static_cast<int>(g_.nodes.size());
    for (int m = 0; m < n; ++m) {
      if (!Live(m) || g_.nodes[m].op != "Mean") continue;
      LayerNormMatch match;
      if (!MatchLayerNorm(m, &match)) continue;
      RewriteLayerNorm(match);
      ++fused;
    }
    if (fused > 0) uses_ = FindUses(g_, live_);
    return fused;
  }

  // Whether node v is a Cast from a half type to float32 (that type), or kInvalid.
  DType CastFromHalf(int v) const {
    const auto [from, to] = CastTypes(g_.nodes[v]);
    return IsHalfType(from) && to == DType::kFloat ? from : DType::kInvalid;
  }
  // The sole consumer of v when it is a Cast from float32 to `half`, else -1.
  int CastBackTo(int v, DType half) const {
    const int c = SoleConsumer(v);
    return c >= 0 && Live(c) && CastTypes(g_.nodes[c]) == std::make_pair(DType::kFloat, half) ? c
                                                                                              : -1;
  }
  // Cast node `back` passes node v's value on (v now computes in the half type).
  void BecomeIdentity(int back, int v, DType half) {
    g_.owned_attrs.emplace_back();
    g_.owned_attrs.back()["T"].set_type(static_cast<tensorflow::DataType>(DTypeToProto(half)));
    FlatNode& b = g_.nodes[back];
    b.op = "Identity";
    b.def = FindOp("Identity");
    b.attrs = &g_.owned_attrs.back();
    b.inputs = {Edge{v, 0}};
  }

  // On a device load, a float32 Softmax or LogSoftmax between a Cast from a half type and a Cast
  // back to it (Keras's mixed precision keeps softmax in float32) runs in the half type itself:
  // its kernels compute in float32 inside and round once, as the Cast back did, so only the two
  // casts' passes over the attention scores go.
  int NarrowSoftmaxCasts() {
    if (!half_) return 0;
    int narrowed = 0;
    for (int v = 0; v < static_cast<int>(g_.nodes.size()); ++v) {
      FlatNode& n = g_.nodes[v];
      if (!Live(v) || (n.op != "Softmax" && n.op != "LogSoftmax") || TypeOf(n) != DType::kFloat ||
          n.inputs.size() != 1 || n.inputs[0].output != 0)
        continue;
      const int up = n.inputs[0].node;
      const DType half = CastFromHalf(up);
      if (half == DType::kInvalid || SoleConsumer(up) != v) continue;
      const int back = CastBackTo(v, half);
      if (back < 0) continue;
      g_.owned_attrs.push_back(*n.attrs);
      g_.owned_attrs.back()["T"].set_type(static_cast<tensorflow::DataType>(DTypeToProto(half)));
      n.attrs = &g_.owned_attrs.back();
      n.inputs[0] = g_.nodes[up].inputs[0];
      BecomeIdentity(back, v, half);
      MoveWaits({up}, v);
      ++narrowed;
    }
    if (narrowed > 0) uses_ = FindUses(g_, live_);
    return narrowed;
  }

  static bool Reads(const FlatNode& n, int v) {
    for (const Edge& e : n.inputs)
      if (e.node == v && e.output == 0) return true;
    return false;
  }
  static bool SameEdge(const Edge& a, const Edge& b) {
    return a.node == b.node && a.output == b.output;
  }
  // The consumer of v (output 0) that is `op` and reads v, else -1.
  int ConsumerOp(int v, std::string_view op) const {
    for (const auto& [c, index] : uses_.data[v])
      if (Live(c) && g_.nodes[c].op == op && g_.nodes[c].inputs[index].output == 0) return c;
    return -1;
  }
  bool IsAdd(int v) const { return g_.nodes[v].op == "AddV2" || g_.nodes[v].op == "Add"; }

  // A reduction over exactly the last axis of a value of `rank` dims, keeping it.
  bool ReducesLastAxis(const FlatNode& mean, int rank) const {
    if (mean.inputs.size() != 2 || mean.attrs == nullptr) return false;
    const auto keep = mean.attrs->find("keep_dims");
    if (keep == mean.attrs->end() || !keep->second.b()) return false;
    const std::vector<int64_t> axes = IntValues(mean.inputs[1]);
    return axes.size() == 1 && (axes[0] == rank - 1 || axes[0] == -1);
  }

  // The values of a constant per-channel vector of `c` channels (scalar broadcast), or empty.
  std::vector<float> ChannelValues(const Edge& e, int64_t c) {
    const Tensor* t = ChannelVector(FloatValue(e), c);
    std::vector<float> v;
    if (t == nullptr) return v;
    for (int64_t i = 0; i < c; ++i) v.push_back(ChannelValue(*t, i));
    return v;
  }

  bool MatchLayerNorm(int m, LayerNormMatch* match) {
    const FlatNode& mean = g_.nodes[m];
    const DType t = TypeOf(mean);
    if (t != DType::kFloat && !(half_ && IsHalfType(t))) return false;
    const Edge x = mean.inputs.empty() ? Edge{} : mean.inputs[0];
    if (x.node < 0 || x.node >= static_cast<int>(facts_.size()) ||
        x.output >= static_cast<int>(facts_[x.node].specs.size()))
      return false;
    const PartialShape& xs = facts_[x.node].specs[x.output].shape;
    if (xs.unknown_rank() || xs.rank() < 1) return false;
    // The channels: x's last dim, or (where shape inference lost it) the length of gamma or beta.
    int64_t c = xs.dim(xs.rank() - 1);
    if (!ReducesLastAxis(mean, xs.rank())) return false;
    auto learn_channels = [&](const std::optional<Edge>& e) {
      const Tensor* v = e ? Value(*e) : nullptr;
      if (c <= 0 && v != nullptr && v->NumElements() > 1) c = v->NumElements();
    };
    auto typed = [&](int v) { return v >= 0 && Live(v) && TypeOf(g_.nodes[v]) == t; };
    std::vector<int>& nodes = match->nodes;
    nodes = {m};
    // The variance: mean((x - stop_gradient(mean))^2) over the same axis.
    int s = ConsumerOp(m, "StopGradient");
    if (s >= 0) {
      if (!typed(s)) return false;
      nodes.push_back(s);
    } else {
      s = m;
    }
    const int sqd = ConsumerOp(s, "SquaredDifference");
    if (!typed(sqd) || g_.nodes[sqd].inputs.size() != 2) return false;
    const Edge& d0 = g_.nodes[sqd].inputs[0];
    const Edge& d1 = g_.nodes[sqd].inputs[1];
    if (!((SameEdge(d0, x) && d1.node == s) || (SameEdge(d1, x) && d0.node == s))) return false;
    const int var = SoleConsumer(sqd);
    if (!typed(var) || g_.nodes[var].op != "Mean" || !ReducesLastAxis(g_.nodes[var], xs.rank()))
      return false;
    const int add_eps = SoleConsumer(var);
    if (!typed(add_eps) || !IsAdd(add_eps)) return false;
    const std::optional<Edge> eps = OtherInput(g_.nodes[add_eps], var);
    const Tensor* eps_value = eps ? FloatValue(*eps) : nullptr;
    if (eps_value == nullptr || eps_value->NumElements() != 1 ||
        eps_value->dtype() != DType::kFloat)
      return false;
    match->epsilon = eps_value->data<float>()[0];
    const int rsqrt = SoleConsumer(add_eps);
    if (!typed(rsqrt) || g_.nodes[rsqrt].op != "Rsqrt") return false;
    nodes.insert(nodes.end(), {sqd, var, add_eps, rsqrt});
    // inv = rsqrt * gamma, or rsqrt alone.
    int inv = rsqrt;
    if (const int scaled = SoleConsumer(rsqrt);
        scaled >= 0 && typed(scaled) && g_.nodes[scaled].op == "Mul") {
      const std::optional<Edge> gamma = OtherInput(g_.nodes[scaled], rsqrt);
      learn_channels(gamma);
      match->gamma = gamma ? ChannelValues(*gamma, c) : std::vector<float>{};
      if (match->gamma.empty()) return false;
      inv = scaled;
      nodes.push_back(scaled);
    }
    // x * inv, and the shift: -mean * inv (+ beta), or beta - mean * inv.
    if (uses_.is_output[inv] || uses_.data[inv].size() != 2) return false;
    int x_inv = -1, mean_inv = -1;
    for (const auto& [u, index] : uses_.data[inv]) {
      const FlatNode& n = g_.nodes[u];
      if (!typed(u) || n.op != "Mul" || n.inputs.size() != 2) return false;
      const Edge& other = n.inputs[1 - index];
      if (SameEdge(other, x)) {
        x_inv = u;
      } else {
        mean_inv = u;
      }
    }
    if (x_inv < 0 || mean_inv < 0) return false;
    const std::optional<Edge> mean_side = OtherInput(g_.nodes[mean_inv], inv);
    if (!mean_side) return false;
    int shift = -1;
    if (mean_side->node == m && mean_side->output == 0) {  // beta - mean * inv
      shift = SoleConsumer(mean_inv);
      if (!typed(shift) || g_.nodes[shift].op != "Sub" || !Reads(g_.nodes[shift], mean_inv) ||
          g_.nodes[shift].inputs[1].node != mean_inv)
        return false;
      learn_channels(g_.nodes[shift].inputs[0]);
      match->beta = ChannelValues(g_.nodes[shift].inputs[0], c);
      if (match->beta.empty()) return false;
      nodes.insert(nodes.end(), {mean_inv, shift});
    } else {  // -mean * inv (+ beta)
      const int neg = mean_side->node;
      if (!typed(neg) || g_.nodes[neg].op != "Neg" || mean_side->output != 0 ||
          !Reads(g_.nodes[neg], m) || SoleConsumer(neg) != mean_inv)
        return false;
      nodes.insert(nodes.end(), {neg, mean_inv});
      shift = mean_inv;
      if (const int plus = SoleConsumer(mean_inv); plus >= 0 && typed(plus) && IsAdd(plus)) {
        const std::optional<Edge> beta = OtherInput(g_.nodes[plus], mean_inv);
        learn_channels(beta);
        std::vector<float> b = beta ? ChannelValues(*beta, c) : std::vector<float>{};
        if (!b.empty()) {
          match->beta = std::move(b);
          shift = plus;
          nodes.push_back(plus);
        }
      }
    }
    nodes.push_back(x_inv);
    const int out = SoleConsumer(x_inv);
    if (!typed(out) || !IsAdd(out) || SoleConsumer(shift) != out) return false;
    const std::optional<Edge> o = OtherInput(g_.nodes[out], x_inv);
    if (!o || o->node != shift || o->output != 0) return false;
    // The mean (and its StopGradient) are read by the pattern alone.
    for (const int v : {m, s}) {
      if (uses_.is_output[v]) return false;
      for (const auto& [u, index] : uses_.data[v])
        if (std::find(nodes.begin(), nodes.end(), u) == nodes.end()) return false;
    }
    if (c <= 0) return false;
    match->x = x;
    match->channels = c;
    match->out = out;
    return true;
  }

  void RewriteLayerNorm(const LayerNormMatch& match) {
    DType t = TypeOf(g_.nodes[match.out]);
    const int64_t c = match.channels;
    // On a device load a float32 layer norm between a Cast from a half type and a Cast back
    // (Keras's mixed precision) runs in the half type: the kernel computes in float32 inside;
    // the scale and offset round to the half type.
    Edge x = match.x;
    std::vector<int> absorbed = match.nodes;
    int back = -1;
    if (half_ && t == DType::kFloat && x.output == 0) {
      const DType half = CastFromHalf(x.node);
      bool only_pattern = half != DType::kInvalid && !uses_.is_output[x.node];
      for (const auto& [u, index] : uses_.data[x.node])
        only_pattern =
            only_pattern && std::find(absorbed.begin(), absorbed.end(), u) != absorbed.end();
      back = only_pattern ? CastBackTo(match.out, half) : -1;
      if (back >= 0) {
        absorbed.push_back(x.node);
        x = g_.nodes[x.node].inputs[0];
        t = half;
      }
    }
    auto vector = [&](const std::vector<float>& v, float dflt) {
      Tensor f(DType::kFloat, Shape{c});
      for (int64_t i = 0; i < c; ++i) f.data<float>()[i] = v.empty() ? dflt : v[i];
      return t == DType::kFloat ? f : *CastNow(f, t);
    };
    const std::string base = g_.nodes[match.out].name;
    const Edge gamma = AddConstant(base + "/layer_norm_scale", vector(match.gamma, 1.0f));
    const Edge beta = AddConstant(base + "/layer_norm_offset", vector(match.beta, 0.0f));
    g_.owned_attrs.emplace_back();
    ProtoAttrMap& attrs = g_.owned_attrs.back();
    attrs["T"].set_type(static_cast<tensorflow::DataType>(DTypeToProto(t)));
    attrs["epsilon"].set_f(match.epsilon);
    FlatNode& out = g_.nodes[match.out];
    out.op = "_MklLayerNorm";
    out.def = FindOp(out.op);
    out.attrs = &attrs;
    out.inputs = {x, gamma, beta};
    if (back >= 0) BecomeIdentity(back, match.out, t);
    MoveWaits(absorbed, match.out);
  }

  // The sole consumer of v when it is `op` of v and a scalar constant `k`, else -1.
  int ScalarOpAfter(int v, std::string_view op, double k) {
    const int c = SoleConsumer(v);
    if (c < 0 || !Live(c) || g_.nodes[c].op != op || TypeOf(g_.nodes[c]) != dtype_) return -1;
    const std::optional<Edge> o = OtherInput(g_.nodes[c], v);
    return o && IsScalar(*o, k) ? c : -1;
  }

  // TF's tanh-approximated GELU of x (tf.nn.gelu(approximate=True), Hugging Face's "gelu_new"):
  // 0.5 * x * (1 + tanh(sqrt(2 / pi) * (x + 0.044715 * x^3))), as Mul(0.5, x), Pow(x, 3),
  // Mul(0.044715, .), Add(x, .), Mul(sqrt(2 / pi), .), Tanh, Add(1, .), Mul of the two halves.
  bool GeluTanhAfter(int x, std::vector<int>* nodes) {
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
    const int out = SoleConsumer(one);
    if (out < 0 || out != SoleConsumer(half) || g_.nodes[out].op != "Mul" ||
        TypeOf(g_.nodes[out]) != dtype_)
      return false;
    const std::optional<Edge> e = OtherInput(g_.nodes[out], half);
    if (!e || e->node != one) return false;
    *nodes = {half, pow, cube, sum, scaled, tanh, one, out};
    return true;
  }

  // An owned constant node holding `t`.
  Edge AddConstant(const std::string& name, Tensor t) {
    g_.owned_values.push_back(std::move(t));
    FlatNode c;
    c.name = name;
    c.op = "Const";
    c.value = &g_.owned_values.back();
    c.def = FindOp("Const");
    g_.nodes.push_back(std::move(c));
    return Edge{static_cast<int>(g_.nodes.size()) - 1, 0};
  }

  void Rewrite(int p_index, bool conv, const Chain& ch) {
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
        Tensor copy = weights_->dtype() == DType::kFloat ? weights_->DeepCopy()
                                                         : *CastNow(*weights_, DType::kFloat);
        float* d = copy.data<float>();
        const int64_t total = copy.NumElements();
        const int64_t inner = outer ? total / channels : 1;
        // The output channel is the innermost index ([kh, kw, in, out], [kh, kw, c, m] and
        // [k, n]), or the outermost of a transposed MatMul's [n, k].
        for (int64_t i = 0; i < total; ++i) d[i] *= ch.scale[outer ? i / inner : i % channels];
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
    if (ch.add_edge) {
      inputs.push_back(*ch.add_edge);
      fused.push_back("Add");
    }
    if (ch.act != Act::kNone) fused.push_back(ActName(ch.act));

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

  FlatGraph& g_;
  const std::vector<NodeFacts>& facts_;
  const std::vector<char>& live_;
  Uses uses_;
  const bool half_;  // half-precision producers fuse too (a load with an accelerator)
  int64_t channels_ = 0;
  DType dtype_ = DType::kFloat;  // the producer's type
  const Tensor* weights_ = nullptr;
  std::deque<Tensor> converted_;  // half constants as float32 (FloatValue)
};

}  // namespace

int FuseGraph(FlatGraph* g, const std::vector<NodeFacts>& facts, const std::vector<char>& live,
              bool half) {
  return Fuser(g, facts, live, half).Run();
}

}  // namespace kiln::exec
