// libFuzzer target: TF Serving REST :predict bodies (RestPredictDecoder) for a signature with
// float, int64, string and bool inputs, then the response encoder on what was decoded.
#include <cstddef>
#include <cstdint>
#include <string_view>
#include <vector>

#include "kiln/serve/rest_predict.h"

namespace {
std::vector<kiln::exec::SignatureArg> Args(bool single) {
  using kiln::DType;
  using kiln::PartialShape;
  std::vector<kiln::exec::SignatureArg> args;
  args.push_back({"x", "x:0", {DType::kFloat, PartialShape({-1, 3})}});
  if (single) return args;
  args.push_back({"ids", "ids:0", {DType::kInt64, PartialShape({-1})}});
  args.push_back({"s_bytes", "s:0", {DType::kString, PartialShape::UnknownRank()}});
  args.push_back({"flag", "flag:0", {DType::kBool, PartialShape({-1})}});
  return args;
}
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const auto kSingle = Args(true);
  static const auto kMulti = Args(false);
  std::string_view body(reinterpret_cast<const char*>(data), size);
  kiln::serve::RequestLimits limits;
  limits.max_tensor_bytes = 1 << 20;
  kiln::serve::RestPredictDecoder decoder(limits);
  if (!decoder.Parse(body).ok()) return 0;
  for (const auto* args : {&kSingle, &kMulti}) {
    auto req = decoder.Decode("serving_default", *args);
    if (!req.ok()) continue;
    (void)kiln::serve::EncodeRestPredictResponse(req->inputs, req->format);
  }
  return 0;
}
