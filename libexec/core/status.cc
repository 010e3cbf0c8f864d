#include "kiln/core/status.h"

namespace kiln {

std::string_view StatusCodeName(StatusCode code) {
  switch (code) {
#define KILN_X(c, name) \
  case StatusCode::c:   \
    return name;
    KILN_STATUS_CODES(KILN_X)
#undef KILN_X
  }
  return "UNKNOWN";
}

Status::Status(StatusCode code, std::string message) {
  if (code != StatusCode::kOk) {
    state_ = std::make_shared<const State>(State{code, std::move(message)});
  }
}

const std::string& Status::message() const {
  static const std::string kEmpty;
  return state_ ? state_->message : kEmpty;
}

std::string Status::ToString() const {
  if (ok()) return "OK";
  return std::string(StatusCodeName(state_->code)) + ": " + state_->message;
}

Status Status::WithContext(std::string_view context) const {
  if (ok()) return *this;
  return Status(state_->code, std::string(context) + ": " + state_->message);
}

BadResultAccess::BadResultAccess(Status status)
    : status_(std::move(status)), what_("Result::value() on an error: " + status_.ToString()) {}

namespace internal {
void ThrowBadResultAccess(const Status& status) { throw BadResultAccess(status); }
}  // namespace internal

}  // namespace kiln
