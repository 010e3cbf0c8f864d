// Decoding an .npy array's data once its header is parsed, shared by ParseNpy (the data is in
// memory) and NpzReader (it is inflated as it is read).
#pragma once

#include <cstddef>
#include <functional>
#include <string_view>

#include "kiln/core/allocator.h"
#include "kiln/core/npy.h"

namespace kiln::internal {

// Fills `bytes` bytes at `dst` with the next bytes of the array data (called with
// header.data_bytes in all, in order; an error stops the decoding).
using NpyDataSource = std::function<Status(char* dst, size_t bytes)>;

// The tensor `header` describes, its data read from `source`: allocated through a checked path
// (ResourceExhausted naming the bytes when the memory cannot be had), byte-swapped when the data
// is big-endian, Fortran order transposed into C order, bools normalised to 0/1, fixed-width
// strings decoded. The memory comes from `allocator` (the CPU's when null).
Result<Tensor> DecodeNpyData(const NpyHeader& header, const NpyDataSource& source,
                             std::string_view name, Allocator* allocator = nullptr);

}  // namespace kiln::internal
