// Content-Encoding of request bodies (gzip, deflate) decoded with a bound on the output, so a
// small compressed body cannot inflate past the body limit (a "zip bomb" is refused as it
// grows, not after).
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

#include "http/request_parser.h"

namespace kiln::serve::http {

// Decodes `body` per the Content-Encoding `coding` ("", "identity", "gzip", "x-gzip",
// "deflate"). False with *error set (413 past max_bytes, 415 for another coding, 400 for
// corrupt data).
bool DecodeContent(std::string_view coding, std::string* body, size_t max_bytes, HttpError* error);

}  // namespace kiln::serve::http
