#include "output_files.h"

#include <string>

namespace kiln::cli {

Result<std::filesystem::path> OutputNpyPath(const std::filesystem::path& outdir,
                                            std::string_view key, std::string_view signature) {
  const std::filesystem::path rel(std::string(key) + ".npy");
  bool escapes = rel.is_absolute() || rel.has_root_name();
  for (const auto& part : rel) escapes = escapes || part == ".." || part == ".";
  if (escapes)
    return InvalidArgument("output key '", key, "' of signature '", signature,
                           "' would be written outside --outdir; run without --outdir");
  return outdir / rel;
}

}  // namespace kiln::cli
