// Looking up a loaded model's signatures and restored functions by name, for SavedModel and
// PlanModel alike: a missing name is NotFound listing what the model has.
#pragma once

#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "kiln/core/status.h"

namespace kiln::exec {

template <typename Map>
std::vector<std::string> NamesOf(const Map& map) {
  std::vector<std::string> names;
  names.reserve(map.size());
  for (const auto& [k, v] : map) names.push_back(k);
  return names;
}

// `what` names the kind of thing ("signature", "restored function").
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
