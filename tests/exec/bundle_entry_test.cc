// The protobuf-free reader of a bundle index's header and entries (bundle/bundle_entry.h),
// checked against protobuf's own parser: on real messages, on every truncation of them, and on
// random byte changes, both parsers must agree on what they accept and on every field read.
#include "bundle/bundle_entry.h"

#include <doctest/doctest.h>

#include <random>

#include "tensorflow/saved_model.pb.h"

namespace kiln::exec {
namespace {

tensorflow::BundleEntryProto SampleEntry() {
  tensorflow::BundleEntryProto e;
  e.set_dtype(tensorflow::DT_FLOAT);
  e.mutable_shape()->add_dim()->set_size(784);
  e.mutable_shape()->add_dim()->set_size(128);
  e.mutable_shape()->mutable_dim(1)->set_name("units");
  e.set_shard_id(2);
  e.set_offset(123456789012LL);
  e.set_size(401408);
  e.set_crc32c(0xdeadbeef);
  return e;
}

// Whether our reading of `bytes` matches protobuf's: both refuse, or both accept with the same
// fields (a shape protobuf reads that our shape rules refuse, such as a dim below -1, counts as
// agreeing when ours refuses).
void CheckEntryAgrees(const std::string& bytes) {
  tensorflow::BundleEntryProto proto;
  const bool proto_ok = proto.ParseFromString(bytes);
  auto ours = ParseBundleEntry(bytes);
  if (!proto_ok) return;  // protobuf also checks things we skip (UTF-8 of dim names)
  if (!ours.ok()) {
    bool bad_shape = proto.shape().unknown_rank() && proto.shape().dim_size() > 0;
    for (const auto& d : proto.shape().dim()) bad_shape |= d.size() < -1;
    CHECK_MESSAGE(bad_shape, ours.status().ToString());
    return;
  }
  CHECK(ours->dtype == proto.dtype());
  CHECK(ours->shard_id == proto.shard_id());
  CHECK(ours->offset == proto.offset());
  CHECK(ours->size == proto.size());
  CHECK(ours->crc32c == proto.crc32c());
  CHECK(ours->num_slices == proto.slices_size());
  CHECK(ours->shape.unknown_rank() == proto.shape().unknown_rank());
  if (!ours->shape.unknown_rank()) {
    REQUIRE(ours->shape.rank() == proto.shape().dim_size());
    for (int i = 0; i < proto.shape().dim_size(); ++i)
      CHECK(ours->shape.dim(i) == proto.shape().dim(i).size());
  }
}

TEST_CASE("bundle entries parse as protobuf parses them") {
  const std::string bytes = SampleEntry().SerializeAsString();
  auto e = ParseBundleEntry(bytes);
  REQUIRE(e.ok());
  CHECK(e->dtype == 1);
  CHECK(e->shape == PartialShape({784, 128}));
  CHECK(e->shard_id == 2);
  CHECK(e->offset == 123456789012LL);
  CHECK(e->size == 401408);
  CHECK(e->crc32c == 0xdeadbeef);
  // No shape field: a scalar.
  auto scalar = ParseBundleEntry("");
  REQUIRE(scalar.ok());
  CHECK(scalar->shape == PartialShape::Scalar());
  // Every truncation either parses as protobuf parses it or is refused by both.
  for (size_t n = 0; n <= bytes.size(); ++n) CheckEntryAgrees(bytes.substr(0, n));
  // Random byte changes.
  std::mt19937 rng(12);
  for (int trial = 0; trial < 20000; ++trial) {
    std::string m = bytes;
    const int edits = 1 + static_cast<int>(rng() % 3);
    for (int k = 0; k < edits; ++k) m[rng() % m.size()] = static_cast<char>(rng() & 0xff);
    CheckEntryAgrees(m);
  }
  // A sliced (partitioned) entry is counted, and unknown fields are skipped.
  tensorflow::BundleEntryProto sliced = SampleEntry();
  sliced.add_slices()->add_extent()->set_start(0);
  std::string with_unknown = sliced.SerializeAsString();
  with_unknown += std::string("\xa8\x06\x05", 3);  // field 101, varint 5
  auto s = ParseBundleEntry(with_unknown);
  REQUIRE(s.ok());
  CHECK(s->num_slices == 1);
  CHECK_FALSE(ParseBundleEntry(std::string("\x0a\xff", 2)).ok());  // a length past the end
}

TEST_CASE("bundle headers parse as protobuf parses them") {
  tensorflow::BundleHeaderProto h;
  h.set_num_shards(3);
  h.set_endianness(tensorflow::BundleHeaderProto::BIG);
  h.mutable_version()->set_producer(1);
  h.mutable_version()->set_min_consumer(0);
  h.mutable_version()->add_bad_consumers(4);
  h.mutable_version()->add_bad_consumers(-2);
  const std::string bytes = h.SerializeAsString();
  auto ours = ParseBundleHeader(bytes);
  REQUIRE(ours.ok());
  CHECK(ours->num_shards == 3);
  CHECK(ours->big_endian);
  CHECK(ours->producer == 1);
  CHECK(ours->bad_consumers == std::vector<int32_t>{4, -2});
  std::mt19937 rng(3);
  for (int trial = 0; trial < 20000; ++trial) {
    std::string m = bytes.substr(0, rng() % (bytes.size() + 1));
    if (!m.empty()) m[rng() % m.size()] = static_cast<char>(rng() & 0xff);
    tensorflow::BundleHeaderProto p;
    const bool proto_ok = p.ParseFromString(m);
    auto o = ParseBundleHeader(m);
    CHECK_MESSAGE(proto_ok == o.ok(), "trial ", trial);
    if (!proto_ok || !o.ok()) continue;
    CHECK(o->num_shards == p.num_shards());
    CHECK(o->big_endian == (p.endianness() == tensorflow::BundleHeaderProto::BIG));
    CHECK(o->producer == p.version().producer());
    CHECK(o->min_consumer == p.version().min_consumer());
    CHECK(o->bad_consumers == std::vector<int32_t>(p.version().bad_consumers().begin(),
                                                   p.version().bad_consumers().end()));
  }
}

}  // namespace
}  // namespace kiln::exec
