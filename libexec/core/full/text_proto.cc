#include "kiln/core/text_proto.h"

#include <google/protobuf/io/tokenizer.h>
#include <google/protobuf/text_format.h>

namespace kiln {
namespace {

// Keeps the first error only: later ones usually follow from it.
class FirstErrorCollector : public google::protobuf::io::ErrorCollector {
 public:
#if GOOGLE_PROTOBUF_VERSION >= 4022000
  void RecordError(int line, google::protobuf::io::ColumnNumber column,
                   absl::string_view message) override {
    Record(line, column, std::string(message));
  }
#else
  void AddError(int line, google::protobuf::io::ColumnNumber column,
                const std::string& message) override {
    Record(line, column, message);
  }
#endif
  const std::string& first() const { return first_; }

 private:
  void Record(int line, int column, const std::string& message) {
    if (first_.empty())
      first_ = "line " + std::to_string(line + 1) + " column " + std::to_string(column + 1) + ": " +
               message;
  }
  std::string first_;
};

}  // namespace

Status ParseTextProto(const std::string& text, google::protobuf::Message* msg,
                      TextProtoOptions options) {
  google::protobuf::TextFormat::Parser parser;
  FirstErrorCollector errors;
  parser.RecordErrorsTo(&errors);
  if (options.allow_unknown_fields) {
    parser.AllowUnknownField(true);
    parser.AllowUnknownExtension(true);
  }
  if (!parser.ParseFromString(text, msg)) return InvalidArgument(errors.first());
  return OkStatus();
}

}  // namespace kiln
