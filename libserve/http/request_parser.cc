#include "http/request_parser.h"

#include <algorithm>
#include <cctype>

namespace kiln::serve::http {
namespace {

// RFC 9110 tchar: what a method, a field name and a transfer coding are made of.
bool IsTchar(char c) {
  if (std::isalnum(static_cast<unsigned char>(c))) return true;
  return std::string_view("!#$%&'*+-.^_`|~").find(c) != std::string_view::npos;
}

bool IsToken(std::string_view s) { return !s.empty() && std::all_of(s.begin(), s.end(), IsTchar); }

bool IsOws(char c) { return c == ' ' || c == '\t'; }

std::string_view TrimOws(std::string_view s) {
  while (!s.empty() && IsOws(s.front())) s.remove_prefix(1);
  while (!s.empty() && IsOws(s.back())) s.remove_suffix(1);
  return s;
}

std::string Lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

// Splits a comma-separated field value into its trimmed, non-empty elements.
std::vector<std::string_view> ListElements(std::string_view value) {
  std::vector<std::string_view> out;
  while (true) {
    const size_t comma = value.find(',');
    std::string_view e = TrimOws(value.substr(0, comma));
    if (!e.empty()) out.push_back(e);
    if (comma == std::string_view::npos) break;
    value.remove_prefix(comma + 1);
  }
  return out;
}

// One line of the head without its line ending; a CR anywhere but before LF is refused later.
std::string_view LineAt(std::string_view head, size_t begin, size_t end) {
  std::string_view line = head.substr(begin, end - begin);
  if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
  return line;
}

bool HasControl(std::string_view s) {
  return std::any_of(s.begin(), s.end(), [](char c) {
    const auto u = static_cast<unsigned char>(c);
    return (u < 0x20 && c != '\t') || u == 0x7f;
  });
}

int HexValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// The path with %HH decoded (a '%' not followed by two hex digits stays as it is). An encoded
// '/' stays encoded: a name holding "%2F" must not change which route the path takes.
std::string PercentDecode(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (size_t i = 0; i < s.size(); ++i) {
    const int hi = s[i] == '%' && i + 2 < s.size() ? HexValue(s[i + 1]) : -1;
    const int lo = hi >= 0 ? HexValue(s[i + 2]) : -1;
    if (lo >= 0 && hi * 16 + lo != '/') {
      out += static_cast<char>(hi * 16 + lo);
      i += 2;
    } else {
      out += s[i];
    }
  }
  return out;
}

}  // namespace

const std::string* ParsedRequest::Find(std::string_view lower_name) const {
  const std::string* found = nullptr;
  for (const auto& [name, value] : headers)
    if (name == lower_name) found = &value;
  return found;
}

RequestParser::Step RequestParser::Fail(int status, std::string message) {
  error_.status = status;
  error_.message = std::move(message);
  state_ = State::kDone;
  return Step::kError;
}

ParsedRequest RequestParser::TakeRequest() { return std::move(request_); }

void RequestParser::Reset() {
  state_ = State::kStart;
  scan_from_ = 0;
  content_length_ = 0;
  chunk_left_ = 0;
  trailer_bytes_ = 0;
  trailer_count_ = 0;
  request_ = ParsedRequest{};
  error_ = HttpError{};
}

RequestParser::Step RequestParser::Parse(std::string* in) {
  if (state_ == State::kDone) return error_.message.empty() ? Step::kComplete : Step::kError;
  if (state_ == State::kStart || state_ == State::kHead) return ParseHead(in);
  if (state_ == State::kBody) {
    if (in->size() < static_cast<size_t>(content_length_)) return Step::kNeedMore;
    request_.body.assign(*in, 0, static_cast<size_t>(content_length_));
    in->erase(0, static_cast<size_t>(content_length_));
    state_ = State::kDone;
    return Step::kComplete;
  }
  return ParseChunked(in);
}

RequestParser::Step RequestParser::ParseHead(std::string* in) {
  if (state_ == State::kStart) {
    // RFC 9112 2.2: empty lines before the request line are ignored.
    size_t skip = 0;
    while (skip < in->size() && ((*in)[skip] == '\r' || (*in)[skip] == '\n')) ++skip;
    in->erase(0, skip);
    if (in->empty()) return Step::kNeedMore;
    state_ = State::kHead;
    scan_from_ = 0;
  }
  // Look for the empty line that ends the head, line by line from where the last call stopped,
  // so a head that arrives a byte at a time costs linear time.
  const std::string_view data(*in);
  size_t head_end = std::string_view::npos;  // index just past the empty line
  size_t pos = scan_from_;
  while (true) {
    const size_t nl = data.find('\n', pos);
    if (nl == std::string_view::npos) break;
    if (pos == 0 && nl > limits_.max_request_line_bytes)
      return Fail(414, "the request line is longer than the limit of " +
                           std::to_string(limits_.max_request_line_bytes) + " bytes");
    if (pos > 0 && LineAt(data, pos, nl).empty()) {
      head_end = nl + 1;
      break;
    }
    pos = nl + 1;
  }
  if (head_end == std::string_view::npos) {
    scan_from_ = pos;
    const size_t line_end = data.find('\n');
    if (line_end == std::string_view::npos) {
      if (data.size() > limits_.max_request_line_bytes)
        return Fail(414, "the request line is longer than the limit of " +
                             std::to_string(limits_.max_request_line_bytes) + " bytes");
    } else if (data.size() - line_end > limits_.max_header_bytes) {
      return Fail(431, "the header section is larger than the limit of " +
                           std::to_string(limits_.max_header_bytes) + " bytes");
    }
    return Step::kNeedMore;
  }
  // The same bound as while the head was arriving, so bytes split differently get one answer.
  if (head_end - 1 - data.find('\n') > limits_.max_header_bytes)
    return Fail(431, "the header section is larger than the limit of " +
                         std::to_string(limits_.max_header_bytes) + " bytes");
  const Step step = ParseHeadSection(data.substr(0, head_end));
  in->erase(0, head_end);
  return step;
}

RequestParser::Step RequestParser::ParseHeadSection(std::string_view head) {
  size_t nl = head.find('\n');
  const std::string_view line = LineAt(head, 0, nl);
  if (line.find('\r') != std::string_view::npos) return Fail(400, "a bare CR in the request line");
  // request-line = method SP request-target SP HTTP-version
  const size_t sp1 = line.find(' ');
  const size_t sp2 = sp1 == std::string_view::npos ? sp1 : line.find(' ', sp1 + 1);
  if (sp2 == std::string_view::npos || line.find(' ', sp2 + 1) != std::string_view::npos)
    return Fail(400, "malformed request line (expected: METHOD SP TARGET SP HTTP/1.1)");
  const std::string_view method = line.substr(0, sp1);
  const std::string_view target = line.substr(sp1 + 1, sp2 - sp1 - 1);
  const std::string_view version = line.substr(sp2 + 1);
  if (!IsToken(method)) return Fail(400, "malformed request method");
  if (target.empty() || HasControl(target) || target.find('\t') != std::string_view::npos)
    return Fail(400, "malformed request target");
  if (version.size() != 8 || version.substr(0, 5) != "HTTP/" || !std::isdigit(version[5]) ||
      version[6] != '.' || !std::isdigit(version[7]))
    return Fail(400, "malformed HTTP version");
  if (version[5] != '1') return Fail(505, "only HTTP/1.0 and HTTP/1.1 are served");
  request_.method = std::string(method);
  request_.target = std::string(target);
  request_.minor_version = version[7] - '0';
  std::string_view path = target;
  if (path.front() != '/') {
    // absolute-form (RFC 9112 3.2.2): http://authority/path
    const size_t scheme = path.find("://");
    if (target == "*") {
      path = "*";
    } else if (scheme == std::string_view::npos) {
      return Fail(400, "malformed request target");
    } else {
      const size_t slash = path.find('/', scheme + 3);
      path = slash == std::string_view::npos ? std::string_view("/") : path.substr(slash);
    }
  }
  request_.path = PercentDecode(path.substr(0, path.find_first_of("?#")));

  // Header fields.
  int host_fields = 0;
  bool have_length = false;
  bool have_te = false;
  std::vector<std::string> codings;
  uint64_t length = 0;
  std::vector<std::string_view> connection;
  while (nl + 1 < head.size()) {
    const size_t begin = nl + 1;
    nl = head.find('\n', begin);
    const std::string_view field = LineAt(head, begin, nl);
    if (field.empty()) break;
    if (static_cast<int>(request_.headers.size()) >= limits_.max_headers)
      return Fail(431,
                  "more header fields than the limit of " + std::to_string(limits_.max_headers));
    if (IsOws(field.front())) return Fail(400, "obsolete line folding in a header field");
    const size_t colon = field.find(':');
    if (colon == std::string_view::npos) return Fail(400, "a header line without a colon");
    const std::string_view name = field.substr(0, colon);
    if (!IsToken(name))
      return Fail(400, "malformed header field name (no whitespace is allowed before the colon)");
    const std::string_view value = TrimOws(field.substr(colon + 1));
    if (HasControl(value)) return Fail(400, "a control character in a header field value");
    std::string lname = Lower(name);
    if (lname == "host") {
      ++host_fields;
    } else if (lname == "content-length") {
      for (std::string_view e : ListElements(value)) {
        if (e.size() > 18 || !std::all_of(e.begin(), e.end(), [](char c) {
              return std::isdigit(static_cast<unsigned char>(c));
            }))
          return Fail(400, "Content-Length is not a decimal number");
        uint64_t v = 0;
        for (char c : e) v = v * 10 + static_cast<uint64_t>(c - '0');
        if (have_length && v != length) return Fail(400, "conflicting Content-Length values");
        have_length = true;
        length = v;
      }
      if (ListElements(value).empty()) return Fail(400, "an empty Content-Length");
    } else if (lname == "transfer-encoding") {
      have_te = true;
      for (std::string_view e : ListElements(value)) codings.push_back(Lower(e));
    } else if (lname == "connection") {
      for (std::string_view e : ListElements(value)) connection.push_back(e);
    }
    request_.headers.emplace_back(std::move(lname), std::string(value));
  }
  const bool http11 = request_.minor_version >= 1;
  if (http11 && host_fields == 0) return Fail(400, "an HTTP/1.1 request without a Host header");
  if (host_fields > 1) return Fail(400, "more than one Host header");
  request_.keep_alive = http11;
  for (std::string_view token : connection) {
    const std::string t = Lower(token);
    if (t == "close") request_.keep_alive = false;
    if (t == "keep-alive" && !http11) request_.keep_alive = true;
  }
  if (const std::string* expect = request_.Find("expect")) {
    if (Lower(*expect) != "100-continue") return Fail(417, "unsupported Expect: " + *expect);
    request_.expect_continue = http11;
  }
  if (have_te) {
    // RFC 9112 6.1/6.3: Transfer-Encoding with Content-Length is a smuggling attempt; chunked
    // must come last or the body's end cannot be found.
    if (have_length) return Fail(400, "Transfer-Encoding and Content-Length in one request");
    if (!http11) return Fail(400, "Transfer-Encoding in an HTTP/1.0 request");
    if (codings.empty() || codings.back() != "chunked")
      return Fail(400, "Transfer-Encoding whose last coding is not chunked");
    if (codings.size() > 1)
      return Fail(501, "transfer coding '" + codings.front() +
                           "' is not supported (send Content-Encoding: gzip instead)");
    content_length_ = -1;
    state_ = State::kChunkSize;
    return Step::kHeadersDone;
  }
  if (length > limits_.max_body_bytes)
    return Fail(413, "the request body (" + std::to_string(length) +
                         " bytes) is larger than the limit of " +
                         std::to_string(limits_.max_body_bytes) + " bytes");
  content_length_ = static_cast<int64_t>(length);
  if (length == 0) {
    state_ = State::kDone;
    return Step::kComplete;
  }
  state_ = State::kBody;
  return Step::kHeadersDone;
}

RequestParser::Step RequestParser::ParseChunked(std::string* in) {
  // Work on an offset and erase once at the end: many small chunks stay linear.
  const std::string_view data(*in);
  size_t pos = 0;
  Step step = Step::kNeedMore;
  while (step == Step::kNeedMore) {
    if (state_ == State::kChunkSize) {
      const size_t nl = data.find('\n', pos);
      if (nl == std::string_view::npos) {
        if (data.size() - pos > 1024) step = Fail(400, "a chunk-size line longer than 1024 bytes");
        break;
      }
      if (nl - pos > 1024) {
        step = Fail(400, "a chunk-size line longer than 1024 bytes");
        break;
      }
      std::string_view line = LineAt(data, pos, nl);
      size_t digits = 0;
      uint64_t size = 0;
      while (digits < line.size() && std::isxdigit(static_cast<unsigned char>(line[digits]))) {
        if (digits == 15) return Fail(400, "a chunk size too large");
        const char c = static_cast<char>(std::tolower(static_cast<unsigned char>(line[digits])));
        size = size * 16 + static_cast<uint64_t>(c <= '9' ? c - '0' : c - 'a' + 10);
        ++digits;
      }
      const std::string_view rest = TrimOws(line.substr(digits));
      if (digits == 0 || (!rest.empty() && rest.front() != ';') || HasControl(rest)) {
        step = Fail(400, "a malformed chunk-size line");
        break;
      }
      pos = nl + 1;
      if (size == 0) {
        state_ = State::kTrailers;
        continue;
      }
      if (size > limits_.max_body_bytes - request_.body.size()) {
        step = Fail(413, "the chunked request body is larger than the limit of " +
                             std::to_string(limits_.max_body_bytes) + " bytes");
        break;
      }
      chunk_left_ = size;
      state_ = State::kChunkData;
    } else if (state_ == State::kChunkData) {
      const size_t take = static_cast<size_t>(std::min<uint64_t>(chunk_left_, data.size() - pos));
      if (take == 0) break;
      request_.body.append(data.substr(pos, take));
      pos += take;
      chunk_left_ -= take;
      if (chunk_left_ == 0) state_ = State::kChunkEnd;
    } else if (state_ == State::kChunkEnd) {
      if (pos >= data.size()) break;
      if (data[pos] == '\n') {
        pos += 1;
      } else if (data[pos] == '\r') {
        if (pos + 1 >= data.size()) break;
        if (data[pos + 1] != '\n') {
          step = Fail(400, "chunk data longer than its chunk size");
          break;
        }
        pos += 2;
      } else {
        step = Fail(400, "chunk data longer than its chunk size");
        break;
      }
      state_ = State::kChunkSize;
    } else {  // kTrailers: fields after the last chunk are read and ignored, within the limits
      const size_t nl = data.find('\n', pos);
      if (nl == std::string_view::npos) {
        if (trailer_bytes_ + (data.size() - pos) > limits_.max_header_bytes)
          step = Fail(431, "the trailer section is larger than the limit of " +
                               std::to_string(limits_.max_header_bytes) + " bytes");
        break;
      }
      const std::string_view line = LineAt(data, pos, nl);
      if (trailer_bytes_ + (nl - pos) > limits_.max_header_bytes) {
        step = Fail(431, "the trailer section is larger than the limit of " +
                             std::to_string(limits_.max_header_bytes) + " bytes");
        break;
      }
      trailer_bytes_ += nl + 1 - pos;
      pos = nl + 1;
      if (line.empty()) {
        state_ = State::kDone;
        step = Step::kComplete;
        break;
      }
      if (++trailer_count_ > limits_.max_headers) {
        step = Fail(431,
                    "more trailer fields than the limit of " + std::to_string(limits_.max_headers));
        break;
      }
      if (line.find(':') == std::string_view::npos || IsOws(line.front())) {
        step = Fail(400, "a malformed trailer field");
        break;
      }
    }
  }
  if (step != Step::kError) in->erase(0, pos);
  return step;
}

}  // namespace kiln::serve::http
