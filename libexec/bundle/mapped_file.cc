#include "bundle/mapped_file.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

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

MappedFile::~MappedFile() {
  if (mapped_) ::munmap(const_cast<char*>(data_), size_);
}

}  // namespace kiln::exec
