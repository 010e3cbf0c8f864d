// Loads libcublasLt.so once (see cublaslt_api.h).
#include "device/cuda/cublaslt_api.h"

#include <dlfcn.h>

#include <string>

namespace kiln::exec::cuda {
namespace {

Result<BlasLtApi> Load() {
  void* lib = nullptr;
  std::string tried;
  for (const char* name : {"libcublasLt.so.13", "libcublasLt.so"}) {
    lib = dlopen(name, RTLD_NOW | RTLD_LOCAL);
    if (lib != nullptr) break;
    const char* why = dlerror();
    tried += std::string(tried.empty() ? "" : "; ") + (why ? why : name);
  }
  if (lib == nullptr)
    return Unavailable("cuBLASLt could not be loaded (", tried,
                       "); put CUDA's lib64 (or the nvidia-cublas wheel's lib) on LD_LIBRARY_PATH");
  BlasLtApi api;
#define KILN_X(f)                                            \
  api.f = reinterpret_cast<decltype(api.f)>(dlsym(lib, #f)); \
  if (api.f == nullptr) return Unavailable("libcublasLt has no '", #f, "': too old a cuBLAS");
  KILN_CUBLASLT_FUNCTIONS(KILN_X)
#undef KILN_X
  return api;  // the library stays loaded for the process
}

}  // namespace

Result<const BlasLtApi*> BlasLt() {
  static const Result<BlasLtApi> api = Load();
  if (!api.ok()) return api.status();
  return &*api;
}

Status CheckBlas(cublasStatus_t status, std::string_view what) {
  if (status == CUBLAS_STATUS_SUCCESS) return OkStatus();
  return Internal(what, " failed: cuBLAS status ", static_cast<int>(status));
}

}  // namespace kiln::exec::cuda
