// Small filesystem helpers with the project's error model.
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <span>
#include <string>
#include <string_view>

#include "kiln/core/status.h"

namespace kiln {

// NotFound / PermissionDenied / DataLoss errors name the path.
Result<std::string> ReadFileToString(const std::filesystem::path& path);
Status WriteStringToFile(const std::filesystem::path& path, std::string_view contents);
// Writes `contents` to a temporary sibling, flushes it to disk and renames it over `path`, so a
// reader sees the old file or the new one, never a part. Creates the parent directory.
Status WriteFileAtomically(const std::filesystem::path& path, std::string_view contents);

// Writes a directory so that `target` is either untouched or complete: `fill` writes into a
// fresh temporary sibling directory, which then replaces `target` by rename. A previous
// directory at `target` survives any failure; what it holds that the new tree lacks (a user's
// own files beside a SavedModel, TF Serving's assets.extra) carries over into the new one, as
// hard links made before the swap, except the paths in `owned` (relative to `target`: what the
// writer's own output consists of, stale once replaced). Makes missing parents; fails clearly
// when the parent is not a writable directory. Temporary siblings are named ".NAME.tmp-PID-N" /
// ".NAME.old-PID-N"; those a killed writer left behind (same NAME, PID no longer alive) are
// removed by the next write of NAME into the same parent.
Status WriteDirectoryAtomically(const std::filesystem::path& target,
                                const std::function<Status(const std::filesystem::path&)>& fill,
                                std::span<const std::string_view> owned = {});

// Gives back the resident pages wholly inside [data, data + size) of a private read-only file
// mapping: read again, they come back from the page cache or the file. Only for such mappings
// (a tensor bundle's or a plan's), never for other memory, whose contents would be lost.
void ReleaseMappedPages(const void* data, uint64_t size);

}  // namespace kiln
