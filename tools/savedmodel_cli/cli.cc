#include "cli.h"

#include <CLI/CLI.hpp>
#include <exception>
#include <optional>

#include "graph_draw.h"
#include "kiln/core/status.h"
#include "run.h"
#include "show.h"

namespace kiln::cli {
namespace {

constexpr char kShowHelp[] =
    "Shows what a SavedModel holds, as TensorFlow's saved_model_cli show prints it.\n"
    "  show --dir D                      the tag-sets\n"
    "  show --dir D --tag_set serve      the SignatureDef keys of that MetaGraphDef\n"
    "  show --dir D --tag_set serve --signature_def serving_default\n"
    "                                    the inputs and outputs of one signature\n"
    "  show --dir D --all                everything, with the ops and restored functions\n"
    "Add --json for the same facts as JSON (docs/cli.md).\n"
    "  show --dir D --signature_def K --graph dot|svg [--output F]\n"
    "                                    draw the function graph signature K runs";

constexpr char kRunHelp[] =
    "Runs a signature of a SavedModel and prints each output as numpy prints it.\n"
    "  run --dir D --tag_set serve --signature_def serving_default \\\n"
    "      --inputs 'x=in.npy;y=in.npz[name]' --input_exprs 'a=5.0;b=[[1,2],[3,4]]' \\\n"
    "      [--outdir OUT [--overwrite]]";

constexpr char kScanHelp[] =
    "Lists the ops that touch files or the host (ReadFile, WriteFile, PrintV2 to a file, host\n"
    "callbacks...), as TensorFlow's saved_model_cli scan does.\n"
    "  scan --dir D [--tag_set serve]";

int Fail(const Status& status, std::ostream& err) {
  err << "savedmodel-cli: error: " << status.message() << "\n";
  return 1;
}

}  // namespace

Status Scan(const std::string& dir, const std::string& tag_set, std::ostream& out);  // scan.cc

int Main(int argc, const char* const* argv, std::ostream& out, std::ostream& err) {
  CLI::App app{"Inspect and run TensorFlow SavedModels (kiln).", "savedmodel-cli"};
  app.require_subcommand(1, 1);

  ShowOptions show;
  std::string show_dir, tag_set, signature_def;
  CLI::App* show_cmd = app.add_subcommand("show", kShowHelp);
  show_cmd->add_option("--dir", show_dir, "SavedModel directory")->required();
  show_cmd->add_flag("--all", show.all, "Show everything");
  auto* tag_opt =
      show_cmd->add_option("--tag_set", tag_set, "Comma-separated tags of a MetaGraphDef");
  auto* sig_opt = show_cmd->add_option("--signature_def", signature_def, "A SignatureDef key");
  show_cmd->add_flag("--list_ops", show.list_ops, "With --tag_set: list the ops it uses");
  show_cmd->add_flag("--json", show.json, "Print JSON instead of TensorFlow's text");
  GraphDrawOptions draw;
  auto* graph_opt = show_cmd->add_option("--graph", draw.format, "Draw a signature: dot or svg");
  std::string draw_output;
  auto* draw_output_opt =
      show_cmd->add_option("--output", draw_output, "With --graph: write the drawing to a file");

  RunCommandOptions run;
  std::string run_dir, outdir;
  CLI::App* run_cmd = app.add_subcommand("run", kRunHelp);
  run_cmd->add_option("--dir", run_dir, "SavedModel directory")->required();
  run_cmd->add_option("--tag_set", run.tag_set, "Comma-separated tags of a MetaGraphDef")
      ->required();
  run_cmd->add_option("--signature_def", run.signature_def, "The SignatureDef key to run")
      ->required();
  run_cmd->add_option("--inputs", run.inputs, "'<key>=<file.npy>;<key>=<file.npz>[<name>]'");
  run_cmd->add_option("--input_exprs", run.input_exprs,
                      "'<key>=<literal>;...': numbers, true/false, nested [lists]");
  auto* outdir_opt = run_cmd->add_option("--outdir", outdir, "Write <outdir>/<output_key>.npy");
  run_cmd->add_flag("--overwrite", run.overwrite, "Replace existing output files");

  std::string scan_dir, scan_tags;
  CLI::App* scan_cmd = app.add_subcommand("scan", kScanHelp);
  scan_cmd->add_option("--dir", scan_dir, "SavedModel directory")->required();
  scan_cmd->add_option("--tag_set", scan_tags, "Comma-separated tags (default: every MetaGraph)");

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e, out, err);
  }

  try {
    if (scan_cmd->parsed()) {
      Status s = Scan(scan_dir, scan_tags, out);
      return s.ok() ? 0 : Fail(s, err);
    }
    if (show_cmd->parsed() && *graph_opt) {
      draw.dir = show_dir;
      if (*tag_opt) draw.tag_set = tag_set;
      draw.signature_def = signature_def;
      if (*draw_output_opt) draw.output = draw_output;
      Status s = DrawGraph(draw, out);
      return s.ok() ? 0 : Fail(s, err);
    }
    if (show_cmd->parsed()) {
      show.dir = show_dir;
      if (*tag_opt) show.tag_set = tag_set;
      if (*sig_opt) show.signature_def = signature_def;
      Status s = Show(show, out);
      return s.ok() ? 0 : Fail(s, err);
    }
    run.dir = run_dir;
    if (*outdir_opt) run.outdir = outdir;
    Status s = RunCommand(run, out, err);
    return s.ok() ? 0 : Fail(s, err);
  } catch (const std::exception& e) {
    return Fail(Internal(e.what()), err);
  }
}

int Main(const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
  std::vector<const char*> argv = {"savedmodel-cli"};
  for (const auto& a : args) argv.push_back(a.c_str());
  return Main(static_cast<int>(argv.size()), argv.data(), out, err);
}

}  // namespace kiln::cli
