#include "kiln/exec/executor.h"
#ifndef KILN_NO_PROTOBUF
#include "tensorflow/framework.pb.h"
#endif

namespace kiln::exec {

#ifndef KILN_NO_PROTOBUF

FunctionLibrary::FunctionLibrary(const tensorflow::FunctionDefLibrary& lib) {
  for (const auto& f : lib.function()) Add(f);
}

void FunctionLibrary::Add(const tensorflow::FunctionDef& fdef) {
  functions_[fdef.signature().name()] = &fdef;
}
#endif

const tensorflow::FunctionDef* FunctionLibrary::Find(std::string_view name) const {
  auto it = functions_.find(name);
  return it == functions_.end() ? nullptr : it->second;
}

}  // namespace kiln::exec
