// The fusion pass's private parts (FuseGraph in fusion.h is its entry): the helpers its files
// share and class Fuser, whose methods are defined by topic in fusion.cc (the driver, pads,
// transposes, and the producer chains with their activations), fusion_attention.cc (the
// attention core of a transformer), fusion_norms.cc (layer norms and
// the half-precision narrowing of softmax and layer norm) and fusion_util.cc (the graph queries
// and edits both use).
#pragma once

#include <cstdint>
#include <deque>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <tuple>
#include <utility>
#include <vector>

#include "graph/fusion.h"

namespace kiln::exec::fusion_detail {

// Who reads each node's outputs.
struct Uses {
  std::vector<std::vector<std::pair<int, int>>> data;  // per node: (consumer, input index)
  std::vector<int> control_dependents;                 // per node: how many
  std::vector<char> is_output;                         // per node: a function output
};

// fusion_util.cc
Uses FindUses(const FlatGraph& g, const std::vector<char>& live);
DType TypeOf(const FlatNode& n);
std::pair<DType, DType> CastTypes(const FlatNode& n);
bool IsHalfType(DType t);
const Tensor* ChannelVector(const Tensor* t, int64_t channels);
float ChannelValue(const Tensor& t, int64_t c);

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
  kGeluApproximate,
  kHardSwish
};

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
  // After the activation, per-channel products and sums by constants (a batch norm after
  // Conv or Dense(activation=...)): y * post_scale + post_shift, each empty (none) or per
  // channel; a shift without a scale where the scale folded into the weights.
  std::vector<float> post_scale, post_shift;
  int absorbed = 0;
  // A view the chain passed through: a Squeeze of a size-1 spatial dim (Keras 3's Conv1D is
  // ExpandDims, Conv2D, Squeeze, then its bias and activation) or a Reshape that keeps the
  // channels innermost (Keras's Dense on a sequence is Tensordot: MatMul, Reshape, then its
  // bias and activation). Per-channel ops commute with it; the last node becomes it.
  int view = -1;
  int last_before_view = -1;
};

// fusion.cc: readers of an IdentityN read what it forwards (Keras 3's custom-gradient
// activations); `live` loses the IdentityN nodes left unread.
int ForwardIdentityN(FlatGraph* g, std::vector<char>* live);

class Fuser {
 public:
  Fuser(FlatGraph* g, const std::vector<NodeFacts>& facts, const std::vector<char>& live, bool half,
        bool pruned)
      : g_(*g),
        facts_(facts),
        live_(live),
        uses_(FindUses(*g, live)),
        half_(half),
        pruned_(pruned) {}

  // fusion.cc
  int Run();

 private:
  // Whether node v is live: what the first look found, or a node fusion added (a constant).
  bool Live(int v) const { return v >= static_cast<int>(live_.size()) || live_[v] != 0; }
  bool IsAdd(int v) const { return g_.nodes[v].op == "AddV2" || g_.nodes[v].op == "Add"; }

  // fusion.cc: pads and transposes
  int FoldPads();
  bool IsSolePad(const Edge& e, int reader) const;
  std::optional<std::vector<int64_t>> PaddingWith(const FlatNode& conv,
                                                  std::vector<int64_t> pads) const;
  static void SetExplicitPadding(const std::vector<int64_t>& pads, ProtoAttrMap* attrs);
  void Bypass(int pad_index, int reader);
  int ForwardIdentityTransposes();
  // fusion.cc: the chain after a producer, and its rewrite
  void Scale(Chain* ch, const Tensor& s);
  void Shift(Chain* ch, const Tensor& b, float sign);
  Chain Follow(int p);
  bool TakeAfterActivation(const FlatNode& n, int cur, Chain* ch);
  void FoldPostScale(Chain* ch);
  bool KeepsChannelsInnermost(int in, int r) const;
  bool SqueezesSpatialDim(int in, int squeeze) const;
  bool OnlyOutputZeroUsed(int v) const;
  int SwishAfter(int x, std::vector<int>* nodes);
  bool HardSwishAfter(int x, std::vector<int>* nodes);
  bool IsScalar(const Edge& e, double want);
  int GeluProduct(int half, int last) const;
  bool GeluAfter(int x, std::vector<int>* nodes);
  int ScalarOpAfter(int v, std::string_view op, double k);
  bool GeluTanhAfter(int x, std::vector<int>* nodes);
  void Rewrite(int p_index, bool conv, const Chain& ch);

