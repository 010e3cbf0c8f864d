// Helpers shared by tests: temporary directories and fixture copies.
#pragma once

#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <string>

namespace kiln::testing {

// A fresh directory under the system temp dir, removed when the object dies.
class TempDir {
 public:
  TempDir() {
    static std::atomic<int> counter{0};
    path_ = std::filesystem::temp_directory_path() /
            ("kiln-test-" + std::to_string(::getpid()) + "-" + std::to_string(counter++));
    std::filesystem::remove_all(path_);
    std::filesystem::create_directories(path_);
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

inline std::filesystem::path Fixture(const std::string& name) {
  return std::filesystem::path(KILN_FIXTURES_DIR) / name;
}

// Copies a read-only fixture so a test may damage it.
inline std::filesystem::path CopyFixture(const std::string& name, const TempDir& dir) {
  // Copied entry by entry so the copies are writable even when the fixtures are read-only.
  const auto src = Fixture(name);
  const auto dst = dir.path() / name;
  std::filesystem::create_directories(dst);
  for (const auto& e : std::filesystem::recursive_directory_iterator(src)) {
    const auto target = dst / std::filesystem::relative(e.path(), src);
    if (e.is_directory()) {
      std::filesystem::create_directories(target);
    } else {
      std::filesystem::copy_file(e.path(), target);
      std::filesystem::permissions(
          target, std::filesystem::perms::owner_read | std::filesystem::perms::owner_write,
          std::filesystem::perm_options::add);
    }
  }
  return dst;
}

inline std::string ReadAll(const std::filesystem::path& p) {
  std::ifstream f(p, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(f), {});
}
inline void WriteAll(const std::filesystem::path& p, const std::string& s) {
  std::ofstream f(p, std::ios::binary | std::ios::trunc);
  f << s;
}

}  // namespace kiln::testing
