// Merging tensor bundles, as TensorFlow's MergeV2Checkpoints does: the data files of every
// source bundle are renamed into the destination's numbering and one index lists all entries.
#pragma once

#include <string>
#include <vector>

#include "kiln/core/status.h"

namespace kiln::exec {

struct MergeOptions {
  // A source whose index is missing is skipped instead of failing.
  bool allow_missing_files = false;
  // Afterwards, each source's directory is removed when it is empty.
  bool delete_old_dirs = true;
};

// Sources keep their keys (a key in two sources is an error) and are consumed: their data files
// move to `destination` and their indexes are deleted. The destination's directory is created.
Status MergeBundles(const std::vector<std::string>& sources, const std::string& destination,
                    const MergeOptions& options = {});

}  // namespace kiln::exec
