// One I/O thread (epoll, level-triggered) owns every connection; workers only run the handler
// and hand the reply back through a queue and an eventfd. A connection is in one phase at a
// time: reading a request, waiting for its worker, writing the reply, or lingering (after an
// error: our side is shut, the client's unread bytes are drained so the answer is not lost to
// a reset). One request per connection is handled at a time; pipelined bytes wait in the buffer
// and the socket is not read while a request is being handled, so a pipelining client is held
// back by TCP instead of by memory.
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <condition_variable>
#include <cstring>
#include <deque>
#include <mutex>
#include <thread>
#include <unordered_map>

#include "http/content_coding.h"
#include "http/request_parser.h"
#include "kiln/serve/http_server.h"
#include "kiln/serve/log.h"
#include "kiln/serve/rest_predict.h"

namespace kiln::serve {

using http::HttpError;
using http::ParsedRequest;
using http::RequestParser;
using Clock = std::chrono::steady_clock;

std::string_view HttpReason(int status) {
  switch (status) {
    case 100:
      return "Continue";
    case 200:
      return "OK";
    case 201:
      return "Created";
    case 204:
      return "No Content";
    case 400:
      return "Bad Request";
    case 403:
      return "Forbidden";
    case 404:
      return "Not Found";
    case 405:
      return "Method Not Allowed";
    case 408:
      return "Request Timeout";
    case 409:
      return "Conflict";
    case 411:
      return "Length Required";
    case 413:
      return "Content Too Large";
    case 414:
      return "URI Too Long";
    case 415:
      return "Unsupported Media Type";
    case 417:
      return "Expectation Failed";
    case 429:
      return "Too Many Requests";
    case 431:
      return "Request Header Fields Too Large";
    case 500:
      return "Internal Server Error";
    case 501:
      return "Not Implemented";
    case 503:
      return "Service Unavailable";
    case 504:
      return "Gateway Timeout";
    case 505:
      return "HTTP Version Not Supported";
    default:
      return "Unknown";
  }
}

namespace {

constexpr size_t kReadChunk = 64 << 10;
constexpr int kReadsPerEvent = 4;  // then other connections get a turn
constexpr auto kLinger = std::chrono::seconds(2);

enum class Phase { kRead, kWork, kWrite, kLinger };

struct Connection {
  int fd = -1;
  uint64_t id = 0;
  Phase phase = Phase::kRead;
  std::string in;  // received and not yet parsed
  RequestParser parser;
  bool started = false;  // the parser has seen a byte of the current request
  bool in_body = false;
  std::string head;  // the reply being written: head, then body
  std::string body;
  size_t written = 0;
  bool close_after = false;
  bool peer_eof = false;
  bool detached = false;  // removed from epoll while its worker runs (the peer hung up)
  Clock::time_point deadline = Clock::time_point::max();
  size_t charged = 0;  // bytes counted in Impl::buffered
  uint32_t events = 0;
  explicit Connection(const http::HttpLimits& limits) : parser(limits) {}
};

struct Job {
  int fd;
  uint64_t id;
  ParsedRequest request;
  Clock::time_point received;
};

struct Done {
  int fd;
  uint64_t id;
  HttpReply reply;
  bool head_only;
};

std::string ErrorJson(std::string_view message) { return RestErrorBody(message); }

}  // namespace

struct HttpServer::Impl {
  Handler handler;
  HttpServerOptions options;
  http::HttpLimits limits;
  int listen_fd = -1;
  int epoll_fd = -1;
  int wake_fd = -1;
  int port = 0;
  std::thread io;
  std::vector<std::thread> workers;

  // Shared with the workers.
  std::mutex mu;
  std::condition_variable cv;
  std::deque<Job> jobs;
  size_t in_flight = 0;  // requests queued or being handled by a worker
  std::deque<Done> done;
  bool workers_stop = false;

  // Shutdown request from another thread.
  std::atomic<bool> stop_requested{false};
  std::atomic<int64_t> grace_ms{0};

