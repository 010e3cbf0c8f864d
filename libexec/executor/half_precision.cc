#include "executor/half_precision.h"

#include <string_view>

#include "core/native_attrs.h"
#include "kiln/exec/executor.h"

namespace kiln::exec {

DType HalfTypeOf(const AttrReader& attrs, const std::vector<TensorSpec>& inputs) {
  bool half = attrs.MentionsType(DType::kHalf), bf16 = attrs.MentionsType(DType::kBFloat16);
  for (const TensorSpec& s : inputs) {
    half |= s.dtype == DType::kHalf;
    bf16 |= s.dtype == DType::kBFloat16;
  }
  if (half == bf16) return DType::kInvalid;
  return half ? DType::kHalf : DType::kBFloat16;
}

bool MayWiden(std::string_view op) {
  // Bit-level views of the type, conversions that must keep it, and random ops whose
  // half-precision streams TF draws differently from float32 ones.
  static constexpr std::string_view kKeep[] = {"Bitcast",
                                               "Cast",
                                               "Const",
                                               "DecodeRaw",
                                               "DecodePaddedRaw",
                                               "ParseTensor",
                                               "SerializeTensor",
                                               "Placeholder",
                                               "RandomUniform",
                                               "RandomStandardNormal",
                                               "TruncatedNormal",
                                               "StatelessRandomUniformV2",
                                               "StatelessRandomNormalV2",
                                               "StatelessTruncatedNormalV2",
                                               "StatelessRandomUniform",
                                               "StatelessRandomNormal",
                                               "StatelessTruncatedNormal"};
  for (std::string_view k : kKeep)
    if (op == k) return false;
  return true;
}

Result<CastStep> PrepareCastStep(DType from, DType to, const PartialShape& shape) {
  const OpDefinition* def = FindOp("Cast");
  const KernelEntry* kernel = HostDevice()->FindKernel("Cast");
  if (def == nullptr || kernel == nullptr) return Unimplemented("this runtime has no Cast");
  ComputeFn compute = kernel->compute;
  NativeAttr src, dst;
  src.name = "SrcT";
  src.kind = dst.kind = NativeAttr::Kind::kType;
  src.type = DTypeToProto(from);
  dst.name = "DstT";
  dst.type = DTypeToProto(to);
  const NativeAttrMap attrs({src, dst});
  PrepareContext ctx;
  ctx.node_name = "half precision cast";
  ctx.op = "Cast";
  ctx.attrs = AttrReader(&attrs);
  ctx.inputs = {TensorSpec{from, shape}};
  ctx.constant_inputs = {nullptr};
  KILN_RETURN_IF_ERROR(def->prepare(ctx));
  return CastStep{compute, ctx.state};
}

Result<Tensor> CastNow(const Tensor& t, DType to) {
  KILN_ASSIGN_OR_RETURN(CastStep cast, PrepareCastStep(t.dtype(), to, PartialShape(t.shape())));
  Tensor slots[2] = {t, Tensor()};
  const int32_t in = 0, out = 1;
  ScratchArena scratch;
  RunEnv env{&DefaultPrintSink(), &DefaultThreadPool()};
  ExecutionFrame frame{slots, nullptr, HostDevice()->allocator(), nullptr, &scratch, &env};
  StepIo io{&in, 1, &out, 1, &to, 0, cast.state.get(), "half precision cast"};
  KILN_RETURN_IF_ERROR(cast.compute(KernelContext(frame, io)));
  return slots[1];
}

std::vector<bool> OutputsToNarrow(const std::vector<TensorSpec>& widened,
                                  const std::vector<TensorSpec>* probe) {
  std::vector<bool> narrow(widened.size());
  for (size_t i = 0; i < widened.size(); ++i) {
    const bool is_float = widened[i].dtype == DType::kFloat;
    narrow[i] = probe != nullptr && probe->size() == widened.size()
                    ? is_float && (*probe)[i].dtype == DType::kDouble
                    : is_float;
  }
  return narrow;
}

}  // namespace kiln::exec
