// The subcommands of savedmodel-cli, dispatched from one table (commands.cc). Each row names a
// subcommand, its help text, a setup function that declares its options on the CLI11
// subcommand and a run function. To add a subcommand: write its options and the two functions
// in its own file, then add a row (CONTRIBUTING.md).
#pragma once

#include <CLI/CLI.hpp>
#include <memory>
#include <ostream>
#include <span>

#include "kiln/core/status.h"

namespace kiln::cli {

// What a subcommand's setup binds its options to; each subcommand derives its own.
struct CommandArgs {
  virtual ~CommandArgs() = default;
};

struct Subcommand {
  const char* name;
  const char* help;
  // Declares the options on `cmd`, bound to the returned args, which CLI11 fills when parsing.
  std::unique_ptr<CommandArgs> (*setup)(CLI::App& cmd);
  // Runs the parsed command: results to `out`, warnings to `err`. `args` is what setup made.
  Status (*run)(const CommandArgs& args, std::ostream& out, std::ostream& err);
};

// Every subcommand, in the order `savedmodel-cli --help` lists them.
std::span<const Subcommand> Subcommands();

// The rows' functions, defined next to each subcommand's code.
std::unique_ptr<CommandArgs> SetupShowCommand(CLI::App& cmd);
Status RunShowCommand(const CommandArgs& args, std::ostream& out, std::ostream& err);
std::unique_ptr<CommandArgs> SetupRunCommand(CLI::App& cmd);
Status RunRunCommand(const CommandArgs& args, std::ostream& out, std::ostream& err);
std::unique_ptr<CommandArgs> SetupBenchCommand(CLI::App& cmd);
Status RunBenchCommand(const CommandArgs& args, std::ostream& out, std::ostream& err);
std::unique_ptr<CommandArgs> SetupScanCommand(CLI::App& cmd);
Status RunScanCommand(const CommandArgs& args, std::ostream& out, std::ostream& err);
std::unique_ptr<CommandArgs> SetupCompileCommand(CLI::App& cmd);
Status RunCompileCommand(const CommandArgs& args, std::ostream& out, std::ostream& err);
std::unique_ptr<CommandArgs> SetupQuantizeCommand(CLI::App& cmd);
Status RunQuantizeCommand(const CommandArgs& args, std::ostream& out, std::ostream& err);

}  // namespace kiln::cli
