// libFuzzer target: KServe V2 REST infer bodies with the binary tensor extension. The first
// 4 bytes pick the Inference-Header-Content-Length (or none); the rest is the body.
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string_view>

#include "kiln/serve/v2_codec.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 4) return 0;
  uint32_t n;
  std::memcpy(&n, data, 4);
  std::string_view body(reinterpret_cast<const char*>(data) + 4, size - 4);
  const int64_t json_length = n == 0xffffffffu ? -1 : static_cast<int64_t>(n % (body.size() + 1));
  kiln::serve::RequestLimits limits;
  limits.max_tensor_bytes = 1 << 20;
  auto req = kiln::serve::DecodeV2RestRequest(body, json_length, limits);
  if (!req.ok()) return 0;
  std::vector<std::pair<std::string, kiln::Tensor>> outs(req->inputs.begin(), req->inputs.end());
  (void)kiln::serve::EncodeV2RestResponse("m", "1", req->id, outs, *req);
  return 0;
}
