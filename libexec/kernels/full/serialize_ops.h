// What DecodeCompressed's definition (kernels/full/serialize_ops.cc) and CPU kernel
// (kernels/cpu/full/serialize_ops.cc) share.
#pragma once

namespace kiln::exec::serialize {

// The attr compression_type: "" (none), "ZLIB" or "GZIP".
enum class Compression { kNone, kZlib, kGzip };

}  // namespace kiln::exec::serialize