  // fusion_shapes.cc: whether two tensors have the same shape at run time, where the shapes
  // the first look found leave dims unknown (a Keras model's batch).
  struct DimSource {
    int node = -1, output = 0, dim = 0;
    bool operator==(const DimSource&) const = default;
  };
  const PartialShape* ShapeOf(const Edge& e) const;  // as the first look found it, or null
  DimSource SourceOf(const Edge& e, int d, int depth = 0);
  bool SameShape(const Edge& a, const Edge& b);

  struct LayerNormMatch {
    Edge x;
    int64_t channels = -1;
    int out = -1;
    float epsilon = 0;
    std::vector<float> gamma, beta;  // empty: 1 and 0
    std::vector<int> nodes;          // the matched nodes but `out`
  };

  // fusion_norms.cc: layer normalization
  int FuseLayerNorms();
  static bool Reads(const FlatNode& n, int v);
  static bool SameEdge(const Edge& a, const Edge& b);
  int ConsumerOp(int v, std::string_view op) const;
  bool ReducesLastAxis(const FlatNode& mean, int rank) const;
  std::vector<float> ChannelValues(const Edge& e, int64_t c);
  bool MatchLayerNorm(int m, LayerNormMatch* match);
  void RewriteLayerNorm(const LayerNormMatch& match);
  // fusion_norms.cc: a float32 softmax or layer norm between Casts runs in the half type
  DType CastFromHalf(int v) const;
  int CastBackTo(int v, DType half) const;
  void BecomeIdentity(int back, int v, DType half);
  int NarrowSoftmaxCasts();

  // fusion_attention.cc: Keras's attention core becomes one _KilnAttention
  struct AttentionMatch {
    Edge q, k, v;
    std::optional<Edge> bias;
    float scale = 1.0f;
    int out = -1;  // the second product, or the Transpose after it: becomes the fused node
    DType dtype = DType::kFloat;
    std::vector<int> nodes;  // the absorbed nodes
  };
  int FuseAttention();
  std::optional<std::string> EinsumEquation(int v) const;
  int64_t HeadDim(const Edge& e) const;
  int NextPastIdentities(int v, std::vector<int>* nodes) const;
  bool SwapsMiddleDims(const Edge& e, int reader, Edge* from) const;
  bool AttentionOperands(int e1, int e2, int probs_side, AttentionMatch* m);
  bool MatchAttention(int sm, AttentionMatch* m);
  void RewriteAttention(const AttentionMatch& m);

  // fusion_int8.cc: products of FakeQuant inputs and int8-level weights run on integers
  int QuantizeProducts();
  bool Int8Range(int fq, float* lo, float* hi, bool* narrow) const;
  int64_t InputChannels(const Edge& x) const;
  int ChainInt8Products();

  // fusion_util.cc
  // The nodes the function's outputs, kept nodes and stateful nodes need now.
  std::vector<char> Reachable() const;
  const Tensor* Value(const Edge& e) const;
  // Value, or the value of a constant fusion added (folded weights).
  const Tensor* KnownValue(const Edge& e) const;
  const Tensor* FloatValue(const Edge& e);
  static void SortUnique(std::vector<int>* v);
  std::vector<int64_t> IntValues(const Edge& e) const;
  int SoleConsumer(int v) const;
  static std::optional<Edge> OtherInput(const FlatNode& n, int from);
  void MoveWaits(const std::vector<int>& nodes, int into);
  Edge AddConstant(const std::string& name, Tensor t);

  FlatGraph& g_;
  const std::vector<NodeFacts>& facts_;
  const std::vector<char>& live_;
  Uses uses_;
  const bool half_;    // half-precision producers fuse too (a load with an accelerator)
  const bool pruned_;  // nodes nothing needs are pruned after fusion
  int64_t channels_ = 0;
  DType dtype_ = DType::kFloat;  // the producer's type
  const Tensor* weights_ = nullptr;
  std::deque<Tensor> converted_;  // half constants as float32 (FloatValue)
  std::map<std::tuple<int, int, int>, DimSource> dim_sources_;  // SourceOf's answers
};

}  // namespace kiln::exec::fusion_detail
