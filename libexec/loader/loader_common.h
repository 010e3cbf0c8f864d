// What the SavedModel loader (saved_model_loader.cc) and the PlanModel loader (plan_model.cc)
// share: which signatures a load wants, the capture values a function is prepared with, and
// looking up a loaded model's signatures and restored functions by name.
#pragma once

#include <algorithm>
#include <filesystem>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "kiln/core/status.h"
#include "kiln/core/tensor.h"
#include "kiln/exec/saved_model.h"

namespace kiln::exec {

// The meta graph whose tag set is `tags` (in any order), or null.
const tensorflow::MetaGraphDef* FindMetaGraph(const tensorflow::SavedModel& proto,
                                              const std::vector<std::string>& tags);

// Whether a load with `options` prepares signature `key` (an empty list: every signature).
inline bool WantsSignature(const LoadOptions& options, std::string_view key) {
  return options.signatures.empty() ||
         std::find(options.signatures.begin(), options.signatures.end(), key) !=
             options.signatures.end();
}

// The path of the bundle's asset `filename`: dir/assets/filename. A name that is absolute or
// climbs out of assets/ ("..") is refused, naming it: TensorFlow joins such a name as it is,
// but a model kiln loads reaches no host file outside its bundle (docs/server.md).
inline Result<std::string> AssetPath(const std::filesystem::path& dir,
                                     const std::string& filename) {
  const std::filesystem::path name(filename);
  const std::filesystem::path normal = name.lexically_normal();
  if (filename.empty() || name.has_root_path() || normal.empty() || *normal.begin() == "..")
    return InvalidArgument("asset filename '", filename, "' of '", dir.string(),
                           "' is not a path inside its assets/ directory (absolute, or "
                           "escaping it with '..'); kiln refuses assets outside the bundle");
  return (dir / "assets" / name).string();
}

// A scalar DT_RESOURCE tensor holding `r` (how a captured variable is passed).
inline Tensor ResourceTensor(std::shared_ptr<ResourceBase> r) {
  Tensor t(DType::kResource, Shape());
  t.scalar<std::shared_ptr<ResourceBase>>() = std::move(r);
  return t;
}

// A prepared function's known arguments: the caller's `n_user` unknown ones, then the captures.
inline std::vector<Tensor> KnownCaptures(size_t n_user, const std::vector<Tensor>& captures) {
  std::vector<Tensor> known(n_user);
  known.insert(known.end(), captures.begin(), captures.end());
  return known;
}

template <typename Map>
std::vector<std::string> NamesOf(const Map& map) {
  std::vector<std::string> names;
  names.reserve(map.size());
  for (const auto& [k, v] : map) names.push_back(k);
  return names;
}

// A missing name is NotFound listing what the model has; `what` names the kind of thing
// ("signature", "restored function").
template <typename Map>
Result<const typename Map::mapped_type*> FindIn(const Map& map, std::string_view name,
                                                std::string_view what,
                                                const std::filesystem::path& dir) {
  auto it = map.find(name);
  if (it != map.end()) return &it->second;
  std::string avail;
  for (const auto& [k, v] : map) avail += (avail.empty() ? "'" : ", '") + k + "'";
  return NotFound("no ", what, " '", name, "' in '", dir.string(),
                  "'; available: ", avail.empty() ? "none" : avail);
}

}  // namespace kiln::exec
