// How call keys compare and how specs print in the traced-function messages; shared by the
// key, the concrete function and the function cache. Not public API.
#pragma once

#include <string>
#include <string_view>

#include "kiln/trace/function_key.h"

namespace kiln::trace::internal {

// A function's name as FunctionDef names take it: [A-Za-z0-9_], "function" when empty.
std::string SanitizeFunctionName(std::string_view name);

// "TensorSpec(shape=(2,), dtype=int32)": a given argument in a message.
std::string GivenSpecText(const TensorSpec& spec);
// "float32 Tensor, shape=(2,)", as pretty_printed_concrete_signatures writes a spec.
std::string PrettySpecText(const TensorSpec& spec);

// Argument names [A-Za-z0-9_], unique; dtypes that hold data.
Status ValidateSignature(const std::string& fn, const InputSignature& sig);

// True when every shape `specific` allows is allowed by `general` (a concrete function traced
// for `general` can take it).
bool Covers(const PartialShape& general, const PartialShape& specific);
bool SameHost(const HostValue& a, const HostValue& b);
// Whether concrete argument `have` takes call argument `want`.
bool Fits(const BoundArg& have, const BoundArg& want);
// Why `want` did not fit `have` (a trace reason), or empty when it did.
std::string Difference(const std::string& name, const BoundArg& have, const BoundArg& want);

}  // namespace kiln::trace::internal
