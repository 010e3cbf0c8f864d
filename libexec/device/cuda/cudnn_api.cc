// Loads libcudnn.so.9 once (see cudnn_api.h).
#include "device/cuda/cudnn_api.h"

#include <dlfcn.h>

#include <string>

namespace kiln::exec::cuda {
namespace {

Result<DnnApi> Load() {
  void* lib = nullptr;
  std::string tried;
  for (const char* name : {"libcudnn.so.9", "libcudnn.so"}) {
    lib = dlopen(name, RTLD_NOW | RTLD_LOCAL);
    if (lib != nullptr) break;
    const char* why = dlerror();
    tried += std::string(tried.empty() ? "" : "; ") + (why ? why : name);
  }
  if (lib == nullptr)
    return Unavailable("cuDNN could not be loaded (", tried,
                       "); put CUDA's lib64 (or the nvidia-cudnn wheel's lib) on LD_LIBRARY_PATH");
  DnnApi api;
#define KILN_X(f)                                            \
  api.f = reinterpret_cast<decltype(api.f)>(dlsym(lib, #f)); \
  if (api.f == nullptr) return Unavailable("libcudnn has no '", #f, "': not cuDNN 9");
  KILN_CUDNN_FUNCTIONS(KILN_X)
#undef KILN_X
  return api;  // the library stays loaded for the process
}

}  // namespace

Result<const DnnApi*> Dnn() {
  static const Result<DnnApi> api = Load();
  if (!api.ok()) return api.status();
  return &*api;
}

Status CheckDnn(cudnnStatus_t status, std::string_view what) {
  if (status == CUDNN_STATUS_SUCCESS) return OkStatus();
  const char* text = nullptr;
  if (auto api = Dnn(); api.ok()) text = (*api)->cudnnGetErrorString(status);
  return Internal(what, " failed: ", text != nullptr ? text : "cuDNN status ",
                  text != nullptr ? "" : std::to_string(static_cast<int>(status)));
}

}  // namespace kiln::exec::cuda
