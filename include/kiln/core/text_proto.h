// Parsing protobuf text format with the parser's first error kept for the caller's message,
// instead of protobuf logging every error to stderr. The SavedModel reader (saved_model.pbtxt)
// and the model server's config file both parse this way.
#pragma once

#include <string>

#include "kiln/core/status.h"

namespace google::protobuf {
class Message;
}  // namespace google::protobuf

namespace kiln {

struct TextProtoOptions {
  // Skip fields and extensions the schema does not declare (as the binary parser keeps them).
  bool allow_unknown_fields = false;
};

// Parses `text` into *msg. On failure: InvalidArgument whose message is the parser's first error,
// "line L column C: <error>" (1-based), which callers put at the end of their own message.
Status ParseTextProto(const std::string& text, google::protobuf::Message* msg,
                      TextProtoOptions options = {});

}  // namespace kiln
