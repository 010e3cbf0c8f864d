// .npz reading: a zip archive of .npy files. Only what numpy.savez / savez_compressed write is
// needed: stored or deflated entries, optionally with zip64 extra fields, no encryption.
#include <zlib.h>

#include <algorithm>
#include <cstring>
#include <vector>

#include "core/npy_decode.h"
#include "kiln/core/file_util.h"
#include "kiln/core/npy.h"

namespace kiln {
namespace {

constexpr uint32_t kLocalHeaderSig = 0x04034b50;
constexpr uint32_t kCentralHeaderSig = 0x02014b50;
constexpr uint32_t kEndOfCentralDirSig = 0x06054b50;
constexpr uint32_t kZip64EndSig = 0x06064b50;
constexpr uint32_t kZip64LocatorSig = 0x07064b50;
constexpr size_t kEndOfCentralDirSize = 22;
constexpr size_t kCentralHeaderSize = 46;
constexpr size_t kLocalHeaderSize = 30;

uint16_t Le16(std::string_view b, size_t at) {
  return static_cast<uint16_t>(static_cast<unsigned char>(b[at]) |
                               static_cast<unsigned char>(b[at + 1]) << 8);
}
uint32_t Le32(std::string_view b, size_t at) {
  return Le16(b, at) | uint32_t{Le16(b, at + 2)} << 16;
}
uint64_t Le64(std::string_view b, size_t at) {
  return Le32(b, at) | uint64_t{Le32(b, at + 4)} << 32;
}

struct ZipEntry {
  std::string name;
  uint16_t flags = 0;
  uint16_t method = 0;
  uint32_t crc = 0;
  uint64_t compressed_size = 0;
  uint64_t size = 0;
  uint64_t local_offset = 0;
};

class ZipReader {
 public:
  ZipReader(std::string_view bytes, std::string_view name) : b_(bytes), name_(name) {}

  Result<std::vector<ZipEntry>> ListEntries() {
    if (b_.size() < kEndOfCentralDirSize) return Corrupt("too short to be a zip archive");
    // The end record sits at the end, before a comment of up to 64 KiB.
    size_t eocd = std::string_view::npos;
    const size_t lowest =
        b_.size() > kEndOfCentralDirSize + 0xffff ? b_.size() - kEndOfCentralDirSize - 0xffff : 0;
    for (size_t at = b_.size() - kEndOfCentralDirSize + 1; at-- > lowest;) {
      if (Le32(b_, at) == kEndOfCentralDirSig) {
        eocd = at;
        break;
      }
    }
    if (eocd == std::string_view::npos) {
      return Corrupt("no end-of-central-directory record (not a zip archive, or truncated)");
    }
    uint64_t count = Le16(b_, eocd + 10);
    uint64_t cd_size = Le32(b_, eocd + 12);
    uint64_t cd_offset = Le32(b_, eocd + 16);
    if (count == 0xffff || cd_size == 0xffffffff || cd_offset == 0xffffffff) {
      // zip64: a locator right before the end record points at the zip64 end record.
      if (eocd < 20 || Le32(b_, eocd - 20) != kZip64LocatorSig) {
        return Corrupt("zip64 archive without a zip64 locator");
      }
      uint64_t z64 = Le64(b_, eocd - 20 + 8);
      if (z64 > b_.size() || b_.size() - z64 < 56 || Le32(b_, z64) != kZip64EndSig) {
        return Corrupt("bad zip64 end-of-central-directory record");
      }
      count = Le64(b_, z64 + 32);
      cd_size = Le64(b_, z64 + 40);
      cd_offset = Le64(b_, z64 + 48);
    }
    if (cd_offset > b_.size() || cd_size > b_.size() - cd_offset) {
      return Corrupt("central directory lies outside the file");
    }
    std::vector<ZipEntry> entries;
    size_t at = cd_offset;
    const size_t end = cd_offset + cd_size;
    for (uint64_t i = 0; i < count; ++i) {
      if (end - at < kCentralHeaderSize || Le32(b_, at) != kCentralHeaderSig) {
        return Corrupt("bad central directory entry");
      }
      ZipEntry e;
      e.flags = Le16(b_, at + 8);
      e.method = Le16(b_, at + 10);
      e.crc = Le32(b_, at + 16);
      e.compressed_size = Le32(b_, at + 20);
      e.size = Le32(b_, at + 24);
      const size_t name_len = Le16(b_, at + 28);
      const size_t extra_len = Le16(b_, at + 30);
      const size_t comment_len = Le16(b_, at + 32);
      e.local_offset = Le32(b_, at + 42);
      const size_t var = name_len + extra_len + comment_len;
      if (end - at - kCentralHeaderSize < var) return Corrupt("central directory entry truncated");
      e.name.assign(b_.substr(at + kCentralHeaderSize, name_len));
      KILN_RETURN_IF_ERROR(
          ApplyZip64Extra(b_.substr(at + kCentralHeaderSize + name_len, extra_len), &e));
      entries.push_back(std::move(e));
      at += kCentralHeaderSize + var;
    }
    return entries;
  }

