// Bytes read as numbers: DecodeRaw (every string the same length, a multiple of the element
// size) and DecodePaddedRaw (each string cut or zero-padded to a fixed length), little- or
// big-endian, as TensorFlow's kernels do. The output gains a last dim of elements per string.
#include <algorithm>
#include <cstring>
#include <string>

#include "kernels/array_util.h"
#include "kernels/kernel_util.h"
#include "kernels/op_families.h"

namespace kiln::exec {
namespace {

constexpr DType kRawDTypes[] = {DType::kHalf,  DType::kBFloat16,  DType::kFloat,     DType::kDouble,
                                DType::kInt8,  DType::kInt16,     DType::kInt32,     DType::kInt64,
                                DType::kUInt8, DType::kUInt16,    DType::kUInt32,    DType::kUInt64,
                                DType::kBool,  DType::kComplex64, DType::kComplex128};

struct RawState : OpState {
  DType dtype = DType::kFloat;
  bool swap = false;  // big-endian bytes on this little-endian host
};

template <bool kPadded>
Status PrepareDecodeRaw(PrepareContext& ctx) {
  KILN_RETURN_IF_ERROR(ctx.ExpectInputs(kPadded ? 2 : 1));
  auto st = std::make_shared<RawState>();
  KILN_PREPARE_ASSIGN(ctx, st->dtype, ctx.attrs.GetType("out_type"));
  KILN_RETURN_IF_ERROR(ExpectAttrDTypeIn(ctx, "out_type", st->dtype, kRawDTypes));
  KILN_PREPARE_ASSIGN(ctx, bool little, ctx.attrs.GetBool("little_endian", true));
  // Complex values swap each half; one byte needs no swapping.
  st->swap = !little && DTypeSize(st->dtype) > 1;
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 0, "bytes", DType::kString));
  int64_t per = -1;
  if constexpr (kPadded) {
    KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 1, "fixed_length", DType::kInt32));
    if (const Tensor* len = ConstantInput(ctx, 1)) {
      const int64_t n = len->data<int32_t>()[0];
      if (n < 0 || n % static_cast<int64_t>(DTypeSize(st->dtype)) != 0)
        return ctx.Error("input 'fixed_length' (", n, ") must be a non-negative multiple of ",
                         DTypeSize(st->dtype), ", the size of ", DTypeShortName(st->dtype));
      per = n / static_cast<int64_t>(DTypeSize(st->dtype));
    }
  }
  const PartialShape& s = ctx.inputs[0].shape;
  PartialShape out = PartialShape::UnknownRank();
  if (!s.unknown_rank()) {
    std::vector<int64_t> dims(s.dims().begin(), s.dims().end());
    dims.push_back(per);
    KILN_PREPARE_ASSIGN(ctx, out, PartialShape::FromDims(dims));
  }
  ctx.outputs = {TensorSpec{st->dtype, out}};
  ctx.state = std::move(st);
  return OkStatus();
}

// Big-endian elements reversed in place; complex numbers are two reals, each reversed.
void SwapElements(char* data, size_t bytes, size_t elem) {
  const size_t unit = elem == 8 || elem == 16 ? elem / 2 : elem;
  for (size_t i = 0; i + unit <= bytes; i += unit) std::reverse(data + i, data + i + unit);
}

template <bool kPadded>
Status ComputeDecodeRaw(const KernelContext& ctx) {
  const auto& st = ctx.state<RawState>();
  const Tensor& in = ctx.input(0);
  const size_t elem = DTypeSize(st.dtype);
  const int64_t n = in.NumElements();
  const std::string* s = in.data<std::string>();
  int64_t length = 0;  // bytes per string
  if constexpr (kPadded) {
    length = ctx.input(1).data<int32_t>()[0];
    if (length < 0 || length % static_cast<int64_t>(elem) != 0)
      return ctx.Error("fixed_length (", length, ") must be a non-negative multiple of ", elem,
                       ", the size of ", DTypeShortName(st.dtype));
  } else if (n > 0) {
    length = static_cast<int64_t>(s[0].size());
    for (int64_t i = 1; i < n; ++i)
      if (static_cast<int64_t>(s[i].size()) != length)
        return ctx.Error("DecodeRaw requires input strings to all be the same size, but element ",
                         i, " has size ", s[i].size(), " != ", length);
    if (length % static_cast<int64_t>(elem) != 0)
      return ctx.Error("Input to DecodeRaw has length ", length, " that is not a multiple of ",
                       elem, ", the size of ", DTypeShortName(st.dtype));
  }
  Shape shape = in.shape();
  shape.AddDim(length / static_cast<int64_t>(elem));
  KILN_ASSIGN_OR_RETURN(Tensor * out, ctx.AllocateOutput(0, shape));
  char* o = static_cast<char*>(out->raw_data());
  for (int64_t i = 0; i < n; ++i) {
    // A short string is zero-padded (a partial last element keeps its bytes), a long one cut.
    const size_t have = std::min<size_t>(s[i].size(), static_cast<size_t>(length));
    char* dst = o + i * length;
    std::copy_n(s[i].data(), have, dst);
    std::memset(dst + have, 0, static_cast<size_t>(length) - have);
    if (st.swap) SwapElements(dst, static_cast<size_t>(length), elem);
  }
  if (st.dtype == DType::kBool)  // any non-zero byte is true
    for (int64_t i = 0; i < out->NumElements(); ++i) o[i] = o[i] != 0 ? 1 : 0;
  return OkStatus();
}

constexpr OpDefinition kDefs[] = {
    {"DecodeRaw", "output", kOpFreshOutputs, PrepareDecodeRaw<false>},
    {"DecodePaddedRaw", "output", kOpFreshOutputs, PrepareDecodeRaw<true>},
};

constexpr KernelEntry kCpu[] = {
    {"DecodeRaw", ComputeDecodeRaw<false>},
    {"DecodePaddedRaw", ComputeDecodeRaw<true>},
};

}  // namespace

std::span<const OpDefinition> DecodeRawOpDefs() { return kDefs; }
std::span<const KernelEntry> DecodeRawCpuKernels() { return kCpu; }

}  // namespace kiln::exec
