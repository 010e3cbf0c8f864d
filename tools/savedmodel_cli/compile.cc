// savedmodel-cli compile: writes a bundle's serving plan (kiln/exec/serving_plan.h).
#include "commands.h"
#include "kiln/exec/serving_plan.h"
#include "progress.h"
#include "run.h"

namespace kiln::cli {
namespace {

struct CompileArgs : CommandArgs {
  std::string dir;
  std::string tag_set = "serve";
  std::vector<std::string> signatures;
  std::string device = "cpu";
  std::vector<int64_t> tune_batches = {1};
  std::string precision = "fp32";
  bool no_freeze = false;
};

}  // namespace

std::unique_ptr<CommandArgs> SetupCompileCommand(CLI::App& cmd) {
  auto a = std::make_unique<CompileArgs>();
  cmd.add_option("--dir", a->dir, "SavedModel directory")->required();
  cmd.add_option("--tag_set", a->tag_set, "Comma-separated tags of a MetaGraphDef (serve)");
  cmd.add_option("--signature_def", a->signatures,
                 "Signature keys to plan (repeatable; default: every signature and function)");
  cmd.add_option("--device", a->device,
                 "Devices the plan places nodes on, in priority order (cpu; gpu; \"gpu,cpu\")");
  cmd.add_option("--tune_batch", a->tune_batches,
                 "With a GPU: batch sizes each signature is called at, so that the plan records "
                 "the algorithms its kernels measure for them (default 1; repeatable)")
      ->delimiter(',')
      ->check(CLI::PositiveNumber);
  cmd.add_option("--precision", a->precision,
                 "The --precision of the loads the plan is for (fp32, tf32, fp16, bf16)")
      ->check(CLI::IsMember({"fp32", "tf32", "fp16", "bf16"}));
  cmd.add_flag("--no_freeze", a->no_freeze,
               "Plan for loads that keep variables assignable (LoadOptions::freeze_variables "
               "false)");
  return a;
}

Status RunCompileCommand(const CommandArgs& args, std::ostream& out, std::ostream& err) {
  const auto& a = static_cast<const CompileArgs&>(args);
  exec::CompileOptions options;
  options.tags = SplitCommaList(a.tag_set);
  options.signatures = a.signatures;
  options.devices = SplitCommaList(a.device);
  options.freeze_variables = !a.no_freeze;
  options.tune_batches = a.tune_batches;
  KILN_ASSIGN_OR_RETURN(options.precision, exec::ParsePrecision(a.precision));
  // Loading prepares every function (most of the time); planning then writes them one by one.
  Progress progress(err, "compile: planned", 0);
  progress.Update(0, "(loading and preparing the bundle)");
  options.progress = [&progress](std::string_view function, size_t done, size_t total) {
    progress.set_total(static_cast<int64_t>(total));
    progress.Update(static_cast<int64_t>(done), function);
  };
  KILN_ASSIGN_OR_RETURN(exec::CompileReport report, exec::CompilePlan(a.dir, options));
  progress.Done();
  out << "Wrote " << report.path.string() << " (" << report.bytes
      << " bytes): " << report.planned.size() << " function"
      << (report.planned.size() == 1 ? "" : "s") << " planned"
      << (report.self_contained ? "; loads need not read saved_model.pb.\n" : ".\n");
  if (!report.self_contained)
    out << "Loads still read saved_model.pb: " << report.not_self_contained << ".\n";
  if (!report.tuned.empty() || report.tuning_records > 0) {
    out << "Measured choices recorded: " << report.tuning_records << " (tuned: ";
    for (size_t i = 0; i < report.tuned.size(); ++i) out << (i ? ", " : "") << report.tuned[i];
    out << (report.tuned.empty() ? "none)\n" : ")\n");
  }
  for (const std::string& why : report.not_tuned) err << "not tuned: " << why << "\n";
  for (const std::string& why : report.not_planned)
    err << "not planned (loads prepare it from saved_model.pb): " << why << "\n";
  return OkStatus();
}

}  // namespace kiln::cli
