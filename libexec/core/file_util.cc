#include "kiln/core/file_util.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstring>
#include <exception>
#include <limits>
#include <system_error>
#include <vector>

namespace kiln {
namespace fs = std::filesystem;

namespace {

std::string Quote(const fs::path& p) { return "'" + p.string() + "'"; }

Status ErrnoError(int err, std::string_view what, const fs::path& path) {
  std::string msg = internal::StrCat(what, " ", Quote(path), ": ", std::strerror(err));
  switch (err) {
    case ENOENT:
    case ENOTDIR:
      return Status(StatusCode::kNotFound, std::move(msg));
    case EACCES:
    case EPERM:
    case EROFS:
      return Status(StatusCode::kPermissionDenied, std::move(msg));
    case EISDIR:
      return Status(StatusCode::kFailedPrecondition, std::move(msg));
    default:
      return Status(StatusCode::kDataLoss, std::move(msg));
  }
}

class Fd {
 public:
  explicit Fd(int fd) : fd_(fd) {}
  ~Fd() {
    if (fd_ >= 0) ::close(fd_);
  }
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  int get() const { return fd_; }
  int release() { return std::exchange(fd_, -1); }

 private:
  int fd_;
};

// Best effort: data that reached the disk survives a crash right after the rename.
void SyncPath(const fs::path& p, bool directory) {
  int fd = ::open(p.c_str(), O_RDONLY | O_CLOEXEC | (directory ? O_DIRECTORY : 0));
  if (fd < 0) return;
  (void)::fsync(fd);
  ::close(fd);
}

void SyncTree(const fs::path& root) {
  std::error_code ec;
  for (fs::recursive_directory_iterator it(root, ec), end; !ec && it != end; it.increment(ec)) {
    std::error_code sec;
    auto st = it->symlink_status(sec);
    if (sec) continue;
    if (fs::is_regular_file(st)) SyncPath(it->path(), false);
    if (fs::is_directory(st)) SyncPath(it->path(), true);
  }
  SyncPath(root, true);
}

// Removes a temporary directory on every path out of WriteDirectoryAtomically unless
// dismissed.
class TreeRemover {
 public:
  explicit TreeRemover(fs::path p) : path_(std::move(p)) {}
  ~TreeRemover() {
    if (!path_.empty()) {
      std::error_code ec;
      fs::remove_all(path_, ec);
    }
  }
  void Dismiss() { path_.clear(); }

