// Value: eager tensor, symbolic graph output, or error.
#include "kiln/trace/value.h"

#include <atomic>

#include "graph.h"

namespace kiln::trace {

namespace internal {
uint64_t NextValueId() {
  static std::atomic<uint64_t> next{1};
  return next.fetch_add(1, std::memory_order_relaxed);
}
}  // namespace internal

Value::Value(Tensor tensor)
    : kind_(Kind::kEager),
      spec_{tensor.dtype(), PartialShape(tensor.shape())},
      tensor_(std::move(tensor)),
      id_(internal::NextValueId()) {}

Value Value::Error(Status status) {
  Value v;
  if (status.ok()) status = Internal("Value::Error called with an OK status");
  v.kind_ = Kind::kError;
  v.status_ = std::move(status);
  return v;
}

Status Value::status() const {
  switch (kind_) {
    case Kind::kEager:
    case Kind::kSymbolic:
      return OkStatus();
    case Kind::kError:
      return status_;
    case Kind::kEmpty:
      break;
  }
  return FailedPrecondition("empty Value: it holds no tensor");
}

Result<Tensor> Value::tensor() const {
  if (kind_ == Kind::kEager) return tensor_;
  if (kind_ == Kind::kSymbolic) {
    return FailedPrecondition("a symbolic value of the trace of '", graph_->function_name(), "' (",
                              DTypeShortName(spec_.dtype), " ", spec_.shape.ToPythonString(),
                              ") has no concrete tensor: it exists only inside that trace; "
                              "return it from the traced function instead");
  }
  return status();
}

std::string Value::DebugString() const {
  const std::string spec = DTypeShortName(spec_.dtype) + " " + spec_.shape.ToPythonString();
  switch (kind_) {
    case Kind::kEager:
      return "Value(" + spec + " eager)";
    case Kind::kSymbolic:
      return "Value(" + spec + " symbolic in '" + graph_->function_name() + "')";
    case Kind::kError:
      return "Value(error: " + status_.ToString() + ")";
    case Kind::kEmpty:
      break;
  }
  return "Value(empty)";
}

Status FirstError(const Values& values) {
  for (const Value& v : values) {
    if (!v.ok()) return v.status();
  }
  return OkStatus();
}

}  // namespace kiln::trace
