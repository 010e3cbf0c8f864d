#include "cli.h"

#include <CLI/CLI.hpp>
#include <exception>
#include <memory>
#include <vector>

#include "commands.h"
#include "kiln/core/status.h"

namespace kiln::cli {
namespace {

int Fail(const Status& status, std::ostream& err) {
  err << "savedmodel-cli: error: " << status.message() << "\n";
  return 1;
}

}  // namespace

int Main(int argc, const char* const* argv, std::ostream& out, std::ostream& err) {
  CLI::App app{"Inspect and run TensorFlow SavedModels (kiln).", "savedmodel-cli"};
  app.require_subcommand(1, 1);
  app.set_version_flag("--version", std::string("savedmodel-cli (kiln) ") + KILN_VERSION);

  struct Declared {
    const Subcommand* command;
    CLI::App* app;
    std::unique_ptr<CommandArgs> args;
  };
  std::vector<Declared> declared;
  for (const Subcommand& command : Subcommands()) {
    CLI::App* sub = app.add_subcommand(command.name, command.help);
    declared.push_back({&command, sub, command.setup(*sub)});
  }

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    // CLI11 prints the message (or the help); a bad command line exits 2, as argparse-based
    // tools (TensorFlow's saved_model_cli) do, not with CLI11's own codes (106, 109, ...).
    return app.exit(e, out, err) == 0 ? 0 : kUsageExitCode;
  }

  try {
    for (const Declared& d : declared) {
      if (!d.app->parsed()) continue;
      Status s = d.command->run(*d.args, out, err);
      return s.ok() ? 0 : Fail(s, err);
    }
    return Fail(Internal("no subcommand was parsed"), err);
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
