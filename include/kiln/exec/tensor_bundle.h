// TensorFlow's tensor-bundle checkpoint format (variables/variables.index + .data-*-of-*):
// an SSTable index of BundleEntryProto records and raw data files, with a masked CRC32C per
// entry. The reader verifies every checksum it touches; the writer is deterministic.
#pragma once

#include <filesystem>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "kiln/core/status.h"
#include "kiln/core/tensor.h"

namespace tensorflow {
class BundleEntryProto;
}  // namespace tensorflow

namespace kiln::exec {

// prefix is "D/variables/variables"; files are prefix + ".index" and
// prefix + ".data-%05d-of-%05d".
class BundleReader {
 public:
  // Reads and checks the index (magic, block checksums, header, sorted keys). Errors name the
  // file and what was wrong with it.
  static Result<std::unique_ptr<BundleReader>> Open(const std::filesystem::path& prefix);
  // The same checks on an index and its data shards held in memory (for fuzzing and callers
  // that hold the bytes); `prefix` only names them in errors.
  static Result<std::unique_ptr<BundleReader>> OpenFromMemory(
      std::string_view index, std::vector<std::string> shards,
      const std::filesystem::path& prefix = "<memory>");
  ~BundleReader();

  std::vector<std::string> Keys() const;  // sorted, without the "" header key
  bool Contains(std::string_view key) const;
  Result<tensorflow::BundleEntryProto> Entry(std::string_view key) const;
  // Reads the value and checks size and checksum ("checksum mismatch for 'x/...'").
  Result<Tensor> Read(std::string_view key) const;

 private:
  BundleReader();
  static Result<std::unique_ptr<BundleReader>> OpenIndex(const std::filesystem::path& prefix,
                                                         std::string_view index,
                                                         std::vector<std::string>* shards);
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// Collects tensors in memory and writes both files on Finish (single shard). The index is
// sorted by key; the data file holds the tensors in the order they were added, as TF's SaveV2
// writes them, so adding in TF's order reproduces TF's files byte for byte.
class BundleWriter {
 public:
  explicit BundleWriter(std::filesystem::path prefix);
  ~BundleWriter();
  // Fails on a duplicate key or an unsupported dtype (resource, variant).
  Status Add(std::string key, const Tensor& tensor);
  Status Finish();

 private:
  std::filesystem::path prefix_;
  std::map<std::string, Tensor> tensors_;
  std::vector<std::string> order_;  // keys in Add order: the data file layout
};

}  // namespace kiln::exec
