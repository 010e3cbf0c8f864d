// A bundle data file mapped read-only (PROT_READ, MAP_PRIVATE). Its pages come from the page
// cache, so every process that maps the same file shares them, and tensors that alias the
// mapping hold it (std::shared_ptr) for as long as they live. A write through the mapping
// faults: nothing may write a tensor that aliases it (TensorBuffer::ReadOnlyView).
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "kiln/core/status.h"
#include "kiln/exec/thread_pool.h"

namespace kiln::exec {

class MappedFile {
 public:
  // NotFound when the file does not exist; DataLoss for other failures. A file that cannot be
  // mapped (a filesystem without mmap) is read into memory instead, with the same interface.
  static Result<std::shared_ptr<const MappedFile>> Open(const std::string& path);
  ~MappedFile();
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;

  const char* data() const { return data_; }
  uint64_t size() const { return size_; }
  // Whether data() is a mapping of the file (false: a copy read into memory).
  bool mapped() const { return mapped_; }
  // Gives back the mapping's resident pages (after a checksum pass read them all): what is read
  // again comes back from the page cache or the file. Nothing for a copy.
  void ReleasePages() const;

 private:
  MappedFile() = default;
  const char* data_ = nullptr;
  uint64_t size_ = 0;
  bool mapped_ = false;
  std::string copy_;  // the file's bytes when it could not be mapped
};

// The CRC32C of [data, data + size), split across `threads` (nullptr: this thread). `mapped`:
// the bytes are a MappedFile's mapping, checked in windows whose pages go back once read, so a
// check of a large file or entry never holds more than a window of it.
uint32_t ChecksumOf(const char* data, uint64_t size, const ThreadPool* threads, bool mapped);

}  // namespace kiln::exec
