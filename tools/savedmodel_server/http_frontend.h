// REST front end on cpp-httplib: a fixed thread pool, a body size limit, read/write timeouts
// (slow clients are dropped), and every request handed to RestApi.
#pragma once

#include <memory>
#include <string>

#include "kiln/core/status.h"
#include "kiln/serve/rest_api.h"

namespace kiln::serve {

struct HttpOptions {
  std::string address = "0.0.0.0";
  int port = 8501;
  int num_threads = 16;
  int timeout_ms = 30000;            // reading or writing one request
  size_t max_body_bytes = 64 << 20;  // larger bodies are answered 413
  bool log_requests = false;
};

class HttpFrontend {
 public:
  static Result<std::unique_ptr<HttpFrontend>> Start(const RestApi* api,
                                                     const HttpOptions& options);
  ~HttpFrontend();
  int port() const;
  // Stops accepting, lets the requests in flight finish, joins the threads.
  void Shutdown();

 private:
  HttpFrontend();
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace kiln::serve
