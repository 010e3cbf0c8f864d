// Helpers shared by the savedmodel-cli tests: fixture paths, temporary directories and running
// the CLI in-process with captured output.
#pragma once

#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "savedmodel_cli/cli.h"

namespace kiln::cli::testing {

inline std::filesystem::path Fixture(const std::string& name) {
  return std::filesystem::path(KILN_FIXTURES_DIR) / name;
}

inline std::filesystem::path Golden(const std::string& name) {
  return std::filesystem::path(KILN_TESTDATA_DIR) / "golden" / name;
}

inline std::string ReadText(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

inline void WriteText(const std::filesystem::path& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary);
  out << text;
}

// A fresh directory under the system temp dir, removed with its contents at scope exit.
class TempDir {
 public:
  TempDir() {
    static std::atomic<int> counter{0};
    path_ = std::filesystem::temp_directory_path() /
            ("kiln_cli_test_" + std::to_string(::getpid()) + "_" + std::to_string(counter++));
    std::filesystem::remove_all(path_);
    std::filesystem::create_directories(path_);
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

struct CliResult {
  int rc = 0;
  std::string out;
  std::string err;
};

inline CliResult RunCli(const std::vector<std::string>& args) {
  std::ostringstream out, err;
  CliResult r;
  r.rc = Main(args, out, err);
  r.out = out.str();
  r.err = err.str();
  return r;
}

}  // namespace kiln::cli::testing
