// How Python prints the values saved_model_cli shows: str/repr of strings, floats, tag lists and
// sets, and TensorFlow's DataType names. Kept separate so each rule is tested on its own.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace kiln::cli {

// repr(str): 'serve', "it's", with Python's escapes.
std::string PyReprString(std::string_view s);
// repr(bytes): b'abc', b"it's", b'\xff\x00' (every byte outside printable ASCII escaped).
std::string PyReprBytes(std::string_view s);
// repr(float) for a double: 1.0, 0.1, 1e-05, 1e+16, inf, nan.
std::string PyReprDouble(double v);
// Python's rule for a shortest digit string: positional when 1e-4 <= |v| < 1e16, else
// scientific; `digits`/`exponent` describe v = 0.d1d2d3... * 10^exponent.
std::string PyFormatShortest(bool negative, const std::string& digits, int exponent);
// repr(list of str): ['serve', 'gpu'].
std::string PyReprStringList(const std::vector<std::string>& items);
// repr(set of str) with the items sorted: {'AddV2', 'Const'}, or set().
std::string PyReprSortedStringSet(std::vector<std::string> items);

// "DT_FLOAT" for 1, "DT_FLOAT_REF" for 101; "" for a number TensorFlow does not name.
std::string TfDataTypeEnumName(int dtype);
// "float32" for DT_FLOAT (tf.DType.name), "float32_ref" for refs; "" when unnamed.
std::string TfDTypePythonName(int dtype);

}  // namespace kiln::cli
