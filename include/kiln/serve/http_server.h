// kiln's HTTP/1.1 server, built for hostile networks: one epoll thread moves bytes for every
// connection and a fixed pool of workers runs the handler, so a slow client costs a buffer,
// never a thread. Everything a client can make it hold is bounded: the request line, header
// count and size, the body however it is framed (Content-Length, chunked, and after gzip or
// deflate decoding), the bytes buffered across all connections, the connections, the requests
// waiting for a worker; and every phase has a timeout (idle keep-alive, the header from its
// first byte, the body, the response). Keep-alive and pipelining follow RFC 9112; framing
// errors are answered and the connection is closed. See docs/server.md, "HTTP limits".
#pragma once

#include <chrono>
#include <cstddef>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "kiln/core/status.h"

namespace kiln::serve {

struct HttpRequest {
  std::string_view method;  // "GET", "POST"
  std::string_view path;    // without the query string
  std::string_view body;    // decoded (de-chunked, decompressed)
  // Header lookup (case-insensitive in HTTP); empty when absent.
  std::function<std::string(std::string_view)> header;
  // When the whole request had arrived (time waiting for a worker counts against deadlines);
  // default-constructed: now.
  std::chrono::steady_clock::time_point received{};
};

struct HttpReply {
  int status = 200;
  std::string content_type = "application/json";
  std::string body;
  std::vector<std::pair<std::string, std::string>> headers;
};

struct HttpServerOptions {
  std::string address = "0.0.0.0";
  int port = 0;  // 0: a free port (HttpServer::port() says which)
  int num_workers = 16;
  int backlog = 1024;
  int max_connections = 4096;   // more are answered 503 and closed
  int max_queued_requests = 0;  // waiting for a worker (0: max_connections); 429 above
  size_t max_request_line_bytes = 8 << 10;
  size_t max_header_bytes = 64 << 10;
  int max_headers = 100;
  size_t max_body_bytes = 64 << 20;
  size_t max_buffered_bytes = size_t{1} << 30;  // request bytes held across all connections
  int idle_timeout_ms = 30000;                  // a keep-alive connection between requests
  int header_timeout_ms = 10000;  // from a request's first byte to the end of its header
  int body_timeout_ms = 30000;    // from the end of the header to the end of the body
  int write_timeout_ms = 30000;   // sending one response
};

class HttpServer {
 public:
  using Handler = std::function<HttpReply(const HttpRequest&)>;

  // Listens on options.address:port and starts the I/O thread and the workers.
  static Result<std::unique_ptr<HttpServer>> Start(Handler handler,
                                                   const HttpServerOptions& options);
  ~HttpServer();
  HttpServer(const HttpServer&) = delete;
  HttpServer& operator=(const HttpServer&) = delete;

  int port() const;
  // Stops accepting and closes idle connections at once; requests being handled finish and
  // are answered (with Connection: close) until `grace` has passed, then every connection is
  // closed. Returns when the threads have stopped.
  void Shutdown(std::chrono::milliseconds grace);

 private:
  HttpServer();
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// The reason phrase of an HTTP status code ("Not Found").
std::string_view HttpReason(int status);

}  // namespace kiln::serve
