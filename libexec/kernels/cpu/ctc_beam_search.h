// CTC beam search over one sequence's logits, as TensorFlow's CTCBeamSearchDecoder with its
// default scorer (tensorflow/core/util/ctc/ctc_beam_search.h): the prefixes are a tree; each step
// updates every prefix in the beam by Graves' recurrences (P(prefix) split into ending in a
// blank and ending in its last label; a repeated label needs a blank in between) and grows each
// prefix by every label, keeping the beam_width most probable. Probabilities are logs of the
// softmax of each step's logits (TF 2.21's); the blank is the last class.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <map>
#include <memory>
#include <vector>

namespace kiln::exec::ctc {

template <typename T>
constexpr T LogZero() {
  return -std::numeric_limits<T>::infinity();
}

// log(exp(a) + exp(b)), exact at log(0).
template <typename T>
T LogSumExp(T a, T b) {
  if (a <= LogZero<T>()) return b;
  if (b <= LogZero<T>()) return a;
  return a > b ? a + std::log1p(std::exp(b - a)) : b + std::log1p(std::exp(a - b));
}

template <typename T>
struct BeamProbability {
  T total = LogZero<T>(), blank = LogZero<T>(), label = LogZero<T>();
  void Reset() { *this = BeamProbability(); }
};

template <typename T>
class BeamSearch {
 public:
  BeamSearch(int64_t num_classes, int beam_width)
      : num_classes_(num_classes), beam_width_(beam_width) {
    Reset();
  }

  // Forgets every prefix: the empty prefix has probability 1.
  void Reset() {
    entries_.clear();
    leaves_.clear();
    Entry* root = Add(nullptr, -1);
    root->newp.total = 0;
    root->newp.blank = 0;
    leaves_.push_back(root);
  }

  // One time step: `logits` holds num_classes values, the blank last.
  void Step(const T* logits) {
    const int64_t blank = num_classes_ - 1;
    const T max_coeff = *std::max_element(logits, logits + num_classes_);
    // Log-softmax's offset, summed in T as TF sums it.
    T sum = T(0);
    for (int64_t j = 0; j < num_classes_; ++j) sum += std::exp(logits[j] - max_coeff);
    const T norm_offset = max_coeff + std::log(sum);
    std::vector<Entry*> branches = Extract();
    for (Entry* b : branches) b->oldp = b->newp;
    for (Entry* b : branches) {
      if (b->parent != nullptr) {
        if (b->parent->Active()) {
          // A repeated label continues from the parent's blank-ending paths only.
          const T previous =
              b->label == b->parent->label ? b->parent->oldp.blank : b->parent->oldp.total;
          b->newp.label = LogSumExp(b->newp.label, previous);
        }
        b->newp.label += logits[b->label] - norm_offset;
      }
      b->newp.blank = b->oldp.total + logits[blank] - norm_offset;
      b->newp.total = LogSumExp(b->newp.blank, b->newp.label);
      leaves_.push_back(b);
    }
    for (Entry* b : branches) {
      if (!IsCandidate(b->oldp)) continue;
      for (int64_t label = 0; label < num_classes_ - 1; ++label) {
        Entry& c = b->Child(label, this);
        if (c.Active()) continue;
        c.newp.blank = LogZero<T>();
        const T previous = c.label == b->label ? b->oldp.blank : b->oldp.total;
        c.newp.label = logits[label] - norm_offset + previous;
        c.newp.total = c.newp.label;
        if (IsCandidate(c.newp)) {
          if (static_cast<int>(leaves_.size()) == beam_width_) {
            // The least probable prefix leaves the beam for the new one.
            auto bottom = Bottom();
            (*bottom)->newp.Reset();
            *bottom = &c;
          } else {
            leaves_.push_back(&c);
          }
        } else {
          c.oldp.Reset();
          c.newp.Reset();
        }
      }
    }
  }

  int64_t num_leaves() const { return static_cast<int64_t>(leaves_.size()); }

  // The n most probable prefixes (labels, merge_repeated as TF's LabelSeq) and their log
  // probabilities; n <= num_leaves().
  void TopPaths(int n, bool merge_repeated, std::vector<std::vector<int64_t>>* paths,
                std::vector<T>* log_probs) const {
    std::vector<Entry*> sorted = leaves_;
    std::sort(sorted.begin(), sorted.end(), Better);
    paths->clear();
    log_probs->clear();
    for (int i = 0; i < n; ++i) {
      const Entry* e = sorted[i];
      std::vector<int64_t> labels;
      int64_t prev = -1;
      for (const Entry* c = e; c->parent != nullptr; c = c->parent) {
        if (!merge_repeated || c->label != prev) labels.push_back(c->label);
        prev = c->label;
      }
      std::reverse(labels.begin(), labels.end());
      paths->push_back(std::move(labels));
      log_probs->push_back(e->newp.total);
    }
  }

 private:
  struct Entry {
    Entry* parent = nullptr;
    int64_t label = -1;
    std::map<int64_t, Entry*> children;  // made on first use, owned by entries_
    BeamProbability<T> oldp, newp;

    bool Active() const { return newp.total != LogZero<T>(); }
    Entry& Child(int64_t l, BeamSearch* owner) {
      auto [it, added] = children.emplace(l, nullptr);
      if (added) it->second = owner->Add(this, l);
      return *it->second;
    }
  };

  static bool Better(const Entry* a, const Entry* b) { return a->newp.total > b->newp.total; }

  Entry* Add(Entry* parent, int64_t label) {
    entries_.push_back(std::make_unique<Entry>());
    entries_.back()->parent = parent;
    entries_.back()->label = label;
    return entries_.back().get();
  }

  // The beam's prefixes, most probable first; the beam is left empty.
  std::vector<Entry*> Extract() {
    std::vector<Entry*> out;
    out.swap(leaves_);
    std::sort(out.begin(), out.end(), Better);
    return out;
  }

  typename std::vector<Entry*>::iterator Bottom() {
    return std::min_element(leaves_.begin(), leaves_.end(),
                            [](const Entry* a, const Entry* b) { return Better(b, a); });
  }

  // Whether a prefix with these probabilities enters the beam: possible, and the beam has room
  // or holds a less probable prefix.
  bool IsCandidate(const BeamProbability<T>& p) {
    return p.total > LogZero<T>() &&
           (static_cast<int>(leaves_.size()) < beam_width_ || p.total > (*Bottom())->newp.total);
  }

  int64_t num_classes_;
  int beam_width_;
  std::vector<std::unique_ptr<Entry>> entries_;
  std::vector<Entry*> leaves_;
};

}  // namespace kiln::exec::ctc
