// Op families: ParseExample SequenceExample
#include "kernels/example_wire.h"

#include <algorithm>
#include <bit>
#include <cstring>

namespace kiln::exec {
namespace {

// A cursor over protobuf wire bytes.
class Wire {
 public:
  explicit Wire(std::string_view b) : b_(b) {}
  bool done() const { return pos_ >= b_.size(); }

  bool Varint(uint64_t* v) {
    *v = 0;
    for (int shift = 0; shift < 64; shift += 7) {
      if (pos_ >= b_.size()) return false;
      const uint8_t c = static_cast<uint8_t>(b_[pos_++]);
      *v |= static_cast<uint64_t>(c & 0x7f) << shift;
      if ((c & 0x80) == 0) return true;
    }
    return false;
  }
  bool Tag(uint32_t* field, uint32_t* type) {
    uint64_t t;
    if (!Varint(&t) || t > 0xffffffffu) return false;
    *field = static_cast<uint32_t>(t >> 3);
    *type = static_cast<uint32_t>(t & 7);
    return *field != 0;
  }
  bool Bytes(std::string_view* out) {
    uint64_t n;
    if (!Varint(&n) || n > b_.size() - pos_) return false;
    *out = b_.substr(pos_, n);
    pos_ += n;
    return true;
  }
  bool Fixed32(uint32_t* v) {
    if (b_.size() - pos_ < 4) return false;
    std::memcpy(v, b_.data() + pos_, 4);
    pos_ += 4;
    return true;
  }
  // Skips a field of wire type `type` (groups are not used by Example and are refused).
  bool Skip(uint32_t type) {
    uint64_t v;
    std::string_view s;
    switch (type) {
      case 0:
        return Varint(&v);
      case 1:
        return Advance(8);
      case 2:
        return Bytes(&s);
      case 5:
        return Advance(4);
      default:
        return false;
    }
  }