  // Where entry e's data lies in the archive, after checking its local header.
  Result<std::string_view> EntryData(const ZipEntry& e) const {
    if (e.flags & 1) return Unimplemented(name_, ": entry '", e.name, "' is encrypted");
    if (e.method != 0 && e.method != 8)
      return Unimplemented(name_, ": entry '", e.name, "' uses zip compression method ", e.method,
                           "; expected stored (0) or deflate (8)");
    if (e.local_offset > b_.size() || b_.size() - e.local_offset < kLocalHeaderSize ||
        Le32(b_, e.local_offset) != kLocalHeaderSig) {
      return DataLoss(name_, ": entry '", e.name, "': bad local header");
    }
    const size_t data_at = e.local_offset + kLocalHeaderSize + Le16(b_, e.local_offset + 26) +
                           Le16(b_, e.local_offset + 28);
    if (data_at > b_.size() || e.compressed_size > b_.size() - data_at) {
      return DataLoss(name_, ": entry '", e.name,
                      "': data runs past the end of the archive (truncated?)");
    }
    if (e.method == 0 && e.size != e.compressed_size)
      return DataLoss(name_, ": entry '", e.name, "': stored entry with differing sizes");
    // Deflate cannot expand data more than ~1032x: refuse absurd sizes before allocating.
    if (e.method == 8 && e.size / 1032 > e.compressed_size + 1)
      return DataLoss(name_, ": entry '", e.name, "': implausible uncompressed size");
    return b_.substr(data_at, e.compressed_size);
  }

 private:
  Status Corrupt(std::string_view why) const {
    return DataLoss(name_, ": bad .npz archive: ", why);
  }

  // Zip64 "extended information" (id 1) holds the 64-bit values whose 32-bit fields are full.
  Status ApplyZip64Extra(std::string_view extra, ZipEntry* e) const {
    while (extra.size() >= 4) {
      uint16_t id = Le16(extra, 0);
      uint16_t len = Le16(extra, 2);
      if (extra.size() - 4 < len) return Corrupt("extra field truncated");
      if (id == 1) {
        std::string_view f = extra.substr(4, len);
        size_t at = 0;
        auto take = [&](uint64_t* v) {
          if (f.size() - at < 8) return false;
          *v = Le64(f, at);
          at += 8;
          return true;
        };
        if (e->size == 0xffffffff && !take(&e->size)) return Corrupt("short zip64 field");
        if (e->compressed_size == 0xffffffff && !take(&e->compressed_size))
          return Corrupt("short zip64 field");
        if (e->local_offset == 0xffffffff && !take(&e->local_offset))
          return Corrupt("short zip64 field");
      }
      extra.remove_prefix(4 + len);
    }
    return OkStatus();
  }

  std::string_view b_;
  std::string_view name_;
};

// An entry's bytes, read in order: copied (stored) or inflated (deflate) into the caller's
// buffer, the CRC-32 kept as they come.
class EntryStream {
 public:
  EntryStream(const ZipEntry& e, std::string_view raw, std::string_view archive)
      : e_(e), raw_(raw), archive_(archive) {}
  ~EntryStream() {
    if (inflating_) inflateEnd(&zs_);
  }
  EntryStream(const EntryStream&) = delete;
  EntryStream& operator=(const EntryStream&) = delete;

  // Exactly `n` more bytes of the entry into `dst`.
  Status Read(char* dst, size_t n) {
    if (n > e_.size - produced_) return Bad("entry is shorter than its .npy header says");
    if (e_.method == 0) {
      std::memcpy(dst, raw_.data() + produced_, n);
    } else {
      KILN_RETURN_IF_ERROR(Inflate(dst, n));
    }
    for (size_t done = 0; done < n;) {
      const size_t chunk = std::min<size_t>(n - done, 1u << 30);
      crc_ = crc32(crc_, reinterpret_cast<const Bytef*>(dst + done), static_cast<uInt>(chunk));
      done += chunk;
    }
    produced_ += n;
    return OkStatus();
  }

