// One error model for the whole project: Status / Result<T>, no exceptions across library
// boundaries (reading the value of a failed Result throws BadResultAccess, in the caller's code).
// Errors carry a code and a message that names the thing and what was expected; callers add context
// as the error travels up (KILN_RETURN_IF_ERROR_CTX).
#pragma once

#include <cassert>
#include <exception>
#include <memory>
#include <sstream>
#include <string>
#include <string_view>
#include <utility>
#include <variant>

namespace kiln {

// The one list of status codes; names come from here and nowhere else.
#define KILN_STATUS_CODES(X)                    \
  X(kOk, "OK")                                  \
  X(kInvalidArgument, "INVALID_ARGUMENT")       \
  X(kNotFound, "NOT_FOUND")                     \
  X(kAlreadyExists, "ALREADY_EXISTS")           \
  X(kFailedPrecondition, "FAILED_PRECONDITION") \
  X(kOutOfRange, "OUT_OF_RANGE")                \
  X(kUnimplemented, "UNIMPLEMENTED")            \
  X(kDataLoss, "DATA_LOSS")                     \
  X(kPermissionDenied, "PERMISSION_DENIED")     \
  X(kResourceExhausted, "RESOURCE_EXHAUSTED")   \
  X(kUnavailable, "UNAVAILABLE")                \
  X(kInternal, "INTERNAL")                      \
  X(kDeadlineExceeded, "DEADLINE_EXCEEDED")

enum class StatusCode {
#define KILN_X(code, name) code,
  KILN_STATUS_CODES(KILN_X)
#undef KILN_X
};

std::string_view StatusCodeName(StatusCode code);

class [[nodiscard]] Status {
 public:
  Status() = default;  // OK; costs one null pointer.
  Status(StatusCode code, std::string message);

  bool ok() const { return state_ == nullptr; }
  StatusCode code() const { return state_ ? state_->code : StatusCode::kOk; }
  const std::string& message() const;
  // "INVALID_ARGUMENT: <message>", or "OK".
  std::string ToString() const;
  // Returns a copy whose message is "<context>: <message>". OK stays OK.
  Status WithContext(std::string_view context) const;

 private:
  struct State {
    StatusCode code;
    std::string message;
  };
  std::shared_ptr<const State> state_;
};

inline Status OkStatus() { return Status(); }

namespace internal {
template <typename... Args>
std::string StrCat(Args&&... args) {
  std::ostringstream os;
  (os << ... << std::forward<Args>(args));
  return os.str();
}
}  // namespace internal

// Builders: InvalidArgument("input 'a': expected ", x, ", got ", y).
#define KILN_STATUS_BUILDER(fn, code)                                               \
  template <typename... Args>                                                       \
  Status fn(Args&&... args) {                                                       \
    return Status(StatusCode::code, internal::StrCat(std::forward<Args>(args)...)); \
  }
KILN_STATUS_BUILDER(InvalidArgument, kInvalidArgument)
KILN_STATUS_BUILDER(NotFound, kNotFound)
KILN_STATUS_BUILDER(AlreadyExists, kAlreadyExists)
KILN_STATUS_BUILDER(FailedPrecondition, kFailedPrecondition)
KILN_STATUS_BUILDER(OutOfRange, kOutOfRange)
KILN_STATUS_BUILDER(Unimplemented, kUnimplemented)
KILN_STATUS_BUILDER(DataLoss, kDataLoss)
KILN_STATUS_BUILDER(PermissionDenied, kPermissionDenied)
KILN_STATUS_BUILDER(ResourceExhausted, kResourceExhausted)
KILN_STATUS_BUILDER(Unavailable, kUnavailable)
KILN_STATUS_BUILDER(Internal, kInternal)
KILN_STATUS_BUILDER(DeadlineExceeded, kDeadlineExceeded)
#undef KILN_STATUS_BUILDER

// What Result<T>::value() (and `*`, `->`) throws when the Result holds an error, as
// absl::StatusOr::value() throws BadStatusOrAccess: the error's text survives (an uncaught one
// prints it as the program aborts; a traced body that throws it fails its trace with it).
class BadResultAccess : public std::exception {
 public:
  explicit BadResultAccess(Status status);
  const Status& status() const { return status_; }
  // "Result::value() on an error: INVALID_ARGUMENT: <message>"
  const char* what() const noexcept override { return what_.c_str(); }

 private:
  Status status_;
  std::string what_;
};

namespace internal {
[[noreturn]] void ThrowBadResultAccess(const Status& status);
}  // namespace internal

template <typename T>
class [[nodiscard]] Result {
 public:
  Result(T value) : v_(std::move(value)) {}        // NOLINT(google-explicit-constructor)
  Result(Status status) : v_(std::move(status)) {  // NOLINT(google-explicit-constructor)
    assert(!std::get<Status>(v_).ok() && "Result built from an OK status");
  }

  bool ok() const { return std::holds_alternative<T>(v_); }
  Status status() const { return ok() ? Status() : std::get<Status>(v_); }

  T& value() & {
    if (!ok()) internal::ThrowBadResultAccess(std::get<Status>(v_));
    return std::get<T>(v_);
  }
  const T& value() const& {
    if (!ok()) internal::ThrowBadResultAccess(std::get<Status>(v_));
    return std::get<T>(v_);
  }
  T&& value() && {
    if (!ok()) internal::ThrowBadResultAccess(std::get<Status>(v_));
    return std::get<T>(std::move(v_));
  }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }

 private:
  std::variant<T, Status> v_;
};

}  // namespace kiln

#define KILN_CONCAT_INNER(a, b) a##b
#define KILN_CONCAT(a, b) KILN_CONCAT_INNER(a, b)

#define KILN_RETURN_IF_ERROR(expr)               \
  do {                                           \
    const ::kiln::Status& kiln_status_ = (expr); \
    if (!kiln_status_.ok()) return kiln_status_; \
  } while (0)

// Adds "<context>: " in front of the message of a failing expression.
#define KILN_RETURN_IF_ERROR_CTX(expr, ...)                                   \
  do {                                                                        \
    const ::kiln::Status& kiln_status_ = (expr);                              \
    if (!kiln_status_.ok())                                                   \
      return kiln_status_.WithContext(::kiln::internal::StrCat(__VA_ARGS__)); \
  } while (0)

#define KILN_ASSIGN_OR_RETURN_IMPL(tmp, lhs, expr) \
  auto tmp = (expr);                               \
  if (!tmp.ok()) return tmp.status();              \
  lhs = std::move(tmp).value()

#define KILN_ASSIGN_OR_RETURN(lhs, expr) \
  KILN_ASSIGN_OR_RETURN_IMPL(KILN_CONCAT(kiln_result_, __COUNTER__), lhs, expr)

#define KILN_ASSIGN_OR_RETURN_CTX_IMPL(tmp, lhs, expr, ...)                              \
  auto tmp = (expr);                                                                     \
  if (!tmp.ok()) return tmp.status().WithContext(::kiln::internal::StrCat(__VA_ARGS__)); \
  lhs = std::move(tmp).value()

#define KILN_ASSIGN_OR_RETURN_CTX(lhs, expr, ...) \
  KILN_ASSIGN_OR_RETURN_CTX_IMPL(KILN_CONCAT(kiln_result_, __COUNTER__), lhs, expr, __VA_ARGS__)

// Internal invariants only; never for anything a file, a user or a device can cause.
#ifdef NDEBUG
#define KILN_DCHECK(cond) ((void)0)
#else
#define KILN_DCHECK(cond) assert(cond)
#endif
