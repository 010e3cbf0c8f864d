// `run --input_exprs 'a=5.0;b=[[1,2],[3,4]]'`: a hand-written parser for numbers, true/false and
// nested lists. Nothing is evaluated (TensorFlow's CLI runs Python's literal_eval or eval here).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "kiln/core/dtype.h"
#include "kiln/core/status.h"
#include "kiln/core/tensor.h"

namespace kiln::cli {

struct Literal {
  enum class Kind { kInt, kFloat, kBool, kString, kList };
  Kind kind = Kind::kInt;
  int64_t i = 0;
  double f = 0;
  bool b = false;
  std::string s;               // kString: the decoded bytes
  std::string text;            // the literal as written, for error messages
  std::vector<Literal> items;  // kList
};

// One value: 5, -1.5e3, .5, 1., true, False, "text", 'text', b'bytes' (escapes \\ \" \' \n \t),
// [1, 2], [[1, 2], [3, 4]], [] (trailing commas
// allowed inside lists). Anything else is an InvalidArgument error that says where.
Result<Literal> ParseLiteral(std::string_view text);

// "a=5.0;b=[1,2]": key=value pairs separated by ';' (empty pieces skipped). A later duplicate
// key replaces an earlier one, as in TensorFlow's CLI.
Result<std::vector<std::pair<std::string, Literal>>> ParseInputExprs(std::string_view arg);

// The tensor a literal describes, with the given dtype: numbers are cast to it, failing when
// a value is not representable (1.5 or 3e9 for int32, a bool for float32, ...); the shape comes
// from the nesting and ragged lists are refused. `key` names the input in errors.
Result<Tensor> LiteralToTensor(const Literal& literal, DType dtype, std::string_view key);

// The dtype used when the input's dtype is unknown (its name is not in the signature): bool for
// booleans, string for quoted text, float32 if any number has a fraction or exponent, int32
// otherwise.
DType NaturalDType(const Literal& literal);

}  // namespace kiln::cli
