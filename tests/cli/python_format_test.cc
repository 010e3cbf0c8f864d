// Python's str/repr rules that `show` relies on, and StructuredValue decoding.
#include "python_format.h"

#include <doctest/doctest.h>
#include <google/protobuf/text_format.h>

#include <cmath>
#include <limits>

#include "savedmodel_cli/shape_text.h"
#include "savedmodel_cli/structured_value.h"

namespace kiln::cli {
namespace {

TEST_CASE("repr of str") {
  CHECK(PyReprString("serve") == "'serve'");
  CHECK(PyReprString("serve, gpu") == "'serve, gpu'");
  CHECK(PyReprString("it's") == "\"it's\"");
  CHECK(PyReprString("a'b\"c") == "'a\\'b\"c'");
  CHECK(PyReprString("tab\there\n") == "'tab\\there\\n'");
  CHECK(PyReprString("back\\slash") == "'back\\\\slash'");
  CHECK(PyReprString(std::string("\x01", 1)) == "'\\x01'");
  CHECK(PyReprString("caf\xc3\xa9") == "'caf\xc3\xa9'");  // printable non-ASCII stays
  CHECK(PyReprString("") == "''");
  // repr(bytes): the same quoting, every byte outside printable ASCII as \xNN.
  CHECK(PyReprBytes("abc") == "b'abc'");
  CHECK(PyReprBytes("it's") == "b\"it's\"");
  CHECK(PyReprBytes("a'b\"c") == "b'a\\'b\"c'");
  CHECK(PyReprBytes("tab\there\n") == "b'tab\\there\\n'");
  CHECK(PyReprBytes("caf\xc3\xa9") == "b'caf\\xc3\\xa9'");
  CHECK(PyReprBytes(std::string("\x00\x7f", 2)) == "b'\\x00\\x7f'");
  CHECK(PyReprBytes("") == "b''");
}

TEST_CASE("repr of float") {
  CHECK(PyReprDouble(1.0) == "1.0");
  CHECK(PyReprDouble(0.1) == "0.1");
  CHECK(PyReprDouble(-2.5) == "-2.5");
  CHECK(PyReprDouble(1e16) == "1e+16");
  CHECK(PyReprDouble(1e15) == "1000000000000000.0");
  CHECK(PyReprDouble(1.5e16) == "1.5e+16");
  CHECK(PyReprDouble(0.0001) == "0.0001");
  CHECK(PyReprDouble(0.00001) == "1e-05");
  CHECK(PyReprDouble(1.25e-7) == "1.25e-07");
  CHECK(PyReprDouble(123456.789) == "123456.789");
  CHECK(PyReprDouble(0.0) == "0.0");
  CHECK(PyReprDouble(-0.0) == "-0.0");
  CHECK(PyReprDouble(std::numeric_limits<double>::infinity()) == "inf");
  CHECK(PyReprDouble(std::nan("")) == "nan");
}

TEST_CASE("tag lists, op sets, dtype names, shapes") {
  CHECK(PyReprStringList({"serve"}) == "['serve']");
  CHECK(PyReprStringList({"serve", "gpu"}) == "['serve', 'gpu']");
  CHECK(PyReprStringList({}) == "[]");
  CHECK(PyReprSortedStringSet({"Mul", "AddV2", "Mul"}) == "{'AddV2', 'Mul'}");
  CHECK(PyReprSortedStringSet({}) == "set()");
  CHECK(TfDataTypeEnumName(0) == "DT_INVALID");
  CHECK(TfDataTypeEnumName(1) == "DT_FLOAT");
  CHECK(TfDataTypeEnumName(101) == "DT_FLOAT_REF");
  CHECK(TfDataTypeEnumName(23) == "DT_UINT64");
  CHECK(TfDataTypeEnumName(77) == "");
  CHECK(TfDTypePythonName(19) == "float16");
  CHECK(TfDTypePythonName(2) == "float64");

  tensorflow::TensorShapeProto s;
  CHECK(ShapeText(s, ShapeStyle::kCli) == "()");
  CHECK(ShapeText(s, ShapeStyle::kTensorShape) == "()");
  s.add_dim()->set_size(-1);
  CHECK(ShapeText(s, ShapeStyle::kCli) == "(-1)");
  CHECK(ShapeText(s, ShapeStyle::kTensorShape) == "(None,)");
  s.add_dim()->set_size(784);
  CHECK(ShapeText(s, ShapeStyle::kCli) == "(-1, 784)");
  CHECK(ShapeText(s, ShapeStyle::kTensorShape) == "(None, 784)");
  s.set_unknown_rank(true);
  CHECK(ShapeText(s, ShapeStyle::kCli) == "unknown_rank");
  CHECK(ShapeText(s, ShapeStyle::kTensorShape) == "<unknown>");
  CHECK(ShapeText(s, ShapeStyle::kTensorShapeRepr) == "TensorShape(None)");
  s.set_unknown_rank(false);
  CHECK(ShapeText(s, ShapeStyle::kTensorShapeRepr) == "TensorShape([None, 784])");
  const std::vector<int64_t> known = {2};
  CHECK(ShapeText(known, ShapeStyle::kTensorShape) == "(2,)");
  CHECK(ShapeText(known, ShapeStyle::kCli) == "(2)");
  CHECK(ShapeText(std::span<const int64_t>(), ShapeStyle::kTensorShapeRepr) == "TensorShape([])");
}

PyValue Decode(const char* text) {
  tensorflow::StructuredValue v;
  REQUIRE(google::protobuf::TextFormat::ParseFromString(text, &v));
  return DecodeStructuredValue(v);
}

TEST_CASE("StructuredValue decodes to Python values with Python's repr and str") {
  PyValue spec = Decode(R"pb(tensor_spec_value {
                               name: "a"
                               shape {
                                 dim { size: -1 }
                                 dim { size: 3 }
                               }
                               dtype: DT_FLOAT
                             })pb");
  CHECK(PyRepr(spec) == "TensorSpec(shape=(None, 3), dtype=tf.float32, name='a')");
  CHECK(PyTypeName(spec) == "TensorSpec");
  PyValue unnamed = Decode(R"pb(tensor_spec_value {
                                  shape { unknown_rank: true }
                                  dtype: DT_INT64
                                })pb");
  CHECK(PyRepr(unnamed) == "TensorSpec(shape=<unknown>, dtype=tf.int64, name=None)");

