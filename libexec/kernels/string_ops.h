// The state the string joining and printing ops' definitions and CPU kernels (string_ops.cc) share.
#pragma once

#include <atomic>
#include <cstdint>
#include <string>
#include <vector>

#include "kernels/kernel_util.h"

namespace kiln::exec::string_ops {

// StringFormat.
struct StringFormatState : OpState {
  std::vector<std::string> pieces;  // the template split at each placeholder
  int summarize = 3;
};

// PrintV2.
struct PrintState : OpState {
  std::string stream;
  std::string end;
};

// Print (TF1's tf.Print).
struct TfPrintState : OpState {
  std::string message;
  int64_t first_n = -1;
  int summarize = 3;
  // Calls so far: the one thing Compute changes, shared by the node's callers as TF's counter.
  mutable std::atomic<int64_t> calls{0};
};

// ReduceJoin, UnsortedSegmentJoin.
struct JoinState : OpState {
  std::string separator;
  bool keep_dims = false;
};

}  // namespace kiln::exec::string_ops
