// Traced functions (tf.function's counterpart).
//
// A Function wraps a C++ body. The first call with a given input signature runs the body once
// on symbolic values, recording the ops into a graph (a tensorflow::FunctionDef); that
// ConcreteFunction is cached under the call's key and executed with
// kiln::exec::PreparedFunction. Later calls whose arguments fit run the cached graph and do not
// run the body: plain C++ in the body (printing with std::cout, pushing to a vector, drawing
// from a host random engine) happens only while tracing; graph ops (Print, variable
// assignments, random ops) happen on every call.
//
// The cache key is, per argument, the dtype and shape of a tensor argument or the
// value of a host argument (an integer, a floating-point number, a bool, a string or an enum):
// f(1); f(2); f(1) traces twice, f(Tensor::Scalar(1)); f(Tensor::Scalar(2)) once.
//
// A Function given an input signature has exactly one concrete function; a call that does not
// fit it is an InvalidArgument error naming the argument, the expected and the given spec, and
// does not trace. Every trace records why it happened (trace_log()); a function traced
// more than FunctionOptions::warn_after_traces times warns once, with the reasons and the fix.
// SetRunFunctionsEagerly(true) runs every body op by op instead.
//
// The parts, one header each: function_key.h (arguments, host values, input signatures),
// concrete_function.h (one traced graph), function_cache.h (Function, its trace log and warning,
// the eager switch). Include this header for all three.
#pragma once

#include "kiln/trace/concrete_function.h"
#include "kiln/trace/function_cache.h"
#include "kiln/trace/function_key.h"
