#include "kiln/core/file_util.h"

#include <doctest/doctest.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <stdexcept>
#include <string>
#include <vector>

#include "exec/test_util.h"

namespace kiln {
namespace {

namespace fs = std::filesystem;
using kiln::testing::ReadAll;
using kiln::testing::TempDir;

// Everything in `dir` (names only), to prove no temporary sibling was left behind.
std::vector<std::string> Listing(const fs::path& dir) {
  std::vector<std::string> names;
  for (const auto& e : fs::directory_iterator(dir)) names.push_back(e.path().filename().string());
  std::sort(names.begin(), names.end());
  return names;
}

Status WriteOne(const fs::path& dir, const std::string& name, const std::string& text) {
  return WriteStringToFile(dir / name, text);
}

TEST_CASE("file_util: ReadFileToString / WriteStringToFile round trip and name the path") {
  TempDir dir;
  const std::string bytes("a\0b\xff", 4);
  REQUIRE(WriteStringToFile(dir.path() / "f.bin", bytes).ok());
  auto back = ReadFileToString(dir.path() / "f.bin");
  REQUIRE(back.ok());
  CHECK(*back == bytes);

  auto missing = ReadFileToString(dir.path() / "nope.txt");
  REQUIRE(!missing.ok());
  CHECK(missing.status().code() == StatusCode::kNotFound);
  CHECK(missing.status().message().find((dir.path() / "nope.txt").string()) != std::string::npos);

  Status no_dir = WriteStringToFile(dir.path() / "missing" / "f.txt", "x");
  CHECK(no_dir.code() == StatusCode::kNotFound);
  CHECK(no_dir.message().find("missing/f.txt") != std::string::npos);

  auto is_dir = ReadFileToString(dir.path());
  REQUIRE(!is_dir.ok());
  CHECK(is_dir.status().code() == StatusCode::kFailedPrecondition);
}

TEST_CASE("file_util: WriteDirectoryAtomically creates, then replaces, leaving nothing behind") {
  TempDir dir;
  const fs::path target = dir.path() / "model";
  Status s = WriteDirectoryAtomically(target, [](const fs::path& tmp) {
    KILN_RETURN_IF_ERROR(WriteOne(tmp, "a.txt", "first"));
    fs::create_directory(tmp / "sub");
    return WriteOne(tmp / "sub", "b.txt", "nested");
  });
  REQUIRE_MESSAGE(s.ok(), s.ToString());
  CHECK(ReadAll(target / "a.txt") == "first");
  CHECK(ReadAll(target / "sub" / "b.txt") == "nested");
  CHECK(Listing(dir.path()) == std::vector<std::string>{"model"});

  // Replacing: files of the previous version that the new one lacks are gone.
  s = WriteDirectoryAtomically(
      target, [](const fs::path& tmp) { return WriteOne(tmp, "c.txt", "second"); });
  REQUIRE_MESSAGE(s.ok(), s.ToString());
  CHECK(Listing(target) == std::vector<std::string>{"c.txt"});
  CHECK(ReadAll(target / "c.txt") == "second");
  CHECK(Listing(dir.path()) == std::vector<std::string>{"model"});

  // A trailing slash names the same directory.
  s = WriteDirectoryAtomically(target.string() + "/",
                               [](const fs::path& tmp) { return WriteOne(tmp, "d.txt", "third"); });
  REQUIRE_MESSAGE(s.ok(), s.ToString());
  CHECK(Listing(target) == std::vector<std::string>{"d.txt"});
  CHECK(Listing(dir.path()) == std::vector<std::string>{"model"});
}

TEST_CASE("file_util: a failing fill keeps the previous directory intact") {
  TempDir dir;
  const fs::path target = dir.path() / "bundle";
  REQUIRE(WriteDirectoryAtomically(target, [](const fs::path& tmp) {
            return WriteOne(tmp, "saved_model.pb", "v1");
          }).ok());

  fs::path seen_tmp;
  Status s = WriteDirectoryAtomically(target, [&](const fs::path& tmp) {
    seen_tmp = tmp;
    KILN_RETURN_IF_ERROR(WriteOne(tmp, "saved_model.pb", "v2-partial"));
    return DataLoss("disk exploded halfway");
  });
  CHECK(s.code() == StatusCode::kDataLoss);
  CHECK(s.message() == "disk exploded halfway");
  CHECK(seen_tmp.parent_path() == dir.path());
  CHECK(seen_tmp.filename().string().rfind(".bundle.tmp-", 0) == 0);
  CHECK_FALSE(fs::exists(seen_tmp));
  CHECK(ReadAll(target / "saved_model.pb") == "v1");
  CHECK(Listing(dir.path()) == std::vector<std::string>{"bundle"});

  // An exception from fill does not escape and is handled the same way.
  s = WriteDirectoryAtomically(target, [](const fs::path& tmp) -> Status {
    (void)WriteOne(tmp, "saved_model.pb", "v3");
    throw std::runtime_error("boom");
  });
  CHECK(s.code() == StatusCode::kInternal);
  CHECK(s.message().find("boom") != std::string::npos);
  CHECK(ReadAll(target / "saved_model.pb") == "v1");
  CHECK(Listing(dir.path()) == std::vector<std::string>{"bundle"});

  // A failure with no previous directory leaves nothing at all.
  s = WriteDirectoryAtomically(dir.path() / "fresh",
                               [](const fs::path&) { return InvalidArgument("nope"); });
  CHECK(s.code() == StatusCode::kInvalidArgument);
  CHECK(Listing(dir.path()) == std::vector<std::string>{"bundle"});
}

TEST_CASE("file_util: WriteDirectoryAtomically names a missing or unusable parent") {
  TempDir dir;
  bool called = false;
  auto fill = [&](const fs::path&) {
    called = true;
    return OkStatus();
  };
  const fs::path missing_parent = dir.path() / "no" / "such";
  Status s = WriteDirectoryAtomically(missing_parent / "model", fill);
  CHECK(s.code() == StatusCode::kNotFound);
  CHECK(s.message().find("parent directory '" + missing_parent.string() + "' does not exist") !=
        std::string::npos);
  CHECK_FALSE(called);

  REQUIRE(WriteStringToFile(dir.path() / "file", "x").ok());
  s = WriteDirectoryAtomically(dir.path() / "file" / "model", fill);
  CHECK(s.code() == StatusCode::kFailedPrecondition);
  CHECK(s.message().find("is not a directory") != std::string::npos);

  s = WriteDirectoryAtomically(dir.path() / "file", fill);
  CHECK(s.code() == StatusCode::kFailedPrecondition);
  CHECK(ReadAll(dir.path() / "file") == "x");
  CHECK_FALSE(called);
}

TEST_CASE("file_util: WriteDirectoryAtomically refuses an unwritable parent") {
  TempDir dir;
  const fs::path ro = dir.path() / "readonly";
  fs::create_directory(ro);
  fs::permissions(ro, fs::perms::owner_read | fs::perms::owner_exec);
  if (::geteuid() == 0) {
    MESSAGE("running as root: permissions do not block writes, unwritable-parent check skipped");
  } else {
    bool called = false;
    Status s = WriteDirectoryAtomically(ro / "model", [&](const fs::path&) {
      called = true;
      return OkStatus();
    });
    CHECK(s.code() == StatusCode::kPermissionDenied);
    CHECK(s.message().find("'" + ro.string() + "' is not writable") != std::string::npos);
    CHECK_FALSE(called);
    CHECK(Listing(ro).empty());
  }
  fs::permissions(ro, fs::perms::owner_all);
}

}  // namespace
}  // namespace kiln
