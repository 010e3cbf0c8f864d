// Op-tester cases of TF's quantized-tensor ops (quantized_convert_ops.cc, quantized_ops.cc,
// quantized_image_ops.cc, quantized_product_ops.cc, quantized_reference_ops.cc,
// uniform_quantized_ops.cc, uniform_quantized_conv_ops.cc, QuantizedReshape): every case's
// reference is TensorFlow 2.21's own result for the same inputs and attrs, recorded by
// tests/ops/record_quantized_cases.py into cases_quantized_recorded.inc. Their integers come from
// two rounding families, qint32 read through float and flushed denormals, which a second
// hand-written model would only restate; TF's numbers are the spec.
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "ops/op_cases.h"
#include "ops/recorded_case.h"

namespace kiln::testing {
namespace {

using namespace std::string_literals;

const std::vector<RecordedCase>& Recorded() {
  static const std::vector<RecordedCase> cases = {
#include "ops/cases_quantized_recorded.inc"
  };
  return cases;
}

}  // namespace

std::vector<OpCase> QuantizedCases() {
  std::vector<OpCase> c = CasesFromRecorded(Recorded(), [](std::string_view op) {
    // Floats as TF printed them; the oneDNN float output (AndDequantize) within its rounding.
    return op.ends_with("Dequantize") ? 1e-6 : 0.0;
  });
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
