#include "kiln/exec/executor.h"
#include "tensorflow/framework.pb.h"

namespace kiln::exec {

FunctionLibrary::FunctionLibrary(const tensorflow::FunctionDefLibrary& lib) {
  for (const auto& f : lib.function()) Add(f);
}

void FunctionLibrary::Add(const tensorflow::FunctionDef& fdef) {
  functions_[fdef.signature().name()] = &fdef;
}

const tensorflow::FunctionDef* FunctionLibrary::Find(std::string_view name) const {
  auto it = functions_.find(name);
  return it == functions_.end() ? nullptr : it->second;
}

}  // namespace kiln::exec
