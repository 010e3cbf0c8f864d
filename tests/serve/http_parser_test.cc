// The HTTP/1.1 request parser and body decoding of kiln's HTTP server: requests whole and a
// byte at a time give the same result, pipelined bytes stay for the next request, every limit
// and every ambiguous framing of RFC 9112 is refused with its status, and compressed bodies
// are bounded while they inflate.
#include <doctest/doctest.h>
#include <zlib.h>

#include <string>

#include "http/content_coding.h"
#include "http/request_parser.h"

namespace kiln::serve::http {
namespace {

using Step = RequestParser::Step;

struct Outcome {
  Step step;
  ParsedRequest request;
  HttpError error;
  std::string rest;  // bytes left for the next request
};

// Feeds `data` in pieces of `piece` bytes (0: at once) until the parser finishes or fails.
Outcome ParseAll(const std::string& data, size_t piece = 0, HttpLimits limits = {}) {
  RequestParser p(limits);
  std::string in;
  size_t fed = 0;
  Step step = Step::kNeedMore;
  while (true) {
    step = p.Parse(&in);
    while (step == Step::kHeadersDone) step = p.Parse(&in);
    if (step == Step::kComplete || step == Step::kError || fed == data.size()) break;
    const size_t n = piece == 0 ? data.size() - fed : std::min(piece, data.size() - fed);
    in.append(data, fed, n);
    fed += n;
  }
  Outcome o{step, {}, p.error(), in + data.substr(fed)};
  if (step == Step::kComplete) o.request = p.TakeRequest();
  return o;
}

std::string Post(const std::string& body, const std::string& extra = "") {
  return "POST /v1/models/m:predict?x=1 HTTP/1.1\r\nHost: h\r\nContent-Length: " +
         std::to_string(body.size()) + "\r\n" + extra + "\r\n" + body;
}

TEST_CASE("a request parses the same whole and a byte at a time") {
  const std::string data = Post("{\"a\": 1}", "X-Thing:  v a l \r\n") + "GET / HTTP/1.1\r\n";
  for (size_t piece : {size_t{0}, size_t{1}, size_t{7}}) {
    CAPTURE(piece);
    Outcome o = ParseAll(data, piece);
    REQUIRE(o.step == Step::kComplete);
    CHECK(o.request.method == "POST");
    CHECK(o.request.path == "/v1/models/m:predict");
    CHECK(o.request.target == "/v1/models/m:predict?x=1");
    CHECK(o.request.body == "{\"a\": 1}");
    CHECK(o.request.keep_alive);
    REQUIRE(o.request.Find("x-thing") != nullptr);
    CHECK(*o.request.Find("x-thing") == "v a l");
    CHECK(o.rest == "GET / HTTP/1.1\r\n");  // the pipelined request's start stays
  }
}

TEST_CASE("leading empty lines, bare LF, HTTP/1.0 and absolute-form targets") {
  Outcome o = ParseAll("\r\n\nGET http://h:8501/v1/models/m%20x HTTP/1.0\nX: 1\n\n");
  REQUIRE(o.step == Step::kComplete);
  CHECK(o.request.path == "/v1/models/m x");
  CHECK(o.request.minor_version == 0);
  CHECK_FALSE(o.request.keep_alive);
  o = ParseAll("GET / HTTP/1.1\r\nHost: h\r\nConnection: close\r\n\r\n");
  CHECK_FALSE(o.request.keep_alive);
  o = ParseAll("GET /v2/models/a%2Finfer%2f%41 HTTP/1.1\r\nHost: h\r\n\r\n");
  CHECK(o.request.path == "/v2/models/a%2Finfer%2fA");  // an encoded '/' is no separator
}

TEST_CASE("chunked bodies, with extensions and trailers, in any pieces") {
  const std::string data =
      "POST /p HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n"
      "3;ext=1\r\nabc\r\nA\r\n0123456789\r\n0\r\nTrailer: x\r\n\r\nNEXT";
  for (size_t piece : {size_t{0}, size_t{1}, size_t{5}}) {
    CAPTURE(piece);
    Outcome o = ParseAll(data, piece);
    REQUIRE(o.step == Step::kComplete);
    CHECK(o.request.body == "abc0123456789");
    CHECK(o.rest == "NEXT");
  }
}

TEST_CASE("ambiguous framing is refused with its status") {
  struct Case {
    const char* name;
    std::string data;
    int status;
  };
  const std::string head = "POST / HTTP/1.1\r\nHost: h\r\n";
  const Case cases[] = {
      {"conflicting lengths", head + "Content-Length: 1\r\nContent-Length: 2\r\n\r\nab", 400},
      {"length list", head + "Content-Length: 2, 3\r\n\r\nab", 400},
      {"signed length", head + "Content-Length: +2\r\n\r\nab", 400},
      {"hex length", head + "Content-Length: 0x2\r\n\r\nab", 400},
      {"TE with CL", head + "Transfer-Encoding: chunked\r\nContent-Length: 2\r\n\r\n", 400},
      {"gzip, chunked", head + "Transfer-Encoding: gzip, chunked\r\n\r\n", 501},
      {"chunked, gzip", head + "Transfer-Encoding: chunked, gzip\r\n\r\n", 400},
      {"TE in HTTP/1.0", "POST / HTTP/1.0\r\nTransfer-Encoding: chunked\r\n\r\n", 400},
      {"no Host", "GET / HTTP/1.1\r\n\r\n", 400},
      {"two Hosts", "GET / HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n", 400},
      {"obs-fold", head + "X: a\r\n b\r\n\r\n", 400},
      {"space before colon", head + "X : a\r\n\r\n", 400},
      {"no colon", head + "X\r\n\r\n", 400},
      {"control in value", head + "X: a\x01z\r\n\r\n", 400},
      {"bad method", "G(T / HTTP/1.1\r\nHost: h\r\n\r\n", 400},
      {"extra space", "GET  / HTTP/1.1\r\nHost: h\r\n\r\n", 400},
      {"HTTP/2.0", "GET / HTTP/2.0\r\nHost: h\r\n\r\n", 505},
      {"garbage version", "GET / HTTX/1.1\r\nHost: h\r\n\r\n", 400},
      {"bad chunk size", head + "Transfer-Encoding: chunked\r\n\r\nzz\r\n", 400},
      {"chunk longer than its size",
       head + "Transfer-Encoding: chunked\r\n\r\n2\r\nabc\r\n0\r\n\r\n", 400},
      {"unknown expectation", head + "Expect: magic\r\n\r\n", 417},
  };
  for (const Case& c : cases) {
    CAPTURE(c.name);
    Outcome o = ParseAll(c.data);
    CHECK(o.step == Step::kError);
    CHECK(o.error.status == c.status);
    CHECK_FALSE(o.error.message.empty());
  }
}

TEST_CASE("limits: request line, header section, header count, body however framed") {
  HttpLimits limits;
  limits.max_request_line_bytes = 64;
  limits.max_header_bytes = 256;
  limits.max_headers = 5;
  limits.max_body_bytes = 100;
  // Refused as soon as the limit is passed, without waiting for the end of the line.
  CHECK(ParseAll("GET /" + std::string(100, 'a'), 0, limits).error.status == 414);
  CHECK(ParseAll("GET /" + std::string(100, 'a') + " HTTP/1.1\r\n", 0, limits).error.status == 414);
  CHECK(ParseAll("GET / HTTP/1.1\r\nX: " + std::string(1000, 'a'), 1, limits).error.status == 431);
  std::string many = "GET / HTTP/1.1\r\nHost: h\r\n";
  for (int i = 0; i < 6; ++i) many += "X: 1\r\n";
  CHECK(ParseAll(many + "\r\n", 0, limits).error.status == 431);
  const std::string head = "POST / HTTP/1.1\r\nHost: h\r\n";
  CHECK(ParseAll(head + "Content-Length: 101\r\n\r\n", 0, limits).error.status == 413);
  CHECK(ParseAll(head + "Content-Length: 99999999999999999999\r\n\r\n", 0, limits).error.status ==
        400);
  std::string chunked = head + "Transfer-Encoding: chunked\r\n\r\n";
  for (int i = 0; i < 20; ++i) chunked += "A\r\n0123456789\r\n";
  CHECK(ParseAll(chunked, 3, limits).error.status == 413);
  CHECK(ParseAll(head + "Transfer-Encoding: chunked\r\n\r\nFFFFFFFFFFFFFFFFFF\r\n", 0, limits)
            .error.status == 400);
  std::string trailers = head + "Transfer-Encoding: chunked\r\n\r\n0\r\n";
  for (int i = 0; i < 10; ++i) trailers += "T: 1\r\n";
  CHECK(ParseAll(trailers + "\r\n", 0, limits).error.status == 431);
}

TEST_CASE("a parser is reused for the next request after Reset") {
  RequestParser p(HttpLimits{});
  std::string in = Post("ab") + Post("cd");
  REQUIRE(p.Parse(&in) == Step::kHeadersDone);
  REQUIRE(p.Parse(&in) == Step::kComplete);
  CHECK(p.TakeRequest().body == "ab");
  p.Reset();
  CHECK_FALSE(p.started());
  REQUIRE(p.Parse(&in) == Step::kHeadersDone);
  REQUIRE(p.Parse(&in) == Step::kComplete);
  CHECK(p.TakeRequest().body == "cd");
  CHECK(in.empty());
}

std::string Compress(const std::string& data, int window_bits) {
  z_stream z{};
  REQUIRE(deflateInit2(&z, 6, Z_DEFLATED, window_bits, 8, Z_DEFAULT_STRATEGY) == Z_OK);
  std::string out(deflateBound(&z, data.size()) + 32, '\0');
  z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(data.data()));
  z.avail_in = static_cast<uInt>(data.size());
  z.next_out = reinterpret_cast<Bytef*>(out.data());
  z.avail_out = static_cast<uInt>(out.size());
  REQUIRE(deflate(&z, Z_FINISH) == Z_STREAM_END);
  out.resize(z.total_out);
  deflateEnd(&z);
  return out;
}

TEST_CASE("Content-Encoding: gzip and deflate decode, bounded while they inflate") {
  const std::string text(5000, 'x');
  HttpError error;
  for (int bits : {16 + MAX_WBITS, MAX_WBITS, -MAX_WBITS}) {
    CAPTURE(bits);
    std::string body = Compress(text, bits);
    REQUIRE(DecodeContent(bits > 16 ? "gzip" : "deflate", &body, 10000, &error));
    CHECK(body == text);
  }
  std::string bomb = Compress(std::string(10 << 20, '0'), 16 + MAX_WBITS);
  CHECK(bomb.size() < 20000);
  CHECK_FALSE(DecodeContent("gzip", &bomb, 1 << 20, &error));
  CHECK(error.status == 413);
  std::string corrupt = "not gzip at all";
  CHECK_FALSE(DecodeContent("gzip", &corrupt, 1 << 20, &error));
  CHECK(error.status == 400);
  std::string truncated = Compress(text, 16 + MAX_WBITS).substr(0, 20);
  CHECK_FALSE(DecodeContent("gzip", &truncated, 1 << 20, &error));
  CHECK(error.status == 400);
  std::string br = "x";
  CHECK_FALSE(DecodeContent("br", &br, 100, &error));
  CHECK(error.status == 415);
  std::string plain = "as is";
  CHECK(DecodeContent("identity", &plain, 100, &error));
  CHECK(plain == "as is");
}

}  // namespace
}  // namespace kiln::serve::http
