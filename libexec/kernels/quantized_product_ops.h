// What the quantized products' definitions (kernels/quantized_product_ops.cc) and CPU kernels
// (kernels/cpu/quantized_product_ops.cc) share: each op's form and the state a definition builds.
#pragma once

#include <array>
#include <cstdint>
#include <string_view>

#include "kernels/window_util.h"
#include "kiln/core/dtype.h"
#include "kiln/exec/op_table.h"

namespace kiln::exec::quantized_product {

struct ConvForm {
  std::string_view op;
  bool bias, relu, requantize, depthwise;
  int sum;  // 0: none; 1: a float summand (qint32 output); 2: a quantized summand and its range
  DType default_out;
};

struct QConvState : OpState {
  const ConvForm* form = nullptr;
  DType input_type = DType::kQUInt8, bias_type = DType::kFloat, out_type = DType::kQInt32,
        summand_type = DType::kQUInt8;
  WindowPadding padding = WindowPadding::kValid;
  std::array<int64_t, 2> strides{1, 1}, dilations{1, 1};
  std::array<int64_t, 2> pad_before{0, 0}, pad_after{0, 0};  // padding_list
  bool explicit_pads = false;
  // Input positions past input and filter.
  int bias = -1, min_input = 0, min_filter = 0, min_freezed = -1, summand = -1, min_summand = -1;
};

struct MatMulForm {
  std::string_view op;
  bool relu, requantize, dequantize;
  DType default_out;
};

struct QMatMulState : OpState {
  MatMulForm form{};
  DType a_type = DType::kQUInt8, bias_type = DType::kFloat, out_type = DType::kQInt32;
  bool min_first = true;
};

}  // namespace kiln::exec::quantized_product