 private:
  fs::path path_;
};

std::atomic<uint64_t> g_tmp_counter{0};

fs::path SiblingName(const fs::path& parent, const fs::path& name, std::string_view kind) {
  return parent / internal::StrCat(".", name.string(), ".", kind, "-", ::getpid(), "-",
                                   g_tmp_counter.fetch_add(1));
}

// Whether process `pid` exists. EPERM means it exists but belongs to someone else.
bool ProcessAlive(pid_t pid) { return ::kill(pid, 0) == 0 || errno == EPERM; }

// The writer PID of a sibling named ".<name>.<kind>-<pid>-<n>" (SiblingName), or -1.
pid_t SiblingOwner(const std::string& entry, const std::string& name, std::string_view kind) {
  const std::string prefix = internal::StrCat(".", name, ".", kind, "-");
  if (entry.size() <= prefix.size() || entry.compare(0, prefix.size(), prefix) != 0) return -1;
  const std::string_view rest = std::string_view(entry).substr(prefix.size());
  const size_t dash = rest.find('-');
  if (dash == 0 || dash == std::string_view::npos || dash + 1 == rest.size()) return -1;
  auto digits = [](std::string_view d) {
    return d.size() <= 18 &&
           std::all_of(d.begin(), d.end(), [](char c) { return c >= '0' && c <= '9'; });
  };
  if (!digits(rest.substr(0, dash)) || !digits(rest.substr(dash + 1))) return -1;
  const long long pid = std::stoll(std::string(rest.substr(0, dash)));
  return pid > 0 && pid <= std::numeric_limits<pid_t>::max() ? static_cast<pid_t>(pid) : -1;
}

// Best effort: removes the temporary siblings of `name` that a killed writer left in `parent`
// (".name.tmp-PID-N", and ".name.old-PID-N" when `include_old`), whose PID is no longer alive.
// A live PID is never touched, whatever process it now is. ".old" siblings are kept while the
// target is missing: a writer killed between its two renames leaves the previous directory
// there, the only complete copy until a new one is in place.
void RemoveStaleSiblings(const fs::path& parent, const fs::path& name, bool include_old) {
  std::error_code ec;
  const std::string n = name.string();
  std::vector<fs::path> stale;
  for (fs::directory_iterator it(parent, ec), end; !ec && it != end; it.increment(ec)) {
    const std::string entry = it->path().filename().string();
    pid_t pid = SiblingOwner(entry, n, "tmp");
    if (pid < 0 && include_old) pid = SiblingOwner(entry, n, "old");
    if (pid < 0 || pid == ::getpid() || ProcessAlive(pid)) continue;
    std::error_code dec;
    if (it->is_directory(dec) && !it->is_symlink(dec)) stale.push_back(it->path());
  }
  for (const fs::path& p : stale) fs::remove_all(p, ec);
}

}  // namespace

Result<std::string> ReadFileToString(const fs::path& path) {
  Fd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (fd.get() < 0) return ErrnoError(errno, "cannot open", path);
  struct stat st;
  if (::fstat(fd.get(), &st) != 0) return ErrnoError(errno, "cannot stat", path);
  if (S_ISDIR(st.st_mode))
    return FailedPrecondition("cannot read ", Quote(path), ": it is a directory");
  std::string out;
  if (S_ISREG(st.st_mode)) out.reserve(static_cast<size_t>(st.st_size));
  char buf[1 << 16];
  for (;;) {
    ssize_t n = ::read(fd.get(), buf, sizeof(buf));
    if (n < 0) {
      if (errno == EINTR) continue;
      return ErrnoError(errno, "cannot read", path);
    }
    if (n == 0) break;
    out.append(buf, static_cast<size_t>(n));
  }
  return out;
}

namespace {

// Creates (or truncates) `path` and writes all of `contents`; with `sync`, flushed to disk
// before it is closed.
Status WriteContents(const fs::path& path, std::string_view contents, bool sync) {
  Fd fd(::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644));
  if (fd.get() < 0) return ErrnoError(errno, "cannot create", path);
  const char* p = contents.data();
  size_t left = contents.size();
  while (left > 0) {
    ssize_t n = ::write(fd.get(), p, left);
    if (n < 0) {
      if (errno == EINTR) continue;
      return ErrnoError(errno, "cannot write", path);
    }
    p += n;
    left -= static_cast<size_t>(n);
  }
  if (sync && ::fsync(fd.get()) != 0) return ErrnoError(errno, "cannot flush", path);
  if (::close(fd.release()) != 0) return ErrnoError(errno, "cannot close", path);
  return OkStatus();
}

}  // namespace

Status WriteStringToFile(const fs::path& path, std::string_view contents) {
  return WriteContents(path, contents, /*sync=*/false);
}

Status WriteFileAtomically(const fs::path& path, std::string_view contents) {
  std::error_code ec;
  // A bare file name ("report.json") is in the working directory, which exists.
  if (!path.parent_path().empty()) fs::create_directories(path.parent_path(), ec);
  if (ec) return ErrnoError(ec.value(), "cannot create the directory of", path);
  const fs::path tmp =
      path.parent_path() / ("." + path.filename().string() + ".tmp-" + std::to_string(::getpid()));
  Status written = WriteContents(tmp, contents, /*sync=*/true);
  if (written.ok() && ::rename(tmp.c_str(), path.c_str()) != 0)
    written = ErrnoError(errno, "cannot rename into", path);
  if (!written.ok()) ::unlink(tmp.c_str());
  return written;
}

namespace {

// Links what `from` holds and `into` lacks into `into` (directories recursively, files as hard
// links, symlinks as symlinks), then removes the `owned` paths from `into` that the old tree
// brought. `from` is left as it was.
Status CarryOver(const fs::path& from, const fs::path& into,
                 std::span<const std::string_view> owned) {
  std::error_code ec;
  std::vector<fs::path> carried;
  for (fs::directory_iterator it(from, ec), end; !ec && it != end; it.increment(ec)) {
    const fs::path name = it->path().filename();
    if (fs::exists(fs::symlink_status(into / name, ec))) continue;
    const bool is_owned = std::any_of(owned.begin(), owned.end(),
                                      [&](std::string_view o) { return fs::path(o) == name; });
    if (is_owned) continue;
    fs::copy(it->path(), into / name,
             fs::copy_options::recursive | fs::copy_options::create_hard_links |
                 fs::copy_options::copy_symlinks,
             ec);
    if (ec)
      return ErrnoError(ec.value(), "cannot keep what the previous directory held:", it->path());
    carried.push_back(name);
  }
  if (ec) return ErrnoError(ec.value(), "cannot list the previous directory", from);
  for (std::string_view o : owned) {
    const fs::path rel(o);
    if (rel.begin() == rel.end()) continue;
    if (std::find(carried.begin(), carried.end(), *rel.begin()) == carried.end()) continue;
    fs::remove_all(into / rel, ec);  // a link: the previous directory keeps its file
    if (ec) return ErrnoError(ec.value(), "cannot leave out", into / rel);
  }
  return OkStatus();
}

}  // namespace

