// int8 mode's activation half (docs/quantize.md, "int8"): after the weights' rewrite, the
// float32 activations those weights compute with are observed on the calibration data (a linked
// copy of the float bundle whose activations pass host callbacks, run through
// QuantizeOptions::calibrate), and each then passes a FakeQuantWithMinMaxArgs of the range it
// took, which TensorFlow runs as it is and kiln's engine runs with integer kernels.
#pragma once

#include <filesystem>
#include <vector>

#include "kiln/exec/quantize.h"
#include "quantize/variable_uses.h"
#include "tensorflow/saved_model.pb.h"

namespace kiln::exec::quantize {

// `graph` is meta graph `meta_graph` of the bundle being written; `float_proto` the input's
// proto before any rewrite; `quantized` the uses of every variable stored as int8.
Status QuantizeActivations(const std::filesystem::path& input,
                           const tensorflow::SavedModel& float_proto, int meta_graph,
                           MetaGraphUses* graph, const std::vector<VariableUses>& quantized,
                           const QuantizeOptions& options,
                           std::vector<QuantizedActivation>* activations);

}  // namespace kiln::exec::quantize
