#include "quantize/variable_uses.h"

#include <set>
#include <tuple>

#include "kiln/core/proto_convert.h"

namespace kiln::exec::quantize {
namespace {

bool IsCall(const std::string& op) {
  return op == "PartitionedCall" || op == "StatefulPartitionedCall";
}

// Ops that take the resource but neither read nor write its value.
bool IgnoresValue(const std::string& op) {
  return op == "DisableCopyOnRead" || op == "VarIsInitializedOp" || op == "VariableShape" ||
         op == "DestroyResourceOp" || op == "NoOp";
}

// The output-channel axis of a weight at data input `pos` of `node` (rank `rank`), -1 when
// the op is not one we know.
int ChannelAxis(const tensorflow::NodeDef& node, int pos, int rank) {
  const auto flag = [&](const char* name) {
    auto it = node.attr().find(name);
    return it != node.attr().end() && it->second.b();
  };
  const std::string& op = node.op();
  if (op == "MatMul" && rank == 2)
    return pos == 1 ? (flag("transpose_b") ? 0 : 1) : (flag("transpose_a") ? 1 : 0);
  if ((op == "BatchMatMul" || op == "BatchMatMulV2" || op == "BatchMatMulV3") && rank >= 2)
    return pos == 1 ? (flag("adj_y") ? rank - 2 : rank - 1) : (flag("adj_x") ? rank - 1 : rank - 2);
  if (pos != 1) return -1;
  if (op == "Conv2D" || op == "Conv3D" || op == "Conv1D" || op == "_FusedConv2D") return rank - 1;
  if (op == "DepthwiseConv2dNative" && rank == 4) return 2;
  if ((op == "Conv2DBackpropInput" || op == "Conv3DBackpropInputV2") && rank >= 2) return rank - 2;
  return -1;
}

// The data input an op computes with beside a weight at data input `pos`, or -1.
int ActivationInput(const tensorflow::NodeDef& node, int pos) {
  const std::string& op = node.op();
  if (op == "Conv2D" || op == "Conv3D" || op == "DepthwiseConv2dNative") return pos == 1 ? 0 : -1;
  if (op == "MatMul" || op == "BatchMatMul" || op == "BatchMatMulV2" || op == "BatchMatMulV3")
    return pos == 0 || pos == 1 ? 1 - pos : -1;
  if (op == "Einsum") {
    auto it = node.attr().find("N");
    return it != node.attr().end() && it->second.i() == 2 && (pos == 0 || pos == 1) ? 1 - pos : -1;
  }
  return -1;
}

// Ops that pass a weight on with its values unchanged, only viewed otherwise.
bool IsWeightView(const std::string& op) {
  return op == "Reshape" || op == "Transpose" || op == "Identity" || op == "ExpandDims" ||
         op == "Squeeze";
}

const char* ViewOutputArg(const std::string& op) { return op == "Transpose" ? "y" : "output"; }

bool IsFloat32Op(const tensorflow::NodeDef& node) {
  auto it = node.attr().find("T");
  return it != node.attr().end() && it->second.type() == tensorflow::DT_FLOAT;
}

}  // namespace

MetaGraphUses::MetaGraphUses(tensorflow::MetaGraphDef* meta_graph) : mg_(meta_graph) {
  Scope main;
  main.nodes = mg_->mutable_graph_def()->mutable_node();
  scopes_.push_back(std::move(main));
  auto* library = mg_->mutable_graph_def()->mutable_library();
  for (auto& fn : *library->mutable_function()) {
    Scope s;
    s.name = fn.signature().name();
    s.nodes = fn.mutable_node_def();
    s.fn = &fn;
    function_scope_[s.name] = static_cast<int>(scopes_.size());
    scopes_.push_back(std::move(s));
  }
  for (int i = 0; i < static_cast<int>(scopes_.size()); ++i) Index(i);
}

std::string MetaGraphUses::Normalize(int scope, const std::string& input) const {
  if (scope == 0 && input.find(':') == std::string::npos) return input + ":0";
  return input;
}

std::string MetaGraphUses::OutputRef(int scope, const std::string& node, const char* arg,
                                     int k) const {
  return scope == 0 ? node + ":" + std::to_string(k) : node + ":" + arg + ":" + std::to_string(k);
}

std::string MetaGraphUses::Where(int scope, int node) const {
  const tensorflow::NodeDef& n = scopes_[scope].nodes->Get(node);
  return n.op() + " (node '" + n.name() + "' in " +
         (scope == 0 ? std::string("the main graph") : "function '" + scopes_[scope].name + "'") +
         ")";
}

void MetaGraphUses::Index(int scope) {
  Scope& s = scopes_[scope];
  s.by_name.clear();
  s.consumers.clear();
  for (int i = 0; i < s.nodes->size(); ++i) {
    const tensorflow::NodeDef& n = s.nodes->Get(i);
    s.by_name[n.name()] = i;
    int pos = 0;
    for (const std::string& in : n.input()) {
      if (!in.empty() && in[0] == '^') continue;
      s.consumers[Normalize(scope, in)].emplace_back(i, pos++);
    }
  }
}

std::map<std::string, Location> MetaGraphUses::RestoredHandles() const {
  std::map<std::string, Location> out;
  const Scope& main = scopes_[0];
  auto call_it = main.by_name.find(mg_->saver_def().restore_op_name());
  if (call_it == main.by_name.end()) return out;
  const tensorflow::NodeDef& call = main.nodes->Get(call_it->second);
  auto f = call.attr().find("f");
  if (!IsCall(call.op()) || f == call.attr().end()) return out;
  auto fs = function_scope_.find(f->second.func().name());
  if (fs == function_scope_.end()) return out;
  const Scope& rs = scopes_[fs->second];
  const auto& args = rs.fn->signature().input_arg();
  for (const tensorflow::NodeDef& n : *rs.nodes) {
    if (n.op() != "AssignVariableOp" || n.input_size() < 2) continue;
    int arg = -1;
    for (int a = 0; a < args.size(); ++a)
      if (args[a].name() == n.input(0)) arg = a;
    if (arg < 0 || arg >= call.input_size()) continue;
    // The value: RestoreV2's output k, through identities.
    std::string value = n.input(1);
    for (int guard = 0; guard < 8; ++guard) {
      const std::string node = value.substr(0, value.find(':'));
      auto it = rs.by_name.find(node);
      if (it == rs.by_name.end()) break;
      const tensorflow::NodeDef& p = rs.nodes->Get(it->second);
      if (p.op() == "Identity" && p.input_size() > 0) {
        value = p.input(0);
        continue;
      }
      if (p.op() != "RestoreV2" || p.input_size() < 2) break;
      const int k = std::stoi(value.substr(value.rfind(':') + 1));
      const std::string names = p.input(1).substr(0, p.input(1).find(':'));
      auto nt = rs.by_name.find(names);
      if (nt == rs.by_name.end()) break;
      const auto& attr = rs.nodes->Get(nt->second).attr();
      auto v = attr.find("value");
      if (v == attr.end()) break;
      auto keys = TensorFromProto(v->second.tensor());
      if (!keys.ok() || keys->dtype() != DType::kString || k < 0 || k >= keys->NumElements()) break;
      out[keys->flat<std::string>()[k]] = {0, Normalize(0, call.input(arg))};
      break;
    }
  }
  return out;
}

Result<std::vector<Location>> MetaGraphUses::CaptureArgs(const std::string& name, int count) const {
  auto it = function_scope_.find(name);
  if (it == function_scope_.end())
    return NotFound("the object graph names function '", name, "', which the library lacks");
  const auto& args = scopes_[it->second].fn->signature().input_arg();
  if (count > args.size())
    return InvalidArgument("function '", name, "' has ", args.size(), " inputs but ", count,
                           " captures");
  std::vector<Location> out;
  for (int a = args.size() - count; a < args.size(); ++a)
    out.push_back({it->second, args[a].name()});
  return out;
}

bool MetaGraphUses::IsStorage(int scope, int node, int pos, std::vector<TypeEdit>* edits,
                              int depth) const {
  if (depth > 16) return false;
  const Scope& s = scopes_[scope];
  const tensorflow::NodeDef& n = s.nodes->Get(node);
  // Every consumer of `ref` stores the value (and there is one); no function returns it.
  const auto all_storage = [&](int sc, const std::string& ref, std::vector<TypeEdit>* e) {
    const Scope& ss = scopes_[sc];
    if (ss.fn != nullptr)
      for (const auto& [key, value] : ss.fn->ret())
        if (value == ref) return false;
    auto it = ss.consumers.find(ref);
    if (it == ss.consumers.end() || it->second.empty()) return false;
    for (const auto& [c, p] : it->second)
      if (!IsStorage(sc, c, p, e, depth + 1)) return false;
    return true;
  };
  std::vector<TypeEdit> mine;
  if (n.op() == "SaveV2" && pos >= 3) {
    mine.push_back({scope, node, "dtypes", pos - 3});
  } else if (n.op() == "Identity" && pos == 0) {
    mine.push_back({scope, node, "T", -1});
    if (!all_storage(scope, OutputRef(scope, n.name(), "output", 0), &mine)) return false;
  } else if (IsCall(n.op())) {
    auto f = n.attr().find("f");
    if (f == n.attr().end()) return false;
    auto fs = function_scope_.find(f->second.func().name());
    if (fs == function_scope_.end()) return false;
    const auto& args = scopes_[fs->second].fn->signature().input_arg();
    if (pos >= args.size()) return false;
    mine.push_back({scope, node, "Tin", pos});
    mine.push_back({fs->second, pos, "", -1});
    if (!all_storage(fs->second, args[pos].name(), &mine)) return false;
  } else {
    return false;
  }
  edits->insert(edits->end(), mine.begin(), mine.end());
  return true;
}

void MetaGraphUses::TraceAssign(int scope, int node, VariableUses* uses) const {
  const Scope& s = scopes_[scope];
  const tensorflow::NodeDef& assign = s.nodes->Get(node);
  std::vector<TypeEdit> edits = {{scope, node, "dtype", -1}};
  std::string value = assign.input_size() > 1 ? assign.input(1) : "";
  for (int guard = 0; guard < 8; ++guard) {
    const std::string ref = Normalize(scope, value);
    auto it = s.by_name.find(ref.substr(0, ref.find(':')));
    if (it == s.by_name.end()) break;
    const tensorflow::NodeDef& p = s.nodes->Get(it->second);
    if (p.op() == "Identity" && p.input_size() > 0) {
      edits.push_back({scope, it->second, "T", -1});
      value = p.input(0);
      continue;
    }
    if (p.op() == "RestoreV2") {
      edits.push_back({scope, it->second, "dtypes", std::stoi(ref.substr(ref.rfind(':') + 1))});
      uses->edits.insert(uses->edits.end(), edits.begin(), edits.end());
      return;
    }
    break;
  }
  // The main graph's initializers (TF2 exports keep them for TF1 tools): no loader runs them, a
  // SavedModel's variables come from its checkpoint; retyped in ApplyInitializers.
  if (scope == 0) {
    uses->initializers.emplace_back(scope, node);
    return;
  }
  uses->problem = "it is assigned a computed value by " + Where(scope, node);
}

VariableUses MetaGraphUses::Trace(const std::vector<Location>& roots, int rank) const {
  VariableUses uses;
  std::set<Location> seen;
  // Function outputs that return the handle a While body took at the same index.
  std::set<std::pair<int, std::string>> passed_back;
  std::vector<Location> queue = roots;
  // The handles the roots come from: a TF1-style loader gives their dtype to the variable.
  for (const Location& root : roots) {
    const Scope& s = scopes_[root.scope];
    auto it = s.by_name.find(root.ref.substr(0, root.ref.find(':')));
    if (it != s.by_name.end() && s.nodes->Get(it->second).op() == "VarHandleOp")
      uses.edits.push_back({root.scope, it->second, "dtype", -1});
  }
  for (size_t qi = 0; qi < queue.size() && uses.problem.empty(); ++qi) {
    const Location loc = queue[qi];
    if (!seen.insert(loc).second) continue;
    const Scope& s = scopes_[loc.scope];
    if (s.fn != nullptr)
      for (const auto& [key, value] : s.fn->ret())
        if (value == loc.ref && passed_back.count({loc.scope, key}) == 0)
          uses.problem = "function '" + s.name + "' returns its handle";
    auto it = s.consumers.find(loc.ref);
    if (it == s.consumers.end()) continue;
    for (const auto& [node, pos] : it->second) {
      const tensorflow::NodeDef& n = s.nodes->Get(node);
      const std::string& op = n.op();
      if (op == "Identity") {
        queue.push_back({loc.scope, OutputRef(loc.scope, n.name(), "output", 0)});
      } else if (op == "IdentityN") {
        queue.push_back({loc.scope, OutputRef(loc.scope, n.name(), "output", pos)});
      } else if (IsCall(op)) {
        auto f = n.attr().find("f");
        auto fs = f == n.attr().end() ? function_scope_.end()
                                      : function_scope_.find(f->second.func().name());
        if (fs == function_scope_.end() ||
            pos >= scopes_[fs->second].fn->signature().input_arg_size()) {
          uses.problem =
              "it is passed to " + Where(loc.scope, node) + ", whose function is unknown";
          break;
        }
        queue.push_back({fs->second, scopes_[fs->second].fn->signature().input_arg(pos).name()});
      } else if (op == "While" || op == "StatelessWhile") {
        // A loop variable: the body and the condition take it at the same index, the body
        // passes it back there, and the loop's output there is the handle again.
        for (const char* attr : {"body", "cond"}) {
          auto f = n.attr().find(attr);
          auto fs = f == n.attr().end() ? function_scope_.end()
                                        : function_scope_.find(f->second.func().name());
          if (fs == function_scope_.end() ||
              pos >= scopes_[fs->second].fn->signature().input_arg_size()) {
            uses.problem = "it is a loop variable of " + Where(loc.scope, node) +
                           ", whose function is unknown";
            break;
          }
          const auto& sig = scopes_[fs->second].fn->signature();
          queue.push_back({fs->second, sig.input_arg(pos).name()});
          if (std::string(attr) == "body" && pos < sig.output_arg_size())
            passed_back.insert({fs->second, sig.output_arg(pos).name()});
        }
        queue.push_back({loc.scope, OutputRef(loc.scope, n.name(), "output", pos)});
      } else if ((op == "If" || op == "StatelessIf" || op == "Case" || op == "StatelessCase") &&
                 pos >= 1) {
        std::vector<std::string> branches;
        for (const char* attr : {"then_branch", "else_branch"})
          if (auto f = n.attr().find(attr); f != n.attr().end())
            branches.push_back(f->second.func().name());
        if (auto f = n.attr().find("branches"); f != n.attr().end())
          for (const auto& b : f->second.list().func()) branches.push_back(b.name());
        for (const std::string& b : branches) {
          auto fs = function_scope_.find(b);
          if (fs == function_scope_.end() ||
              pos - 1 >= scopes_[fs->second].fn->signature().input_arg_size()) {
            uses.problem = "it is passed to " + Where(loc.scope, node) + ", whose branch '" + b +
                           "' is unknown";
            break;
          }
          queue.push_back(
              {fs->second, scopes_[fs->second].fn->signature().input_arg(pos - 1).name()});
        }
      } else if (op == "ReadVariableOp") {
        ComputeRead read{loc.scope, node, {}, {}};
        uses.edits.push_back({loc.scope, node, "dtype", -1});
        const std::string value = OutputRef(loc.scope, n.name(), "value", 0);
        auto cs = s.consumers.find(value);
        if (cs != s.consumers.end())
          for (const auto& [c, p] : cs->second) {
            if (IsStorage(loc.scope, c, p, &uses.edits, 0)) continue;
            read.uses.emplace_back(c, p);
            const tensorflow::NodeDef& cn = s.nodes->Get(c);
            uses.consumers.push_back(cn.op());
            uses.consumers.push_back(cn.name());
            if (uses.channel_axis < 0) uses.channel_axis = ChannelAxis(cn, p, rank);
          }
        if (s.fn != nullptr)
          for (const auto& [key, v] : s.fn->ret())
            if (v == value) read.ret_keys.push_back(key);
        if (!read.uses.empty() || !read.ret_keys.empty()) uses.reads.push_back(std::move(read));
      } else if (op == "AssignVariableOp" && pos == 0) {
        TraceAssign(loc.scope, node, &uses);
      } else if (!IgnoresValue(op)) {
        uses.problem = "it is used by " + Where(loc.scope, node);
        break;
      }
    }
  }
  return uses;
}

std::string MetaGraphUses::AddNode(int scope, const std::string& base, tensorflow::NodeDef node) {
  Scope& s = scopes_[scope];
  std::string name = base;
  for (int k = 1; s.by_name.count(name) != 0; ++k) name = base + "_" + std::to_string(k);
  node.set_name(name);
  s.by_name[name] = s.nodes->size();
  *s.nodes->Add() = std::move(node);
  return name;
}

Status MetaGraphUses::Apply(const VariableUses& uses, DType stored, const Tensor& scale) {
  const auto proto_type = static_cast<tensorflow::DataType>(DTypeToProto(stored));
  for (const TypeEdit& e : uses.edits) {
    Scope& s = scopes_[e.scope];
    if (e.attr.empty()) {
      s.fn->mutable_signature()->mutable_input_arg(e.node)->set_type(proto_type);
      continue;
    }
    tensorflow::NodeDef* n = s.nodes->Mutable(e.node);
    tensorflow::AttrValue& a = (*n->mutable_attr())[e.attr];
    if (e.index < 0) {
      a.set_type(proto_type);
    } else {
      if (e.index >= a.list().type_size())
        return InvalidArgument("attribute ", e.attr, " of ", Where(e.scope, e.node), " has ",
                               a.list().type_size(), " types, not ", e.index + 1);
      a.mutable_list()->set_type(e.index, proto_type);
    }
  }
  const auto float_type = static_cast<tensorflow::DataType>(DTypeToProto(DType::kFloat));
  for (const ComputeRead& r : uses.reads) {
    const tensorflow::NodeDef read = scopes_[r.scope].nodes->Get(r.node);
    tensorflow::NodeDef cast;
    cast.set_op("Cast");
    cast.set_device(read.device());
    cast.add_input(OutputRef(r.scope, read.name(), "value", 0));
    (*cast.mutable_attr())["SrcT"].set_type(proto_type);
    (*cast.mutable_attr())["DstT"].set_type(float_type);
    (*cast.mutable_attr())["Truncate"].set_b(false);
    const std::string cast_name = AddNode(r.scope, read.name() + "/dequantize/Cast", cast);
    std::string value = OutputRef(r.scope, cast_name, "y", 0);
    if (scale.IsInitialized()) {
      tensorflow::NodeDef c;
      c.set_op("Const");
      c.set_device(read.device());
      (*c.mutable_attr())["dtype"].set_type(float_type);
      KILN_RETURN_IF_ERROR(TensorToProto(scale, (*c.mutable_attr())["value"].mutable_tensor()));
      const std::string scale_name = AddNode(r.scope, read.name() + "/dequantize/scale", c);
      tensorflow::NodeDef mul;
      mul.set_op("Mul");
      mul.set_device(read.device());
      mul.add_input(value);
      mul.add_input(OutputRef(r.scope, scale_name, "output", 0));
      (*mul.mutable_attr())["T"].set_type(float_type);
      value = OutputRef(r.scope, AddNode(r.scope, read.name() + "/dequantize", mul), "z", 0);
    }
    Scope& s = scopes_[r.scope];
    for (const auto& [c, pos] : r.uses) {
      tensorflow::NodeDef* n = s.nodes->Mutable(c);
      int data = 0;
      for (int i = 0; i < n->input_size(); ++i) {
        if (!n->input(i).empty() && n->input(i)[0] == '^') continue;
        if (data++ == pos) n->set_input(i, value);
      }
    }
    for (const std::string& key : r.ret_keys) (*s.fn->mutable_ret())[key] = value;
  }
  for (const auto& [scope, node] : uses.initializers)
    initializers_.push_back({scope, node, stored, scale});
  return OkStatus();
}

const std::string& MetaGraphUses::DataInput(int scope, int node, int pos) const {
  const tensorflow::NodeDef& n = scopes_[scope].nodes->Get(node);
  int data = 0;
  for (const std::string& in : n.input()) {
    if (!in.empty() && in[0] == '^') continue;
    if (data++ == pos) return in;
  }
  static const std::string kNone;
  return kNone;
}

std::vector<ActivationSite> MetaGraphUses::ActivationSites(const VariableUses& uses) const {
  std::vector<ActivationSite> sites;
  std::set<std::tuple<int, int, int>> seen;
  // The product that reads the weight at data input `pos` of `node`, or through views of it
  // (Keras's EinsumDense reshapes its kernel before a MatMul).
  const auto visit = [&](const auto& self, int scope, int node, int pos, int depth) -> void {
    const tensorflow::NodeDef& n = scopes_[scope].nodes->Get(node);
    if (depth < 3 && pos == 0 && IsWeightView(n.op())) {
      const Scope& s = scopes_[scope];
      auto it = s.consumers.find(OutputRef(scope, n.name(), ViewOutputArg(n.op()), 0));
      if (it == s.consumers.end()) return;
      for (const auto& [c, cpos] : it->second) self(self, scope, c, cpos, depth + 1);
      return;
    }
    const int act = ActivationInput(n, pos);
    if (act < 0 || !IsFloat32Op(n) || DataInput(scope, node, act).empty()) return;
    if (seen.insert({scope, node, act}).second) sites.push_back({scope, node, act});
  };
  for (const ComputeRead& r : uses.reads)
    for (const auto& [node, pos] : r.uses) visit(visit, r.scope, node, pos, 0);
  return sites;
}

std::string MetaGraphUses::SiteTensor(const ActivationSite& site) const {
  return Normalize(site.scope, DataInput(site.scope, site.node, site.pos));
}

const std::string& MetaGraphUses::SiteOp(const ActivationSite& site) const {
  return scopes_[site.scope].nodes->Get(site.node).op();
}

void MetaGraphUses::InsertOnInputs(const std::vector<ActivationSite>& sites,
                                   const std::string& base, tensorflow::NodeDef node,
                                   const char* out_arg) {
  if (sites.empty()) return;
  const int scope = sites.front().scope;
  const tensorflow::NodeDef& first = scopes_[scope].nodes->Get(sites.front().node);
  node.set_device(first.device());
  node.clear_input();
  node.add_input(DataInput(scope, sites.front().node, sites.front().pos));
  const std::string out = OutputRef(scope, AddNode(scope, base, std::move(node)), out_arg, 0);
  for (const ActivationSite& site : sites) {
    tensorflow::NodeDef* n = scopes_[scope].nodes->Mutable(site.node);
    int data = 0;
    for (int i = 0; i < n->input_size(); ++i) {
      if (!n->input(i).empty() && n->input(i)[0] == '^') continue;
      if (data++ == site.pos) n->set_input(i, out);
    }
  }
}

Status MetaGraphUses::ApplyInitializers() {
  const auto float_type = static_cast<tensorflow::DataType>(DTypeToProto(DType::kFloat));
  for (const PendingInitializer& p : initializers_) {
    const auto stored_type = static_cast<tensorflow::DataType>(DTypeToProto(p.stored));
    const tensorflow::NodeDef assign = scopes_[p.scope].nodes->Get(p.node);
    if (assign.input_size() < 2) continue;
    const auto add = [&](const std::string& suffix, const std::string& op,
                         std::vector<std::string> inputs) {
      tensorflow::NodeDef n;
      n.set_op(op);
      n.set_device(assign.device());
      for (auto& in : inputs) n.add_input(std::move(in));
      (*n.mutable_attr())["T"].set_type(float_type);
      return OutputRef(p.scope, AddNode(p.scope, assign.name() + "/quantize/" + suffix, n), "", 0);
    };
    const auto constant = [&](const std::string& suffix, const Tensor& t) -> Result<std::string> {
      tensorflow::NodeDef c;
      c.set_op("Const");
      c.set_device(assign.device());
      (*c.mutable_attr())["dtype"].set_type(float_type);
      KILN_RETURN_IF_ERROR(TensorToProto(t, (*c.mutable_attr())["value"].mutable_tensor()));
      return OutputRef(p.scope, AddNode(p.scope, assign.name() + "/quantize/" + suffix, c), "", 0);
    };
    std::string value = assign.input(1);
    if (p.scale.IsInitialized()) {
      Tensor inverse(DType::kFloat, p.scale.shape());
      for (int64_t i = 0; i < inverse.NumElements(); ++i)
        inverse.data<float>()[i] = 1.f / p.scale.data<float>()[i];
      KILN_ASSIGN_OR_RETURN(std::string inv, constant("inverse_scale", inverse));
      KILN_ASSIGN_OR_RETURN(std::string lo, constant("min", Tensor::Scalar<float>(-127.f)));
      KILN_ASSIGN_OR_RETURN(std::string hi, constant("max", Tensor::Scalar<float>(127.f)));
      value = add("Mul", "Mul", {value, inv});
      value = add("Round", "Round", {value});
      value = add("ClipByValue", "ClipByValue", {value, lo, hi});
    }
    tensorflow::NodeDef cast;
    cast.set_op("Cast");
    cast.set_device(assign.device());
    cast.add_input(value);
    (*cast.mutable_attr())["SrcT"].set_type(float_type);
    (*cast.mutable_attr())["DstT"].set_type(stored_type);
    (*cast.mutable_attr())["Truncate"].set_b(false);
    value = OutputRef(p.scope, AddNode(p.scope, assign.name() + "/quantize/Cast", cast), "", 0);
    tensorflow::NodeDef* n = scopes_[p.scope].nodes->Mutable(p.node);
    n->set_input(1, value);
    (*n->mutable_attr())["dtype"].set_type(stored_type);
  }
  initializers_.clear();
  return OkStatus();
}

}  // namespace kiln::exec::quantize