  PyValue tup = Decode(R"pb(tuple_value { values { int64_value: 1 } })pb");
  CHECK(PyRepr(tup) == "(1,)");
  PyValue nested = Decode(R"pb(list_value {
                                 values { string_value: "x" }
                                 values { none_value {} }
                                 values { bool_value: false }
                                 values { float64_value: 2 }
                               })pb");
  CHECK(PyRepr(nested) == "['x', None, False, 2.0]");
  CHECK(PyTypeName(nested) == "list");
  PyValue dict = Decode(R"pb(dict_value {
                               fields {
                                 key: "z"
                                 value { int64_value: 1 }
                               }
                               fields {
                                 key: "a"
                                 value { int64_value: 2 }
                               }
                             })pb");
  CHECK(PyRepr(dict) == "{'a': 2, 'z': 1}");  // keys sorted
  PyValue nt = Decode(R"pb(named_tuple_value {
                             name: "FullArgSpec"
                             values {
                               key: "args"
                               value { list_value { values { string_value: "a" } } }
                             }
                             values {
                               key: "varargs"
                               value { none_value {} }
                             }
                           })pb");
  CHECK(PyRepr(nt) == "FullArgSpec(args=['a'], varargs=None)");
  CHECK(PyTypeName(nt) == "FullArgSpec");
  PyValue shape = Decode(R"pb(tensor_shape_value {
                                dim { size: -1 }
                                dim { size: 2 }
                              })pb");
  CHECK(PyRepr(shape) == "TensorShape([None, 2])");
  CHECK(PyStr(shape) == "(None, 2)");
  PyValue dtype = Decode(R"pb(tensor_dtype_value: DT_HALF)pb");
  CHECK(PyRepr(dtype) == "tf.float16");
  CHECK(PyStr(dtype) == "<dtype: 'float16'>");
  CHECK(Decode("").is(PyValue::Kind::kMissing));
}

}  // namespace
}  // namespace kiln::cli
