// The per-thread trace extras and eager error scopes (trace_extras.h).
#include "trace_extras.h"

#include <exception>

namespace kiln::trace::internal {
namespace {

thread_local TraceExtras* g_extras = nullptr;
thread_local EagerErrorScope* g_eager_errors = nullptr;

}  // namespace

TraceExtras* CurrentTraceExtras() { return g_extras; }

EagerErrorScope::EagerErrorScope() : previous_(g_eager_errors) { g_eager_errors = this; }
EagerErrorScope::~EagerErrorScope() { g_eager_errors = previous_; }

void RecordEagerError(const Status& status) {
  if (g_eager_errors != nullptr && g_eager_errors->status_.ok()) g_eager_errors->status_ = status;
}

TraceExtrasScope::TraceExtrasScope(TraceExtras* extras) : previous_(g_extras) { g_extras = extras; }

TraceExtrasScope::~TraceExtrasScope() {
  // A nested trace's callbacks also mark the trace that calls it.
  if (previous_ != nullptr && g_extras != nullptr && g_extras != previous_) {
    for (const auto& n : g_extras->host_callbacks) previous_->host_callbacks.push_back(n);
    for (const auto& k : g_extras->keep_alive) previous_->keep_alive.push_back(k);
  }
  g_extras = previous_;
}

Status StatusOfCurrentException() {
  try {
    throw;
  } catch (const BadResultAccess& e) {
    // The failed Result's own error, code and text, not an exception's name.
    return e.status().WithContext("the body used the value of a failed Result");
  } catch (const std::exception& e) {
    return Internal("the body threw: ", e.what());
  } catch (...) {
    return Internal("the body threw a non-standard exception");
  }
}

}  // namespace kiln::trace::internal
