#include "bundle/bundle_entry.h"

#include <cstring>

namespace kiln::exec {
namespace {

enum WireType : uint32_t {
  kVarint = 0,
  kFixed64 = 1,
  kBytes = 2,
  kStartGroup = 3,
  kEndGroup = 4,
  kFixed32 = 5
};

// How deep skipped groups may nest (protobuf's default recursion limit is 100).
constexpr int kMaxGroupDepth = 100;

class WireReader {
 public:
  explicit WireReader(std::string_view bytes)
      : p_(bytes.data()), end_(bytes.data() + bytes.size()) {}
  bool done() const { return p_ == end_; }

  Status Varint(uint64_t* out) {
    uint64_t v = 0;
    for (int shift = 0; shift < 64; shift += 7) {
      if (p_ == end_) return Truncated();
      const auto byte = static_cast<uint8_t>(*p_++);
      v |= static_cast<uint64_t>(byte & 0x7f) << shift;
      if ((byte & 0x80) == 0) {
        *out = v;
        return OkStatus();
      }
    }
    return DataLoss("a varint longer than 10 bytes");
  }
  // A field's tag: its number and wire type.
  Status Tag(uint32_t* field, uint32_t* wire) {
    uint64_t tag = 0;
    KILN_RETURN_IF_ERROR(Varint(&tag));
    *field = static_cast<uint32_t>(tag >> 3);
    *wire = static_cast<uint32_t>(tag & 7);
    if (*field == 0) return DataLoss("a field numbered 0");
    return OkStatus();
  }
  Status Bytes(std::string_view* out) {
    uint64_t n = 0;
    KILN_RETURN_IF_ERROR(Varint(&n));
    if (n > static_cast<uint64_t>(end_ - p_)) return Truncated();
    *out = std::string_view(p_, n);
    p_ += n;
    return OkStatus();
  }
  Status Fixed32(uint32_t* out) {
    if (end_ - p_ < 4) return Truncated();
    uint32_t v = 0;
    for (int i = 0; i < 4; ++i) v |= static_cast<uint32_t>(static_cast<uint8_t>(p_[i])) << (8 * i);
    p_ += 4;
    *out = v;
    return OkStatus();
  }
  // Skips a field of this wire type, as protobuf skips an unknown field (a group up to its end).
  Status Skip(uint32_t wire, uint32_t field = 0, int depth = 0) {
    uint64_t v = 0;
    std::string_view b;
    switch (wire) {
      case kVarint:
        return Varint(&v);
      case kFixed64:
        if (end_ - p_ < 8) return Truncated();
        p_ += 8;
        return OkStatus();
      case kBytes:
        return Bytes(&b);
      case kFixed32:
        if (end_ - p_ < 4) return Truncated();
        p_ += 4;
        return OkStatus();
      case kStartGroup:
        if (depth >= kMaxGroupDepth) return DataLoss("groups nest too deep");
        for (;;) {
          uint32_t f = 0, w = 0;
          KILN_RETURN_IF_ERROR(Tag(&f, &w));
          if (w == kEndGroup) {
            if (f != field) return DataLoss("a group of field ", field, " ends as field ", f);
            return OkStatus();
          }
          KILN_RETURN_IF_ERROR(Skip(w, f, depth + 1));
        }
      default:
        return DataLoss("wire type ", wire, " where a field was expected");
    }
  }

