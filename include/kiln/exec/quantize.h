// Quantization of a SavedModel into a SavedModel (`savedmodel-cli quantize`): the weights are
// stored as int8 (symmetric, per output channel) or half precision, and every read of them is
// followed by the ops that turn them back into float32 (Cast, and Mul by the scales); in int8
// mode the activations those weights compute with also pass a FakeQuantWithMinMaxArgs whose
// range calibration data decided. TensorFlow, TF Serving and kiln all load and run the result.
// The input bundle is never modified; the output is written atomically. docs/quantize.md
// describes the rewrite.
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
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
  kInt8,         // int8 weights, and activations quantized to 8 bits with calibrated ranges
};

// How an activation's range is chosen from what calibration saw.
enum class CalibrationMethod {
  kMinMax,      // the largest magnitude seen
  kPercentile,  // a percentile of the magnitudes (outliers clipped)
};

// "weights_int8", "float16", "bfloat16", "int8".
Result<QuantizeMode> QuantizeModeFromName(std::string_view name);
std::string QuantizeModeName(QuantizeMode mode);

struct QuantizeOptions {
  QuantizeMode mode = QuantizeMode::kWeightsInt8;
  std::vector<std::string> tags = {"serve"};
  // int8: one scale per output channel (the axis the weight's consumer produces channels
  // along); false: one scale per tensor.
  bool per_channel = true;
  // Variables with fewer elements stay float32 (biases, normalization parameters), as
  // TFLite's dynamic-range quantization keeps tensors under 1024 elements. int8 mode ignores
  // it: it quantizes every weight a matrix product or convolution reads, and nothing else.
  int64_t min_elements = 1024;
  // Variables to keep float32: a variable's object path ("layer_with_weights-0/kernel"), its
  // name, or the op type or node name of an op that computes with it ("Conv2D"). A name that
  // matches nothing is an error.
  std::vector<std::string> exclude;
  // Replace an existing output directory (otherwise an existing output is an error).
  bool overwrite = false;
  // Check and plan everything, encode the weights and fill the report, but write nothing
  // (output_bytes stays 0). In int8 mode a dry run does not calibrate.
  bool dry_run = false;
  // int8: runs the calibration data through the bundle at the given path (a copy of the input
  // whose activations are observed; load it with SavedModel::Load in this process and run
  // the signatures). Required in int8 mode.
  std::function<Status(const std::filesystem::path& observed_bundle)> calibrate;
  CalibrationMethod method = CalibrationMethod::kMinMax;
  double percentile = 99.99;  // kPercentile: of the magnitudes, in (0, 100]
};

// int8: one activation tensor that quantized weights compute with.
struct QuantizedActivation {
  std::string function;  // the function that holds it ("" for the main graph)
  std::string tensor;    // its reference there ("sequential_1/conv2d_1/Relu:activations:0")
  std::vector<std::string> consumers;  // op types that read it ("Conv2D", "MatMul")
  double seen_min = 0, seen_max = 0;   // over the calibration data
  int64_t elements = 0;                // values seen
  // The FakeQuant range: [0, max] with 256 levels when nothing negative was seen, else
  // [-max, max] with 255 (narrow range, symmetric).
  float min = 0, max = 0;
  bool narrow_range = false;
  std::string kept_because;  // why it stays float (empty when quantized)
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
  uint64_t input_bytes = 0, output_bytes = 0;    // bundle sizes (every regular file)
  std::vector<QuantizedVariable> variables;      // every float32 variable, by object path
  std::vector<QuantizedActivation> activations;  // int8 mode
  int quantized_count() const;
};

// Writes the quantized copy of `input` to `output`. Errors name what is wrong: a TF1 bundle
// (no object graph), no variable to quantize (with the reason each was kept), an excluded name
// that matches nothing, output == input, int8 without a calibration function.
Result<QuantizeReport> QuantizeSavedModel(const std::filesystem::path& input,
                                          const std::filesystem::path& output,
                                          const QuantizeOptions& options);

}  // namespace kiln::exec
