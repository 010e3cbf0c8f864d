// libFuzzer target: the HTTP server's request parser (libserve/http) fed the input whole and
// in pieces of a size taken from the first byte, every pipelined request in turn; both ways
// must agree, and a complete request's body goes through Content-Encoding decoding.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <vector>

#include "http/content_coding.h"
#include "http/request_parser.h"

namespace {

using kiln::serve::http::RequestParser;

// The (status or 0, body) of each request the bytes hold, fed `piece` bytes at a time.
std::vector<std::pair<int, std::string>> ParseStream(std::string_view data, size_t piece) {
  kiln::serve::http::HttpLimits limits;
  limits.max_request_line_bytes = 256;
  limits.max_header_bytes = 1024;
  limits.max_headers = 16;
  limits.max_body_bytes = 4096;
  RequestParser parser(limits);
  std::vector<std::pair<int, std::string>> out;
  std::string in;
  size_t fed = 0;
  while (true) {
    RequestParser::Step step = parser.Parse(&in);
    while (step == RequestParser::Step::kHeadersDone) step = parser.Parse(&in);
    if (step == RequestParser::Step::kError) {
      out.emplace_back(parser.error().status, "");
      return out;
    }
    if (step == RequestParser::Step::kComplete) {
      kiln::serve::http::ParsedRequest r = parser.TakeRequest();
      kiln::serve::http::HttpError error;
      if (const std::string* coding = r.Find("content-encoding"))
        (void)kiln::serve::http::DecodeContent(*coding, &r.body, 1 << 16, &error);
      out.emplace_back(0, r.body);
      parser.Reset();
      continue;
    }
    if (fed == data.size()) return out;
    const size_t n = std::min(piece, data.size() - fed);
    in.append(data.substr(fed, n));
    fed += n;
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const size_t piece = 1 + data[0] % 16;
  std::string_view bytes(reinterpret_cast<const char*>(data) + 1, size - 1);
  if (ParseStream(bytes, bytes.size() + 1) != ParseStream(bytes, piece)) std::abort();
  return 0;
}
