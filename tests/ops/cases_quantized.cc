// Op-tester cases of TF's quantized-tensor ops (quantized_ops.cc, quantized_product_ops.cc,
// uniform_quantized_ops.cc, QuantizedReshape): every case's reference is TensorFlow 2.21's own
// result for the same inputs and attrs, recorded by tests/ops/record_quantized_cases.py into
// cases_quantized_recorded.inc. Their integers come from two rounding families, qint32 read through
// float and flushed denormals, which a second hand-written model would only restate; TF's numbers
// are the spec.
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "ops/op_cases.h"

namespace kiln::testing {
namespace {

struct RecordedAttr {
  const char* name;
  const char* kind;
  std::string value;  // a "..."s literal: serialized protos hold NUL bytes
};

struct RecordedTensor {
  const char* dtype;
  std::vector<int64_t> shape;
  std::vector<double> values;
};

struct RecordedCase {
  const char* op;
  std::vector<RecordedAttr> attrs;
  std::vector<RecordedTensor> inputs;
  std::vector<RecordedTensor> outputs;
};

using namespace std::string_literals;

const std::vector<RecordedCase>& Recorded() {
  static const std::vector<RecordedCase> cases = {
#include "ops/cases_quantized_recorded.inc"
  };
  return cases;
}

template <typename T>
void Fill(Tensor* t, const std::vector<double>& v) {
  T* data = t->data<T>();
  for (size_t i = 0; i < v.size(); ++i) {
    if constexpr (std::is_same_v<T, float>) {
      data[i] = static_cast<float>(v[i]);
    } else if constexpr (std::is_same_v<T, BFloat16>) {
      const auto f = static_cast<float>(v[i]);  // recorded exactly from a bfloat16
      uint32_t bits;
      std::memcpy(&bits, &f, 4);
      data[i] = BFloat16{static_cast<uint16_t>(bits >> 16)};
    } else if constexpr (std::is_integral_v<T>) {
      data[i] = static_cast<T>(v[i]);
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
    case DType::kBFloat16:
      Fill<BFloat16>(&t, r.values);
      break;
    case DType::kInt32:
      Fill<int32_t>(&t, r.values);
      break;
    case DType::kInt64:
      Fill<int64_t>(&t, r.values);
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
      FAIL("recorded dtype ", r.dtype, " not handled");
  }
  return t;
}

std::vector<int64_t> Ints(const std::string& s) {
  std::vector<int64_t> v;
  size_t pos = 0;
  while (pos < s.size()) {
    const size_t comma = s.find(',', pos);
    v.push_back(std::stoll(s.substr(pos, comma - pos)));
    pos = comma == std::string::npos ? s.size() : comma + 1;
  }
  return v;
}

}  // namespace

std::vector<OpCase> QuantizedCases() {
  std::vector<OpCase> c;
  int index = 0;
  for (const RecordedCase& r : Recorded()) {
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
      } else {
        b.IntList(a.name, Ints(a.value));
      }
    }
    for (const RecordedTensor& t : r.inputs) b.Input(ToTensor(t));
    std::vector<Tensor> want;
    for (const RecordedTensor& t : r.outputs) want.push_back(ToTensor(t));
    // Floats as TF printed them; the oneDNN float output (AndDequantize) within its rounding.
    c.push_back(b.Reference([want](const std::vector<Tensor>&) { return want; })
                    .Tolerance(std::string(r.op).ends_with("Dequantize") ? 1e-6 : 0)
                    .Build());
  }
  // QuantizedConcatV2 has only placeholder kernels in TF's reference build (its oneDNN build
  // concatenates); with equal ranges it is a plain concatenation along a (negative) axis.
  for (int64_t axis : {int64_t{-1}, int64_t{0}}) {
    Tensor a(DType::kQUInt8, Shape{2, 3}), b(DType::kQUInt8, Shape{2, 3});
    for (int i = 0; i < 6; ++i) {
      a.data<QUInt8>()[i].value = static_cast<uint8_t>(10 * i);
      b.data<QUInt8>()[i].value = static_cast<uint8_t>(7 * i + 1);
    }
    Tensor want(DType::kQUInt8, axis == 0 ? Shape{4, 3} : Shape{2, 6});
    for (int64_t i = 0; i < 12; ++i) {
      const int64_t row = axis == 0 ? i / 3 : i / 6, col = axis == 0 ? i % 3 : i % 6;
      const Tensor& src = axis == 0 ? (row < 2 ? a : b) : (col < 3 ? a : b);
      const int64_t k = axis == 0 ? (row % 2) * 3 + col : row * 3 + col % 3;
      want.data<QUInt8>()[i] = src.data<QUInt8>()[k];
    }
    c.push_back(OpCaseBuilder("QuantizedConcatV2", "QuantizedConcatV2 axis " + std::to_string(axis))
                    .T(DType::kQUInt8)
                    .Int("N", 2)
                    .Type("Tidx", DType::kInt32)
                    .Input(a)
                    .Input(b)
                    .Input(Tensor::Scalar<int32_t>(static_cast<int32_t>(axis)))
                    .Input(Tensor::Scalar<float>(-1.0f))
                    .Input(Tensor::Scalar<float>(-1.0f))
                    .Input(Tensor::Scalar<float>(2.0f))
                    .Input(Tensor::Scalar<float>(2.0f))
                    .Reference([want](const std::vector<Tensor>&) {
                      return std::vector<Tensor>{want, Tensor::Scalar<float>(-1.0f),
                                                 Tensor::Scalar<float>(2.0f)};
                    })
                    .Build());
  }
  return c;
}

}  // namespace kiln::testing
