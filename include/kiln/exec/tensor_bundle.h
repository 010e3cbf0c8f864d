// TensorFlow's tensor-bundle checkpoint format (variables/variables.index + .data-*-of-*):
// an SSTable index of BundleEntryProto records and raw data files, with a masked CRC32C per
// entry. The reader maps the data files read-only and hands out tensors that alias them (no
// copy; processes serving one bundle share its pages) and verifies every checksum it touches
// unless told not to; the writer is deterministic and aligns every entry so that mapping works.
#pragma once

#include <filesystem>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "kiln/core/status.h"
#include "kiln/core/tensor.h"
#include "kiln/exec/thread_pool.h"

namespace tensorflow {
class BundleEntryProto;
}  // namespace tensorflow

namespace kiln::exec {

struct BundleReadOptions {
  // Check each entry's CRC32C (as TensorFlow stores it) when it is read, from the mapped bytes
  // (the pass faults the pages in that the tensor then uses). Off only for trusted bundles
  // that were verified before; string entries (the object graph) are always checked.
  bool verify_checksums = true;
  // Large entries' checksums are computed in pieces on these threads (a loaded model's pool);
  // null: on the calling thread.
  const ThreadPool* threads = nullptr;
};

// prefix is "D/variables/variables"; files are prefix + ".index" and
// prefix + ".data-%05d-of-%05d".
class BundleReader {
 public:
  // Reads and checks the index (magic, block checksums, header, sorted keys). Errors name the
  // file and what was wrong with it. Data files are mapped (read-only) on first use.
  static Result<std::unique_ptr<BundleReader>> Open(const std::filesystem::path& prefix,
                                                    const BundleReadOptions& options = {});
  // The same checks on an index and its data shards held in memory (for fuzzing and callers
  // that hold the bytes); `prefix` only names them in errors. Tensors alias the shards as
  // they would a mapped file.
  static Result<std::unique_ptr<BundleReader>> OpenFromMemory(
      std::string_view index, std::vector<std::string> shards,
      const std::filesystem::path& prefix = "<memory>", const BundleReadOptions& options = {});
  ~BundleReader();

  std::vector<std::string> Keys() const;  // sorted, without the "" header key
  bool Contains(std::string_view key) const;
  Result<tensorflow::BundleEntryProto> Entry(std::string_view key) const;
  // Reads the value and checks its size against the shape and the file ("... is truncated:
  // 'x/...' needs 400 bytes at offset 64 but the file has 100 bytes") and its checksum
  // ("checksum mismatch for 'x/...'"). A numeric or bool entry whose bytes are aligned for its
  // dtype is a read-only view of the data file that keeps the mapping alive
  // (Tensor::BufferIsReadOnly; nothing is copied); others (unaligned entries of a
  // TensorFlow-written file, a byte-swapped bundle, bools other than 0/1, strings) are copied.
  // The file must not be changed in place while such tensors live (writers replace files by
  // renaming, as BundleWriter and TensorFlow do).
  Result<Tensor> Read(std::string_view key) const;
  // RestoreV2's read of `shape_and_slice` ("10 6 0,4:0,6": the full shape, then start,length
  // per dimension or "-"): a slice of a whole entry, or one assembled from the slices a
  // partitioned variable was saved in (TF's BundleReader::LookupSlice). The spec's shape must
  // be the stored one, and the stored slices must cover what is asked.
  Result<Tensor> ReadSlice(std::string_view key, std::string_view shape_and_slice) const;

 private:
  BundleReader();
  static Result<std::unique_ptr<BundleReader>> OpenIndex(const std::filesystem::path& prefix,
                                                         std::string_view index,
                                                         std::vector<std::string>* shards,
                                                         const BundleReadOptions& options);
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

struct BundleWriteOptions {
  // Every entry of the data file starts at a multiple of this many bytes (zeros in between),
  // so a reader can map the file and use the tensors in place. TensorFlow reads any alignment
  // (its own BundleWriter has the same option, default 1); 1 packs the entries as SaveV2 does.
  int64_t data_alignment = 64;
  // Entries of one numeric dtype whose bytes are equal point at one copy in the data file
  // (the index names each key's offset and size; TensorFlow's reader and ours read any such
  // file). Keras's model.export stores every variable twice (`variables/N` and
  // `_all_variables/M`, distinct objects of equal value): with this the bytes are written once.
  // Off by default: adding in TF's order then reproduces TF's files byte for byte.
  bool share_equal_entries = false;
};

// Collects tensors in memory and writes both files on Finish (single shard). The index is
// sorted by key; the data file holds the tensors in the order they were added, as TF's SaveV2
// writes them, so adding in TF's order with data_alignment 1 reproduces TF's files byte for
// byte. The data file is written under a temporary name and renamed into place, so a process
// that has the previous file mapped keeps its bytes.
class BundleWriter {
 public:
  explicit BundleWriter(std::filesystem::path prefix, BundleWriteOptions options = {});
  ~BundleWriter();
  // Fails on a duplicate key or an unsupported dtype (resource, variant).
  Status Add(std::string key, const Tensor& tensor);
  Status Finish();

 private:
  std::filesystem::path prefix_;
  BundleWriteOptions options_;
  std::map<std::string, Tensor> tensors_;
  std::vector<std::string> order_;  // keys in Add order: the data file layout
};

}  // namespace kiln::exec
