// TensorFlow's own results for op calls, recorded by a script under tests/ops into a generated
// .inc file (one RecordedCase per call: op, attrs, inputs, TF's outputs), turned into op-tester
// cases whose reference is what TF returned.
#pragma once

#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "ops/op_tester.h"

namespace kiln::testing {

struct RecordedAttr {
  const char* name;
  const char* kind;
  std::string value;  // a "..."s literal: serialized protos hold NUL bytes
};

struct RecordedTensor {
  const char* dtype;
  std::vector<int64_t> shape;
  std::vector<double> values;             // numbers; complex ones as (re, im) pairs
  std::vector<std::string> strings = {};  // string tensors ("..."s literals: bytes may be NUL)
};

struct RecordedCase {
  const char* op;
  std::vector<RecordedAttr> attrs;
  std::vector<RecordedTensor> inputs;
  std::vector<RecordedTensor> outputs;
};

// One op-tester case per recorded call, named "<op> recorded #<index>"; `tolerance` gives each
// op's (0 asks for TF's exact values); `stateful` names the ops whose node moves on each call (a
// seeded sampler): their first call is compared, not the calls after.
std::vector<OpCase> CasesFromRecorded(
    const std::vector<RecordedCase>& recorded,
    const std::function<double(std::string_view op)>& tolerance,
    const std::function<bool(std::string_view op)>& stateful = nullptr);

}  // namespace kiln::testing
