// Bytes read as numbers: DecodeRaw (every string the same length, a multiple of the element
// size) and DecodePaddedRaw (each string cut or zero-padded to a fixed length), little- or
// big-endian, as TensorFlow's kernels do; the output gains a last dim of elements per string.
// And 16-bit PCM WAV files, both ways: DecodeWav and EncodeWav (TF's wav_io.cc rules: the
// chunks it accepts and refuses, samples / 32768, and back rounded and clamped).
// The CPU kernels are in kernels/cpu/decode_raw_ops.cc.
#include "kernels/decode_raw_ops.h"

#include <cstdint>
#include <memory>
#include <utility>
#include <vector>

#include "kernels/array_util.h"
#include "kernels/kernel_util.h"

namespace kiln::exec {
namespace {

using decode_raw::RawState;
using decode_raw::WavState;

constexpr DType kRawDTypes[] = {DType::kHalf,  DType::kBFloat16,  DType::kFloat,     DType::kDouble,
                                DType::kInt8,  DType::kInt16,     DType::kInt32,     DType::kInt64,
                                DType::kUInt8, DType::kUInt16,    DType::kUInt32,    DType::kUInt64,
                                DType::kBool,  DType::kComplex64, DType::kComplex128};

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

// ---- DecodeWav, EncodeWav --------------------------------------------------------------------

Status PrepareDecodeWav(PrepareContext& ctx) {
  KILN_RETURN_IF_ERROR(ctx.ExpectInputs(1));
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 0, "contents", DType::kString));
  KILN_RETURN_IF_ERROR(ExpectInputRank(ctx, 0, "contents", 0));
  auto st = std::make_shared<WavState>();
  KILN_PREPARE_ASSIGN(ctx, st->channels, ctx.attrs.GetInt("desired_channels", -1));
  KILN_PREPARE_ASSIGN(ctx, st->samples, ctx.attrs.GetInt("desired_samples", -1));
  ctx.outputs = {TensorSpec{DType::kFloat, PartialShape{st->samples, st->channels}},
                 TensorSpec{DType::kInt32, PartialShape::Scalar()}};
  ctx.state = std::move(st);
  return OkStatus();
}

Status PrepareEncodeWav(PrepareContext& ctx) {
  KILN_RETURN_IF_ERROR(ctx.ExpectInputs(2));
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 0, "audio", DType::kFloat));
  KILN_RETURN_IF_ERROR(ExpectInputRank(ctx, 0, "audio", 2));
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 1, "sample_rate", DType::kInt32));
  KILN_RETURN_IF_ERROR(ExpectInputRank(ctx, 1, "sample_rate", 0));
  ctx.outputs = {TensorSpec{DType::kString, PartialShape::Scalar()}};
  return OkStatus();
}

constexpr OpDefinition kDefs[] = {
    {"DecodeRaw", "output", kOpFreshOutputs, PrepareDecodeRaw<false>},
    {"DecodePaddedRaw", "output", kOpFreshOutputs, PrepareDecodeRaw<true>},
    {"DecodeWav", "audio,sample_rate", kOpFreshOutputs, PrepareDecodeWav},
    {"EncodeWav", "contents", kOpFreshOutputs, PrepareEncodeWav},
};

}  // namespace

std::span<const OpDefinition> DecodeRawOpDefs() { return kDefs; }

}  // namespace kiln::exec