  // I/O thread only.
  std::unordered_map<int, std::unique_ptr<Connection>> conns;
  uint64_t next_id = 1;
  size_t buffered = 0;
  bool stopping = false;
  Clock::time_point stop_deadline;
  // Out of file descriptors, accept() fails at once while connections wait in the backlog, and
  // the level-triggered listener would wake the loop again at once: a busy loop. The listener
  // leaves epoll instead and comes back after a pause or when a connection closes (libevent
  // and nginx pause the same way); the waiting clients are accepted then.
  bool accept_paused = false;
  bool out_of_fds = false;  // logged once per episode, cleared by the next accept
  Clock::time_point accept_resume_at;

  ~Impl() {
    for (int fd : {listen_fd, epoll_fd, wake_fd})
      if (fd >= 0) close(fd);
  }

  void Wake() const {
    const uint64_t one = 1;
    [[maybe_unused]] ssize_t n = write(wake_fd, &one, sizeof one);
  }

  void SetEvents(Connection* c, uint32_t events) {
    if (c->detached || c->events == events) return;
    epoll_event ev{};
    ev.events = events;
    ev.data.fd = c->fd;
    epoll_ctl(epoll_fd, EPOLL_CTL_MOD, c->fd, &ev);
    c->events = events;
  }

  void Charge(Connection* c) {
    const size_t now = c->in.size() + c->parser.request().body.size();
    buffered = buffered - c->charged + now;
    c->charged = now;
  }

  void Close(int fd) {
    auto it = conns.find(fd);
    if (it == conns.end()) return;
    buffered -= it->second->charged;
    if (!it->second->detached) epoll_ctl(epoll_fd, EPOLL_CTL_DEL, fd, nullptr);
    close(fd);
    conns.erase(it);
    if (accept_paused) accept_resume_at = Clock::now();  // a descriptor is free again
  }

  void PauseAccepting(int error) {
    epoll_ctl(epoll_fd, EPOLL_CTL_DEL, listen_fd, nullptr);
    accept_paused = true;
    accept_resume_at = Clock::now() + std::chrono::milliseconds(100);
    if (out_of_fds) return;
    out_of_fds = true;
    LogEvent("warning", "http_accept_paused",
             {{"error", std::strerror(error)},
              {"open_connections", std::to_string(conns.size())},
              {"hint",
               "out of file descriptors: new connections wait until one closes; raise the "
               "open-file limit (ulimit -n) or lower --rest_api_max_connections"}});
  }

  void MaybeResumeAccepting(Clock::time_point now) {
    if (!accept_paused || stopping || now < accept_resume_at) return;
    epoll_event ev{};
    ev.events = EPOLLIN;
    ev.data.fd = listen_fd;
    if (epoll_ctl(epoll_fd, EPOLL_CTL_ADD, listen_fd, &ev) == 0) accept_paused = false;
  }

  void SetIdle(Connection* c) {
    c->started = c->in_body = false;
    c->deadline = Clock::now() + std::chrono::milliseconds(options.idle_timeout_ms);
  }

