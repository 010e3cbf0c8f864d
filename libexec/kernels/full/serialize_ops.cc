// Tensors as bytes: SerializeTensor and ParseTensor (TensorProto bytes as TensorFlow writes
// them: tensor_content for numbers, string_val for strings; ParseTensor also reads the typed
// value fields and checks out_type), and DecodeCompressed (zlib or gzip streams inflated with
// zlib, as TF's ZlibInputStream does: a truncated stream gives what it holds, data after a zlib
// stream is ignored, gzip members are read one after another).
// The CPU kernels are in kernels/cpu/full/serialize_ops.cc.
#include "kernels/full/serialize_ops.h"

#include <memory>
#include <string>

#include "kernels/kernel_util.h"

namespace kiln::exec {
namespace {

using serialize::Compression;

// ---- SerializeTensor / ParseTensor -----------------------------------------------------------

Status PrepareSerializeTensor(PrepareContext& ctx) {
  KILN_RETURN_IF_ERROR(ctx.ExpectInputs(1));
  KILN_PREPARE_ASSIGN(ctx, DType t, ctx.attrs.GetType("T"));
  if (t != DType::kString && !DTypeIsPod(t))
    return ctx.Error("attr 'T': serializing ", DTypeShortName(t), " tensors is not supported");
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 0, "tensor", t));
  ctx.outputs = {TensorSpec{DType::kString, PartialShape::Scalar()}};
  return OkStatus();
}

Status PrepareParseTensor(PrepareContext& ctx) {
  KILN_RETURN_IF_ERROR(ctx.ExpectInputs(1));
  KILN_PREPARE_ASSIGN(ctx, DType t, ctx.attrs.GetType("out_type"));
  if (t != DType::kString && !DTypeIsPod(t))
    return ctx.Error("attr 'out_type': parsing ", DTypeShortName(t), " tensors is not supported");
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 0, "serialized", DType::kString));
  KILN_RETURN_IF_ERROR(ExpectInputRank(ctx, 0, "serialized", 0));
  ctx.outputs = {TensorSpec{t, PartialShape::UnknownRank()}};
  ctx.state = std::make_shared<TypedOpState<DType>>(t);
  return OkStatus();
}

// ---- DecodeCompressed ------------------------------------------------------------------------

Status PrepareDecodeCompressed(PrepareContext& ctx) {
  KILN_RETURN_IF_ERROR(ctx.ExpectInputs(1));
  KILN_PREPARE_ASSIGN(ctx, std::string type, ctx.attrs.GetString("compression_type", ""));
  Compression c = Compression::kNone;
  if (type == "ZLIB")
    c = Compression::kZlib;
  else if (type == "GZIP")
    c = Compression::kGzip;
  else if (!type.empty())
    return ctx.Error("attr 'compression_type' is '", type,
                     "': only ZLIB, GZIP or NONE (\"\") are supported");
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 0, "bytes", DType::kString));
  ctx.outputs = {TensorSpec{DType::kString, ctx.inputs[0].shape}};
  ctx.state = std::make_shared<TypedOpState<Compression>>(c);
  return OkStatus();
}

constexpr OpDefinition kDefs[] = {
    {"SerializeTensor", "serialized", kOpFreshOutputs, PrepareSerializeTensor},
    {"ParseTensor", "output", kOpFreshOutputs, PrepareParseTensor},
    {"DecodeCompressed", "output", kOpFreshOutputs, PrepareDecodeCompressed},
};

}  // namespace

std::span<const OpDefinition> SerializeOpDefs() { return kDefs; }

}  // namespace kiln::exec
