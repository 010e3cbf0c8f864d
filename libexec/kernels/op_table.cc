// The op table: the families ListOpFamilies names (op_table_builder.h), sorted once on first use.
#include "kiln/exec/op_table.h"

#include <algorithm>
#include <vector>

#include "kernels/op_table_builder.h"
#include "kiln/exec/op_coverage.h"

namespace kiln::exec {
namespace {

struct Tables {
  std::vector<OpDefinition> defs;                       // sorted by name
  std::vector<KernelEntry> kernels[kNumDeviceTypes];    // per device, sorted by op
  std::vector<OpTableBuilder::OpFamilyEntry> families;  // sorted by op
};

Tables BuildTables() {
  Tables t;
  OpTableBuilder builder(&t.defs, &t.kernels[static_cast<int>(DeviceType::kCpu)], &t.families);
  ListOpFamilies(builder);
  std::sort(t.families.begin(), t.families.end());
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

std::string_view OpFamily(std::string_view op) {
  const auto& families = GetTables().families;
  auto it = std::lower_bound(
      families.begin(), families.end(), op,
      [](const OpTableBuilder::OpFamilyEntry& e, std::string_view n) { return e.first < n; });
  return it != families.end() && it->first == op ? it->second : std::string_view();
}

std::span<const KernelEntry> KernelTable(DeviceType device) {
  return GetTables().kernels[static_cast<int>(device)];
}

const KernelEntry* Device::FindKernel(std::string_view op) const {
  const std::span<const KernelEntry> table = kernels();
  auto it = std::lower_bound(table.begin(), table.end(), op,
                             [](const KernelEntry& k, std::string_view n) { return k.op < n; });
  return it != table.end() && it->op == op ? &*it : nullptr;
}

ComputeFn FindKernel(DeviceType device, std::string_view op) {
  const auto& table = GetTables().kernels[static_cast<int>(device)];
  auto it = std::lower_bound(table.begin(), table.end(), op,
                             [](const KernelEntry& k, std::string_view n) { return k.op < n; });
  return it != table.end() && it->op == op ? it->compute : nullptr;
}

// An output arg: its name and, for a list sized by an attr ("name*ATTR"), that attr.
struct OutputArg {
  std::string_view name;
  std::string_view length_attr;
};

std::vector<OutputArg> ParseOutputArgs(std::string_view args) {
  std::vector<OutputArg> out;
  for (std::string_view n : OutputArgNames(args)) {
    const size_t star = n.find('*');
    if (star == std::string_view::npos) {
      out.push_back({n, {}});
    } else {
      out.push_back({n.substr(0, star), n.substr(star + 1)});
    }
  }
  return out;
}

// The flat length of `a` for a node with `attrs` (1 for a single tensor).
Result<int> ArgLength(const OpDefinition& def, const OutputArg& a, const ProtoAttrMap* attrs) {
  if (a.length_attr.empty()) return 1;
  if (attrs == nullptr) {
    return InvalidArgument("op ", def.name, ": output arg '", a.name, "' is a list of attr '",
                           a.length_attr, "' tensors; resolving it needs the node's attrs");
  }
  // An int attr, or a list(type) attr whose length is the list's ("sparse_values*sparse_types").
  const AttrReader reader(attrs);
  // TF leaves attrs at their defaults out of saved functions; a length attr's default is 0 (an
  // empty list): ParseSequenceExampleV2's Ncontext_sparse, for one.
  if (!reader.Has(a.length_attr)) return 0;
  int64_t n = 0;
  if (auto types = reader.GetTypeList(a.length_attr); types.ok()) {
    n = static_cast<int64_t>(types->size());
  } else {
    KILN_ASSIGN_OR_RETURN_CTX(n, reader.GetInt(a.length_attr), "op ", def.name);
  }
  if (n < 0 || n > (1 << 20)) {
    return InvalidArgument("op ", def.name, ": attr '", a.length_attr, "' = ", n,
                           " is not a valid list length");
  }
  return static_cast<int>(n);
}

Result<int> FlatOutputIndex(const OpDefinition& def, std::string_view arg, int index) {
  return FlatOutputIndex(def, arg, index, nullptr);
}

Result<int> FlatOutputIndex(const OpDefinition& def, std::string_view arg, int index,
                            const ProtoAttrMap* attrs) {
  const std::vector<OutputArg> args = ParseOutputArgs(def.output_args);
  if (index < 0) {
    return InvalidArgument("op ", def.name, ": negative output index ", index, " for '", arg, "'");
  }
  const bool known =
      std::any_of(args.begin(), args.end(), [&](const OutputArg& a) { return a.name == arg; });
  if (!known) {
    std::string names;
    for (const OutputArg& a : args) names += (names.empty() ? "" : ",") + std::string(a.name);
    return InvalidArgument("op ", def.name, " has no output arg '", arg,
                           "' (its outputs: ", names.empty() ? std::string("none") : names, ")");
  }
  if (args.size() == 1) return index;  // one arg (a list or not): direct
  int pos = 0;
  for (const OutputArg& a : args) {
    KILN_ASSIGN_OR_RETURN(int length, ArgLength(def, a, attrs));
    if (a.name == arg) {
      if (a.length_attr.empty() && index != 0) {
        return InvalidArgument("op ", def.name, ": output arg '", arg,
                               "' is a single tensor, got index ", index);
      }
      if (!a.length_attr.empty() && index >= length) {
        return InvalidArgument("op ", def.name, ": output arg '", arg, "' holds ", length,
                               " tensors (attr '", a.length_attr, "'), got index ", index);
      }
      return pos + index;
    }
    pos += length;
  }
  return Internal("op ", def.name, ": output arg '", arg, "' not found");
}

std::pair<std::string_view, int> OutputArgOf(const OpDefinition& def, int flat_index) {
  return OutputArgOf(def, flat_index, nullptr);
}

std::pair<std::string_view, int> OutputArgOf(const OpDefinition& def, int flat_index,
                                             const ProtoAttrMap* attrs) {
  const std::vector<OutputArg> args = ParseOutputArgs(def.output_args);
  if (args.size() == 1) return {args[0].name, flat_index};
  int pos = 0;
  for (const OutputArg& a : args) {
    Result<int> length = ArgLength(def, a, attrs);
    if (!length.ok()) break;  // unknown list length: no name for what follows
    if (flat_index >= pos && flat_index < pos + *length) return {a.name, flat_index - pos};
    pos += *length;
  }
  return {std::string_view(), flat_index};
}

}  // namespace kiln::exec
