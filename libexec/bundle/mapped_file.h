// A bundle data file mapped read-only (PROT_READ, MAP_PRIVATE). Its pages come from the page
// cache, so every process that maps the same file shares them, and tensors that alias the
// mapping hold it (std::shared_ptr) for as long as they live. A write through the mapping
// faults: nothing may write a tensor that aliases it (TensorBuffer::ReadOnlyView).
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "kiln/core/status.h"

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

 private:
  MappedFile() = default;
  const char* data_ = nullptr;
  uint64_t size_ = 0;
  bool mapped_ = false;
  std::string copy_;  // the file's bytes when it could not be mapped
};

}  // namespace kiln::exec