Status WriteDirectoryAtomically(const fs::path& target,
                                const std::function<Status(const fs::path&)>& fill,
                                std::span<const std::string_view> owned) {
  fs::path clean = target.lexically_normal();
  if (!clean.has_filename()) clean = clean.parent_path();  // "dir/" -> "dir"
  const fs::path name = clean.filename();
  if (name.empty() || name == "." || name == "..") {
    return InvalidArgument("cannot write directory ", Quote(target), ": not a directory name");
  }
  fs::path parent = clean.parent_path();
  if (parent.empty()) parent = ".";

  std::error_code ec;
  auto parent_status = fs::status(parent, ec);
  if (!fs::exists(parent_status)) {
    // Missing parents are made, as tf.saved_model.save makes them (they hold nothing yet, so
    // a failure later loses nothing).
    fs::create_directories(parent, ec);
    if (ec) {
      return ErrnoError(ec.value(), "cannot write " + Quote(target) + ": cannot create its parent",
                        parent);
    }
    parent_status = fs::status(parent, ec);
  }
  if (!fs::is_directory(parent_status)) {
    return FailedPrecondition("cannot write ", Quote(target), ": parent ", Quote(parent),
                              " is not a directory");
  }
  if (::access(parent.c_str(), W_OK | X_OK) != 0) {
    return PermissionDenied("cannot write ", Quote(target), ": parent directory ", Quote(parent),
                            " is not writable");
  }
  auto target_status = fs::symlink_status(clean, ec);
  const bool target_exists = fs::exists(target_status);
  if (target_exists && !fs::is_directory(target_status)) {
    return FailedPrecondition("cannot write directory ", Quote(target),
                              ": a file that is not a directory is in the way");
  }

  RemoveStaleSiblings(parent, name, /*include_old=*/target_exists);

  fs::path tmp;
  for (int attempt = 0;; ++attempt) {
    tmp = SiblingName(parent, name, "tmp");
    if (::mkdir(tmp.c_str(), 0755) == 0) break;
    if (errno != EEXIST || attempt > 100) {
      return ErrnoError(errno, "cannot create temporary directory", tmp);
    }
  }
  TreeRemover remove_tmp(tmp);

  Status filled;
  try {
    filled = fill(tmp);
  } catch (const std::exception& e) {
    filled = Internal("writing ", Quote(target), ": exception: ", e.what());
  } catch (...) {
    filled = Internal("writing ", Quote(target), ": unknown exception");
  }
  KILN_RETURN_IF_ERROR(filled);
  if (target_exists) KILN_RETURN_IF_ERROR(CarryOver(clean, tmp, owned));
  SyncTree(tmp);

  fs::path backup;
  if (target_exists) {
    backup = SiblingName(parent, name, "old");
    if (::rename(clean.c_str(), backup.c_str()) != 0) {
      return ErrnoError(errno, "cannot move the previous directory aside:", clean);
    }
  }
  if (::rename(tmp.c_str(), clean.c_str()) != 0) {
    Status err = ErrnoError(errno, "cannot move the new directory into place at", clean);
    if (target_exists && ::rename(backup.c_str(), clean.c_str()) != 0) {
      return err.WithContext(internal::StrCat("previous directory left at ", Quote(backup)));
    }
    return err;
  }
  remove_tmp.Dismiss();
  if (target_exists) fs::remove_all(backup, ec);  // best effort: the new tree is in place
  if (!target_exists) RemoveStaleSiblings(parent, name, /*include_old=*/true);
  SyncPath(parent, true);
  return OkStatus();
}

void ReleaseMappedPages(const void* data, uint64_t size) {
  const auto page = static_cast<uintptr_t>(::sysconf(_SC_PAGESIZE));
  const auto begin = reinterpret_cast<uintptr_t>(data);
  const uintptr_t first = (begin + page - 1) / page * page;  // the edges hold other bytes
  const uintptr_t last = (begin + size) / page * page;
  // Advice: where it fails, the pages stay resident, which costs only memory. (madvise takes a
  // non-const pointer and writes nothing.)
  char* p = const_cast<char*>(static_cast<const char*>(data));
  if (last > first) (void)::madvise(p + (first - begin), last - first, MADV_DONTNEED);
}

}  // namespace kiln
