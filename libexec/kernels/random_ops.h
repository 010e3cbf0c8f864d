// The state of the stateful random ops (kernels/random_ops.cc) that their definitions build and
// their CPU kernels (kernels/cpu/random_ops.cc) draw from: a node's Philox generator, and the
// candidate samplers' tables.
#pragma once

#include <cmath>
#include <cstdint>
#include <memory>
#include <mutex>
#include <vector>

#include "kernels/philox.h"
#include "kiln/core/dtype.h"
#include "kiln/exec/op_table.h"

namespace kiln::exec::random_ops {

using random::Philox;

// Multiplier of TF's ReserveRandomOutputs: blocks skipped per output element.
inline constexpr uint64_t kBlocksPerOutput = 256;

struct StatefulRandomState : OpState {
  StatefulRandomState(DType dtype, Philox gen) : dtype(dtype), generator(gen) {}
  DType dtype;
  mutable std::mutex mu;
  mutable Philox generator;  // guarded by mu

  // The generator for a call producing `n` values; the node's own moves past them.
  Philox Reserve(int64_t n) const {
    return ReserveBlocks(static_cast<uint64_t>(n) * kBlocksPerOutput);
  }
  // The same for a call that uses `blocks` Philox blocks (TF's ReserveSamples128).
  Philox ReserveBlocks(uint64_t blocks) const {
    std::lock_guard<std::mutex> lock(mu);
    Philox local = generator;
    generator.Skip(blocks);
    return local;
  }
};

// TF's range samplers (sampled softmax's negatives): num_sampled candidates from [0, range),
// each call reserving 512 * num_sampled blocks of the node's generator as TF's CandidateSamplerOp
// (2048 * num_sampled 32-bit samples); unique draws reject repeats. The expected counts are TF's
// ExpectedCountHelper in float. Uniform and LogUniform (Zipfian) draw directly, All returns
// 0 .. num_sampled - 1, FixedUnigram draws from `unigrams` (raised to `distortion`, this shard's
// ids) by TF's alias table, LearnedUnigram and ThreadUnsafeUnigram from counts the true classes
// of every call raise (one picker per node, as TF's kernel keeps).
enum class SamplerKind { kUniform, kLogUniform, kAll, kFixedUnigram, kLearnedUnigram };

// TF's WeightedPicker for the learned unigram samplers: integer weights, all 1 at first, each
// true class's raised by one after every call; a pick is Uniform(total) located in the running
// sum (a Fenwick tree here, TF's a binary tree: the same element).
class LearnedWeights {
 public:
  explicit LearnedWeights(int64_t n) : weight_(n, 1), tree_(n + 1, 0), total_(n) {
    for (int64_t i = 0; i < n; ++i) Add(i, 1);
  }
  int64_t total() const { return total_; }
  int32_t weight(int64_t i) const { return weight_[i]; }
  void Increment(int64_t i) {
    ++weight_[i];
    ++total_;
    Add(i, 1);
  }
  // The first element whose running sum exceeds `target` (< total).
  int64_t PickAt(int64_t target) const {
    const auto n = static_cast<int64_t>(weight_.size());
    int64_t pos = 0;
    int64_t step = 1;
    while (step * 2 <= n) step *= 2;
    for (; step > 0; step /= 2) {
      if (pos + step <= n && tree_[pos + step] <= target) {
        pos += step;
        target -= tree_[pos];
      }
    }
    return pos;
  }

 private:
  void Add(int64_t i, int64_t delta) {
    for (int64_t k = i + 1; k < static_cast<int64_t>(tree_.size()); k += k & -k) tree_[k] += delta;
  }
  std::vector<int32_t> weight_;
  std::vector<int64_t> tree_;
  int64_t total_;
};

struct SamplerState : StatefulRandomState {
  using StatefulRandomState::StatefulRandomState;
  SamplerKind kind = SamplerKind::kUniform;
  int64_t num_true = 1, num_sampled = 1, range = 1;
  bool unique = true;
  double log_range = 0;        // LogUniform: log1p(range)
  std::vector<float> weights;  // FixedUnigram: per id
  float total_weight = 0;
  std::vector<float> prob;  // its alias table
  std::vector<int32_t> alt;
  // LearnedUnigram: the picker, changed by every call (after its draws, under `learned_mu`).
  mutable std::mutex learned_mu;
  mutable std::unique_ptr<LearnedWeights> learned;

  float Probability(int64_t v) const {
    switch (kind) {
      case SamplerKind::kUniform:
        return static_cast<float>(1.0 / static_cast<double>(range));
      case SamplerKind::kLogUniform:
        return static_cast<float>(
            std::log((static_cast<double>(v) + 2.0) / (static_cast<double>(v) + 1.0)) / log_range);
      case SamplerKind::kFixedUnigram:
        return v < 0 || v >= static_cast<int64_t>(weights.size()) ? 0.0f
                                                                  : weights[v] / total_weight;
      case SamplerKind::kLearnedUnigram:
        return static_cast<float>(learned->weight(v)) / static_cast<float>(learned->total());
      case SamplerKind::kAll:
        break;
    }
    return 1.0f;
  }
  int64_t Sample(random::SimplePhilox* rng) const {
    switch (kind) {
      case SamplerKind::kUniform:
        return static_cast<int64_t>(rng->Uniform64(static_cast<uint64_t>(range)));
      case SamplerKind::kLogUniform:
        return (static_cast<int64_t>(std::exp(rng->RandDouble() * log_range)) - 1) % range;
      case SamplerKind::kFixedUnigram: {
        const float r = rng->RandFloat();
        const auto idx = static_cast<int32_t>(rng->Uniform(static_cast<uint32_t>(prob.size())));
        return r < prob[idx] ? idx : alt[idx];
      }
      case SamplerKind::kLearnedUnigram:
        return learned->PickAt(rng->Uniform(static_cast<uint32_t>(learned->total())));
      case SamplerKind::kAll:
        break;
    }
    return 0;
  }
};

// SampleDistortedBoundingBox(V2) and StatelessSampleDistortedBoundingBox: their attrs, and for
// the stateful two the node's generator (each call reserves max_attempts blocks, as TF's
// ReserveSamples32(4 * max_attempts)).
struct DistortedBoxState : StatefulRandomState {
  using StatefulRandomState::StatefulRandomState;
  float min_object_covered = 0.1f;  // V1's attr; the others read their input
  bool use_image_if_no_bounding_boxes = false;
  float aspect_ratio_range[2] = {0.75f, 1.33f};
  float area_range[2] = {0.05f, 1.0f};
  int32_t max_attempts = 100;
};

}  // namespace kiln::exec::random_ops
