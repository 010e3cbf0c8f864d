// The executor's private graph form: one FunctionDef with every function call inlined, as
// plain nodes with resolved edges. Built once per prepare; never seen at run time.
#pragma once

#include <deque>
#include <string>
#include <vector>

#include "core/native_attrs.h"
#include "kiln/core/status.h"
#include "kiln/exec/executor.h"
#include "kiln/exec/op_table.h"
#ifndef KILN_NO_PROTOBUF
#include "tensorflow/framework.pb.h"
#endif

namespace kiln::exec {

struct Edge {
  int node = -1;   // producing node
  int output = 0;  // flat output index of that node
};

struct FlatNode {
  std::string name;                             // scoped: "call_node/inner_node" for inlined bodies
  std::string op;                               // "_Arg" for function arguments
  const ProtoAttrMap* attrs = nullptr;          // a FunctionDef's node, or a rewrite's
  const NativeAttrMap* native_attrs = nullptr;  // a serving plan's node
  const Tensor* value = nullptr;                // a constant made by a graph rewrite (op "Const")
  std::vector<Edge> inputs;
  std::vector<int> control_inputs;
  int arg_index = -1;                 // for _Arg
  const OpDefinition* def = nullptr;  // null for _Arg, NoOp-like sinks and unknown ops
  bool stateful = false;

  AttrReader reader() const {
    return native_attrs != nullptr ? AttrReader(native_attrs) : AttrReader(attrs);
  }
  // The type attr T, or TF's OpDef default where the graph omits it (graphs saved with
  // defaults stripped, as Keras saves them, drop LeakyRelu's and MaxPool's T = float32);
  // kInvalid where it has neither.
  DType TypeAttr() const;
  // A NoOp that inlining adds as a sink for control edges (it has no attrs at all).
  bool IsInliningSink() const {
    return op == "NoOp" && attrs == nullptr && native_attrs == nullptr;
  }
};

struct FlatGraph {
  std::vector<FlatNode> nodes;
  std::vector<Edge> outputs;  // one per FunctionDef output arg
  std::vector<int> keep;      // control_ret nodes: run even if no output needs them
  // Storage of what rewrites add (nodes point into these; deques keep addresses stable).
#ifndef KILN_NO_PROTOBUF
  std::deque<ProtoAttrMap> owned_attrs;
#endif
  std::deque<NativeAttrMap> owned_native_attrs;
  std::deque<Tensor> owned_values;
};

// What a function takes and returns, independent of where its body came from (a FunctionDef,
// or a serving plan's prepared graph).
struct FunctionInterface {
  std::string name;
  std::vector<std::string> arg_names;
  std::vector<DType> arg_dtypes;           // declared; kInvalid where polymorphic
  std::vector<PartialShape> input_shapes;  // the "_input_shapes" attr: empty, or one per arg
  std::vector<std::string> output_names;
  std::vector<DType> output_dtypes;  // declared; kInvalid where polymorphic
};

#ifndef KILN_NO_PROTOBUF
// Nodes a rewrite adds to `g`, their attrs and values owned by it: a constant holding `value`,
// and a Cast of `from` (a value of type `src`) to `dst`. Each returns the new node's output.
Edge AddConstNode(FlatGraph* g, std::string name, Tensor value);
Edge AddCastNode(FlatGraph* g, const Edge& from, DType src, DType dst, std::string name);

// The interface of `fdef`; errors name the function and the argument.
Result<FunctionInterface> InterfaceOf(const tensorflow::FunctionDef& fdef);

// Marks a FunctionDef that kiln made from a TF1 GraphDef (a bool attr): its node inputs keep
// the GraphDef's names ("node", "node:i"). Any other FunctionDef names a node's output
// "node:output_name:index" and an argument by its bare name, as TF requires.
inline constexpr char kGraphStyleInputsAttr[] = "_kiln_graphdef_style_inputs";

// Imports `fdef`, inlining PartitionedCall/StatefulPartitionedCall and direct calls of
// library functions. Errors name the function and node.
Result<FlatGraph> FlattenFunction(const tensorflow::FunctionDef& fdef,
                                  const FunctionLibrary& library);
#endif

}  // namespace kiln::exec
