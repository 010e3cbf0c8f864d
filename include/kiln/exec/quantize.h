// Weight quantization of a SavedModel into a SavedModel (`savedmodel-cli quantize`): the
// weights are stored as int8 (symmetric, per output channel) or half precision, and every read
// of them is followed by the ops that turn them back into float32 (Cast, and Mul by the scales),
// so TensorFlow, TF Serving and kiln all load and run the result. The input bundle is never
// modified; the output is written atomically. docs/quantize.md describes the rewrite.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "kiln/core/dtype.h"
#include "kiln/core/shape.h"
#include "kiln/core/status.h"

namespace kiln::exec {

enum class QuantizeMode {
  kWeightsInt8,  // int8 weights, float activations (dynamic-range quantization)
  kFloat16,      // weights stored as float16
  kBFloat16,     // weights stored as bfloat16
};

// "weights_int8", "float16", "bfloat16".
Result<QuantizeMode> QuantizeModeFromName(std::string_view name);
std::string QuantizeModeName(QuantizeMode mode);

struct QuantizeOptions {
  QuantizeMode mode = QuantizeMode::kWeightsInt8;
  std::vector<std::string> tags = {"serve"};
  // int8: one scale per output channel (the axis the weight's consumer produces channels
  // along); false: one scale per tensor.
  bool per_channel = true;
  // Variables with fewer elements stay float32 (biases, normalization parameters), as
  // TFLite's dynamic-range quantization keeps tensors under 1024 elements.
  int64_t min_elements = 1024;
  // Variables to keep float32: a variable's object path ("layer_with_weights-0/kernel"), its
  // name, or the op type or node name of an op that computes with it ("Conv2D"). A name that
  // matches nothing is an error.
  std::vector<std::string> exclude;
  // Replace an existing output directory (otherwise an existing output is an error).
  bool overwrite = false;
  // Check and plan everything, encode the weights and fill the report, but write nothing
  // (output_bytes stays 0).
  bool dry_run = false;
};

// One float32 variable of the bundle and what happened to it.
struct QuantizedVariable {
  std::string path;  // object path from the root ("variables/4" in a Keras export)
  std::string name;  // the variable's own name ("conv2d/kernel"), when it has one
  std::string checkpoint_key;
  Shape shape;
  DType stored = DType::kFloat;  // the dtype the output bundle stores it as
  int axis = -1;                 // int8: the axis with one scale per index; -1: one scale
  float min_scale = 0, max_scale = 0;
  double relative_error = 0;  // ||w - dequantized(w)|| / ||w||
  double max_abs_error = 0;   // max |w - dequantized(w)|
  std::string kept_because;   // why it stays float32 (empty when quantized)
};

struct QuantizeReport {
  QuantizeMode mode = QuantizeMode::kWeightsInt8;
  std::filesystem::path output;
  uint64_t input_bytes = 0, output_bytes = 0;  // bundle sizes (every regular file)
  std::vector<QuantizedVariable> variables;    // every float32 variable, by object path
  int quantized_count() const;
};

// Writes the quantized copy of `input` to `output`. Errors name what is wrong: a TF1 bundle
// (no object graph), no variable to quantize (with the reason each was kept), an excluded name
// that matches nothing, output == input.
Result<QuantizeReport> QuantizeSavedModel(const std::filesystem::path& input,
                                          const std::filesystem::path& output,
                                          const QuantizeOptions& options);

}  // namespace kiln::exec
