// The gradient table: every op with a gradient function (or registered as not differentiable),
// from the families in gradients/*.cc. Looked up by op name when a tape computes a gradient.
#include <string>
#include <unordered_map>
#include <vector>

#include "tape.h"

namespace kiln::trace::internal {
namespace {

struct Table {
  std::vector<GradientDef> all;
  std::unordered_map<std::string, const GradientDef*> by_name;
};

const Table& GetTable() {
  static const Table* const table = [] {
    auto* t = new Table();
    for (auto family : {MathGradients(), NnGradients(), ArrayGradients(), ControlFlowGradients()}) {
      t->all.insert(t->all.end(), family.begin(), family.end());
    }
    for (const GradientDef& d : t->all) t->by_name.emplace(d.op, &d);
    return t;
  }();
  return *table;
}

}  // namespace

const GradientDef* FindGradient(std::string_view op) {
  const Table& t = GetTable();
  auto it = t.by_name.find(std::string(op));
  return it == t.by_name.end() ? nullptr : it->second;
}

std::span<const GradientDef> AllGradients() { return GetTable().all; }

}  // namespace kiln::trace::internal
