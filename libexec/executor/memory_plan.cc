#include "executor/memory_plan.h"

#include <algorithm>
#include <numeric>

#include "kiln/core/allocator.h"

namespace kiln::exec {
namespace {

struct UnionFind {
  explicit UnionFind(int n) : parent(n) { std::iota(parent.begin(), parent.end(), 0); }
  int Find(int x) {
    while (parent[x] != x) x = parent[x] = parent[parent[x]];
    return x;
  }
  void Union(int a, int b) { parent[Find(a)] = Find(b); }
  std::vector<int> parent;
};

// One block of arena memory: one planned slot, or a chain of in-place slots sharing it.
struct Block {
  size_t bytes = 0;
  int first = 0;  // step that writes it first
  int last = 0;   // last step that needs it
  size_t offset = 0;
  std::vector<int32_t> slots;
};

}  // namespace

MemoryPlanResult PlanMemory(const std::vector<PlanStep>& steps,
                            const std::vector<PlanSlot>& slots) {
  const int n_slots = static_cast<int>(slots.size());
  const int n_steps = static_cast<int>(steps.size());
  std::vector<int> producer(n_slots, -1), last_use(n_slots, -1);
  UnionFind groups(n_slots);
  for (int s = 0; s < n_steps; ++s) {
    for (int32_t slot : steps[s].out) producer[slot] = s;
    for (int32_t slot : steps[s].in) last_use[slot] = std::max(last_use[slot], s);
    if (!steps[s].fresh_outputs) {
      // Any output may be any input, or a view of it.
      for (int32_t o : steps[s].out)
        for (int32_t i : steps[s].in) groups.Union(o, i);
    }
  }
  // Per alias group: the last step that needs any member, and whether it is pinned.
  std::vector<int> group_last(n_slots, -1);
  std::vector<char> group_pinned(n_slots, 0);
  for (int slot = 0; slot < n_slots; ++slot) {
    const int g = groups.Find(slot);
    group_last[g] = std::max({group_last[g], last_use[slot], producer[slot]});
    if (slots[slot].pinned) group_pinned[g] = 1;
  }

  std::vector<int> block_of(n_slots, -1);
  std::vector<Block> blocks;
  auto plannable = [&](int32_t slot) {
    const PlanSlot& ps = slots[slot];
    const int p = producer[slot];
    size_t bytes = 0;
    // A tensor whose size overflows is left to run time, whose allocation then fails clearly.
    const bool sized = ps.shape_known &&
                       !__builtin_mul_overflow(static_cast<size_t>(ps.shape.num_elements()),
                                               DTypeSize(ps.dtype), &bytes) &&
                       bytes < (size_t{1} << 48);
    return p >= 0 && steps[p].fresh_outputs && sized && DTypeIsPod(ps.dtype) &&
           !group_pinned[groups.Find(slot)];
  };
  for (int s = 0; s < n_steps; ++s) {
    const PlanStep& st = steps[s];
    for (size_t k = 0; k < st.out.size(); ++k) {
      const int32_t slot = st.out[k];
      if (!plannable(slot)) continue;
      const size_t bytes = AlignedBytes(static_cast<size_t>(slots[slot].shape.num_elements()) *
                                        DTypeSize(slots[slot].dtype));
      const int last = group_last[groups.Find(slot)];
      if (k == 0 && st.in_place_input >= 0 && st.in_place_input < static_cast<int>(st.in.size())) {
        // Reuse the in-place input's block when it dies here and output element i takes the
        // place of input element i: same element count and element size. Equal (aligned) block
        // sizes are not enough: a broadcast input of (2, 1) under an output of (2, 2) rounds to
        // the same block, and writing output element 1 would clobber input element 1 unread.
        // No other input may be that memory (the same slot twice, or a view of it): a
        // convolution reads its whole input while it writes.
        const int32_t in = st.in[st.in_place_input];
        const int b = block_of[in];
        bool sole_reader = b >= 0;
        for (size_t j = 0; sole_reader && j < st.in.size(); ++j) {
          if (static_cast<int>(j) == st.in_place_input) continue;
          for (int32_t member : blocks[b].slots)
            sole_reader = sole_reader && groups.Find(st.in[j]) != groups.Find(member);
        }
        const bool same_elements =
            b >= 0 && slots[in].shape.num_elements() == slots[slot].shape.num_elements() &&
            DTypeSize(slots[in].dtype) == DTypeSize(slots[slot].dtype);
        if (b >= 0 && blocks[b].last == s && blocks[b].bytes == bytes && same_elements &&
            sole_reader) {
          blocks[b].last = std::max(blocks[b].last, last);
          blocks[b].slots.push_back(slot);
          block_of[slot] = b;
          continue;
        }
      }
      block_of[slot] = static_cast<int>(blocks.size());
      blocks.push_back(Block{bytes, s, std::max(s, last), 0, {slot}});
    }
  }

  // Largest first, each at the lowest offset free over its lifetime.
  std::vector<int> order(blocks.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(),
                   [&](int a, int b) { return blocks[a].bytes > blocks[b].bytes; });
  MemoryPlanResult result;
  std::vector<int> placed;
  for (int b : order) {
    Block& blk = blocks[b];
    std::vector<std::pair<size_t, size_t>> busy;  // [offset, end) of overlapping placed blocks
    for (int p : placed) {
      const Block& o = blocks[p];
      if (o.first <= blk.last && blk.first <= o.last)
        busy.emplace_back(o.offset, o.offset + o.bytes);
    }
    std::sort(busy.begin(), busy.end());
    size_t offset = 0;
    for (const auto& [lo, hi] : busy) {
      if (offset + blk.bytes <= lo) break;
      offset = std::max(offset, hi);
    }
    blk.offset = offset;
    placed.push_back(b);
    result.arena_bytes = std::max(result.arena_bytes, offset + blk.bytes);
  }
  for (const Block& blk : blocks) {
    for (size_t i = 0; i < blk.slots.size(); ++i) {
      result.entries.push_back({blk.slots[i], blk.offset});
      result.planned_bytes += blk.bytes;
      if (i > 0) ++result.in_place;
    }
  }
  std::sort(result.entries.begin(), result.entries.end(),
            [](const auto& a, const auto& b) { return a.slot < b.slot; });
  return result;
}

}  // namespace kiln::exec
