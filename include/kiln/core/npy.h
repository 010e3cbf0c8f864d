// NumPy .npy / .npz files: the simplest way to get arrays in and out of a C++ program that
// talks to Python users. Little-endian numeric and bool arrays and fixed-width strings ('S'
// bytes, 'U' unicode, read as UTF-8; strings are written as 'S') in C order only; anything else
// (big-endian numbers, Fortran order, objects, structured dtypes) is refused with an error
// that says what was found.
#pragma once

#include <filesystem>
#include <map>
#include <string>
#include <string_view>

#include "kiln/core/status.h"
#include "kiln/core/tensor.h"

namespace kiln {

// Parses the bytes of one .npy file (format versions 1.0, 2.0 and 3.0). `name` names the
// source in errors.
Result<Tensor> ParseNpy(std::string_view bytes, std::string_view name = "<npy bytes>");
Result<Tensor> ReadNpy(const std::filesystem::path& path);

// Encodes as NumPy does (version 1.0 header unless it is too long, 64-byte aligned data).
// bfloat16 is written as NumPy with ml_dtypes writes it ('<V2'). Fails for dtypes NumPy has
// no plain equivalent for (string, resource, variant).
Result<std::string> SerializeNpy(const Tensor& tensor);
Status WriteNpy(const std::filesystem::path& path, const Tensor& tensor);

// Reads an .npz archive (numpy.savez: stored entries; numpy.savez_compressed: deflated).
// Keys are the entry names without the ".npy" suffix.
Result<std::map<std::string, Tensor>> ParseNpz(std::string_view bytes,
                                               std::string_view name = "<npz bytes>");
Result<std::map<std::string, Tensor>> ReadNpz(const std::filesystem::path& path);

}  // namespace kiln
