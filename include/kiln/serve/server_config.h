// TensorFlow Serving's configuration files: --model_config_file (ModelServerConfig in protobuf
// text format: model_config_list { config { name base_path model_version_policy
// version_labels } }) and --batching_parameters_file (BatchingParameters). A model's own
// batching parameters may sit in <base_path>/batching_params.pbtxt (kiln's convention for
// per-model batching; same format).
#pragma once

#include <filesystem>
#include <optional>
#include <string_view>
#include <vector>

#include "kiln/core/status.h"
#include "kiln/serve/batcher.h"
#include "kiln/serve/model_repository.h"

namespace kiln::serve {

Result<std::vector<ModelSource>> ParseModelConfigText(std::string_view text,
                                                      std::string_view name = "<config>");
Result<std::vector<ModelSource>> ReadModelConfigFile(const std::filesystem::path& path);

// Batching on, with the file's parameters over the defaults.
Result<BatchingOptions> ParseBatchingParametersText(std::string_view text,
                                                    std::string_view name = "<batching>");
Result<BatchingOptions> ReadBatchingParametersFile(const std::filesystem::path& path);

// Reads <base_path>/batching_params.pbtxt into each source that has one.
Status AddPerModelBatching(std::vector<ModelSource>* sources);

}  // namespace kiln::serve
