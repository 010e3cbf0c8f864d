#include "ops/recorded_case.h"

#include <Eigen/Core>
#include <complex>
#include <cstdint>
#include <cstring>
#include <string>
#include <type_traits>

namespace kiln::testing {
namespace {

template <typename T>
void Fill(Tensor* t, const std::vector<double>& v) {
  T* data = t->data<T>();
  for (size_t i = 0; i < v.size(); ++i) {
    if constexpr (std::is_arithmetic_v<T>) {  // floats and integers
      data[i] = static_cast<T>(v[i]);
    } else if constexpr (std::is_same_v<T, std::complex<float>> ||
                         std::is_same_v<T, std::complex<double>>) {
      if (i % 2 == 0) {
        using R = typename T::value_type;
        data[i / 2] = T(static_cast<R>(v[i]), static_cast<R>(v[i + 1]));
      }
    } else if constexpr (std::is_same_v<T, Half>) {  // recorded exactly from a float16
      const Eigen::half h(static_cast<float>(v[i]));
      data[i] = Half{Eigen::numext::bit_cast<uint16_t>(h)};
    } else if constexpr (std::is_same_v<T, BFloat16>) {
      const auto f = static_cast<float>(v[i]);  // recorded exactly from a bfloat16
      uint32_t bits;
      std::memcpy(&bits, &f, 4);
      data[i] = BFloat16{static_cast<uint16_t>(bits >> 16)};
    } else {
      data[i].value = static_cast<decltype(T::value)>(static_cast<int64_t>(v[i]));
    }
  }
}

Tensor ToTensor(const RecordedTensor& r) {
  const DType dtype = *DTypeFromName(r.dtype);
  Tensor t(dtype, *Shape::FromDims(r.shape));
  switch (dtype) {
    case DType::kFloat:
      Fill<float>(&t, r.values);
      break;
    case DType::kDouble:
      Fill<double>(&t, r.values);
      break;
    case DType::kComplex64:
      Fill<std::complex<float>>(&t, r.values);
      break;
    case DType::kComplex128:
      Fill<std::complex<double>>(&t, r.values);
      break;
    case DType::kString:
      for (size_t i = 0; i < r.strings.size(); ++i) t.data<std::string>()[i] = r.strings[i];
      break;
    case DType::kBFloat16:
      Fill<BFloat16>(&t, r.values);
      break;
    case DType::kHalf:
      Fill<Half>(&t, r.values);
      break;
    case DType::kBool:
      Fill<bool>(&t, r.values);
      break;
    case DType::kInt8:
      Fill<int8_t>(&t, r.values);
      break;
    case DType::kInt16:
      Fill<int16_t>(&t, r.values);
      break;
    case DType::kInt32:
      Fill<int32_t>(&t, r.values);
      break;
    case DType::kInt64:
      Fill<int64_t>(&t, r.values);
      break;
    case DType::kUInt64:  // exact below 2^53, which the recorded keys and counters stay
      Fill<uint64_t>(&t, r.values);
      break;
    case DType::kQUInt8:
      Fill<QUInt8>(&t, r.values);
      break;
    case DType::kQInt8:
      Fill<QInt8>(&t, r.values);
      break;
    case DType::kQUInt16:
      Fill<QUInt16>(&t, r.values);
      break;
    case DType::kQInt16:
      Fill<QInt16>(&t, r.values);
      break;
    case DType::kQInt32:
      Fill<QInt32>(&t, r.values);
      break;
    default:
      FAIL("recorded dtype ", std::string(r.dtype), " not handled");
  }
  return t;
}

// "a,b,c" -> {"a", "b", "c"} ("" -> none).
std::vector<std::string> Split(const std::string& s) {
  std::vector<std::string> v;
  size_t pos = 0;
  while (pos < s.size()) {
    const size_t comma = s.find(',', pos);
    v.push_back(s.substr(pos, comma - pos));
    pos = comma == std::string::npos ? s.size() : comma + 1;
  }
  return v;
}

std::vector<int64_t> Ints(const std::string& s) {
  std::vector<int64_t> v;
  for (const std::string& e : Split(s)) v.push_back(std::stoll(e));
  return v;
}

}  // namespace

std::vector<OpCase> CasesFromRecorded(const std::vector<RecordedCase>& recorded,
                                      const std::function<double(std::string_view op)>& tolerance,
                                      const std::function<bool(std::string_view op)>& stateful) {
  std::vector<OpCase> c;
  int index = 0;
  for (const RecordedCase& r : recorded) {
    OpCaseBuilder b(r.op, std::string(r.op) + " recorded #" + std::to_string(index++));
    for (const RecordedAttr& a : r.attrs) {
      const std::string kind = a.kind;
      if (kind == "type") {
        b.Type(a.name, *DTypeFromName(a.value));
      } else if (kind == "int") {
        b.Int(a.name, std::stoll(a.value));
      } else if (kind == "float") {
        b.Float(a.name, std::stof(a.value));
      } else if (kind == "bool") {
        b.Bool(a.name, a.value == "true");
      } else if (kind == "string") {
        b.String(a.name, a.value);
      } else if (kind == "floats") {
        std::vector<float> v;
        for (const std::string& e : Split(a.value)) v.push_back(std::stof(e));
        b.FloatList(a.name, v);
      } else {
        b.IntList(a.name, Ints(a.value));
      }
    }
    for (const RecordedTensor& t : r.inputs) b.Input(ToTensor(t));
    if (stateful && stateful(r.op)) b.NonDeterministic();
    std::vector<Tensor> want;
    for (const RecordedTensor& t : r.outputs) want.push_back(ToTensor(t));
    c.push_back(b.Reference([want](const std::vector<Tensor>&) { return want; })
                    .Tolerance(tolerance(r.op))
                    .Build());
  }
  return c;
}

}  // namespace kiln::testing
