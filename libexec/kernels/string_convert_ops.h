// The state the string conversion ops' definitions and CPU kernels (string_convert_ops.cc) share.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "kernels/kernel_util.h"

namespace kiln::exec::string_convert {

// AsString.
struct AsStringState : OpState {
  DType dtype = DType::kInvalid;
  std::string format;  // for numbers; "(%f,%f)" style for complex
  int width = -1;
  bool left = false;  // strings: fill '-' left-justifies
};

// DecodeCSV.
struct DecodeCsvState : OpState {
  std::vector<DType> types;
  char delim = ',';
  bool quotes = true;
  std::string na_value;
  std::vector<int64_t> select_cols;  // empty: every column
};

// StringToHashBucketFast, StringToHashBucketStrong, StringToHashBucket.
struct HashBucketState : OpState {
  uint64_t num_buckets = 1;
  uint64_t key[2] = {0, 0};
};

}  // namespace kiln::exec::string_convert