  // After the last Read: the entry ends there (deflate data included) and its CRC matches.
  Status Finish() {
    if (produced_ != e_.size) return Bad("entry is longer than its .npy header says");
    if (e_.method == 8 && !ended_) {
      char extra = 0;  // a well-formed stream only has its end to give
      KILN_RETURN_IF_ERROR(Inflate(&extra, 1, /*at_end=*/true));
    }
    if (static_cast<uint32_t>(crc_) != e_.crc) return Bad("CRC-32 mismatch (corrupt archive)");
    return OkStatus();
  }

 private:
  Status Bad(std::string_view why) const {
    return DataLoss(archive_, ": entry '", e_.name, "': ", why);
  }

  // Inflates `n` bytes into `dst`; at_end: expects the stream's end and no byte at all.
  Status Inflate(char* dst, size_t n, bool at_end = false) {
    if (!inflating_) {
      if (inflateInit2(&zs_, -MAX_WBITS) != Z_OK) return Internal("zlib inflateInit2 failed");
      inflating_ = true;
      in_left_ = raw_.size();
      zs_.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(raw_.data()));
    }
    zs_.next_out = reinterpret_cast<Bytef*>(dst);
    uint64_t out_left = n;
    int rc = Z_OK;
    // avail_in/avail_out are 32-bit: feed in chunks.
    while (rc == Z_OK && out_left > 0 && !ended_) {
      zs_.avail_in = static_cast<uInt>(std::min<uint64_t>(in_left_, 1u << 30));
      zs_.avail_out = static_cast<uInt>(std::min<uint64_t>(out_left, 1u << 30));
      const uInt in_before = zs_.avail_in, out_before = zs_.avail_out;
      rc = inflate(&zs_, Z_NO_FLUSH);
      in_left_ -= in_before - zs_.avail_in;
      out_left -= out_before - zs_.avail_out;
      if (rc == Z_STREAM_END) ended_ = true;
      if (rc == Z_OK && in_before == zs_.avail_in && out_before == zs_.avail_out) rc = Z_BUF_ERROR;
    }
    if ((rc != Z_OK && rc != Z_STREAM_END) || (!at_end && out_left != 0)) {
      const std::string zmsg = zs_.msg ? zs_.msg : "output size mismatch";
      return Bad(internal::StrCat("deflate data is corrupt (zlib: ", zmsg, ")"));
    }
    if (at_end && out_left != 1) return Bad("deflate data is longer than the declared size");
    return OkStatus();
  }

  const ZipEntry& e_;
  std::string_view raw_;
  std::string_view archive_;
  z_stream zs_{};
  bool inflating_ = false;
  bool ended_ = false;
  uint64_t in_left_ = 0;
  uint64_t produced_ = 0;
  uLong crc_ = crc32(0L, Z_NULL, 0);
};

}  // namespace

struct NpzReader::Impl {
  std::string_view bytes;
  std::string name;
  std::vector<std::string> keys;
  std::vector<ZipEntry> entries;  // entries[i] holds keys[i]

  Result<const ZipEntry*> Find(std::string_view key) const {
    for (size_t i = 0; i < keys.size(); ++i)
      if (keys[i] == key) return &entries[i];
    std::string names;
    for (const std::string& k : keys) names += (names.empty() ? "'" : ", '") + k + "'";
    return NotFound(name, ": the archive holds no array named '", key,
                    "' (it has: ", names.empty() ? "none" : names, ")");
  }

