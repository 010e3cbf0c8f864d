// Internal to the TF1 control-flow rewrite (tf1_control_flow.h): the graph being rewritten and
// the helpers the conditional and loop passes share (tf1_cond_functionalize.cc,
// tf1_loop_functionalize.cc).
#pragma once

#include <map>
#include <memory>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "kiln/core/status.h"
#include "tensorflow/framework.pb.h"

namespace kiln::exec::tf1 {

using tensorflow::DataType;
using tensorflow::NodeDef;

bool IsOp(std::string_view o, std::string_view op);
bool IsOp(const NodeDef& n, std::string_view op);
bool IsSwitch(const NodeDef& n);
bool IsMerge(const NodeDef& n);
bool IsEnter(const NodeDef& n);
bool IsExit(const NodeDef& n);
bool IsNextIteration(const NodeDef& n);
bool IsLoopCond(const NodeDef& n);

// A function argument while a body is being assembled (MakeFunction turns it into input_arg).
inline constexpr char kArgOp[] = "_KilnFunctionArg";

struct Ref {
  std::string node;
  int index = 0;
  bool control = false;
};

Ref ParseRef(const std::string& in);

std::string TensorName(const std::string& node, int index);

const tensorflow::AttrValue* FindAttr(const NodeDef& n, const char* name);

DataType TypeAttr(const NodeDef& n, const char* name);

// A graph being rewritten: nodes by position, looked up by name (Reindex after each rewrite).
struct Graph {
  std::vector<NodeDef> nodes;
  std::map<std::string, int> index;
  std::vector<std::vector<int>> consumers;  // by data or control edge
  const std::map<std::string, DataType>* external_dtypes = nullptr;

  void Reindex() {
    index.clear();
    for (size_t i = 0; i < nodes.size(); ++i) index[nodes[i].name()] = static_cast<int>(i);
    consumers.assign(nodes.size(), {});
    for (size_t i = 0; i < nodes.size(); ++i)
      for (const std::string& in : nodes[i].input()) {
        const int p = Find(ParseRef(in).node);
        if (p >= 0) consumers[p].push_back(static_cast<int>(i));
      }
  }
  int Find(const std::string& name) const {
    auto it = index.find(name);
    return it == index.end() ? -1 : it->second;
  }
  std::string UniqueName(const std::string& base) const {
    std::string name = base;
    for (int i = 1; index.count(name); ++i) name = base + "_" + std::to_string(i);
    return name;
  }
  // Drops the nodes marked in `drop` (by position) and appends `add`.
  void Replace(const std::vector<char>& drop, std::vector<NodeDef> add) {
    std::vector<NodeDef> kept;
    for (size_t i = 0; i < nodes.size(); ++i)
      if (!drop[i]) kept.push_back(std::move(nodes[i]));
    for (NodeDef& n : add) kept.push_back(std::move(n));
    nodes = std::move(kept);
    Reindex();
  }
};

// The dtype of output `index` of `node`, from the attrs the producing op declares it with.
Result<DataType> DTypeOf(const Graph& g, const std::string& node, int index);

NodeDef ArgNode(const std::string& name, DataType dtype);

NodeDef IdentityNode(const std::string& name, const std::string& input, DataType dtype);

void SetFunc(NodeDef* n, const char* attr, const std::string& fn);

void SetTypes(NodeDef* n, const char* attr, const std::vector<DataType>& types);

// What the rewrite shares: where functions go and the names they have taken.
struct Context {
  std::string prefix;
  std::vector<std::unique_ptr<tensorflow::FunctionDef>>* functions;
  std::set<std::string> taken;

  std::string FunctionName(const std::string& base) {
    std::string name = prefix + "/" + base;
    for (int i = 1; !taken.insert(name).second; ++i)
      name = prefix + "/" + base + "_" + std::to_string(i);
    return name;
  }
};

// A function over `g` (argument nodes in order, then the body) returning `rets`. Nodes that
// nothing in it reads and no return names run as control outputs (a branch's side effects).
void MakeFunction(const Graph& g, const std::string& name, const std::vector<std::string>& rets,
                  const std::vector<DataType>& ret_types, Context* cx);

// The nodes in an order where each comes after its inputs (a loop's NextIteration edges left out
// when skip_back_edges), or an error naming a cycle.
Result<std::vector<int>> TopologicalOrder(const Graph& g, bool skip_back_edges);

// Rewrites every Switch/Merge conditional of g into If nodes over new functions.
Status FunctionalizeConds(Graph* g, Context* cx);
// Rewrites every Enter/Exit loop of g, innermost first, into While nodes over new functions.
Status FunctionalizeLoops(Graph* g, Context* cx);

}  // namespace kiln::exec::tf1
