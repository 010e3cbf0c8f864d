// libFuzzer target: saved_model.pb bytes through parsing, structural validation, the loader and
// every signature's and function's prepare (import, inlining, pruning, each op's Prepare). No
// file is read or written: variables have no checkpoint here and stay uninitialised.
#include <google/protobuf/stubs/logging.h>

#include <cstddef>
#include <cstdint>
#include <string_view>

#include "kiln/exec/saved_model.h"
#include "tensorflow/saved_model.pb.h"

// protobuf logs every proto3 string with invalid UTF-8 it parses; that is noise here (the
// parse fails or the field is kept) and slows every execution down.
extern "C" int LLVMFuzzerInitialize(int*, char***) {
  google::protobuf::SetLogHandler(nullptr);
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view bytes(reinterpret_cast<const char*>(data), size);
  auto proto = kiln::exec::ParseSavedModelProto(bytes);
  if (!proto.ok()) return 0;
  auto model =
      kiln::exec::SavedModel::LoadFromProto(std::move(proto).value(), "/nonexistent/kiln-fuzz");
  (void)model.ok();
  return 0;
}
