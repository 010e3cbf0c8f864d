// The two messages of a tensor bundle's index (variables.index), read without protobuf: the
// header (BundleHeaderProto, under the empty key) and one entry per tensor (BundleEntryProto).
// A small reader of protobuf's wire format for just these fields, so that the protobuf-free
// runtime reads checkpoints too; unknown fields are skipped, as protobuf does.
#pragma once

#include <cstdint>
#include <string_view>
#include <utility>
#include <vector>

#include "kiln/core/shape.h"
#include "kiln/core/status.h"

namespace kiln::exec {

struct BundleHeader {
  int32_t num_shards = 0;
  bool big_endian = false;
  int32_t producer = 0;
  int32_t min_consumer = 0;
  std::vector<int32_t> bad_consumers;
};

struct BundleEntry {
  int32_t dtype = 0;                            // TensorFlow DataType number
  PartialShape shape = PartialShape::Scalar();  // no shape field: a scalar
  int32_t shard_id = 0;
  int64_t offset = 0;
  int64_t size = 0;
  uint32_t crc32c = 0;  // masked, as stored
  int num_slices = 0;   // a partitioned variable's slices, stored under keys of their own
  // Each slice's (start, length) per dimension; length -1 is the whole dimension (TF's
  // TensorSliceProto extent without a length).
  std::vector<std::vector<std::pair<int64_t, int64_t>>> slices;
};

// Errors say what is malformed; the caller names the file and key.
Result<BundleHeader> ParseBundleHeader(std::string_view bytes);
Result<BundleEntry> ParseBundleEntry(std::string_view bytes);

}  // namespace kiln::exec
