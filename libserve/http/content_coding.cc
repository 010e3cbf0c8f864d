#include "http/content_coding.h"

#include <zlib.h>

#include <algorithm>
#include <cctype>

namespace kiln::serve::http {
namespace {

bool Inflate(const std::string& in, int window_bits, size_t max_bytes, std::string* out,
             HttpError* error) {
  z_stream z{};
  if (inflateInit2(&z, window_bits) != Z_OK) {
    *error = {500, "cannot start zlib"};
    return false;
  }
  z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(in.data()));
  z.avail_in = static_cast<uInt>(in.size());
  out->clear();
  char buf[1 << 16];
  int rc = Z_OK;
  while (rc != Z_STREAM_END) {
    z.next_out = reinterpret_cast<Bytef*>(buf);
    z.avail_out = sizeof buf;
    rc = inflate(&z, Z_NO_FLUSH);
    if (rc != Z_OK && rc != Z_STREAM_END) {
      inflateEnd(&z);
      *error = {400, "the request body is not valid compressed data"};
      return false;
    }
    const size_t produced = sizeof buf - z.avail_out;
    if (out->size() + produced > max_bytes) {
      inflateEnd(&z);
      *error = {413, "the decompressed request body is larger than the limit of " +
                         std::to_string(max_bytes) + " bytes"};
      return false;
    }
    out->append(buf, produced);
    if (rc == Z_OK && produced == 0 && z.avail_in == 0) {
      inflateEnd(&z);
      *error = {400, "the compressed request body is truncated"};
      return false;
    }
  }
  inflateEnd(&z);
  return true;
}

}  // namespace

bool DecodeContent(std::string_view coding, std::string* body, size_t max_bytes, HttpError* error) {
  std::string c(coding);
  for (char& ch : c) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  if (c.empty() || c == "identity") return true;
  if (body->size() > UINT32_MAX) {
    *error = {413, "the compressed request body is too large"};
    return false;
  }
  std::string out;
  if (c == "gzip" || c == "x-gzip") {
    if (!Inflate(*body, 16 + MAX_WBITS, max_bytes, &out, error)) return false;
  } else if (c == "deflate") {
    // HTTP's deflate is the zlib format; some clients send raw deflate: 32 detects either
    // header, and a headerless stream is tried as raw deflate.
    if (!Inflate(*body, 32 + MAX_WBITS, max_bytes, &out, error)) {
      if (error->status == 413) return false;
      if (!Inflate(*body, -MAX_WBITS, max_bytes, &out, error)) return false;
    }
  } else {
    *error = {415, "Content-Encoding '" + std::string(coding) +
                       "' is not supported (gzip, deflate and identity are)"};
    return false;
  }
  *body = std::move(out);
  return true;
}

}  // namespace kiln::serve::http