 private:
  bool Advance(size_t n) {
    if (b_.size() - pos_ < n) return false;
    pos_ += n;
    return true;
  }
  std::string_view b_;
  size_t pos_ = 0;
};

Status Malformed(std::string_view what) {
  return DataLoss("could not parse a serialized tf.train.Example: ", what);
}

// A BytesList, FloatList or Int64List message: field 1, packed or not.
Status ParseList(std::string_view msg, FeatureValues* out) {
  Wire w(msg);
  while (!w.done()) {
    uint32_t field, type;
    if (!w.Tag(&field, &type)) return Malformed("bad tag in a feature list");
    if (field != 1) {
      if (!w.Skip(type)) return Malformed("bad field in a feature list");
      continue;
    }
    if (out->kind == FeatureValues::Kind::kBytes) {
      std::string_view s;
      if (type != 2 || !w.Bytes(&s)) return Malformed("bad bytes value");
      out->bytes.push_back(s);
    } else if (out->kind == FeatureValues::Kind::kFloat) {
      if (type == 5) {
        uint32_t bits;
        if (!w.Fixed32(&bits)) return Malformed("truncated float value");
        out->floats.push_back(std::bit_cast<float>(bits));
      } else if (type == 2) {
        std::string_view packed;
        if (!w.Bytes(&packed) || packed.size() % 4 != 0) return Malformed("bad packed floats");
        const size_t n = packed.size() / 4;
        const size_t at = out->floats.size();
        out->floats.resize(at + n);
        std::memcpy(out->floats.data() + at, packed.data(), packed.size());
      } else {
        return Malformed("bad float value");
      }
    } else {
      if (type == 0) {
        uint64_t v;
        if (!w.Varint(&v)) return Malformed("bad int64 value");
        out->ints.push_back(static_cast<int64_t>(v));
      } else if (type == 2) {
        std::string_view packed;
        if (!w.Bytes(&packed)) return Malformed("bad packed int64s");
        Wire p(packed);
        while (!p.done()) {
          uint64_t v;
          if (!p.Varint(&v)) return Malformed("bad packed int64s");
          out->ints.push_back(static_cast<int64_t>(v));
        }
      } else {
        return Malformed("bad int64 value");
      }
    }
  }
  return OkStatus();
}

}  // namespace

// A Feature message: oneof bytes_list = 1, float_list = 2, int64_list = 3.
Status ParseFeature(std::string_view msg, FeatureValues* out) {
  *out = FeatureValues();
  Wire w(msg);
  while (!w.done()) {
    uint32_t field, type;
    if (!w.Tag(&field, &type)) return Malformed("bad tag in a Feature");
    if (field < 1 || field > 3 || type != 2) {
      if (!w.Skip(type)) return Malformed("bad field in a Feature");
      continue;
    }
    std::string_view list;
    if (!w.Bytes(&list)) return Malformed("truncated feature list");
    // A later member of the oneof replaces an earlier one, as protobuf merges.
    *out = FeatureValues();
    out->kind = field == 1   ? FeatureValues::Kind::kBytes
                : field == 2 ? FeatureValues::Kind::kFloat
                             : FeatureValues::Kind::kInt64;
    KILN_RETURN_IF_ERROR(ParseList(list, out));
  }
  return OkStatus();
}

namespace {

// The entries of a map<string, Message> field (Features.feature, FeatureLists.feature_list)
// whose keys are in `wanted` (sorted): value bytes by index, the last entry of a key winning.
Status ParseMapEntries(std::string_view map, const std::vector<std::string>& wanted,
                       std::vector<std::string_view>* values, std::vector<bool>* found) {
  Wire f(map);
  while (!f.done()) {
    uint32_t ffield, ftype;
    if (!f.Tag(&ffield, &ftype)) return Malformed("bad tag in Features");
    if (ffield != 1 || ftype != 2) {  // the map's entries
      if (!f.Skip(ftype)) return Malformed("bad field in Features");
      continue;
    }
    std::string_view entry;
    if (!f.Bytes(&entry)) return Malformed("truncated feature map entry");
    std::string_view key, value;
    Wire e(entry);
    while (!e.done()) {
      uint32_t efield, etype;
      if (!e.Tag(&efield, &etype)) return Malformed("bad tag in a feature map entry");
      if (efield == 1 && etype == 2) {
        if (!e.Bytes(&key)) return Malformed("bad feature name");
      } else if (efield == 2 && etype == 2) {
        if (!e.Bytes(&value)) return Malformed("bad feature value");
      } else if (!e.Skip(etype)) {
        return Malformed("bad field in a feature map entry");
      }
    }
    const auto it =
        std::lower_bound(wanted.begin(), wanted.end(), key,
                         [](const std::string& a, std::string_view b) { return a < b; });
    if (it == wanted.end() || *it != key) continue;
    const size_t i = static_cast<size_t>(it - wanted.begin());
    (*values)[i] = value;
    (*found)[i] = true;
  }
  return OkStatus();
}

}  // namespace

Status ParseSequenceExampleParts(std::string_view serialized,
                                 const std::vector<std::string>& context_wanted,
                                 const std::vector<std::string>& lists_wanted,
                                 SequenceExampleParts* out) {
  out->context.assign(context_wanted.size(), {});
  out->context_found.assign(context_wanted.size(), false);
  out->lists.assign(lists_wanted.size(), {});
  out->lists_found.assign(lists_wanted.size(), false);
  Wire w(serialized);
  while (!w.done()) {
    uint32_t field, type;
    if (!w.Tag(&field, &type)) return Malformed("bad tag in the SequenceExample");
    if ((field != 1 && field != 2) || type != 2) {  // context = 1, feature_lists = 2
      if (!w.Skip(type)) return Malformed("bad field in the SequenceExample");
      continue;
    }
    std::string_view map;
    if (!w.Bytes(&map)) return Malformed("truncated context or feature_lists");
    if (field == 1)
      KILN_RETURN_IF_ERROR(
          ParseMapEntries(map, context_wanted, &out->context, &out->context_found));
    else
      KILN_RETURN_IF_ERROR(ParseMapEntries(map, lists_wanted, &out->lists, &out->lists_found));
  }
  return OkStatus();
}

Status ParseFeatureList(std::string_view list, std::vector<FeatureValues>* steps) {
  steps->clear();
  Wire w(list);
  while (!w.done()) {
    uint32_t field, type;
    if (!w.Tag(&field, &type)) return Malformed("bad tag in a FeatureList");
    if (field != 1 || type != 2) {  // FeatureList.feature
      if (!w.Skip(type)) return Malformed("bad field in a FeatureList");
      continue;
    }
    std::string_view feature;
    if (!w.Bytes(&feature)) return Malformed("truncated Feature in a FeatureList");
    steps->emplace_back();
    KILN_RETURN_IF_ERROR(ParseFeature(feature, &steps->back()));
  }
  return OkStatus();
}

Status ParseExampleFeatures(std::string_view serialized, const std::vector<std::string>& wanted,
                            std::vector<FeatureValues>* values, std::vector<bool>* found,
                            size_t* bad_feature) {
  if (bad_feature != nullptr) *bad_feature = wanted.size();
  values->assign(wanted.size(), FeatureValues());
  found->assign(wanted.size(), false);
  std::vector<std::string_view> raw(wanted.size());
  std::vector<bool> raw_found(wanted.size(), false);
  Wire example(serialized);
  while (!example.done()) {
    uint32_t field, type;
    if (!example.Tag(&field, &type)) return Malformed("bad tag in the Example");
    if (field != 1 || type != 2) {  // Example.features
      if (!example.Skip(type)) return Malformed("bad field in the Example");
      continue;
    }
    std::string_view features;
    if (!example.Bytes(&features)) return Malformed("truncated features");
    KILN_RETURN_IF_ERROR(ParseMapEntries(features, wanted, &raw, &raw_found));
  }
  for (size_t i = 0; i < wanted.size(); ++i) {
    if (!raw_found[i]) continue;
    if (Status s = ParseFeature(raw[i], &(*values)[i]); !s.ok()) {
      if (bad_feature != nullptr) *bad_feature = i;
      return s;
    }
    (*found)[i] = true;
  }
  return OkStatus();
}

}  // namespace kiln::exec
