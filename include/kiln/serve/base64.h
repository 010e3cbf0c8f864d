// Standard base64 (RFC 4648, with padding), as TF Serving's REST API uses for {"b64": ...}.
#pragma once

#include <string>
#include <string_view>

#include "kiln/core/status.h"

namespace kiln::serve {

std::string Base64Encode(std::string_view bytes);
// Refuses characters outside the alphabet and bad padding. Web-safe '-' and '_' are accepted
// too (TF Serving accepts both).
Result<std::string> Base64Decode(std::string_view text);

}  // namespace kiln::serve
