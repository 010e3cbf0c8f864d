// An incremental HTTP/1.1 request parser (RFC 9112) for a server on a hostile network: it
// consumes bytes as they arrive, never holds more than the limits allow (request line, header
// count and size, body size however it is framed), and refuses the framing that lets a
// request be read two ways (conflicting or signed Content-Length, Transfer-Encoding with
// Content-Length, a transfer coding other than chunked, malformed chunks, HTTP/1.1 without
// Host). Every refusal carries the status to answer; the connection is closed after it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace kiln::serve::http {

struct HttpLimits {
  size_t max_request_line_bytes = 8 << 10;  // 414 above
  size_t max_header_bytes = 64 << 10;       // the whole header section, and the trailers; 431
  int max_headers = 100;                    // fields in the header section; 431
  size_t max_body_bytes = 64 << 20;         // after de-chunking and decompression; 413
};

struct ParsedRequest {
  std::string method;
  std::string target;  // as sent
  std::string path;    // target without the query, percent-decoded
  int minor_version = 1;
  std::vector<std::pair<std::string, std::string>> headers;  // names lower-case
  std::string body;                                          // de-chunked, still encoded
  bool keep_alive = true;
  bool expect_continue = false;
  // The value of the last field named `lower_name`; nullptr when absent.
  const std::string* Find(std::string_view lower_name) const;
};

struct HttpError {
  int status = 400;
  std::string message;
};

class RequestParser {
 public:
  enum class Step {
    kNeedMore,     // waiting for bytes
    kHeadersDone,  // the header section was accepted; the body follows (returned once)
    kComplete,     // request() is whole
    kError,        // error() says why; answer it and close
  };

  explicit RequestParser(HttpLimits limits) : limits_(limits) {}

  // Parses the bytes at the front of *in and erases what it consumed; bytes of a following
  // (pipelined) request stay in *in. Call again with more bytes after kNeedMore/kHeadersDone.
  Step Parse(std::string* in);

  // Whether any byte of a request has arrived (leading empty lines do not count).
  bool started() const { return state_ != State::kStart; }
  bool in_body() const { return state_ >= State::kBody; }
  // The declared Content-Length, or -1 for a chunked body (valid after kHeadersDone).
  int64_t content_length() const { return content_length_; }
  const ParsedRequest& request() const { return request_; }
  ParsedRequest TakeRequest();
  const HttpError& error() const { return error_; }
  // Makes the parser ready for the next request on the connection.
  void Reset();

 private:
  enum class State { kStart, kHead, kBody, kChunkSize, kChunkData, kChunkEnd, kTrailers, kDone };
  Step Fail(int status, std::string message);
  Step ParseHead(std::string* in);
  Step ParseHeadSection(std::string_view head);
  Step ParseChunked(std::string* in);

  HttpLimits limits_;
  State state_ = State::kStart;
  size_t scan_from_ = 0;  // where the search for the header end resumes
  int64_t content_length_ = 0;
  uint64_t chunk_left_ = 0;
  size_t trailer_bytes_ = 0;
  int trailer_count_ = 0;
  ParsedRequest request_;
  HttpError error_;
};

}  // namespace kiln::serve::http
