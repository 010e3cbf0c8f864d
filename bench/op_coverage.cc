// Op coverage against the target list (../shared/spec/tf-ops-target.txt): for each TensorFlow op
// the runtime aims to run, whether the op table has a definition and a CPU kernel, then the
// totals. tests/tf/coverage_report.py reads `--known` to name every op a bundle needs that this
// build cannot run.
//
//   bench_op_coverage [--list FILE]              table and totals ("covered 89 of 329")
//   bench_op_coverage [--list FILE] --missing    the target ops not covered, one per line
//   bench_op_coverage --known                    every op this build can run, one per line
#include <algorithm>
#include <cstdio>
#include <fstream>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "kiln/exec/op_table.h"

namespace {

// Ops the executor handles itself rather than through a CPU kernel, in one place:
// - calls are inlined into the caller's schedule (libexec/graph/flat_graph.cc, IsCallOp):
//   they need neither a definition nor a kernel;
// - forwarding ops alias their input slots and run no step
//   (libexec/executor/prepared_function.cc, IsForwardingOp): they need a definition (its
//   Prepare infers the output specs) but no kernel.
// - TF1 control flow (Switch, Merge, Enter, Exit, NextIteration, LoopCond) in a TF1 bundle's
//   graph becomes If and While nodes when the loader makes its signatures
//   (libexec/loader/tf1_control_flow.h): no node of these ops reaches the executor.
// A node whose op names a library function is inlined too; function names are not ops.
// Placeholders fed by a TF1 signature become function arguments (loader), but unfed ones run
// their kernel, so Placeholder is an ordinary op here.
constexpr std::string_view kInlinedCalls[] = {"PartitionedCall", "StatefulPartitionedCall",
                                              "BatchFunction"};
constexpr std::string_view kForwardingOps[] = {"Identity", "IdentityN", "Snapshot", "StopGradient"};
constexpr std::string_view kFunctionalizedOps[] = {"Switch", "Merge",         "Enter",
                                                   "Exit",   "NextIteration", "LoopCond"};

template <size_t N>
bool In(const std::string_view (&list)[N], std::string_view op) {
  return std::find(std::begin(list), std::end(list), op) != std::end(list);
}

// The one use of the kernel table (its API is becoming per-device; keep this the only call).
bool HasCpuKernel(std::string_view op) { return kiln::exec::FindCpuKernel(op) != nullptr; }

struct Coverage {
  bool definition = false;
  bool kernel = false;
  bool covered = false;
  const char* how = "";
};

Coverage Check(std::string_view op) {
  Coverage c;
  c.definition = kiln::exec::FindOp(op) != nullptr;
  c.kernel = HasCpuKernel(op);
  if (In(kInlinedCalls, op)) {
    c.covered = true;
    c.how = "inlined by the executor";
  } else if (In(kFunctionalizedOps, op)) {
    c.covered = true;
    c.how = "made If/While by the TF1 loader";
  } else if (In(kForwardingOps, op) && c.definition) {
    c.covered = true;
    c.how = "forwarded by the executor";
  } else {
    c.covered = c.definition && c.kernel;
  }
  return c;
}

bool ReadList(const std::string& path, std::vector<std::string>* ops) {
  std::ifstream in(path);
  if (!in) return false;
  std::set<std::string> seen;
  for (std::string line; std::getline(in, line);) {
    const auto b = line.find_first_not_of(" \t\r");
    if (b == std::string::npos || line[b] == '#') continue;
    const auto e = line.find_last_not_of(" \t\r");
    std::string op = line.substr(b, e - b + 1);
    if (seen.insert(op).second) ops->push_back(op);
  }
  return true;
}

int Usage() {
  std::fprintf(stderr, "usage: bench_op_coverage [--list FILE] [--missing | --known]\n");
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  std::string list = KILN_OP_TARGET_LIST;
  std::string mode = "table";
  for (int i = 1; i < argc; ++i) {
    const std::string_view a = argv[i];
    if (a == "--list" && i + 1 < argc) {
      list = argv[++i];
    } else if (a == "--missing" || a == "--known") {
      mode = std::string(a.substr(2));
    } else {
      return Usage();
    }
  }

  if (mode == "known") {
    std::set<std::string> known;
    for (const auto& def : kiln::exec::AllOps())
      if (Check(def.name).covered) known.emplace(def.name);
    for (std::string_view op : kInlinedCalls) known.emplace(op);
    for (std::string_view op : kFunctionalizedOps) known.emplace(op);
    for (const auto& op : known) std::printf("%s\n", op.c_str());
    return 0;
  }

  std::vector<std::string> ops;
  if (!ReadList(list, &ops)) {
    std::fprintf(stderr, "bench_op_coverage: cannot read the op target list '%s'\n", list.c_str());
    return 1;
  }
  int covered = 0;
  if (mode == "table") {
    std::printf("op coverage against %s\n\n", list.c_str());
    std::printf("%-36s %-10s %-10s %s\n", "op", "definition", "cpu kernel", "covered");
  }
  for (const auto& op : ops) {
    const Coverage c = Check(op);
    covered += c.covered ? 1 : 0;
    if (mode == "missing") {
      if (!c.covered) std::printf("%s\n", op.c_str());
    } else {
      std::printf("%-36s %-10s %-10s %s%s%s\n", op.c_str(), c.definition ? "yes" : "-",
                  c.kernel ? "yes" : "-", c.covered ? "yes" : "NO", *c.how ? ", " : "", c.how);
    }
  }
  if (mode == "table")
    std::printf("\ncovered %d of %zu (a definition and a CPU kernel, or handled by the executor)\n",
                covered, ops.size());
  return 0;
}
