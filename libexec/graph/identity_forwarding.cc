// Rewrites before fusion (fusion.h): readers of an IdentityN read what it forwards, and a
// Transpose by the identity permutation becomes an Identity.
#include <algorithm>
#include <optional>
#include <vector>

#include "graph/fusion_pass.h"

namespace kiln::exec::fusion_detail {

// Keras 3's activations with a custom gradient (swish, ...) end in IdentityN(y, x, beta), whose
// outputs after the first nothing reads, yet that read of x kept x from fusing into its
// producer. Readers of IdentityN:k read its input k instead (it only forwards: no step runs
// for it either way); one left unread is dead for the fusion. Returns how many edges moved.
int ForwardIdentityN(FlatGraph* g, std::vector<char>* live) {
  const int n = static_cast<int>(g->nodes.size());
  auto forwards = [&](const Edge& e) {
    const FlatNode& p = g->nodes[e.node];
    return p.op == "IdentityN" && p.control_inputs.empty() &&
           e.output < static_cast<int>(p.inputs.size());
  };
  int moved = 0;
  for (int v = 0; v < n; ++v) {
    if (!(*live)[v]) continue;
    for (Edge& e : g->nodes[v].inputs)
      for (int hops = 0; hops < 8 && forwards(e); ++hops, ++moved)
        e = g->nodes[e.node].inputs[e.output];
  }
  if (moved == 0) return 0;
  std::vector<char> read(n, 0);
  for (int v = 0; v < n; ++v)
    if ((*live)[v])
      for (const Edge& e : g->nodes[v].inputs) read[e.node] = 1;
  for (const Edge& e : g->outputs) read[e.node] = 1;
  for (int k : g->keep) read[k] = 1;
  std::vector<char> gone(n, 0);
  for (int v = 0; v < n; ++v)
    gone[v] = (*live)[v] && g->nodes[v].op == "IdentityN" && g->nodes[v].control_inputs.empty() &&
              !read[v];
  // What waited for one (the inliner's "call done" sink waits on every inner node) waits for
  // what it forwarded.
  for (int v = 0; v < n; ++v) {
    std::vector<int>& waits = g->nodes[v].control_inputs;
    if (!(*live)[v] || std::none_of(waits.begin(), waits.end(), [&](int c) { return gone[c]; }))
      continue;
    std::vector<int> kept;
    for (int c : waits) {
      if (!gone[c]) {
        kept.push_back(c);
        continue;
      }
      for (const Edge& e : g->nodes[c].inputs) kept.push_back(e.node);
    }
    std::sort(kept.begin(), kept.end());
    kept.erase(std::unique(kept.begin(), kept.end()), kept.end());
    waits = std::move(kept);
  }
  for (int v = 0; v < n; ++v)
    if (gone[v]) (*live)[v] = 0;
  return moved;
}

// A Transpose by a constant identity permutation (Keras's Tensordot emits one per Dense on a
// sequence) passes its input on instead of copying it; so does one that undoes the Transpose
// before it (Keras 3's recurrent layers transpose their sequences to time-major and back, so
// stacked LSTMs and a TimeDistributed after one transpose each sequence there and back again).
int Fuser::ForwardIdentityTransposes() {
  int forwarded = 0;
  // A constant permutation's values, or none.
  const auto constant_perm = [&](const FlatNode& n) -> std::optional<std::vector<int64_t>> {
    if (n.op != "Transpose" || n.inputs.size() != 2 || Value(n.inputs[1]) == nullptr)
      return std::nullopt;
    return IntValues(n.inputs[1]);
  };
  for (int v = 0; v < static_cast<int>(g_.nodes.size()); ++v) {
    FlatNode& t = g_.nodes[v];
    if (!Live(v) || t.op != "Transpose" || t.inputs.size() != 2 || t.attrs == nullptr) continue;
    std::optional<std::vector<int64_t>> outer = constant_perm(t);
    if (!outer) continue;
    std::vector<int64_t> perm = *outer;
    Edge x = t.inputs[0];
    // Through Transposes before it: out dim i is x's dim inner[perm[i]].
    for (int hops = 0; hops < 8 && x.output == 0 && Live(x.node); ++hops) {
      const FlatNode& inner = g_.nodes[x.node];
      const std::optional<std::vector<int64_t>> p = constant_perm(inner);
      if (!p || p->size() != perm.size() || !inner.control_inputs.empty()) break;
      std::vector<int64_t> composed(perm.size());
      bool valid = true;
      for (size_t i = 0; i < perm.size(); ++i) {
        valid = valid && perm[i] >= 0 && perm[i] < static_cast<int64_t>(p->size());
        if (valid) composed[i] = (*p)[static_cast<size_t>(perm[i])];
      }
      if (!valid) break;
      perm = std::move(composed);
      x = inner.inputs[0];
    }
    if (x.node >= static_cast<int>(facts_.size()) ||
        x.output >= static_cast<int>(facts_[x.node].specs.size()))
      continue;
    // Only where the input's rank is known to match (a mismatch is the kernel's error).
    const PartialShape& xs = facts_[x.node].specs[x.output].shape;
    if (xs.unknown_rank() || xs.rank() != static_cast<int>(perm.size())) continue;
    bool identity = true;
    for (size_t i = 0; i < perm.size(); ++i)
      identity = identity && perm[i] == static_cast<int64_t>(i);
    const auto it = t.attrs->find("T");
    if (!identity || it == t.attrs->end()) continue;
    g_.owned_attrs.emplace_back();
    g_.owned_attrs.back()["T"] = it->second;
    t.op = "Identity";
    t.def = FindOp("Identity");
    t.attrs = &g_.owned_attrs.back();
    t.inputs.resize(1);
    t.inputs[0] = x;
    ++forwarded;
  }
  return forwarded;
}

}  // namespace kiln::exec::fusion_detail
