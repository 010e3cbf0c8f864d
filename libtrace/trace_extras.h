// What a trace collects besides its graph: the host callbacks its ops refer to. Set on the
// tracing thread by Function::Trace for the whole body, nested traces (control-flow branches)
// included, so a callback inside a branch still marks the outer function.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "kiln/core/status.h"

namespace kiln::trace::internal {

struct TraceExtras {
  std::vector<std::string> host_callbacks;              // names, in order of use
  std::vector<std::shared_ptr<const void>> keep_alive;  // registrations the graph's ops refer to
  int variables_created = 0;                            // by Variable::Create during the trace
  // Of those, the ones whose initial value is symbolic: the trace assigns it, so its graph
  // must run once, on the first call (Function::Trace keeps it as the initializer).
  int variables_initialized_by_graph = 0;
};

// The extras of the outermost Function trace on this thread, or nullptr.
TraceExtras* CurrentTraceExtras();

class TraceExtrasScope {
 public:
  explicit TraceExtrasScope(TraceExtras* extras);
  ~TraceExtrasScope();
  TraceExtrasScope(const TraceExtrasScope&) = delete;
  TraceExtrasScope& operator=(const TraceExtrasScope&) = delete;

 private:
  TraceExtras* previous_;
};

// What a body's exception becomes (call inside a catch block): a failed Result's own status
// for BadResultAccess, else an Internal error with the exception's text.
Status StatusOfCurrentException();

// Eager runs under SetRunFunctionsEagerly: an op that fails records its error here (the first
// wins), so a failing op whose value the body drops still fails the call, as eager TensorFlow
// raises at once. No effect when no EagerErrorScope is active on the thread.
void RecordEagerError(const Status& status);

class EagerErrorScope {
 public:
  EagerErrorScope();
  ~EagerErrorScope();
  EagerErrorScope(const EagerErrorScope&) = delete;
  EagerErrorScope& operator=(const EagerErrorScope&) = delete;
  const Status& status() const { return status_; }

 private:
  friend void RecordEagerError(const Status& status);
  EagerErrorScope* previous_;
  Status status_;
};

}  // namespace kiln::trace::internal
