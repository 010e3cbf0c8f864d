// Where a variable's resource goes in a MetaGraphDef, and what storing the variable in another
// dtype changes on the way: the reads that must be followed by a conversion back to float32
// (their computing consumers rerouted), and the dtype attributes of the ops that only move the
// stored value (save and restore functions, the main graph's saver call).
#pragma once

#include <map>
#include <string>
#include <utility>
#include <vector>

#include "kiln/core/dtype.h"
#include "kiln/core/status.h"
#include "kiln/core/tensor.h"
#include "tensorflow/saved_model.pb.h"

namespace kiln::exec::quantize {

// A tensor of a scope: scope 0 is the main graph ("node:0"), scope i > 0 the library's
// function i - 1 ("arg" or "node:output_arg:k").
struct Location {
  int scope = 0;
  std::string ref;
  bool operator<(const Location& o) const {
    return scope != o.scope ? scope < o.scope : ref < o.ref;
  }
};

// A change of a dtype attribute (index >= 0: an element of a type list) or, with attr empty,
// of the type of a function's input argument `node`.
struct TypeEdit {
  int scope = 0;
  int node = 0;
  std::string attr;
  int index = -1;
};

// A read whose value some ops compute with: they get the float32 value instead.
struct ComputeRead {
  int scope = 0;
  int node = 0;
  std::vector<std::pair<int, int>> uses;  // (node, data input position)
  std::vector<std::string> ret_keys;      // function outputs that return the value
};

// int8: a float32 activation an op computes with beside a quantized weight: data input `pos`
// of node `node` of a scope.
struct ActivationSite {
  int scope = 0;
  int node = 0;
  int pos = 0;
};

struct VariableUses {
  std::vector<TypeEdit> edits;
  std::vector<ComputeRead> reads;
  // The main graph's initializers of the variable (AssignVariableOp of a computed value, which
  // no SavedModel loader runs): retyped, their value converted to the stored dtype.
  std::vector<std::pair<int, int>> initializers;  // (scope, node)
  // Why the variable cannot change dtype ("ResourceGather (node 'x' in function 'f')"); empty
  // when it can.
  std::string problem;
  // Op types and node names of the ops that compute with the value (for --exclude).
  std::vector<std::string> consumers;
  // The output-channel axis of the first op that computes with it (-1: not known).
  int channel_axis = -1;
};

class MetaGraphUses {
 public:
  explicit MetaGraphUses(tensorflow::MetaGraphDef* meta_graph);

  // The main-graph tensor of each checkpoint key that the saver's restore op assigns (the
  // variable handle a TF1 loader such as TF Serving restores), by key.
  std::map<std::string, Location> RestoredHandles() const;
  // The captured arguments of function `name`: the last `count` inputs.
  Result<std::vector<Location>> CaptureArgs(const std::string& name, int count) const;

  // Follows the resource from `roots` through identities and calls to every op that uses it.
  VariableUses Trace(const std::vector<Location>& roots, int rank) const;

  // Makes the changes (trace every variable before applying any: Trace reads the graph as it
  // was): each edit to `stored`, and each read followed by Cast (and Mul by
  // `scale` when it is set) to float32.
  Status Apply(const VariableUses& uses, DType stored, const Tensor& scale);
  // After every Apply: the initializers' values encoded as the variables store them (for int8:
  // round(value / scale) clamped to [-127, 127]).
  Status ApplyInitializers();

  // int8: the float32 activation operands of the ops that compute with `uses`' reads (input 0
  // of Conv2D, Conv3D and DepthwiseConv2dNative; the other operand of MatMul, BatchMatMul and
  // a two-input Einsum).
  std::vector<ActivationSite> ActivationSites(const VariableUses& uses) const;
  // The tensor a site reads ("node:output:0" in a function, "node:0" in the main graph), the
  // name of its scope ("" for the main graph) and the op that reads it.
  std::string SiteTensor(const ActivationSite& site) const;
  const std::string& ScopeName(int scope) const { return scopes_[scope].name; }
  const std::string& SiteOp(const ActivationSite& site) const;
  // Routes the sites (each reading the same tensor of one scope) through `node`, whose input 0
  // becomes that tensor and whose output `out_arg` 0 the sites read instead.
  void InsertOnInputs(const std::vector<ActivationSite>& sites, const std::string& base,
                      tensorflow::NodeDef node, const char* out_arg);

 private:
  struct Scope {
    std::string name;  // "" for the main graph
    google::protobuf::RepeatedPtrField<tensorflow::NodeDef>* nodes = nullptr;
    tensorflow::FunctionDef* fn = nullptr;
    std::map<std::string, int> by_name;
    std::map<std::string, std::vector<std::pair<int, int>>> consumers;  // ref -> (node, pos)
  };
  std::string Normalize(int scope, const std::string& input) const;
  std::string OutputRef(int scope, const std::string& node, const char* arg, int k) const;
  std::string Where(int scope, int node) const;
  const std::string& DataInput(int scope, int node, int pos) const;
  void Index(int scope);
  bool IsStorage(int scope, int node, int pos, std::vector<TypeEdit>* edits, int depth) const;
  void TraceAssign(int scope, int node, VariableUses* uses) const;
  std::string AddNode(int scope, const std::string& base, tensorflow::NodeDef node);

  struct PendingInitializer {
    int scope = 0, node = 0;
    DType stored = DType::kInvalid;
    Tensor scale;
  };
  std::vector<PendingInitializer> initializers_;
  tensorflow::MetaGraphDef* mg_;
  std::vector<Scope> scopes_;
  std::map<std::string, int> function_scope_;
};

}  // namespace kiln::exec::quantize
