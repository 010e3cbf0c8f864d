// Command-line entry of savedmodel-cli: argument parsing (CLI11) and dispatch to `show` and
// `run`. Output goes to `out`, errors to `err`; the return value is the exit code.
#pragma once

#include <ostream>
#include <string>
#include <vector>

namespace kiln::cli {

// Exit status: 0 success, 1 the command failed, 2 a bad command line (docs/cli.md).
inline constexpr int kUsageExitCode = 2;

// argv[0] is the program name, as main() receives it.
int Main(int argc, const char* const* argv, std::ostream& out, std::ostream& err);
// The same with the arguments after the program name, for tests: {"show", "--dir", d}.
int Main(const std::vector<std::string>& args, std::ostream& out, std::ostream& err);

}  // namespace kiln::cli
