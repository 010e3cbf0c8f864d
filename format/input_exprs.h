// `run --input_exprs 'a=5.0;b=[[1,2],[3,4]]'`: a hand-written parser for numbers, true/false and
// nested lists. Nothing is evaluated (TensorFlow's CLI runs Python's literal_eval or eval here).
// `run --input_examples 'x=[{"f": [1.5]}]'`: the same parser with dicts, and the serialized
// tf.Example protos they describe (encoded here: this library stays protobuf-free).
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

// An np.* call of --input_exprs (the few TensorFlow's CLI users write most: np.zeros, np.ones,
// np.full, np.arange, np.random.rand/randn, with .reshape and .astype): described, not
// materialised, so a large shape costs nothing until its tensor is built.
struct NumpyArray {
  enum class Fill { kConstant, kArange, kUniform, kNormal };
  Fill fill = Fill::kConstant;
  std::vector<int64_t> dims;
  double value = 0;       // kConstant: the value; kArange: the start
  double step = 1;        // kArange
  bool integral = false;  // numpy would give an integer array (np.arange(5), dtype=int)
};

struct Literal {
  enum class Kind { kInt, kFloat, kBool, kString, kList, kDict, kArray };
  Kind kind = Kind::kInt;
  int64_t i = 0;
  double f = 0;
  bool b = false;
  bool bytes = false;             // kString: written b'...' (Python's bytes, not str)
  std::string s;                  // kString: the decoded bytes
  std::string text;               // the literal as written, for error messages
  std::vector<Literal> items;     // kList: the elements; kDict: the values
  std::vector<std::string> keys;  // kDict: keys[i] is the (decoded) key of items[i]
  NumpyArray array;               // kArray
};

// One value: 5, -1.5e3, .5, 1., true, False, "text", 'text', b'bytes' (escapes \\ \" \' \n \t),
// [1, 2], [[1, 2], [3, 4]], [], (1, 2) and (5,) as lists, {'a': [1], "b": 2} (quoted keys only;
// a repeated key keeps its first place and its last value, as in Python) (trailing commas
// allowed inside lists and dicts); as a whole value, np.zeros(shape), np.ones(shape),
// np.full(shape, v), np.arange([start,] stop[, step]), np.random.rand(d0, ...),
// np.random.randn(d0, ...) (a fixed seed: the values are not numpy's), each with dtype=...
// and followed by any .reshape(...) and .astype(...) (`numpy.` spells `np.` too). Anything else
// is an InvalidArgument error that says where.
Result<Literal> ParseLiteral(std::string_view text);

// "a=5.0;b=[1,2]": key=value pairs separated by ';' (empty pieces skipped). A later duplicate
// key replaces an earlier one, as in TensorFlow's CLI.
Result<std::vector<std::pair<std::string, Literal>>> ParseInputExprs(std::string_view arg);

// "x=[{'f': [1.5]}, {'f': [2.0]}];y=[...]": --input_examples, split and parsed as
// ParseInputExprs does, each value then turned into its tensor by ExamplesToTensor.
Result<std::vector<std::pair<std::string, Tensor>>> ParseInputExamples(std::string_view arg);

// --input_examples feeds strings: an input of another dtype (`want`) is an error naming `key`.
Status CheckExamplesInput(std::string_view key, DType want);

// A list of dicts -> a 1-D string tensor with one serialized tf.Example per dict (TensorFlow's
// _create_example_string): each feature value is a non-empty list whose first element picks the
// kind, a float a float_list, an int an int64_list, a string or bytes a bytes_list (UTF-8); the
// rest must fit that kind as protobuf takes them (ints and bools in a float_list, nothing else
// mixed). `key` names the input in errors.
Result<Tensor> ExamplesToTensor(const Literal& examples, std::string_view key);

// One dict -> one serialized tf.Example (features in key order); as ExamplesToTensor.
Result<std::string> SerializeExample(const Literal& features, std::string_view key);

// The tensor a literal describes, with the given dtype: numbers are cast to it, failing when
// a value is not representable (1.5 or 3e9 for int32, a bool for float32, ...); the shape comes
// from the nesting and ragged lists (and dicts) are refused. `key` names the input in errors.
Result<Tensor> LiteralToTensor(const Literal& literal, DType dtype, std::string_view key);

// The dtype used when the input's dtype is unknown (its name is not in the signature): bool for
// booleans, string for quoted text, float32 if any number has a fraction or exponent, int32
// otherwise.
DType NaturalDType(const Literal& literal);

}  // namespace kiln::cli
