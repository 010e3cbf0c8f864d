// savedmodel-cli scan: lists the ops of a bundle that reach outside the model (files, the host),
// as TensorFlow's `saved_model_cli scan` does. The logic is kiln::exec::ScanUnsafeOps, shared
// with the server, which refuses such bundles unless its config allows the op.
#include <memory>
#include <ostream>
#include <set>
#include <string>

#include "commands.h"
#include "kiln/core/status.h"
#include "kiln/exec/saved_model.h"
#include "kiln/exec/unsafe_ops.h"
#include "tensorflow/saved_model.pb.h"

namespace kiln::cli {
namespace {

Status Scan(const std::string& dir, const std::string& tag_set, std::ostream& out) {
  KILN_ASSIGN_OR_RETURN(auto proto, exec::ReadSavedModelProto(dir));
  std::set<std::string> want;
  for (size_t start = 0; start <= tag_set.size();) {
    size_t comma = tag_set.find(',', start);
    if (comma == std::string::npos) comma = tag_set.size();
    if (comma > start) want.insert(tag_set.substr(start, comma - start));
    start = comma + 1;
  }
  bool any_graph = false;
  for (const auto& mg : proto->meta_graphs()) {
    std::set<std::string> tags(mg.meta_info_def().tags().begin(), mg.meta_info_def().tags().end());
    if (!want.empty() && tags != want) continue;
    any_graph = true;
    std::string tag_text;
    for (const auto& t : tags) tag_text += (tag_text.empty() ? "'" : ", '") + t + "'";
    const auto found = exec::ScanUnsafeOps(mg);
    if (found.empty()) {
      out << "MetaGraph with tag set [" << tag_text
          << "] does not contain the ops that touch files or the host: ReadFile, WriteFile, "
             "MatchingFiles, ImmutableConst, PrintV2 to a file, PyFunc, PyFuncStateless, "
             "EagerPyFunc, summary writers, checkpoint ops (SaveV2, RestoreV2, ...) outside "
             "the bundle's saver\n";
      continue;
    }
    std::set<std::string> ops;
    for (const auto& u : found) ops.insert(u.op);
    std::string op_text;
    for (const auto& o : ops) op_text += (op_text.empty() ? "'" : ", '") + o + "'";
    out << "MetaGraph with tag set [" << tag_text
        << "] contains the following ops that touch files or the host: {" << op_text << "}\n";
    for (const auto& u : found)
      out << "  " << u.op << " node '" << u.node << "'"
          << (u.function.empty() ? " in the main graph" : " in function '" + u.function + "'")
          << ": " << u.why << "\n";
  }
  if (!any_graph) return NotFound("'", dir, "' has no MetaGraphDef with tag-set '", tag_set, "'");
  return OkStatus();
}

struct ScanArgs : CommandArgs {
  std::string dir, tag_set;
};
}  // namespace

std::unique_ptr<CommandArgs> SetupScanCommand(CLI::App& cmd) {
  auto a = std::make_unique<ScanArgs>();
  cmd.add_option("--dir", a->dir, "SavedModel directory")->required();
  cmd.add_option("--tag_set", a->tag_set, "Comma-separated tags (default: every MetaGraph)");
  return a;
}

Status RunScanCommand(const CommandArgs& args, std::ostream& out, std::ostream& /*err*/) {
  const auto& a = static_cast<const ScanArgs&>(args);
  return Scan(a.dir, a.tag_set, out);
}

}  // namespace kiln::cli
