#include "bundle/mapped_file.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <vector>

#include "bundle/crc32c.h"
#include "kiln/core/file_util.h"

namespace kiln::exec {
namespace {

Status OpenError(int err, std::string_view what, const std::string& path) {
  std::string msg = internal::StrCat(what, " bundle data file '", path, "': ", std::strerror(err));
  return err == ENOENT ? Status(StatusCode::kNotFound, std::move(msg))
                       : Status(StatusCode::kDataLoss, std::move(msg));
}

}  // namespace

Result<std::shared_ptr<const MappedFile>> MappedFile::Open(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return OpenError(errno, "cannot open", path);
  struct stat st;
  if (::fstat(fd, &st) != 0) {
    const int err = errno;
    ::close(fd);
    return OpenError(err, "cannot stat", path);
  }
  std::shared_ptr<MappedFile> file(new MappedFile());
  file->size_ = static_cast<uint64_t>(st.st_size);
  if (file->size_ == 0) {  // mmap refuses empty files; there is nothing to read anyway
    ::close(fd);
    return std::shared_ptr<const MappedFile>(std::move(file));
  }
  void* p = ::mmap(nullptr, file->size_, PROT_READ, MAP_PRIVATE, fd, 0);
  ::close(fd);  // the mapping keeps the file
  if (p != MAP_FAILED) {
    // Small pages: a read of a small entry (a bias) would otherwise map the whole 2 MiB folio
    // around it where the page cache holds large folios, and pages given back (ReleasePages)
    // are whole small pages. Advice only: without it the file reads the same.
    (void)::madvise(p, file->size_, MADV_NOHUGEPAGE);
    file->data_ = static_cast<const char*>(p);
    file->mapped_ = true;
    return std::shared_ptr<const MappedFile>(std::move(file));
  }
  // Some filesystems cannot map files: read the bytes instead.
  const int map_err = errno;
  KILN_ASSIGN_OR_RETURN_CTX(file->copy_, ReadFileToString(path), "reading bundle data file '", path,
                            "' (mmap failed: ", std::strerror(map_err), ")");
  file->size_ = file->copy_.size();
  file->data_ = file->copy_.data();
  return std::shared_ptr<const MappedFile>(std::move(file));
}

void MappedFile::ReleasePages() const {
  if (mapped_) ReleaseMappedPages(data_, size_);
}

namespace {

// One piece per thread, joined with crc32c::Combine: the pass is bound by reading memory, which
// two cores do faster than one.
uint32_t ChecksumInPieces(const char* data, uint64_t size, const ThreadPool* threads) {
  constexpr uint64_t kMinPiece = uint64_t{1} << 20;
  const int pieces =
      threads == nullptr
          ? 1
          : static_cast<int>(std::min<uint64_t>(threads->num_threads(), size / kMinPiece));
  if (pieces <= 1) return crc32c::Value(data, size);
  const uint64_t piece = (size + pieces - 1) / pieces;
  std::vector<uint32_t> crcs(pieces);
  threads->ParallelFor(pieces, 1, [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) {
      const uint64_t at = static_cast<uint64_t>(i) * piece;
      crcs[i] = crc32c::Value(data + at, std::min(piece, size - at));
    }
  });
  uint32_t crc = crcs[0];
  for (int i = 1; i < pieces; ++i) {
    const uint64_t at = static_cast<uint64_t>(i) * piece;
    crc = crc32c::Combine(crc, crcs[i], std::min(piece, size - at));
  }
  return crc;
}

}  // namespace

uint32_t ChecksumOf(const char* data, uint64_t size, const ThreadPool* threads, bool mapped) {
  if (!mapped) return ChecksumInPieces(data, size, threads);
  // Windows end on addresses that are multiples of the window size (so on page boundaries):
  // each window's pages go back whole, and only the range's edge pages stay.
  constexpr uintptr_t kWindow = uintptr_t{16} << 20;
  uint32_t crc = 0;
  uint64_t done = 0;
  while (done < size) {
    const auto at = reinterpret_cast<uintptr_t>(data + done);
    const uint64_t n = std::min<uint64_t>(size - done, (at / kWindow + 1) * kWindow - at);
    const uint32_t piece = ChecksumInPieces(data + done, n, threads);
    crc = done == 0 ? piece : crc32c::Combine(crc, piece, n);
    ReleaseMappedPages(data + done, n);
    done += n;
  }
  return crc;
}

MappedFile::~MappedFile() {
  if (mapped_) ::munmap(const_cast<char*>(data_), size_);
}

}  // namespace kiln::exec
