// tf.train.Example and tf.train.SequenceExample read straight from their wire bytes (as TF's
// fast parsing does), without protobuf: the features of one Example by name, each a view of its
// packed or unpacked values. Used by the parse ops (cpu/parse_example_ops.cc,
// cpu/sequence_example_ops.cc) in both runtimes.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "kiln/core/status.h"

namespace kiln::exec {

// One Feature: which list it holds and its values (only the matching vector is filled).
struct FeatureValues {
  enum class Kind { kNone, kBytes, kFloat, kInt64 };
  Kind kind = Kind::kNone;
  std::vector<std::string_view> bytes;  // views into the serialized Example
  std::vector<float> floats;
  std::vector<int64_t> ints;
  size_t size() const {
    return kind == Kind::kBytes ? bytes.size() : kind == Kind::kFloat ? floats.size() : ints.size();
  }
};

// The features of `serialized` whose keys are in `wanted` (sorted, unique): found[i] is set
// for wanted[i] when the Example has it (the last entry wins, as for a protobuf map).
// An error (DataLoss) names what is malformed; *bad_feature (when given) is then the index in
// `wanted` of the feature whose Feature message is malformed (values[i].kind says which list it
// held, when that was read), or wanted.size() when the Example itself is: TensorFlow words the
// two differently.
Status ParseExampleFeatures(std::string_view serialized, const std::vector<std::string>& wanted,
                            std::vector<FeatureValues>* values, std::vector<bool>* found,
                            size_t* bad_feature = nullptr);

// One Feature message (an empty one has kind kNone).
Status ParseFeature(std::string_view feature, FeatureValues* out);

// A tf.train.SequenceExample split into the Feature bytes of its wanted context features and
// the FeatureList bytes of its wanted feature lists (wanted lists sorted, unique; the last entry
// of a key wins; *_found[i] says whether wanted[i] is there).
struct SequenceExampleParts {
  std::vector<std::string_view> context, lists;
  std::vector<bool> context_found, lists_found;
};
Status ParseSequenceExampleParts(std::string_view serialized,
                                 const std::vector<std::string>& context_wanted,
                                 const std::vector<std::string>& lists_wanted,
                                 SequenceExampleParts* out);

// The Features of one FeatureList, one per step.
Status ParseFeatureList(std::string_view list, std::vector<FeatureValues>* steps);

}  // namespace kiln::exec
