#include "http_frontend.h"

#include <httplib.h>

#include <thread>

#include "kiln/serve/log.h"
#include "kiln/serve/rest_predict.h"

namespace kiln::serve {

struct HttpFrontend::Impl {
  httplib::Server server;
  std::thread thread;
  int port = 0;
};

HttpFrontend::HttpFrontend() : impl_(std::make_unique<Impl>()) {}
HttpFrontend::~HttpFrontend() { Shutdown(); }

Result<std::unique_ptr<HttpFrontend>> HttpFrontend::Start(const RestApi* api,
                                                          const HttpOptions& options) {
  std::unique_ptr<HttpFrontend> f(new HttpFrontend());
  httplib::Server& svr = f->impl_->server;
  const int threads = options.num_threads;
  svr.new_task_queue = [threads] { return new httplib::ThreadPool(threads); };
  const time_t secs = options.timeout_ms / 1000;
  const time_t usecs = static_cast<time_t>(options.timeout_ms % 1000) * 1000;
  svr.set_read_timeout(secs, usecs);
  svr.set_write_timeout(secs, usecs);
  svr.set_keep_alive_timeout(std::max<time_t>(1, std::min<time_t>(secs, 5)));
  svr.set_payload_max_length(options.max_body_bytes);
  svr.set_tcp_nodelay(true);  // headers and body go out in two writes: no Nagle delay
  const bool log = options.log_requests;
  auto handler = [api, log](const httplib::Request& req, httplib::Response& res) {
    HttpRequest r;
    r.method = req.method;
    r.path = req.path;
    r.body = req.body;
    r.header = [&req](std::string_view name) { return req.get_header_value(std::string(name)); };
    HttpReply reply = api->Handle(r);
    res.status = reply.status;
    for (auto& [k, v] : reply.headers) res.set_header(k, v);
    res.set_content(reply.body, reply.content_type.c_str());
    if (log)
      LogEvent(
          "info", "http_request",
          {{"method", req.method}, {"path", req.path}, {"status", std::to_string(res.status)}});
  };
  svr.Get(".*", handler);
  svr.Post(".*", handler);
  // httplib answers 413 (body over the limit), 400 (bad request line) and 404 itself; say why.
  svr.set_error_handler([](const httplib::Request&, httplib::Response& res) {
    if (!res.body.empty()) return;
    std::string why = res.status == 413 ? "request body exceeds the configured limit"
                                        : "HTTP error " + std::to_string(res.status);
    res.set_content(RestErrorBody(why), "application/json");
  });
  if (options.port == 0) {
    f->impl_->port = svr.bind_to_any_port(options.address);
  } else if (svr.bind_to_port(options.address, options.port)) {
    f->impl_->port = options.port;
  }
  if (f->impl_->port <= 0)
    return Unavailable("cannot listen for HTTP on ", options.address, ":", options.port);
  Impl* impl = f->impl_.get();
  impl->thread = std::thread([impl] { impl->server.listen_after_bind(); });
  return f;
}

int HttpFrontend::port() const { return impl_->port; }

void HttpFrontend::Shutdown() {
  if (!impl_->thread.joinable()) return;
  impl_->server.stop();
  impl_->thread.join();
}

}  // namespace kiln::serve