  // --- accepting ---
  void Accept() {
    while (true) {
      const int fd = accept4(listen_fd, nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
      if (fd < 0) {
        if (errno == EINTR) continue;
        if (errno == EMFILE || errno == ENFILE || errno == ENOBUFS || errno == ENOMEM)
          PauseAccepting(errno);
        return;  // EAGAIN: nothing more waiting
      }
      out_of_fds = false;
      if (static_cast<int>(conns.size()) >= options.max_connections) {
        static constexpr std::string_view kBusy =
            "HTTP/1.1 503 Service Unavailable\r\nContent-Type: application/json\r\n"
            "Content-Length: 56\r\nRetry-After: 1\r\nConnection: close\r\n\r\n"
            "{ \"error\": \"the server is at its connection limit\" }\n";
        [[maybe_unused]] ssize_t n = send(fd, kBusy.data(), kBusy.size(), MSG_NOSIGNAL);
        close(fd);
        continue;
      }
      const int one = 1;
      setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
      auto c = std::make_unique<Connection>(limits);
      c->fd = fd;
      c->id = next_id++;
      // A new connection must send its request header within the header timeout.
      c->deadline = Clock::now() + std::chrono::milliseconds(options.header_timeout_ms);
      epoll_event ev{};
      ev.events = EPOLLIN | EPOLLRDHUP;
      ev.data.fd = fd;
      c->events = ev.events;
      if (epoll_ctl(epoll_fd, EPOLL_CTL_ADD, fd, &ev) != 0) {
        close(fd);
        continue;
      }
      conns.emplace(fd, std::move(c));
    }
  }

  // --- reading ---
  void OnReadable(Connection* c) {
    char buf[kReadChunk];
    if (c->phase == Phase::kLinger) {
      while (true) {
        const ssize_t n = read(c->fd, buf, sizeof buf);
        if (n > 0) continue;
        if (n < 0 && (errno == EAGAIN || errno == EINTR)) return;
        Close(c->fd);
        return;
      }
    }
    if (c->phase != Phase::kRead) return;
    for (int i = 0; i < kReadsPerEvent; ++i) {
      const ssize_t n = read(c->fd, buf, sizeof buf);
      if (n > 0) {
        if (buffered + static_cast<size_t>(n) > options.max_buffered_bytes) {
          Fail(c, {503, "the server holds as many request bytes as it may; try again later"});
          return;
        }
        c->in.append(buf, static_cast<size_t>(n));
        buffered += static_cast<size_t>(n);
        c->charged += static_cast<size_t>(n);
        if (static_cast<size_t>(n) < sizeof buf) break;
        continue;
      }
      if (n == 0) {
        c->peer_eof = true;
        break;
      }
      if (errno == EINTR) continue;
      if (errno == EAGAIN) break;
      Close(c->fd);
      return;
    }
    const int fd = c->fd;
    ProcessInput(c);
    auto it = conns.find(fd);
    if (it == conns.end()) return;
    c = it->second.get();
    // The client finished sending: answer what it asked for, then close. A request it left
    // half sent gets a 400 saying so (the client may still read after shutting its write side).
    if (c->peer_eof && c->phase == Phase::kRead) {
      if (c->parser.started()) {
        Fail(c, {400,
                 "the client closed its side of the connection before the request was "
                 "complete"});
        return;
      }
      Close(fd);
    }
  }

  // Parses what the connection holds; dispatches a complete request or answers an error.
  void ProcessInput(Connection* c) {
    while (c->phase == Phase::kRead) {
      const RequestParser::Step step = c->parser.Parse(&c->in);
      Charge(c);
      const auto now = Clock::now();
      if (!c->started && c->parser.started()) {
        c->started = true;
        c->deadline = now + std::chrono::milliseconds(options.header_timeout_ms);
      }
      switch (step) {
        case RequestParser::Step::kNeedMore:
          return;
        case RequestParser::Step::kHeadersDone:
          c->in_body = true;
          c->deadline = now + std::chrono::milliseconds(options.body_timeout_ms);
          if (c->parser.request().expect_continue && c->in.empty()) {
            static constexpr std::string_view kContinue = "HTTP/1.1 100 Continue\r\n\r\n";
            [[maybe_unused]] ssize_t n =
                send(c->fd, kContinue.data(), kContinue.size(), MSG_NOSIGNAL);
          }
          continue;
        case RequestParser::Step::kComplete:
          Dispatch(c);
          return;
        case RequestParser::Step::kError:
          Fail(c, c->parser.error());
          return;
      }
    }
  }

  void Dispatch(Connection* c) {
    ParsedRequest request = c->parser.TakeRequest();
    Charge(c);
    c->close_after = !request.keep_alive || stopping || c->peer_eof;
    {
      std::lock_guard<std::mutex> lock(mu);
      const size_t limit = options.max_queued_requests > 0
                               ? static_cast<size_t>(options.max_queued_requests)
                               : static_cast<size_t>(options.max_connections);
      // The limit is on requests that wait for a worker: an idle worker that has not yet taken
      // the previous job does not count as busy.
      if (in_flight < workers.size() + limit) {
        ++in_flight;
        jobs.push_back(Job{c->fd, c->id, std::move(request), Clock::now()});
        cv.notify_one();
        c->phase = Phase::kWork;
        c->deadline = Clock::time_point::max();
        SetEvents(c, 0);  // read no further until this request is answered
        return;
      }
    }
    HttpReply busy;
    busy.status = 429;
    busy.body = ErrorJson("too many requests are waiting for a worker; try again later");
    busy.headers.emplace_back("Retry-After", "1");
    c->close_after = true;  // shed the connection too (and no pipelined request follows)
    StartWrite(c, std::move(busy), false);
  }

  // Answers an error the server found itself and closes the connection afterwards.
  void Fail(Connection* c, const HttpError& error) {
    HttpReply reply;
    reply.status = error.status;
    reply.body = ErrorJson(error.message);
    c->close_after = true;
    c->in.clear();
    Charge(c);
    StartWrite(c, std::move(reply), false);
  }

  // --- writing ---
  void StartWrite(Connection* c, HttpReply reply, bool head_only) {
    if (stopping) c->close_after = true;
    std::string& h = c->head;
    h.clear();
    h += "HTTP/1.1 ";
    h += std::to_string(reply.status);
    h += ' ';
    h += HttpReason(reply.status);
    h += "\r\nContent-Type: ";
    h += reply.content_type;
    h += "\r\nContent-Length: ";
    h += std::to_string(reply.body.size());
    h += "\r\n";
    for (const auto& [k, v] : reply.headers) {
      h += k;
      h += ": ";
      h += v;
      h += "\r\n";
    }
    if (c->close_after) h += "Connection: close\r\n";
    h += "\r\n";
    c->body = head_only ? std::string() : std::move(reply.body);
    c->written = 0;
    c->phase = Phase::kWrite;
    c->deadline = Clock::now() + std::chrono::milliseconds(options.write_timeout_ms);
    TryWrite(c);
  }

  void TryWrite(Connection* c) {
    const size_t total = c->head.size() + c->body.size();
    while (c->written < total) {
      iovec iov[2];
      int n_iov = 0;
      if (c->written < c->head.size()) {
        iov[n_iov++] = {c->head.data() + c->written, c->head.size() - c->written};
        iov[n_iov++] = {c->body.data(), c->body.size()};
      } else {
        const size_t off = c->written - c->head.size();
        iov[n_iov++] = {c->body.data() + off, c->body.size() - off};
      }
      msghdr msg{};
      msg.msg_iov = iov;
      msg.msg_iovlen = static_cast<size_t>(n_iov);
      const ssize_t n = sendmsg(c->fd, &msg, MSG_NOSIGNAL);
      if (n > 0) {
        c->written += static_cast<size_t>(n);
        continue;
      }
      if (n < 0 && errno == EINTR) continue;
      if (n < 0 && errno == EAGAIN) {
        SetEvents(c, EPOLLOUT);
        return;
      }
      Close(c->fd);
      return;
    }
    c->head.clear();
    c->body.clear();
    c->body.shrink_to_fit();
    if (c->close_after) {
      BeginLinger(c);
      return;
    }
    c->parser.Reset();
    c->phase = Phase::kRead;
    SetIdle(c);
    SetEvents(c, EPOLLIN | EPOLLRDHUP);
    const int fd = c->fd;
    if (!c->in.empty()) ProcessInput(c);  // a pipelined request is already here
    auto it = conns.find(fd);
    if (it != conns.end() && it->second->peer_eof && it->second->phase == Phase::kRead) Close(fd);
  }

  void BeginLinger(Connection* c) {
    shutdown(c->fd, SHUT_WR);
    c->phase = Phase::kLinger;
    c->in.clear();
    c->in.shrink_to_fit();
    Charge(c);
    c->deadline = Clock::now() + kLinger;
    SetEvents(c, EPOLLIN | EPOLLRDHUP);
  }

  // --- replies from the workers ---
  void DrainDone() {
    uint64_t count = 0;
    [[maybe_unused]] ssize_t n = read(wake_fd, &count, sizeof count);
    std::deque<Done> ready;
    {
      std::lock_guard<std::mutex> lock(mu);
      ready.swap(done);
    }
    for (Done& d : ready) {
      auto it = conns.find(d.fd);
      if (it == conns.end() || it->second->id != d.id) continue;  // closed meanwhile
      Connection* c = it->second.get();
      if (c->detached) {
        Close(d.fd);  // the client is gone: nobody to answer
        continue;
      }
      StartWrite(c, std::move(d.reply), d.head_only);
    }
  }

  void WorkerLoop() {
    while (true) {
      Job job;
      {
        std::unique_lock<std::mutex> lock(mu);
        cv.wait(lock, [this] { return workers_stop || !jobs.empty(); });
        if (jobs.empty()) return;
        job = std::move(jobs.front());
        jobs.pop_front();
      }
      Done d{job.fd, job.id, Handle(&job.request, job.received), job.request.method == "HEAD"};
      {
        std::lock_guard<std::mutex> lock(mu);
        --in_flight;
        done.push_back(std::move(d));
      }
      Wake();
    }
  }

  HttpReply Handle(ParsedRequest* request, Clock::time_point received) {
    HttpReply reply;
    HttpError error;
    const std::string* coding = request->Find("content-encoding");
    if (coding && !http::DecodeContent(*coding, &request->body, options.max_body_bytes, &error)) {
      reply.status = error.status;
      reply.body = ErrorJson(error.message);
      return reply;
    }
    HttpRequest r;
    r.method = request->method == "HEAD" ? std::string_view("GET") : request->method;
    r.path = request->path;
    r.body = request->body;
    r.received = received;
    r.header = [request](std::string_view name) {
      std::string lower(name);
      for (char& ch : lower) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
      const std::string* v = request->Find(lower);
      return v ? *v : std::string();
    };
    try {
      return handler(r);
    } catch (const std::exception& e) {
      reply.status = 500;
      reply.body = ErrorJson(std::string("internal error: ") + e.what());
    } catch (...) {
      reply.status = 500;
      reply.body = ErrorJson("internal error");
    }
    return reply;
  }

  // --- timeouts and shutdown ---
  void Sweep() {
    const auto now = Clock::now();
    std::vector<int> expired;
    for (auto& [fd, c] : conns)
      if (c->deadline <= now) expired.push_back(fd);
    for (int fd : expired) {
      Connection* c = conns.at(fd).get();
      if (c->phase == Phase::kRead && c->started) {
        Fail(c, {408, c->in_body ? "the request body did not arrive within " +
                                       std::to_string(options.body_timeout_ms) + " ms"
                                 : "the request header did not arrive within " +
                                       std::to_string(options.header_timeout_ms) + " ms"});
        continue;
      }
      Close(fd);  // idle, or a client that does not read its answer
    }
  }

  void BeginStop() {
    stopping = true;
    stop_deadline = Clock::now() + std::chrono::milliseconds(grace_ms.load());
    epoll_ctl(epoll_fd, EPOLL_CTL_DEL, listen_fd, nullptr);
    close(listen_fd);
    listen_fd = -1;  // connections between requests are closed by IoLoop's stopping pass
  }

  void IoLoop() {
    epoll_event events[256];
    auto next_sweep = Clock::now();
    while (true) {
      const int n = epoll_wait(epoll_fd, events, 256, 100);
      for (int i = 0; i < n; ++i) {
        const int fd = events[i].data.fd;
        const uint32_t ev = events[i].events;
        if (fd == listen_fd) {
          Accept();
          continue;
        }
        if (fd == wake_fd) {
          DrainDone();
          continue;
        }
        auto it = conns.find(fd);
        if (it == conns.end()) continue;
        Connection* c = it->second.get();
        if (c->phase == Phase::kWork) {
          // The peer hung up while its request runs: stop watching, drop the reply later.
          epoll_ctl(epoll_fd, EPOLL_CTL_DEL, fd, nullptr);
          c->detached = true;
          continue;
        }
        if (ev & EPOLLOUT) {
          TryWrite(c);
          continue;
        }
        if (ev & (EPOLLIN | EPOLLRDHUP | EPOLLHUP | EPOLLERR)) OnReadable(c);
      }
      const auto now = Clock::now();
      if (now >= next_sweep) {
        Sweep();
        next_sweep = now + std::chrono::milliseconds(100);
      }
      MaybeResumeAccepting(now);
      if (!stopping && stop_requested.load()) BeginStop();
      if (stopping) {
        // Connections that finished their last reply close themselves; the rest wait for
        // their worker until the grace period ends.
        std::vector<int> idle;
        for (auto& [fd, c] : conns)
          if (c->phase == Phase::kRead) idle.push_back(fd);
        for (int fd : idle) Close(fd);
        if (conns.empty() || Clock::now() >= stop_deadline) break;
      }
    }
    std::vector<int> left;
    for (auto& [fd, c] : conns) left.push_back(fd);
    for (int fd : left) Close(fd);
  }
};

HttpServer::HttpServer() : impl_(std::make_unique<Impl>()) {}

HttpServer::~HttpServer() { Shutdown(std::chrono::milliseconds(0)); }

int HttpServer::port() const { return impl_->port; }

Result<std::unique_ptr<HttpServer>> HttpServer::Start(Handler handler,
                                                      const HttpServerOptions& options) {
  if (options.num_workers < 1 || options.max_connections < 1 || options.backlog < 1)
    return InvalidArgument("HTTP server: workers, connections and backlog must be at least 1");
  std::unique_ptr<HttpServer> server(new HttpServer());
  Impl& impl = *server->impl_;
  impl.handler = std::move(handler);
  impl.options = options;
  impl.limits.max_request_line_bytes = options.max_request_line_bytes;
  impl.limits.max_header_bytes = options.max_header_bytes;
  impl.limits.max_headers = options.max_headers;
  impl.limits.max_body_bytes = options.max_body_bytes;

  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_PASSIVE;
  addrinfo* found = nullptr;
  const std::string port = std::to_string(options.port);
  if (int rc = getaddrinfo(options.address.c_str(), port.c_str(), &hints, &found); rc != 0)
    return Unavailable("cannot listen for HTTP on ", options.address, ":", options.port, ": ",
                       gai_strerror(rc));
  std::string why = "no address";
  for (addrinfo* a = found; a != nullptr && impl.listen_fd < 0; a = a->ai_next) {
    const int fd = socket(a->ai_family, a->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0) continue;
    const int one = 1;
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    if (bind(fd, a->ai_addr, a->ai_addrlen) == 0 && listen(fd, options.backlog) == 0) {
      impl.listen_fd = fd;
    } else {
      why = std::strerror(errno);
      close(fd);
    }
  }
  freeaddrinfo(found);
  if (impl.listen_fd < 0)
    return Unavailable("cannot listen for HTTP on ", options.address, ":", options.port, ": ", why);
  sockaddr_storage bound{};
  socklen_t len = sizeof bound;
  getsockname(impl.listen_fd, reinterpret_cast<sockaddr*>(&bound), &len);
  impl.port = ntohs(bound.ss_family == AF_INET6 ? reinterpret_cast<sockaddr_in6*>(&bound)->sin6_port
                                                : reinterpret_cast<sockaddr_in*>(&bound)->sin_port);

  impl.epoll_fd = epoll_create1(EPOLL_CLOEXEC);
  impl.wake_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
  if (impl.epoll_fd < 0 || impl.wake_fd < 0)
    return Unavailable("HTTP server: cannot create epoll/eventfd: ", std::strerror(errno));
  for (int fd : {impl.listen_fd, impl.wake_fd}) {
    epoll_event ev{};
    ev.events = EPOLLIN;
    ev.data.fd = fd;
    epoll_ctl(impl.epoll_fd, EPOLL_CTL_ADD, fd, &ev);
  }
  for (int i = 0; i < options.num_workers; ++i)
    impl.workers.emplace_back([&impl] { impl.WorkerLoop(); });
  impl.io = std::thread([&impl] { impl.IoLoop(); });
  return server;
}

void HttpServer::Shutdown(std::chrono::milliseconds grace) {
  Impl& impl = *impl_;
  if (!impl.io.joinable()) return;
  impl.grace_ms = grace.count();
  impl.stop_requested = true;
  impl.Wake();
  impl.io.join();
  {
    std::lock_guard<std::mutex> lock(impl.mu);
    impl.workers_stop = true;
    impl.jobs.clear();  // nobody is left to answer
  }
  impl.cv.notify_all();
  for (std::thread& t : impl.workers) t.join();
}

}  // namespace kiln::serve
