#include "graph_draw.h"

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <vector>

#include "kiln/core/dtype.h"
#include "kiln/core/proto_convert.h"
#include "kiln/exec/function_call.h"
#include "kiln/exec/saved_model.h"
#include "model_info.h"
#include "tensorflow/saved_model.pb.h"

namespace kiln::cli {
namespace {

std::string Quote(std::string_view s) {
  std::string q = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') q += '\\';
    if (c == '\n') {
      q += "\\n";
      continue;
    }
    q += c;
  }
  return q + "\"";
}

std::string TypeName(int t) {
  Result<DType> d = DTypeFromProto(t);
  return d.ok() ? DTypeShortName(*d) : "?";
}

const tensorflow::FunctionDef* FindFunction(const tensorflow::FunctionDefLibrary& lib,
                                            const std::string& name) {
  for (const auto& f : lib.function()) {
    if (f.signature().name() == name) return &f;
  }
  return nullptr;
}

// The one function `f` forwards to, when its only real work is one call.
const tensorflow::FunctionDef* Forwardee(const tensorflow::FunctionDef& f,
                                         const tensorflow::FunctionDefLibrary& lib) {
  const tensorflow::NodeDef* call = nullptr;
  for (const auto& n : f.node_def()) {
    if (n.op() == "Identity" || n.op() == "NoOp") continue;
    if (!exec::IsFunctionCallOp(n.op()) || call != nullptr) return nullptr;
    call = &n;
  }
  if (call == nullptr) return nullptr;
  auto it = call->attr().find("f");
  if (it == call->attr().end()) return nullptr;
  return FindFunction(lib, it->second.func().name());
}

// "node:outarg:i" / "arg" / "^node" -> the node or arg it names.
std::string Source(const std::string& in) {
  std::string s = in[0] == '^' ? in.substr(1) : in;
  return s.substr(0, s.find(':'));
}

}  // namespace

Result<std::string> SignatureGraphDot(const tensorflow::MetaGraphDef& mg, const std::string& key) {
  auto sig_it = mg.signature_def().find(key);
  if (sig_it == mg.signature_def().end()) {
    std::string keys;
    for (const std::string& k : SortedSignatureKeys(mg)) keys += (keys.empty() ? "" : ", ") + k;
    return NotFound("signature '", key, "' is not in the MetaGraphDef (it has: ", keys, ")");
  }
  const tensorflow::SignatureDef& sig = sig_it->second;
  if (sig.outputs().empty()) return InvalidArgument("signature '", key, "' has no outputs");
  const std::string call_name = Source(sig.outputs().begin()->second.name());
  const tensorflow::NodeDef* call = nullptr;
  for (const auto& n : mg.graph_def().node()) {
    if (n.name() == call_name) call = &n;
  }
  if (call == nullptr || !exec::IsFunctionCallOp(call->op()) || call->attr().count("f") == 0) {
    return InvalidArgument("signature '", key, "': output node '", call_name,
                           "' is not a function call; only TF2 bundles have a function to draw");
  }
  const auto& lib = mg.graph_def().library();
  const std::string fname = call->attr().at("f").func().name();
  const tensorflow::FunctionDef* f = FindFunction(lib, fname);
  if (f == nullptr)
    return NotFound("signature '", key, "' calls '", fname, "', not in the library");
  std::string chain = f->signature().name();
  for (int depth = 0; depth < 8; ++depth) {
    const tensorflow::FunctionDef* next = Forwardee(*f, lib);
    if (next == nullptr) break;
    f = next;
    chain += " -> " + f->signature().name();
  }

  std::ostringstream dot;
  dot << "digraph " << Quote(key) << " {\n";
  dot << "  label=" << Quote("signature '" + key + "': " + chain) << ";\n";
  dot << "  labelloc=t;\n  rankdir=TB;\n";
  dot << "  node [fontname=\"Helvetica\", fontsize=10];\n";
  dot << "  edge [fontname=\"Helvetica\", fontsize=9];\n";
  std::map<std::string, std::string> dtype_of;  // arg name -> dtype
  for (const auto& a : f->signature().input_arg()) {
    dtype_of[a.name()] = TypeName(a.type());
    dot << "  " << Quote("arg:" + a.name())
        << " [shape=ellipse, label=" << Quote(a.name() + "\n" + TypeName(a.type())) << "];\n";
  }
  std::set<std::string> args;
  for (const auto& a : f->signature().input_arg()) args.insert(a.name());
  for (const auto& n : f->node_def()) {
    std::string label = n.name() + "\n" + n.op();
    for (const char* fa : {"f", "then_branch", "else_branch", "cond", "body"}) {
      auto it = n.attr().find(fa);
      if (it != n.attr().end() && it->second.has_func()) {
        label += "\n" + std::string(fa) + "=" + it->second.func().name();
      }
    }
    dot << "  " << Quote("node:" + n.name()) << " [shape=box, label=" << Quote(label) << "];\n";
  }
  for (const auto& n : f->node_def()) {
    for (const std::string& in : n.input()) {
      const std::string src = Source(in);
      const std::string from = args.count(src) ? "arg:" + src : "node:" + src;
      dot << "  " << Quote(from) << " -> " << Quote("node:" + n.name());
      if (in[0] == '^') {
        dot << " [style=dashed]";
      } else if (args.count(src) && dtype_of.count(src)) {
        dot << " [label=" << Quote(dtype_of[src]) << "]";
      }
      dot << ";\n";
    }
  }
  for (const auto& o : f->signature().output_arg()) {
    dot << "  " << Quote("out:" + o.name()) << " [shape=ellipse, style=filled, fillcolor="
        << "\"lightgrey\", label=" << Quote(o.name() + "\n" + TypeName(o.type())) << "];\n";
    auto r = f->ret().find(o.name());
    if (r != f->ret().end()) {
      const std::string src = Source(r->second);
      const std::string from = args.count(src) ? "arg:" + src : "node:" + src;
      dot << "  " << Quote(from) << " -> " << Quote("out:" + o.name()) << ";\n";
    }
  }
  dot << "}\n";
  return dot.str();
}

