// The CPU kernels of SerializeTensor, ParseTensor and DecodeCompressed
// (kernels/full/serialize_ops.cc): TensorProto bytes written and read by
// kernels/full/tensor_proto_bytes.h, streams inflated with zlib as TF's ZlibInputStream does.
#include "kernels/full/serialize_ops.h"

#include <zlib.h>

#include <algorithm>
#include <climits>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>

#include "kernels/full/tensor_proto_bytes.h"
#include "kernels/kernel_util.h"

namespace kiln::exec {
namespace {

using serialize::Compression;

// ---- SerializeTensor / ParseTensor -----------------------------------------------------------

Status ComputeSerializeTensor(const KernelContext& ctx) {
  KILN_ASSIGN_OR_RETURN(Tensor * out, ctx.AllocateOutput(0, Shape()));
  Status s =
      SerializeTensorProto(ctx.input(0), /*string_content=*/false, &out->data<std::string>()[0]);
  if (!s.ok()) return ctx.Error("input 'tensor': ", s.message());
  return OkStatus();
}

Status ComputeParseTensor(const KernelContext& ctx) {
  const Tensor& in = ctx.input(0);
  if (in.rank() != 0)
    return ctx.Error("expected `serialized` to be a scalar, got shape ", in.shape().ToString());
  Result<Tensor> parsed = ParseTensorProto(in.data<std::string>()[0]);
  if (!parsed.ok())
    return ctx.Error("could not parse `serialized` as TensorProto: ", parsed.status().message());
  const Tensor& t = *parsed;
  const DType want = ctx.state<TypedOpState<DType>>().value;
  if (t.dtype() != want)
    return ctx.Error("Type mismatch between parsed tensor (", DTypeShortName(t.dtype()),
                     ") and dtype (", DTypeShortName(want), ")");
  KILN_ASSIGN_OR_RETURN(Tensor * out, ctx.AllocateOutput(0, t.shape()));
  if (want == DType::kString)
    std::copy_n(t.data<std::string>(), t.NumElements(), out->data<std::string>());
  else if (t.ByteSize() > 0)
    std::memcpy(out->raw_data(), t.raw_data(), t.ByteSize());
  return OkStatus();
}

// ---- DecodeCompressed ------------------------------------------------------------------------

// Inflates `in` into `out`; DataLoss names zlib's error.
Status Inflate(std::string_view in, bool gzip, std::string* out) {
  z_stream z{};
  if (inflateInit2(&z, gzip ? MAX_WBITS + 16 : MAX_WBITS) != Z_OK)
    return Internal("inflateInit2 failed");
  z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(in.data()));
  size_t left = in.size();
  char buf[1 << 14];
  Status status = OkStatus();
  for (;;) {
    const uInt chunk = static_cast<uInt>(std::min<size_t>(left, UINT_MAX));
    z.avail_in = chunk;
    z.next_out = reinterpret_cast<Bytef*>(buf);
    z.avail_out = sizeof(buf);
    const int err = inflate(&z, Z_NO_FLUSH);
    left -= chunk - z.avail_in;
    out->append(buf, sizeof(buf) - z.avail_out);
    if (err == Z_STREAM_END) {
      // The next gzip member, if any; data after a zlib stream is not read.
      if (!gzip || left == 0) break;
      if (inflateReset(&z) != Z_OK) break;
      continue;
    }
    if (err == Z_BUF_ERROR || (err == Z_OK && left == 0 && z.avail_out != 0)) break;  // truncated
    if (err != Z_OK) {
      status = DataLoss("inflate() failed with error ", err, ": ", z.msg ? z.msg : "");
      break;
    }
  }
  inflateEnd(&z);
  return status;
}

Status ComputeDecodeCompressed(const KernelContext& ctx) {
  const Compression c = ctx.state<TypedOpState<Compression>>().value;
  const Tensor& in = ctx.input(0);
  KILN_ASSIGN_OR_RETURN(Tensor * out, ctx.AllocateOutput(0, in.shape()));
  for (int64_t i = 0; i < in.NumElements(); ++i) {
    const std::string& s = in.data<std::string>()[i];
    std::string& o = out->data<std::string>()[i];
    o.clear();
    if (c == Compression::kNone) {
      o = s;
      continue;
    }
    Status st = Inflate(s, c == Compression::kGzip, &o);
    if (!st.ok()) return ctx.Error("element ", i, " of input 'bytes': ", st.message());
  }
  return OkStatus();
}

constexpr KernelEntry kCpu[] = {
    {"SerializeTensor", ComputeSerializeTensor},
    {"ParseTensor", ComputeParseTensor},
    {"DecodeCompressed", ComputeDecodeCompressed},
};

}  // namespace

std::span<const KernelEntry> SerializeCpuKernels() { return kCpu; }

}  // namespace kiln::exec
