// HostCallback: C++ code that a traced graph runs on every call (tf.py_function's
// counterpart). Plain C++ in a body runs only while tracing; a host callback is an op
// (TensorFlow's EagerPyFunc) that calls `fn` each time the graph runs, with the inputs'
// values. Eagerly (not tracing, or under SetRunFunctionsEagerly) it calls `fn` at once.
//
// A graph that holds one cannot be exported: the callback is code of this process, not data.
// ConcreteFunction::host_callbacks() lists them and Save refuses the function, naming it.
#pragma once

#include <functional>
#include <span>
#include <string_view>
#include <vector>

#include "kiln/core/dtype.h"
#include "kiln/core/status.h"
#include "kiln/core/tensor.h"
#include "kiln/exec/host_callback.h"
#include "kiln/trace/value.h"

namespace kiln::trace {

// The runtime's callback type (kiln/exec/host_callback.h): fills one tensor per output.
using HostCallbackFn = exec::HostCallbackFn;

// Calls `fn(inputs)` on every run; `fn` must return one tensor per entry of `output_dtypes`.
// `name` names it in messages and in the node ("side_effect").
Result<Values> HostCallback(std::string_view name, HostCallbackFn fn, const Values& inputs = {},
                            const std::vector<DType>& output_dtypes = {});

}  // namespace kiln::trace
