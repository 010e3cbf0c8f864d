// Helpers shared by the kiln::trace tests: the seed notes' DemoModule, temporary directories and
// capturing graph prints.
#pragma once

#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <string>

#include "kiln/core/file_util.h"
#include "kiln/exec/op_table.h"
#include "kiln/trace/trace.h"

namespace kiln::trace::testing {

// The seed notes' DemoModule: x += a; tf.print(x); return x. `traces` counts body runs (a plain C++
// side effect: it changes only while tracing).
class DemoModule : public Module {
 public:
  explicit DemoModule(float init = 1.0f)
      : Module("demo_module"),
        x(AddVariable("x", Tensor::Scalar(init))),
        addprint(AddMethod("addprint", {{"a", DType::kFloat}},
                           [this](const Values& args) -> Result<Values> {
                             ++traces;
                             x.AssignAdd(args[0]);
                             KILN_RETURN_IF_ERROR(Print({x.Read()}));
                             return Values{x.Read()};
                           })) {}

  Variable x;
  Function& addprint;
  int traces = 0;
};

// Collects what graph print ops write while it lives.
class CapturePrints {
 public:
  CapturePrints() {
    exec::SetDefaultPrintSink([this](std::string_view, std::string_view text) { text_ += text; });
  }
  ~CapturePrints() { exec::SetDefaultPrintSink(nullptr); }
  const std::string& text() const { return text_; }

 private:
  std::string text_;
};

// A fresh directory under the system temp dir, removed with its contents at scope exit.
class TempDir {
 public:
  TempDir() {
    static std::atomic<int> counter{0};
    path_ = std::filesystem::temp_directory_path() /
            ("kiln_trace_test_" + std::to_string(::getpid()) + "_" + std::to_string(counter++));
    std::filesystem::remove_all(path_);
    std::filesystem::create_directories(path_);
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::permissions(path_, std::filesystem::perms::owner_all,
                                 std::filesystem::perm_options::add, ec);
    std::filesystem::remove_all(path_, ec);
  }
  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

inline std::string ReadAll(const std::filesystem::path& p) {
  Result<std::string> s = ReadFileToString(p);
  return s.ok() ? *s : std::string("<unreadable: ") + s.status().ToString() + ">";
}

}  // namespace kiln::trace::testing
