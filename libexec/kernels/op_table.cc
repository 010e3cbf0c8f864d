// The op table: every family's definitions and CPU kernels, concatenated once on first use.
#include "kiln/exec/op_table.h"

#include <algorithm>
#include <vector>

#include "kernels/op_families.h"

namespace kiln::exec {
namespace {

struct Tables {
  std::vector<OpDefinition> defs;                     // sorted by name
  std::vector<KernelEntry> kernels[kNumDeviceTypes];  // per device, sorted by op
};

template <typename T>
void Append(std::vector<T>* out, std::span<const T> part) {
  out->insert(out->end(), part.begin(), part.end());
}

Tables BuildTables() {
  Tables t;
  Append(&t.defs, BasicOpDefs());
  Append(&t.defs, MathOpDefs());
  Append(&t.defs, MatMulOpDefs());
  Append(&t.defs, NnOpDefs());
  Append(&t.defs, StringOpDefs());
  Append(&t.defs, ResourceOpDefs());
  Append(&t.defs, IoOpDefs());
  Append(&t.defs, ShapeOpDefs());
  Append(&t.defs, ConcatOpDefs());
  Append(&t.defs, SliceOpDefs());
  Append(&t.defs, FillOpDefs());
  Append(&t.defs, ConvOpDefs());
  Append(&t.defs, ControlFlowOpDefs());
  Append(&t.defs, TensorListOpDefs());
  Append(&t.defs, CompareOpDefs());
  Append(&t.defs, MathExtraOpDefs());
  Append(&t.defs, ReductionOpDefs());
  Append(&t.defs, RandomOpDefs());
  Append(&t.defs, HostCallbackOpDefs());

  std::vector<KernelEntry>& cpu = t.kernels[static_cast<int>(DeviceType::kCpu)];
  Append(&cpu, BasicCpuKernels());
  Append(&cpu, MathCpuKernels());
  Append(&cpu, MatMulCpuKernels());
  Append(&cpu, NnCpuKernels());
  Append(&cpu, StringCpuKernels());
  Append(&cpu, ResourceCpuKernels());
  Append(&cpu, IoCpuKernels());
  Append(&cpu, ShapeCpuKernels());
  Append(&cpu, ConcatCpuKernels());
  Append(&cpu, SliceCpuKernels());
  Append(&cpu, FillCpuKernels());
  Append(&cpu, ConvCpuKernels());
  Append(&cpu, ControlFlowCpuKernels());
  Append(&cpu, TensorListCpuKernels());
  Append(&cpu, CompareCpuKernels());
  Append(&cpu, MathExtraCpuKernels());
  Append(&cpu, ReductionCpuKernels());
  Append(&cpu, RandomCpuKernels());
  Append(&cpu, HostCallbackCpuKernels());

  std::sort(t.defs.begin(), t.defs.end(),
            [](const OpDefinition& a, const OpDefinition& b) { return a.name < b.name; });
  for (auto& table : t.kernels)
    std::sort(table.begin(), table.end(),
              [](const KernelEntry& a, const KernelEntry& b) { return a.op < b.op; });
  return t;
}

const Tables& GetTables() {
  static const Tables tables = BuildTables();  // thread-safe initialisation
  return tables;
}

// Splits "y,idx" into its names; "" has none.
std::vector<std::string_view> OutputArgNames(std::string_view args) {
  std::vector<std::string_view> names;
  while (!args.empty()) {
    size_t comma = args.find(',');
    names.push_back(args.substr(0, comma));
    if (comma == std::string_view::npos) break;
    args.remove_prefix(comma + 1);
  }
  return names;
}

}  // namespace

const OpDefinition* FindOp(std::string_view name) {
  const auto& defs = GetTables().defs;
  auto it = std::lower_bound(defs.begin(), defs.end(), name,
                             [](const OpDefinition& d, std::string_view n) { return d.name < n; });
  return it != defs.end() && it->name == name ? &*it : nullptr;
}

std::span<const OpDefinition> AllOps() { return GetTables().defs; }

ComputeFn FindKernel(DeviceType device, std::string_view op) {
  const auto& table = GetTables().kernels[static_cast<int>(device)];
  auto it = std::lower_bound(table.begin(), table.end(), op,
                             [](const KernelEntry& k, std::string_view n) { return k.op < n; });
  return it != table.end() && it->op == op ? it->compute : nullptr;
}

Result<int> FlatOutputIndex(const OpDefinition& def, std::string_view arg, int index) {
  std::vector<std::string_view> names = OutputArgNames(def.output_args);
  if (index < 0) {
    return InvalidArgument("op ", def.name, ": negative output index ", index, " for '", arg, "'");
  }
  for (size_t pos = 0; pos < names.size(); ++pos) {
    if (names[pos] != arg) continue;
    if (names.size() == 1) return index;
    if (index != 0) {
      return InvalidArgument("op ", def.name, ": output arg '", arg,
                             "' is a single tensor, got index ", index);
    }
    return static_cast<int>(pos);
  }
  return InvalidArgument("op ", def.name, " has no output arg '", arg, "' (its outputs: ",
                         names.empty() ? std::string_view("none") : def.output_args, ")");
}

std::pair<std::string_view, int> OutputArgOf(const OpDefinition& def, int flat_index) {
  std::vector<std::string_view> names = OutputArgNames(def.output_args);
  if (names.size() == 1) return {names[0], flat_index};
  if (flat_index >= 0 && flat_index < static_cast<int>(names.size())) {
    return {names[flat_index], 0};
  }
  return {std::string_view(), flat_index};
}

}  // namespace kiln::exec
