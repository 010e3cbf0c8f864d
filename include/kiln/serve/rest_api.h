// The REST API of savedmodel-server, independent of the HTTP library: TensorFlow Serving's
// /v1 paths, KServe V2's /v2 paths and the Prometheus metrics, from (method, path, headers,
// body) to (status, headers, body). The HTTP front end only moves bytes.
#pragma once

#include <functional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "kiln/serve/http_server.h"
#include "kiln/serve/server_core.h"

namespace kiln::serve {

class RestApi {
 public:
  explicit RestApi(ServerCore* core) : core_(core) {}
  HttpReply Handle(const HttpRequest& request) const;

 private:
  HttpReply HandleV1(const HttpRequest& request, std::string_view rest) const;
  HttpReply HandleV2(const HttpRequest& request, std::string_view rest) const;
  ServerCore* core_;
};

}  // namespace kiln::serve
