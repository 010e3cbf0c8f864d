#include "bundle/sstable.h"

#include <algorithm>

#include "bundle/coding.h"
#include "bundle/crc32c.h"

namespace kiln::sstable {
namespace {

using coding::DecodeFixed32;
using coding::GetVarint32;
using coding::GetVarint64;
using coding::PutFixed32;
using coding::PutVarint32;
using coding::PutVarint64;

std::string Printable(std::string_view s) {
  std::string out;
  for (unsigned char c : s) {
    if (c >= 0x20 && c < 0x7f && c != '\\') {
      out.push_back(static_cast<char>(c));
    } else {
      static const char kHex[] = "0123456789abcdef";
      out += "\\x";
      out.push_back(kHex[c >> 4]);
      out.push_back(kHex[c & 15]);
    }
  }
  return out;
}

struct BlockHandle {
  uint64_t offset = 0;
  uint64_t size = 0;
};

void EncodeHandle(const BlockHandle& h, std::string* dst) {
  PutVarint64(dst, h.offset);
  PutVarint64(dst, h.size);
}

bool DecodeHandle(std::string_view* in, BlockHandle* h) {
  return GetVarint64(in, &h->offset) && GetVarint64(in, &h->size);
}

// Reads the block `h` from the file, checks its trailer and returns the block contents.
Result<std::string_view> ReadBlock(std::string_view file, const BlockHandle& h,
                                   std::string_view what, std::string_view name) {
  if (h.offset > file.size() || h.size > file.size() - h.offset ||
      file.size() - h.offset - h.size < kBlockTrailerSize) {
    return DataLoss(name, ": ", what, " block at offset ", h.offset, " with size ", h.size,
                    " extends past the end of the file (", file.size(), " bytes); truncated?");
  }
  std::string_view block = file.substr(h.offset, h.size);
  const char* trailer = file.data() + h.offset + h.size;
  uint32_t stored = crc32c::Unmask(DecodeFixed32(trailer + 1));
  uint32_t actual = crc32c::Extend(crc32c::Value(block), trailer, 1);
  if (stored != actual) {
    return DataLoss(name, ": block checksum mismatch in ", what, " block at offset ", h.offset);
  }
  switch (static_cast<unsigned char>(trailer[0])) {
    case 0:
      return block;
    case 1:
      return Unimplemented(name, ": ", what, " block at offset ", h.offset,
                           " is Snappy-compressed; only uncompressed tables are supported "
                           "(TensorFlow writes bundle indexes uncompressed)");
    default:
      return DataLoss(name, ": ", what, " block at offset ", h.offset,
                      " has unknown compression type ",
                      int{static_cast<unsigned char>(trailer[0])});
  }
}

// Decodes every entry of a block, in order, appending to *out.
Status DecodeBlock(std::string_view block, std::string_view what, uint64_t offset,
                   std::string_view name, std::vector<TableEntry>* out) {
  auto corrupt = [&](std::string_view why) {
    return DataLoss(name, ": corrupted ", what, " block at offset ", offset, ": ", why);
  };
  if (block.size() < 4) return corrupt("shorter than its restart count");
  uint32_t num_restarts = DecodeFixed32(block.data() + block.size() - 4);
  if (num_restarts == 0 || num_restarts > (block.size() - 4) / 4) {
    return corrupt("bad restart count");
  }
  size_t restarts_at = block.size() - 4 - 4 * size_t{num_restarts};
  std::string_view in = block.substr(0, restarts_at);
  std::string key;
  while (!in.empty()) {
    uint32_t shared, non_shared, value_len;
    if (!GetVarint32(&in, &shared) || !GetVarint32(&in, &non_shared) ||
        !GetVarint32(&in, &value_len)) {
      return corrupt("truncated entry header");
    }
    if (shared > key.size()) return corrupt("entry shares more bytes than the previous key has");
    if (in.size() < size_t{non_shared} + value_len) return corrupt("entry runs past the block");
    key.resize(shared);
    key.append(in.data(), non_shared);
    in.remove_prefix(non_shared);
    out->push_back({key, std::string(in.substr(0, value_len))});
    in.remove_prefix(value_len);
  }
  return OkStatus();
}

}  // namespace

void FindShortestSeparator(std::string* start, std::string_view limit) {
  size_t min_length = std::min(start->size(), limit.size());
  size_t diff = 0;
  while (diff < min_length && (*start)[diff] == limit[diff]) ++diff;
  if (diff >= min_length) return;  // one is a prefix of the other: keep as is
  auto byte = static_cast<uint8_t>((*start)[diff]);
  if (byte < 0xff && byte + 1 < static_cast<uint8_t>(limit[diff])) {
    (*start)[diff] = static_cast<char>(byte + 1);
    start->resize(diff + 1);
  }
}

void FindShortSuccessor(std::string* key) {
  for (size_t i = 0; i < key->size(); ++i) {
    auto byte = static_cast<uint8_t>((*key)[i]);
    if (byte != 0xff) {
      (*key)[i] = static_cast<char>(byte + 1);
      key->resize(i + 1);
      return;
    }
  }
  // All 0xff: leave it alone.
}

void TableBuilder::BlockBuilder::Add(std::string_view key, std::string_view value) {
  size_t shared = 0;
  if (counter_ < restart_interval_) {
    size_t min_length = std::min(last_key_.size(), key.size());
    while (shared < min_length && last_key_[shared] == key[shared]) ++shared;
  } else {
    restarts_.push_back(static_cast<uint32_t>(buffer_.size()));
    counter_ = 0;
  }
  size_t non_shared = key.size() - shared;
  PutVarint32(&buffer_, static_cast<uint32_t>(shared));
  PutVarint32(&buffer_, static_cast<uint32_t>(non_shared));
  PutVarint32(&buffer_, static_cast<uint32_t>(value.size()));
  buffer_.append(key.data() + shared, non_shared);
  buffer_.append(value.data(), value.size());
  last_key_.assign(key.data(), key.size());
  ++counter_;
}

std::string TableBuilder::BlockBuilder::Finish() {
  for (uint32_t r : restarts_) PutFixed32(&buffer_, r);
  PutFixed32(&buffer_, static_cast<uint32_t>(restarts_.size()));
  std::string result = std::move(buffer_);
  buffer_.clear();
  restarts_.assign(1, 0);
  counter_ = 0;
  last_key_.clear();
  return result;
}

TableBuilder::TableBuilder(Options options)
    : options_(options), data_block_(options.block_restart_interval), index_block_(1) {}

std::string TableBuilder::WriteBlock(BlockBuilder* block) {
  std::string contents = block->Finish();
  BlockHandle handle{out_.size(), contents.size()};
  out_ += contents;
  const char type = 0;  // kNoCompression
  uint32_t crc = crc32c::Extend(crc32c::Value(contents), &type, 1);
  out_.push_back(type);
  PutFixed32(&out_, crc32c::Mask(crc));
  std::string encoded;
  EncodeHandle(handle, &encoded);
  return encoded;
}

void TableBuilder::Flush() {
  if (data_block_.empty()) return;
  pending_handle_ = WriteBlock(&data_block_);
  pending_index_entry_ = true;
}

Status TableBuilder::Add(std::string_view key, std::string_view value) {
  if (num_entries_ > 0) {
    if (key <= std::string_view(last_key_)) {
      return InvalidArgument("table keys must be strictly increasing: '", Printable(key),
                             "' after '", Printable(last_key_), "'");
    }
    // An entry at least twice the block size gets a block of its own (as TF does).
    if (key.size() + value.size() >= 2 * options_.block_size) Flush();
  }
  if (pending_index_entry_) {
    FindShortestSeparator(&last_key_, key);
    index_block_.Add(last_key_, pending_handle_);
    pending_index_entry_ = false;
  }
  last_key_.assign(key.data(), key.size());
  ++num_entries_;
  data_block_.Add(key, value);
  if (data_block_.CurrentSizeEstimate() >= options_.block_size) Flush();
  return OkStatus();
}

std::string TableBuilder::Finish() {
  Flush();
  BlockBuilder metaindex(options_.block_restart_interval);
  std::string metaindex_handle = WriteBlock(&metaindex);
  if (pending_index_entry_) {
    FindShortSuccessor(&last_key_);
    index_block_.Add(last_key_, pending_handle_);
    pending_index_entry_ = false;
  }
  std::string index_handle = WriteBlock(&index_block_);
  std::string footer = metaindex_handle + index_handle;
  footer.resize(kFooterSize - 8, '\0');
  PutFixed32(&footer, static_cast<uint32_t>(kTableMagic));
  PutFixed32(&footer, static_cast<uint32_t>(kTableMagic >> 32));
  out_ += footer;
  return std::move(out_);
}

Result<std::vector<TableEntry>> ReadTable(std::string_view contents, std::string_view name) {
  if (contents.size() < kFooterSize) {
    return DataLoss(name, ": file is too short (", contents.size(),
                    " bytes) to be an sstable; truncated?");
  }
  std::string_view footer = contents.substr(contents.size() - kFooterSize);
  uint64_t magic = coding::DecodeFixed64(footer.data() + kFooterSize - 8);
  if (magic != kTableMagic) return DataLoss(name, ": not an sstable (bad magic number)");
  BlockHandle metaindex, index;
  std::string_view handles = footer.substr(0, kFooterSize - 8);
  if (!DecodeHandle(&handles, &metaindex) || !DecodeHandle(&handles, &index)) {
    return DataLoss(name, ": corrupted sstable footer");
  }
  KILN_ASSIGN_OR_RETURN(std::string_view index_block, ReadBlock(contents, index, "index", name));
  std::vector<TableEntry> index_entries;
  KILN_RETURN_IF_ERROR(DecodeBlock(index_block, "index", index.offset, name, &index_entries));

  std::vector<TableEntry> entries;
  for (const TableEntry& ie : index_entries) {
    std::string_view hv = ie.value;
    BlockHandle h;
    if (!DecodeHandle(&hv, &h)) {
      return DataLoss(name, ": corrupted block handle in the index for key '", Printable(ie.key),
                      "'");
    }
    size_t first = entries.size();
    KILN_ASSIGN_OR_RETURN(std::string_view block, ReadBlock(contents, h, "data", name));
    KILN_RETURN_IF_ERROR(DecodeBlock(block, "data", h.offset, name, &entries));
    if (entries.size() > first && std::string_view(entries.back().key) > ie.key) {
      return DataLoss(name, ": index key '", Printable(ie.key), "' is below the last key '",
                      Printable(entries.back().key), "' of its data block");
    }
  }
  for (size_t i = 1; i < entries.size(); ++i) {
    if (!(entries[i - 1].key < entries[i].key)) {
      return DataLoss(name, ": keys out of order: '", Printable(entries[i].key), "' after '",
                      Printable(entries[i - 1].key), "'");
    }
  }
  return entries;
}

}  // namespace kiln::sstable
