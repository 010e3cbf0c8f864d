// Helpers shared by the JSON codecs (TF Serving REST v1 and KServe V2): a nesting pre-check that
// runs before any parser recurses, value decoding with limits, and a fast writer for tensors.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "kiln/core/status.h"
#include "kiln/core/tensor.h"
#include "kiln/serve/limits.h"

namespace kiln::serve::json_util {

using Json = nlohmann::json;

// In one pass over the bytes, before any parser sees them: refuses a document nested deeper
// than max_depth ('[' and '{' outside strings; CVE-2025-0649: TF Serving recursed until the
// stack ran out), and one whose parsed form would cost more than max_parsed_bytes (estimated
// from its tokens: every value a node, containers and object members their allocations,
// strings their bytes).
Status CheckCost(std::string_view body, int max_depth, int64_t max_parsed_bytes);
// CheckCost, then parse; errors say where the JSON is malformed.
Result<Json> Parse(std::string_view body, const RequestLimits& limits);

// The value of a bare NaN, Infinity or -Infinity of the body (Parse turns them into marked
// strings, as nlohmann's parser has no such numbers); nullopt for anything else.
std::optional<double> NonFiniteNumber(const Json& v);
// True for {"b64": "..."}: one binary string value.
bool IsB64(const Json& v);
// Shape of a nested JSON list: dims from the first element at each level; leaves are numbers,
// bools, strings and b64 objects.
Status InferShape(const Json& v, std::vector<int64_t>* dims, std::string_view what);
// Writes the leaves of v (whose shape must be `dims` from `level` on) into t's flat storage from
// *index on, converting to t's dtype. Ragged lists and wrong value types are errors.
Status Fill(const Json& v, std::span<const int64_t> dims, size_t level, Tensor* t, int64_t* index,
            std::string_view what);
// Converts one JSON leaf to element `index` of t.
Status SetElement(const Json& v, Tensor* t, int64_t index, std::string_view what);

// Output writing.
void AppendString(std::string* out, std::string_view s);  // quoted and escaped
// One element of t: numbers (floats shortest round-trip, NaN/Infinity as TF Serving writes
// them), true/false, strings (b64-wrapped when `b64`).
void AppendElement(std::string* out, const Tensor& t, int64_t index, bool b64);
// Elements [offset, offset + prod(dims[level:])) of t as nested lists over dims[level:].
void AppendNested(std::string* out, const Tensor& t, int level, int64_t offset, bool b64);
// All elements of t as one flat list.
void AppendFlat(std::string* out, const Tensor& t, bool b64);

}  // namespace kiln::serve::json_util
