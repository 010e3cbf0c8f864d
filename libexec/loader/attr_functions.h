// The functions a node's attrs name: a call's `f`, If/Case branches, While's cond and body, a
// dataset's map function. What a walk over the functions a graph may run follows, besides
// the node's own op when that is a library function.
#pragma once

#include <string>
#include <vector>

#include "tensorflow/framework.pb.h"

namespace kiln::exec {

inline std::vector<std::string> AttrFunctions(const tensorflow::NodeDef& node) {
  std::vector<std::string> out;
  for (const auto& [name, value] : node.attr()) {
    if (value.has_func()) out.push_back(value.func().name());
    if (value.has_list())
      for (const auto& f : value.list().func()) out.push_back(f.name());
  }
  return out;
}

}  // namespace kiln::exec