 private:
  static Status Truncated() { return DataLoss("the message is truncated"); }
  const char* p_;
  const char* end_;
};

// A known field written with another wire type is an unknown field to protobuf: skipped.
// An int32 or enum field: protobuf keeps the low 32 bits of the varint.
Status Int32(WireReader& r, uint32_t wire, uint32_t field, int32_t* out) {
  if (wire != kVarint) return r.Skip(wire, field);
  uint64_t v = 0;
  KILN_RETURN_IF_ERROR(r.Varint(&v));
  *out = static_cast<int32_t>(static_cast<uint32_t>(v));
  return OkStatus();
}

Status Int64(WireReader& r, uint32_t wire, uint32_t field, int64_t* out) {
  if (wire != kVarint) return r.Skip(wire, field);
  uint64_t v = 0;
  KILN_RETURN_IF_ERROR(r.Varint(&v));
  *out = static_cast<int64_t>(v);
  return OkStatus();
}

// TensorShapeProto: repeated Dim dim = 2 (int64 size = 1); bool unknown_rank = 3.
Status ParseShape(std::string_view bytes, std::vector<int64_t>* dims, bool* unknown_rank) {
  WireReader r(bytes);
  while (!r.done()) {
    uint32_t field = 0, wire = 0;
    KILN_RETURN_IF_ERROR(r.Tag(&field, &wire));
    if (field == 2 && wire == kBytes) {
      std::string_view dim;
      KILN_RETURN_IF_ERROR(r.Bytes(&dim));
      WireReader d(dim);
      int64_t size = 0;
      while (!d.done()) {
        uint32_t f = 0, w = 0;
        KILN_RETURN_IF_ERROR(d.Tag(&f, &w));
        if (f == 1) {
          KILN_RETURN_IF_ERROR(Int64(d, w, f, &size));
        } else {
          KILN_RETURN_IF_ERROR(d.Skip(w, f));
        }
      }
      dims->push_back(size);
    } else if (field == 3) {
      int32_t b = 0;
      KILN_RETURN_IF_ERROR(Int32(r, wire, field, &b));
      *unknown_rank = b != 0;
    } else {
      KILN_RETURN_IF_ERROR(r.Skip(wire, field));
    }
  }
  return OkStatus();
}

// VersionDef: int32 producer = 1; int32 min_consumer = 2; repeated int32 bad_consumers = 3
// (packed or not).
Status ParseVersion(std::string_view bytes, BundleHeader* h) {
  WireReader r(bytes);
  while (!r.done()) {
    uint32_t field = 0, wire = 0;
    KILN_RETURN_IF_ERROR(r.Tag(&field, &wire));
    if (field == 1) {
      KILN_RETURN_IF_ERROR(Int32(r, wire, field, &h->producer));
    } else if (field == 2) {
      KILN_RETURN_IF_ERROR(Int32(r, wire, field, &h->min_consumer));
    } else if (field == 3 && wire == kBytes) {
      std::string_view packed;
      KILN_RETURN_IF_ERROR(r.Bytes(&packed));
      WireReader p(packed);
      while (!p.done()) {
        int32_t v = 0;
        KILN_RETURN_IF_ERROR(Int32(p, kVarint, field, &v));
        h->bad_consumers.push_back(v);
      }
    } else if (field == 3) {
      int32_t v = 0;
      KILN_RETURN_IF_ERROR(Int32(r, wire, field, &v));
      h->bad_consumers.push_back(v);
    } else {
      KILN_RETURN_IF_ERROR(r.Skip(wire, field));
    }
  }
  return OkStatus();
}

// TensorSliceProto: repeated Extent extent = 1; Extent: int64 start = 1, int64 length = 2 (no
// length: the whole dimension, -1 here).
Status ParseSlice(std::string_view bytes, std::vector<std::pair<int64_t, int64_t>>* extents) {
  WireReader r(bytes);
  while (!r.done()) {
    uint32_t field = 0, wire = 0;
    KILN_RETURN_IF_ERROR(r.Tag(&field, &wire));
    if (field != 1 || wire != kBytes) {
      KILN_RETURN_IF_ERROR(r.Skip(wire, field));
      continue;
    }
    std::string_view extent;
    KILN_RETURN_IF_ERROR(r.Bytes(&extent));
    std::pair<int64_t, int64_t> se{0, -1};
    WireReader x(extent);
    while (!x.done()) {
      uint32_t f = 0, w = 0;
      KILN_RETURN_IF_ERROR(x.Tag(&f, &w));
      if (f == 1) {
        KILN_RETURN_IF_ERROR(Int64(x, w, f, &se.first));
      } else if (f == 2) {
        KILN_RETURN_IF_ERROR(Int64(x, w, f, &se.second));
      } else {
        KILN_RETURN_IF_ERROR(x.Skip(w, f));
      }
    }
    if (se.first < 0 || se.second < -1)
      return InvalidArgument("slice extent (", se.first, ", ", se.second, ") is negative");
    extents->push_back(se);
  }
  return OkStatus();
}

}  // namespace

Result<BundleHeader> ParseBundleHeader(std::string_view bytes) {
  BundleHeader h;
  WireReader r(bytes);
  while (!r.done()) {
    uint32_t field = 0, wire = 0;
    KILN_RETURN_IF_ERROR(r.Tag(&field, &wire));
    if (field == 1) {
      KILN_RETURN_IF_ERROR(Int32(r, wire, field, &h.num_shards));
    } else if (field == 2) {
      int32_t e = 0;
      KILN_RETURN_IF_ERROR(Int32(r, wire, field, &e));
      h.big_endian = e == 1;
    } else if (field == 3 && wire == kBytes) {
      std::string_view version;
      KILN_RETURN_IF_ERROR(r.Bytes(&version));
      KILN_RETURN_IF_ERROR(ParseVersion(version, &h));
    } else {
      KILN_RETURN_IF_ERROR(r.Skip(wire, field));
    }
  }
  return h;
}

Result<BundleEntry> ParseBundleEntry(std::string_view bytes) {
  BundleEntry e;
  std::vector<int64_t> dims;
  bool unknown_rank = false;
  WireReader r(bytes);
  while (!r.done()) {
    uint32_t field = 0, wire = 0;
    KILN_RETURN_IF_ERROR(r.Tag(&field, &wire));
    switch (field) {
      case 1:
        KILN_RETURN_IF_ERROR(Int32(r, wire, field, &e.dtype));
        break;
      case 2: {
        if (wire != kBytes) {
          KILN_RETURN_IF_ERROR(r.Skip(wire, field));
          break;
        }
        std::string_view shape;
        KILN_RETURN_IF_ERROR(r.Bytes(&shape));
        // A repeated occurrence of a message field merges into the first, as in protobuf.
        KILN_RETURN_IF_ERROR(ParseShape(shape, &dims, &unknown_rank));
        break;
      }
      case 3:
        KILN_RETURN_IF_ERROR(Int32(r, wire, field, &e.shard_id));
        break;
      case 4:
        KILN_RETURN_IF_ERROR(Int64(r, wire, field, &e.offset));
        break;
      case 5:
        KILN_RETURN_IF_ERROR(Int64(r, wire, field, &e.size));
        break;
      case 6:
        if (wire != kFixed32) {
          KILN_RETURN_IF_ERROR(r.Skip(wire, field));
        } else {
          KILN_RETURN_IF_ERROR(r.Fixed32(&e.crc32c));
        }
        break;
      case 7: {
        if (wire != kBytes) {
          KILN_RETURN_IF_ERROR(r.Skip(wire, field));
          break;
        }
        std::string_view slice;
        KILN_RETURN_IF_ERROR(r.Bytes(&slice));
        KILN_RETURN_IF_ERROR(ParseSlice(slice, &e.slices.emplace_back()));
        ++e.num_slices;
        break;
      }
      default:
        KILN_RETURN_IF_ERROR(r.Skip(wire, field));
    }
  }
  if (unknown_rank) {
    if (!dims.empty()) return InvalidArgument("shape has unknown_rank set and also dims");
    e.shape = PartialShape::UnknownRank();
  } else {
    KILN_ASSIGN_OR_RETURN(e.shape, PartialShape::FromDims(dims));
  }
  return e;
}

}  // namespace kiln::exec
