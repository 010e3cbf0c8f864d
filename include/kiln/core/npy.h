// NumPy .npy / .npz files: the simplest way to get arrays in and out of a C++ program that
// talks to Python users. Numeric and bool arrays of either byte order and fixed-width strings
// ('S' bytes, 'U' unicode, read as UTF-8; strings are written as 'S'), in C or Fortran order
// (read into C order, as numpy.load gives them to a program that copies them), and by ParseNpy
// and ReadNpy object arrays of bytes or str; anything else (other objects, structured dtypes)
// is refused with an error that says what was found. Writing is
// little-endian C order. Reading allocates the array's tensor through a checked path: too big
// an array is a ResourceExhausted error naming the bytes, not an abort.
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "kiln/core/status.h"
#include "kiln/core/tensor.h"

namespace kiln {

// What an .npy header says, read before the data: enough to check an array against what it is
// for before its bytes are read (or inflated, in an .npz).
struct NpyHeader {
  std::string descr;              // as written: '<f4', '>i8', '|S5'
  DType dtype = DType::kInvalid;  // kString for 'S' and 'U'
  Shape shape;
  bool fortran_order = false;
  bool big_endian = false;  // numbers (or 'U' code points) stored most significant byte first
  size_t data_offset = 0;   // magic, version, length and header dict: where the data starts
  uint64_t data_bytes = 0;  // the array data the header implies (UINT64_MAX: more than that)
  bool objects = false;     // Python objects ('O'): the data is a pickle (read by ParseNpy)
};

// Parses the header at the start of `bytes`, which need hold no more than the header.
Result<NpyHeader> ParseNpyHeader(std::string_view bytes, std::string_view name = "<npy bytes>");

// Parses the bytes of one .npy file (format versions 1.0, 2.0 and 3.0). `name` names the
// source in errors. An array of Python objects that are all bytes or str (numpy.save pickles
// it) is read as a string array, its pickle interpreted without running anything
// (core/npy_pickle.h); other objects are refused.
Result<Tensor> ParseNpy(std::string_view bytes, std::string_view name = "<npy bytes>");
Result<Tensor> ReadNpy(const std::filesystem::path& path);

// Encodes as NumPy does (version 1.0 header unless it is too long, 64-byte aligned data).
// bfloat16 is written as NumPy with ml_dtypes writes it ('<V2'). Fails for dtypes NumPy has
// no plain equivalent for (string, resource, variant).
Result<std::string> SerializeNpy(const Tensor& tensor);
Status WriteNpy(const std::filesystem::path& path, const Tensor& tensor);

// An .npz archive's directory (numpy.savez: stored entries; numpy.savez_compressed: deflated),
// read without inflating anything: Header() inflates only an entry's first bytes, Read() one
// entry, straight into its tensor's buffer. Keys are the entry names without the ".npy"
// suffix. The reader views `bytes`, which must outlive it.
class NpzReader {
 public:
  static Result<NpzReader> Open(std::string_view bytes, std::string_view name = "<npz bytes>");
  // In archive order.
  const std::vector<std::string>& keys() const;
  bool Contains(std::string_view key) const;
  // NotFound naming the keys there are when `key` is not one of them.
  Result<NpyHeader> Header(std::string_view key) const;
  Result<Tensor> Read(std::string_view key) const;

  struct Impl;

 private:
  explicit NpzReader(std::shared_ptr<const Impl> impl) : impl_(std::move(impl)) {}
  std::shared_ptr<const Impl> impl_;
};

// Reads every array of an .npz archive (NpzReader::Read of each key).
Result<std::map<std::string, Tensor>> ParseNpz(std::string_view bytes,
                                               std::string_view name = "<npz bytes>");
Result<std::map<std::string, Tensor>> ReadNpz(const std::filesystem::path& path);

}  // namespace kiln
