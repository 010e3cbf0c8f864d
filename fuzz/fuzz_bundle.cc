// libFuzzer target: tensor-bundle index (SSTable of BundleEntryProto) and data from memory.
// Layout of an input: 4-byte little-endian index length, the index, then the data shard(s);
// the data is cut into as many shards as the header asks for (when it asks for few). Each
// layout is read with checksums verified and skipped (skipped, mutated data still reaches the
// aliasing and copying paths), and every byte of a numeric result is touched, so a view that
// runs past its shard shows up under ASan.
#include <google/protobuf/stubs/logging.h>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "kiln/exec/tensor_bundle.h"

// protobuf logs every proto3 string with invalid UTF-8 it parses; that is noise here (the
// parse fails or the field is kept) and slows every execution down.
extern "C" int LLVMFuzzerInitialize(int*, char***) {
  google::protobuf::SetLogHandler(nullptr);
  return 0;
}

namespace {

// Reads every byte of a tensor's storage.
void Touch(const kiln::Tensor& t) {
  const auto* p = static_cast<const volatile unsigned char*>(t.raw_data());
  unsigned char acc = 0;
  for (size_t i = 0; i < t.ByteSize(); ++i) acc ^= p[i];
  (void)acc;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 4) return 0;
  uint32_t n;
  std::memcpy(&n, data, 4);
  const char* p = reinterpret_cast<const char*>(data) + 4;
  size -= 4;
  const size_t index_len = n % (size + 1);
  std::string_view index(p, index_len);
  std::string_view rest(p + index_len, size - index_len);
  for (int shards = 1; shards <= 2; ++shards) {
    std::vector<std::string> parts;
    for (int s = 0; s < shards; ++s) {
      size_t b = rest.size() * s / shards, e = rest.size() * (s + 1) / shards;
      parts.emplace_back(rest.substr(b, e - b));
    }
    for (bool verify : {true, false}) {
      kiln::exec::BundleReadOptions options;
      options.verify_checksums = verify;
      auto reader = kiln::exec::BundleReader::OpenFromMemory(index, parts, "<fuzz>", options);
      if (!reader.ok()) break;
      for (const auto& key : (*reader)->Keys()) {
        auto t = (*reader)->Read(key);
        if (t.ok() && kiln::DTypeIsPod(t->dtype())) Touch(*t);
      }
    }
  }
  return 0;
}
