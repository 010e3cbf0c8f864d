#include "loader/variable_writes.h"

#include <map>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "kiln/exec/function_call.h"
#include "kiln/exec/op_table.h"

namespace kiln::exec {
namespace {

// Ops that change a resource's value (tf.random.Generator's state included).
bool Writes(std::string_view op) {
  return op.starts_with("Assign") || op.starts_with("ResourceApply") ||
         op.starts_with("ResourceSparseApply") || op.starts_with("ResourceScatter") ||
         op == "ResourceStridedSliceAssign" || op == "DestroyResourceOp" ||
         op.starts_with("StatefulUniform") || op.starts_with("StatefulStandardNormal") ||
         op == "StatefulTruncatedNormal" || op == "StatefulRandomBinomial" ||
         op.starts_with("RngSkip") || op == "RngReadAndSkip";
}

// Ops this runtime may lack that write no variable: tf.data's iterator reads (tf_keras saves
// the adapt and train steps of its layers, which pull batches with them) and cuDNN's RNN ops
// (their weights are a value). Taken for unknown ops, they would keep a load of every function
// (savedmodel-cli compile) from freezing the weights a load of the signatures freezes, and the
// plan it writes would not serve that load.
bool WritesNoVariable(std::string_view op) {
  return op.starts_with("IteratorGetNext") || op.starts_with("CudnnRNN");
}

// A function's written arguments: those whose resource it, or what it calls, may write;
// `untraced` when a write's resource comes from elsewhere.
struct ArgWrites {
  bool untraced = false;
  std::set<int> args;
};

class Analysis {
 public:
  explicit Analysis(const FunctionLibrary& library) : library_(library) {}

  const ArgWrites& Of(const std::string& name) {
    if (auto it = memo_.find(name); it != memo_.end()) return it->second;
    memo_[name] = {};  // a call cycle reads "no writes" on its way round
    ArgWrites w;
    if (const tensorflow::FunctionDef* f = library_.Find(name); f == nullptr) {
      w.untraced = true;
    } else {
      Walk(*f, &w);
    }
    return memo_[name] = std::move(w);
  }

 private:
  // A function's nodes and arguments by name: a walk looks inputs up once each (a training
  // function has thousands of writes).
  struct Names {
    std::unordered_map<std::string_view, const tensorflow::NodeDef*> nodes;
    std::unordered_map<std::string_view, int> args;
    explicit Names(const tensorflow::FunctionDef& f) {
      for (const auto& n : f.node_def()) nodes[n.name()] = &n;
      for (int i = 0; i < f.signature().input_arg_size(); ++i)
        args.emplace(f.signature().input_arg(i).name(), i);
    }
  };

  // The argument input `input` ("name", "node:out:i") comes from through Identity nodes, or -1.
  static int ArgOf(const Names& names, std::string_view input) {
    for (int hops = 0; hops < 64; ++hops) {
      const size_t colon = input.find(':');
      if (colon == std::string_view::npos) {
        auto it = names.args.find(input);
        return it == names.args.end() ? -1 : it->second;
      }
      auto it = names.nodes.find(input.substr(0, colon));
      const tensorflow::NodeDef* n = it == names.nodes.end() ? nullptr : it->second;
      if (n == nullptr || n->op() != "Identity" || n->input_size() < 1) return -1;
      input = n->input(0);
    }
    return -1;
  }

  // The written arguments of callee `fn` called with node n's inputs from `first` on.
  void Call(const Names& names, const tensorflow::NodeDef& n, const std::string& fn, int first,
            ArgWrites* w) {
    const ArgWrites callee = Of(fn);
    w->untraced |= callee.untraced;
    for (int a : callee.args) {
      const int k = first + a;
      const int arg = k < n.input_size() ? ArgOf(names, n.input(k)) : -1;
      if (arg < 0) {
        w->untraced = true;
      } else {
        w->args.insert(arg);
      }
    }
  }

  void Walk(const tensorflow::FunctionDef& f, ArgWrites* w) {
    const Names names(f);
    for (const tensorflow::NodeDef& n : f.node_def()) {
      const std::string& op = n.op();
      if (Writes(op)) {
        // Input 0 is the resource every writer changes; an optimizer's slots (Adam's m and v)
        // follow among its other inputs, which are otherwise values.
        for (int i = 0; i < n.input_size(); ++i) {
          if (n.input(i).starts_with("^")) continue;
          const int arg = ArgOf(names, n.input(i));
          if (arg >= 0) {
            w->args.insert(arg);
          } else if (i == 0) {
            w->untraced = true;
          }
        }
        continue;
      }
      if (library_.Find(op) != nullptr) {
        Call(names, n, op, 0, w);
        continue;
      }
      const auto func = [&](const char* attr) -> const std::string* {
        auto it = n.attr().find(attr);
        return it != n.attr().end() && it->second.has_func() ? &it->second.func().name() : nullptr;
      };
      if (IsFunctionCallOp(op) && func("f") != nullptr) {
        Call(names, n, *func("f"), 0, w);
      } else if ((op == "While" || op == "StatelessWhile") && func("body") != nullptr) {
        Call(names, n, *func("body"), 0, w);
        if (func("cond") != nullptr) Call(names, n, *func("cond"), 0, w);
      } else if (op == "If" || op == "StatelessIf" || op == "Case" || op == "StatelessCase") {
        for (const char* attr : {"then_branch", "else_branch"})
          if (func(attr) != nullptr) Call(names, n, *func(attr), 1, w);
        if (auto it = n.attr().find("branches"); it != n.attr().end())
          for (const auto& b : it->second.list().func()) Call(names, n, b.name(), 1, w);
      } else if (FindOp(op) == nullptr) {
        w->untraced |= !WritesNoVariable(op);  // unknown: assume the worst
      } else {
        // Any other op with a function (a dataset's map, ...): its writes cannot be traced.
        for (const auto& [attr, value] : n.attr()) {
          if (value.has_func()) w->untraced |= Writer(value.func().name());
          for (const auto& fn : value.list().func()) w->untraced |= Writer(fn.name());
        }
      }
    }
  }

  bool Writer(const std::string& fn) {
    const ArgWrites& w = Of(fn);
    return w.untraced || !w.args.empty();
  }

  const FunctionLibrary& library_;
  std::map<std::string, ArgWrites> memo_;
};

}  // namespace

std::optional<std::set<int>> WrittenVariables(const tensorflow::SavedObjectGraph& graph,
                                              const FunctionLibrary& library,
                                              const std::vector<std::string>& roots) {
  Analysis analysis(library);
  std::set<int> written;
  for (const std::string& name : roots) {
    const tensorflow::FunctionDef* f = library.Find(name);
    const auto it = graph.concrete_functions().find(name);
    if (f == nullptr || it == graph.concrete_functions().end()) continue;  // nothing to run
    const tensorflow::SavedConcreteFunction& cf = it->second;
    const ArgWrites& w = analysis.Of(name);
    if (w.untraced) return std::nullopt;
    // The captured inputs come last, in bound_inputs' order.
    const int user = f->signature().input_arg_size() - cf.bound_inputs_size();
    for (int a : w.args) {
      if (a < user) return std::nullopt;  // a handle the caller passes
      written.insert(cf.bound_inputs(a - user));
    }
  }
  return written;
}

}  // namespace kiln::exec