namespace {

// The directory on PATH holding `program`, or empty.
std::string FindOnPath(const std::string& program) {
  const char* path = std::getenv("PATH");
  if (path == nullptr) return {};
  std::stringstream ss(path);
  for (std::string dir; std::getline(ss, dir, ':');) {
    if (dir.empty()) continue;
    const std::string candidate = dir + "/" + program;
    if (::access(candidate.c_str(), X_OK) == 0) return candidate;
  }
  return {};
}

Result<std::string> RenderSvg(const std::string& dot_text) {
  const std::string dot = FindOnPath("dot");
  if (dot.empty()) {
    return FailedPrecondition(
        "--graph svg needs Graphviz's `dot` program on PATH, and it was not found; install "
        "Graphviz, or use --graph dot and render the DOT text elsewhere");
  }
  const std::filesystem::path tmp =
      std::filesystem::temp_directory_path() / ("kiln_graph_" + std::to_string(::getpid()));
  {
    std::ofstream f(tmp.string() + ".dot");
    f << dot_text;
    if (!f) return Internal("cannot write ", tmp.string(), ".dot");
  }
  const std::string cmd =
      "'" + dot + "' -Tsvg '" + tmp.string() + ".dot' -o '" + tmp.string() + ".svg' 2>&1";
  const int rc = std::system(cmd.c_str());
  std::error_code ec;
  std::filesystem::remove(tmp.string() + ".dot", ec);
  if (rc != 0) return Internal("`dot -Tsvg` failed (exit status ", rc, ")");
  std::ifstream in(tmp.string() + ".svg");
  std::stringstream svg;
  svg << in.rdbuf();
  std::filesystem::remove(tmp.string() + ".svg", ec);
  return svg.str();
}

}  // namespace

Status DrawGraph(const GraphDrawOptions& options, std::ostream& out) {
  if (options.format != "dot" && options.format != "svg") {
    return InvalidArgument("--graph takes dot or svg, got '", options.format, "'");
  }
  if (options.signature_def.empty()) {
    return InvalidArgument("--graph needs --signature_def (the signature whose graph to draw)");
  }
  KILN_ASSIGN_OR_RETURN(auto model, exec::ReadSavedModelProto(options.dir));
  KILN_ASSIGN_OR_RETURN(const tensorflow::MetaGraphDef* mg, FindMetaGraph(*model, options.tag_set));
  KILN_ASSIGN_OR_RETURN(std::string text, SignatureGraphDot(*mg, options.signature_def));
  if (options.format == "svg") {
    KILN_ASSIGN_OR_RETURN(text, RenderSvg(text));
  }
  if (options.output) {
    std::ofstream f(*options.output);
    f << text;
    if (!f) return InvalidArgument("cannot write --output file ", options.output->string());
    return OkStatus();
  }
  out << text;
  return OkStatus();
}

}  // namespace kiln::cli
