// LevelDB-style sorted string tables, as TensorFlow writes tensor-bundle indexes
// (savedmodel-format.md §3.3): uncompressed data blocks with restart points, an empty
// metaindex block, an index block and a 48-byte footer. The writer reproduces TF's bytes; the
// reader checks the magic, every block checksum and the key order.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "kiln/core/status.h"

namespace kiln::sstable {

inline constexpr uint64_t kTableMagic = 0xdb4775248b80fb57ull;
inline constexpr size_t kFooterSize = 48;
inline constexpr size_t kBlockTrailerSize = 5;  // type byte + masked crc32c

struct Options {
  size_t block_size = 262144;       // TF's table::Options default
  int block_restart_interval = 16;  // for data blocks; the index block always uses 1
};

// Builds a whole table in memory.
class TableBuilder {
 public:
  explicit TableBuilder(Options options = {});
  // Keys must be strictly increasing in bytewise order.
  Status Add(std::string_view key, std::string_view value);
  // Returns the file's bytes; the builder is spent afterwards.
  std::string Finish();

 private:
  class BlockBuilder {
   public:
    explicit BlockBuilder(int restart_interval) : restart_interval_(restart_interval) {}
    void Add(std::string_view key, std::string_view value);
    std::string Finish();  // and resets
    size_t CurrentSizeEstimate() const { return buffer_.size() + restarts_.size() * 4 + 4; }
    bool empty() const { return buffer_.empty(); }

   private:
    int restart_interval_;
    std::string buffer_;
    std::vector<uint32_t> restarts_{0};
    int counter_ = 0;
    std::string last_key_;
  };

  // Appends block + trailer to out_; returns the encoded handle (offset, size).
  std::string WriteBlock(BlockBuilder* block);
  void Flush();

  Options options_;
  std::string out_;
  BlockBuilder data_block_;
  BlockBuilder index_block_;
  std::string last_key_;
  int64_t num_entries_ = 0;
  bool pending_index_entry_ = false;
  std::string pending_handle_;
};

struct TableEntry {
  std::string key;
  std::string value;
};

// Parses a whole table held in memory. `name` (the file path) prefixes every error.
Result<std::vector<TableEntry>> ReadTable(std::string_view contents, std::string_view name);

// Bytewise comparator helpers (LevelDB's BytewiseComparator).
// Shortens *start to a key in [*start, limit) when it can.
void FindShortestSeparator(std::string* start, std::string_view limit);
// Shortens *key to a short key >= *key.
void FindShortSuccessor(std::string* key);

}  // namespace kiln::sstable
