// Where `--outdir` writes each output of `savedmodel-cli run` and `kiln-run`.
#pragma once

#include <filesystem>
#include <string_view>

#include "kiln/core/status.h"

namespace kiln::cli {

// outdir/<key>.npy; a key with '/' (Keras allows "out/a") names a file in a subdirectory. A key
// that would leave outdir ("../x", "/x", "a/./b") is an error naming it and `signature`.
Result<std::filesystem::path> OutputNpyPath(const std::filesystem::path& outdir,
                                            std::string_view key, std::string_view signature);

}  // namespace kiln::cli
