// Which op families a runtime's table holds. The full runtime (libexec) lists every family in
// op_families_full.cc; the protobuf-free runtime (runtime/) lists its own subset. op_table.cc
// builds the sorted tables from either list.
#pragma once

#include <span>
#include <string_view>
#include <utility>
#include <vector>

#include "kiln/exec/op_table.h"

namespace kiln::exec {

class OpTableBuilder {
 public:
  // An op's name and its family's.
  using OpFamilyEntry = std::pair<std::string_view, std::string_view>;
  OpTableBuilder(std::vector<OpDefinition>* defs, std::vector<KernelEntry>* cpu,
                 std::vector<OpFamilyEntry>* families)
      : defs_(defs), cpu_(cpu), families_(families) {}
  // One family: its name, its definitions and its CPU kernels.
  void Add(std::string_view family, std::span<const OpDefinition> defs,
           std::span<const KernelEntry> cpu) {
    defs_->insert(defs_->end(), defs.begin(), defs.end());
    cpu_->insert(cpu_->end(), cpu.begin(), cpu.end());
    for (const OpDefinition& d : defs) families_->emplace_back(d.name, family);
  }

 private:
  std::vector<OpDefinition>* defs_;
  std::vector<KernelEntry>* cpu_;
  std::vector<OpFamilyEntry>* families_;
};

// Defined once per runtime (op_families_full.cc, runtime/op_families_minimal.cc, or the table
// cmake/KilnOpFamilies.cmake generates for a build with only some families).
void ListOpFamilies(OpTableBuilder& b);
// What an unknown op's error adds: "" when the table has every family, else which it has.
std::string_view OpTableNote();

}  // namespace kiln::exec
