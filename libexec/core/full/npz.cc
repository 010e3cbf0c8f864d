// .npz reading: a zip archive of .npy files. Only what numpy.savez / savez_compressed write is
// needed: stored or deflated entries, optionally with zip64 extra fields, no encryption.
#include <zlib.h>

#include <algorithm>
#include <cstring>
#include <vector>

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

  Result<std::string> Extract(const ZipEntry& e) {
    auto bad = [&](std::string_view why) {
      return DataLoss(name_, ": entry '", e.name, "': ", why);
    };
    if (e.flags & 1) return Unimplemented(name_, ": entry '", e.name, "' is encrypted");
    if (e.local_offset > b_.size() || b_.size() - e.local_offset < kLocalHeaderSize ||
        Le32(b_, e.local_offset) != kLocalHeaderSig) {
      return bad("bad local header");
    }
    const size_t data_at = e.local_offset + kLocalHeaderSize + Le16(b_, e.local_offset + 26) +
                           Le16(b_, e.local_offset + 28);
    if (data_at > b_.size() || e.compressed_size > b_.size() - data_at) {
      return bad("data runs past the end of the archive (truncated?)");
    }
    std::string_view raw = b_.substr(data_at, e.compressed_size);
    std::string out;
    if (e.method == 0) {
      if (e.size != e.compressed_size) return bad("stored entry with differing sizes");
      out.assign(raw);
    } else if (e.method == 8) {
      // Deflate cannot expand data more than ~1032x: refuse absurd sizes before allocating.
      if (e.size / 1032 > e.compressed_size + 1) return bad("implausible uncompressed size");
      out.resize(e.size);
      z_stream zs{};
      if (inflateInit2(&zs, -MAX_WBITS) != Z_OK) return Internal("zlib inflateInit2 failed");
      zs.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(raw.data()));
      zs.next_out = reinterpret_cast<Bytef*>(out.data());
      int rc = Z_OK;
      uint64_t in_left = raw.size(), out_left = out.size();
      // avail_in/avail_out are 32-bit: feed in chunks.
      while (rc == Z_OK) {
        zs.avail_in = static_cast<uInt>(std::min<uint64_t>(in_left, 1u << 30));
        zs.avail_out = static_cast<uInt>(std::min<uint64_t>(out_left, 1u << 30));
        uInt in_before = zs.avail_in, out_before = zs.avail_out;
        rc = inflate(&zs, Z_NO_FLUSH);
        in_left -= in_before - zs.avail_in;
        out_left -= out_before - zs.avail_out;
        if (rc == Z_OK && in_before == zs.avail_in && out_before == zs.avail_out) rc = Z_BUF_ERROR;
      }
      std::string zmsg = zs.msg ? zs.msg : "output size mismatch";
      inflateEnd(&zs);
      if (rc != Z_STREAM_END || out_left != 0) {
        return bad(internal::StrCat("deflate data is corrupt (zlib: ", zmsg, ")"));
      }
    } else {
      return Unimplemented(name_, ": entry '", e.name, "' uses zip compression method ", e.method,
                           "; expected stored (0) or deflate (8)");
    }
    uLong crc = crc32(0L, Z_NULL, 0);
    for (size_t done = 0; done < out.size();) {
      size_t chunk = std::min<size_t>(out.size() - done, 1u << 30);
      crc = crc32(crc, reinterpret_cast<const Bytef*>(out.data() + done), static_cast<uInt>(chunk));
      done += chunk;
    }
    if (static_cast<uint32_t>(crc) != e.crc) return bad("CRC-32 mismatch (corrupt archive)");
    return out;
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

}  // namespace

Result<std::map<std::string, Tensor>> ParseNpz(std::string_view bytes, std::string_view name) {
  ZipReader zip(bytes, name);
  KILN_ASSIGN_OR_RETURN(std::vector<ZipEntry> entries, zip.ListEntries());
  std::map<std::string, Tensor> out;
  for (const ZipEntry& e : entries) {
    if (!e.name.empty() && e.name.back() == '/') continue;  // a directory
    constexpr std::string_view kSuffix = ".npy";
    if (e.name.size() < kSuffix.size() ||
        e.name.compare(e.name.size() - kSuffix.size(), kSuffix.size(), kSuffix) != 0) {
      return InvalidArgument(name, ": entry '", e.name, "' is not a .npy array");
    }
    KILN_ASSIGN_OR_RETURN(std::string npy, zip.Extract(e));
    std::string label = internal::StrCat(name, ":", e.name);
    KILN_ASSIGN_OR_RETURN(Tensor t, ParseNpy(npy, label));
    std::string key = e.name.substr(0, e.name.size() - kSuffix.size());
    if (!out.emplace(key, std::move(t)).second) {
      return DataLoss(name, ": entry '", e.name, "' appears twice");
    }
  }
  return out;
}

Result<std::map<std::string, Tensor>> ReadNpz(const std::filesystem::path& path) {
  KILN_ASSIGN_OR_RETURN(std::string bytes, ReadFileToString(path));
  return ParseNpz(bytes, path.string());
}

}  // namespace kiln