  // The entry's stream, positioned after its .npy header, and the header.
  Result<NpyHeader> ReadHeader(const ZipEntry& e, EntryStream* stream) const {
    const std::string label = internal::StrCat(name, ":", e.name);
    // Magic, version and header length (10 bytes for version 1, 12 for 2 and 3), then the
    // header; more than numpy.load reads by default (10000 bytes) is refused before inflating.
    constexpr size_t kMaxHeader = 1 << 20;
    std::string head(std::min<uint64_t>(e.size, 10), '\0');
    KILN_RETURN_IF_ERROR(stream->Read(head.data(), head.size()));
    if (head.size() == 10 && head.starts_with("\x93NUMPY")) {
      size_t prefix = 10, len = static_cast<unsigned char>(head[8]) |
                                size_t{static_cast<unsigned char>(head[9])} << 8;
      if (head[6] == 2 || head[6] == 3) {
        prefix = 12;
        head.resize(12);
        if (e.size < 12) return DataLoss(label, ": .npy header is truncated");
        KILN_RETURN_IF_ERROR(stream->Read(head.data() + 10, 2));
        len |= size_t{static_cast<unsigned char>(head[10])} << 16 |
               size_t{static_cast<unsigned char>(head[11])} << 24;
      }
      if (len > kMaxHeader)
        return DataLoss(label, ": .npy header of ", len, " bytes (more than ", kMaxHeader, ")");
      const size_t have = head.size();
      const size_t want = std::min<uint64_t>(prefix + len, e.size);
      head.resize(want);
      KILN_RETURN_IF_ERROR(stream->Read(head.data() + have, want - have));
    }
    KILN_ASSIGN_OR_RETURN(NpyHeader h, ParseNpyHeader(head, label));
    if (h.objects)
      return Unimplemented(label, ": holds Python objects (pickled), which are read from a .npy ",
                           "file only; save strings as a fixed-width array: numpy.array(values, ",
                           "dtype='S')");
    const uint64_t data = e.size - h.data_offset;
    if (h.data_bytes != data)
      return DataLoss(
          label, ": .npy data has ", data, " bytes; expected ",
          h.data_bytes == UINT64_MAX ? std::string("more") : std::to_string(h.data_bytes), " for ",
          h.descr, " shape ", h.shape.ToString());
    return h;
  }
};

Result<NpzReader> NpzReader::Open(std::string_view bytes, std::string_view name) {
  auto impl = std::make_shared<Impl>();
  impl->bytes = bytes;
  impl->name = std::string(name);
  ZipReader zip(bytes, name);
  KILN_ASSIGN_OR_RETURN(std::vector<ZipEntry> entries, zip.ListEntries());
  for (ZipEntry& e : entries) {
    if (!e.name.empty() && e.name.back() == '/') continue;  // a directory
    constexpr std::string_view kSuffix = ".npy";
    if (!std::string_view(e.name).ends_with(kSuffix))
      return InvalidArgument(name, ": entry '", e.name, "' is not a .npy array");
    std::string key = e.name.substr(0, e.name.size() - kSuffix.size());
    if (std::find(impl->keys.begin(), impl->keys.end(), key) != impl->keys.end())
      return DataLoss(name, ": entry '", e.name, "' appears twice");
    impl->keys.push_back(std::move(key));
    impl->entries.push_back(std::move(e));
  }
  return NpzReader(std::move(impl));
}

const std::vector<std::string>& NpzReader::keys() const { return impl_->keys; }

bool NpzReader::Contains(std::string_view key) const {
  return std::find(impl_->keys.begin(), impl_->keys.end(), key) != impl_->keys.end();
}

Result<NpyHeader> NpzReader::Header(std::string_view key) const {
  KILN_ASSIGN_OR_RETURN(const ZipEntry* e, impl_->Find(key));
  KILN_ASSIGN_OR_RETURN(std::string_view raw, ZipReader(impl_->bytes, impl_->name).EntryData(*e));
  EntryStream stream(*e, raw, impl_->name);
  return impl_->ReadHeader(*e, &stream);
}

Result<Tensor> NpzReader::Read(std::string_view key) const {
  KILN_ASSIGN_OR_RETURN(const ZipEntry* e, impl_->Find(key));
  KILN_ASSIGN_OR_RETURN(std::string_view raw, ZipReader(impl_->bytes, impl_->name).EntryData(*e));
  EntryStream stream(*e, raw, impl_->name);
  KILN_ASSIGN_OR_RETURN(NpyHeader h, impl_->ReadHeader(*e, &stream));
  KILN_ASSIGN_OR_RETURN(Tensor t, internal::DecodeNpyData(
                                      h, [&](char* dst, size_t n) { return stream.Read(dst, n); },
                                      internal::StrCat(impl_->name, ":", e->name)));
  KILN_RETURN_IF_ERROR(stream.Finish());
  return t;
}

Result<std::map<std::string, Tensor>> ParseNpz(std::string_view bytes, std::string_view name) {
  KILN_ASSIGN_OR_RETURN(NpzReader npz, NpzReader::Open(bytes, name));
  std::map<std::string, Tensor> out;
  for (const std::string& key : npz.keys()) {
    KILN_ASSIGN_OR_RETURN(Tensor t, npz.Read(key));
    out.emplace(key, std::move(t));
  }
  return out;
}

Result<std::map<std::string, Tensor>> ReadNpz(const std::filesystem::path& path) {
  KILN_ASSIGN_OR_RETURN(std::string bytes, ReadFileToString(path));
  return ParseNpz(bytes, path.string());
}

}  // namespace kiln
