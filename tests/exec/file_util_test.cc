#include "kiln/core/file_util.h"

#include <doctest/doctest.h>
#include <signal.h>
#include <sys/wait.h>
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

  // Replacing: what the new tree writes replaces the previous version's; what only the
  // previous one held stays (a user's files beside the bundle), but for the writer's own paths.
  const std::string_view owned[] = {"sub", "keep/stale.plan"};
  REQUIRE(WriteOne(target, "a.txt", "user's").ok());
  fs::create_directory(target / "keep");
  REQUIRE(WriteOne(target / "keep", "notes.txt", "mine").ok());
  REQUIRE(WriteOne(target / "keep", "stale.plan", "old").ok());
  s = WriteDirectoryAtomically(
      target,
      [](const fs::path& tmp) {
        KILN_RETURN_IF_ERROR(WriteOne(tmp, "a.txt", "second"));
        return WriteOne(tmp, "c.txt", "second");
      },
      owned);
  REQUIRE_MESSAGE(s.ok(), s.ToString());
  CHECK(Listing(target) == std::vector<std::string>{"a.txt", "c.txt", "keep"});
  CHECK(ReadAll(target / "a.txt") == "second");
  CHECK(ReadAll(target / "c.txt") == "second");
  CHECK(Listing(target / "keep") == std::vector<std::string>{"notes.txt"});
  CHECK(ReadAll(target / "keep" / "notes.txt") == "mine");
  CHECK(Listing(dir.path()) == std::vector<std::string>{"model"});

  // A trailing slash names the same directory.
  s = WriteDirectoryAtomically(target.string() + "/",
                               [](const fs::path& tmp) { return WriteOne(tmp, "d.txt", "third"); });
  REQUIRE_MESSAGE(s.ok(), s.ToString());
  CHECK(Listing(target) == std::vector<std::string>{"a.txt", "c.txt", "d.txt", "keep"});
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

TEST_CASE("file_util: WriteDirectoryAtomically makes missing parents, names an unusable one") {
  TempDir dir;
  bool called = false;
  auto fill = [&](const fs::path&) {
    called = true;
    return OkStatus();
  };
  const fs::path missing_parent = dir.path() / "no" / "such";
  Status s = WriteDirectoryAtomically(missing_parent / "model", fill);
  CHECK(s.ok());
  CHECK(called);
  CHECK(fs::is_directory(missing_parent / "model"));
  called = false;

  REQUIRE(WriteStringToFile(dir.path() / "file", "x").ok());
  s = WriteDirectoryAtomically(dir.path() / "file" / "sub" / "model", fill);
  CHECK_FALSE(s.ok());
  CHECK(s.message().find("cannot create its parent '" + (dir.path() / "file" / "sub").string() +
                         "'") != std::string::npos);
  CHECK_FALSE(called);

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

// A PID that no process has: a child that has exited and been reaped.
pid_t DeadPid() {
  const pid_t child = ::fork();
  if (child == 0) ::_exit(0);
  int status = 0;
  ::waitpid(child, &status, 0);
  return child;
}

TEST_CASE("file_util: a write kill -9'ed mid-fill leaves a temp dir the next write removes") {
  TempDir dir;
  const fs::path target = dir.path() / "bundle";
  int ready[2];
  REQUIRE(::pipe(ready) == 0);
  const pid_t writer = ::fork();
  REQUIRE(writer >= 0);
  if (writer == 0) {
    // The writer: fills its temporary directory, says so, and waits to be killed.
    (void)WriteDirectoryAtomically(target, [&](const fs::path& tmp) {
      (void)WriteOne(tmp, "half.txt", "half written");
      (void)::write(ready[1], "x", 1);
      for (;;) ::pause();
      return OkStatus();
    });
    ::_exit(1);
  }
  char c = 0;
  REQUIRE(::read(ready[0], &c, 1) == 1);
  ::kill(writer, SIGKILL);
  int status = 0;
  ::waitpid(writer, &status, 0);
  ::close(ready[0]);
  ::close(ready[1]);
  // ".bundle.tmp-PID-N": N counts this process's earlier writes (the child inherited it).
  const std::string left = ".bundle.tmp-" + std::to_string(writer) + "-";
  const std::vector<std::string> listed = Listing(dir.path());
  REQUIRE(listed.size() == 1);
  REQUIRE(listed[0].rfind(left, 0) == 0);

  REQUIRE(WriteDirectoryAtomically(target, [](const fs::path& tmp) {
            return WriteOne(tmp, "a.txt", "whole");
          }).ok());
  CHECK(Listing(dir.path()) == std::vector<std::string>{"bundle"});
  CHECK(ReadAll(target / "a.txt") == "whole");
}

TEST_CASE("file_util: only stale siblings of the same name with a dead PID are removed") {
  TempDir dir;
  const fs::path target = dir.path() / "bundle";
  const std::string dead = std::to_string(DeadPid());
  const std::string me = std::to_string(::getpid());
  const std::vector<std::string> stale = {".bundle.tmp-" + dead + "-0",
                                          ".bundle.tmp-" + dead + "-17"};
  const std::vector<std::string> kept = {
      ".bundle.tmp-" + me + "-99",    // a live writer (this process)
      ".other.tmp-" + dead + "-0",    // another target's
      ".bundle.tmp-x" + dead + "-0",  // not our naming
      ".bundle.tmp-" + dead,          // no counter
      ".bundle.old-" + dead + "-3",   // the previous tree of a writer killed mid-swap: the only
                                      // copy while no target exists, kept until one does
  };
  for (const auto& n : stale) fs::create_directory(dir.path() / n);
  for (const auto& n : kept) fs::create_directory(dir.path() / n);
  auto fill = [](const fs::path& tmp) { return WriteOne(tmp, "a.txt", "new"); };

  // With no target yet, the dead writer's .old sibling survives until the new target is in place.
  REQUIRE(WriteDirectoryAtomically(target, fill).ok());
  std::vector<std::string> expected = {"bundle"};
  for (size_t i = 0; i + 1 < kept.size(); ++i) expected.push_back(kept[i]);
  std::sort(expected.begin(), expected.end());
  CHECK(Listing(dir.path()) == expected);

  // Once a target exists, a dead writer's .old sibling is stale too.
  fs::create_directory(dir.path() / (".bundle.old-" + dead + "-4"));
  REQUIRE(WriteDirectoryAtomically(target, fill).ok());
  CHECK(Listing(dir.path()) == expected);
}

}  // namespace
}  // namespace kiln
