// Protocol buffers of any message type as tensors: DecodeProtoV2 (tf.io.decode_proto) and
// EncodeProto (tf.io.encode_proto). The message type comes from descriptor_source as in TF:
// "local://" (the types compiled into this program: TensorFlow's own protos and protobuf's
// well-known types), "bytes://" followed by a serialized FileDescriptorSet (what a graph that
// carries its descriptors holds), or the path of a file holding one. Records are parsed and
// written with the protobuf library's reflection over the descriptor.
//   DecodeProtoV2(bytes) -> sizes [..., fields] int32, values[i] [..., max count of field i]:
//     each record's values of field i, then the field's default; a singular field counts 1
//     when present; message and group fields come out serialized.
//   EncodeProto(sizes, values...) -> bytes: field i gets values[i][..., 0 : sizes[..., i]].
// Field types take the dtypes TF's IsCompatibleType allows (int32 fields as int32 or int64,
// float as float or double, enums as int32, messages as string, ...). DecodeJSONExample turns
// tf.train.Examples written as JSON into binary ones.
// The CPU kernels are in kernels/cpu/full/proto_codec_ops.cc.
#include "kernels/full/proto_codec_ops.h"

#include <google/protobuf/descriptor.h>
#include <google/protobuf/descriptor.pb.h>
#include <google/protobuf/dynamic_message.h>
#include <google/protobuf/message.h>

#include <cstddef>
#include <cstdint>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "kernels/kernel_util.h"
#include "tensorflow/example.pb.h"

namespace kiln::exec {
namespace {

namespace pb = google::protobuf;
using FD = pb::FieldDescriptor;

using proto_codec::ProtoState;

bool Compatible(FD::Type type, DType t) {
  switch (type) {
    case FD::TYPE_DOUBLE:
      return t == DType::kDouble;
    case FD::TYPE_FLOAT:
      return t == DType::kFloat || t == DType::kDouble;
    case FD::TYPE_INT64:
    case FD::TYPE_SFIXED64:
    case FD::TYPE_SINT64:
      return t == DType::kInt64;
    case FD::TYPE_UINT64:
    case FD::TYPE_FIXED64:
      return t == DType::kUInt64;
    case FD::TYPE_INT32:
    case FD::TYPE_SFIXED32:
    case FD::TYPE_SINT32:
      return t == DType::kInt32 || t == DType::kInt64;
    case FD::TYPE_UINT32:
    case FD::TYPE_FIXED32:
      return t == DType::kUInt32 || t == DType::kUInt64;
    case FD::TYPE_BOOL:
      return t == DType::kBool;
    case FD::TYPE_STRING:
    case FD::TYPE_BYTES:
    case FD::TYPE_MESSAGE:
    case FD::TYPE_GROUP:
      return t == DType::kString;
    case FD::TYPE_ENUM:
      return t == DType::kInt32;
  }
  return false;
}

Result<std::string> ReadDescriptorSet(const std::string& source) {
  constexpr std::string_view kBytes = "bytes://";
  if (source.compare(0, kBytes.size(), kBytes) == 0) return source.substr(kBytes.size());
  std::ifstream in(source, std::ios::binary);
  if (!in) return NotFound("descriptor_source '", source, "': cannot open the file");
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

Status PrepareProtoState(PrepareContext& ctx, ProtoState* st) {
  KILN_PREPARE_ASSIGN(ctx, std::string source,
                      ctx.attrs.GetString("descriptor_source", "local://"));
  KILN_PREPARE_ASSIGN(ctx, std::string type, ctx.attrs.GetString("message_type"));
  KILN_PREPARE_ASSIGN(ctx, std::vector<std::string> names, ctx.attrs.GetStringList("field_names"));
  // Naming the local types links their descriptors into the program's pool (a static library's
  // generated code is otherwise left out when nothing refers to it).
  (void)tensorflow::Example::descriptor();
  (void)tensorflow::SequenceExample::descriptor();
  const pb::DescriptorPool* pool = pb::DescriptorPool::generated_pool();
  if (source != "local://") {
    auto bytes = ReadDescriptorSet(source);
    if (!bytes.ok()) return ctx.Error(bytes.status().message());
    pb::FileDescriptorSet set;
    if (!set.ParseFromString(*bytes))
      return ctx.Error("descriptor_source does not hold a serialized FileDescriptorSet");
    st->own_pool = std::make_unique<pb::DescriptorPool>();
    // Files may come in any order: build each after the files it imports.
    std::vector<bool> built(set.file_size(), false);
    for (bool progress = true; progress;) {
      progress = false;
      for (int i = 0; i < set.file_size(); ++i) {
        if (built[i]) continue;
        bool ready = true;
        for (const std::string& dep : set.file(i).dependency())
          if (st->own_pool->FindFileByName(dep) == nullptr) ready = false;
        if (!ready) continue;
        if (st->own_pool->BuildFile(set.file(i)) == nullptr)
          return ctx.Error("descriptor_source: file '", set.file(i).name(), "' does not build");
        built[i] = progress = true;
      }
    }
    pool = st->own_pool.get();
  }
  const pb::Descriptor* desc = pool->FindMessageTypeByName(type);
  if (desc == nullptr)
    return ctx.Error("No descriptor found for message type ", type, " in descriptor_source '",
                     source.compare(0, 8, "bytes://") == 0 ? "bytes://..." : source, "'");
  st->factory = std::make_unique<pb::DynamicMessageFactory>(pool);
  st->prototype = pool == pb::DescriptorPool::generated_pool()
                      ? pb::MessageFactory::generated_factory()->GetPrototype(desc)
                      : st->factory->GetPrototype(desc);
  if (st->prototype == nullptr) return ctx.Error("no message factory for type ", type);
  if (names.size() != st->types.size())
    return ctx.Error("field_names has ", names.size(), " entries but the types list has ",
                     st->types.size());
  for (size_t i = 0; i < names.size(); ++i) {
    const FD* f = desc->FindFieldByName(names[i]);
    if (f == nullptr) return ctx.Error("Unknown field: ", names[i], " in message type ", type);
    if (f->is_map()) return ctx.Error("field '", names[i], "' is a map, which is not supported");
    if (!Compatible(f->type(), st->types[i]))
      return ctx.Error("Unexpected output type for ", f->full_name(), ": ", f->type_name(),
                       " fields do not take ", DTypeShortName(st->types[i]));
    st->fields.push_back(f);
  }
  return OkStatus();
}

// ---- DecodeProtoV2 ---------------------------------------------------------------------------

Status PrepareDecodeProto(PrepareContext& ctx) {
  KILN_RETURN_IF_ERROR(ctx.ExpectInputs(1));
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 0, "bytes", DType::kString));
  auto st = std::make_shared<ProtoState>();
  KILN_PREPARE_ASSIGN(ctx, st->types, ctx.attrs.GetTypeList("output_types"));
  KILN_PREPARE_ASSIGN(ctx, std::string format, ctx.attrs.GetString("message_format", "binary"));
  if (format != "binary" && format != "text")
    return ctx.Error("attr 'message_format' must be \"binary\" or \"text\", got \"", format, "\"");
  st->text = format == "text";
  KILN_RETURN_IF_ERROR(PrepareProtoState(ctx, st.get()));
  const PartialShape& in = ctx.inputs[0].shape;
  std::vector<int64_t> dims;
  if (!in.unknown_rank()) dims.assign(in.dims().begin(), in.dims().end());
  dims.push_back(static_cast<int64_t>(st->fields.size()));
  auto with_last = [&](int64_t last) {
    if (in.unknown_rank()) return PartialShape();
    std::vector<int64_t> d(in.dims().begin(), in.dims().end());
    d.push_back(last);
    return *PartialShape::FromDims(d);
  };
  ctx.outputs = {TensorSpec{DType::kInt32, with_last(static_cast<int64_t>(st->fields.size()))}};
  for (DType t : st->types) ctx.outputs.push_back(TensorSpec{t, with_last(-1)});
  ctx.state = std::move(st);
  return OkStatus();
}

// ---- EncodeProto -----------------------------------------------------------------------------

Status PrepareEncodeProto(PrepareContext& ctx) {
  auto st = std::make_shared<ProtoState>();
  KILN_PREPARE_ASSIGN(ctx, st->types, ctx.attrs.GetTypeList("Tinput_types"));
  KILN_RETURN_IF_ERROR(ctx.ExpectInputs(static_cast<int>(st->types.size()) + 1));
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 0, "sizes", DType::kInt32));
  for (size_t i = 0; i < st->types.size(); ++i)
    KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, static_cast<int>(i) + 1,
                                          internal::StrCat("values:", i), st->types[i]));
  KILN_RETURN_IF_ERROR(PrepareProtoState(ctx, st.get()));
  const PartialShape& s = ctx.inputs[0].shape;
  PartialShape out;
  if (!s.unknown_rank()) {
    if (s.rank() == 0) return ctx.Error("input 'sizes' must have a last dimension of fields");
    out = *PartialShape::FromDims(std::vector<int64_t>(s.dims().begin(), s.dims().end() - 1));
  }
  ctx.outputs = {TensorSpec{DType::kString, out}};
  ctx.state = std::move(st);
  return OkStatus();
}

// ---- DecodeJSONExample -----------------------------------------------------------------------

Status PrepareDecodeJsonExample(PrepareContext& ctx) {
  KILN_RETURN_IF_ERROR(ctx.ExpectInputs(1));
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 0, "json_examples", DType::kString));
  ctx.outputs = {TensorSpec{DType::kString, ctx.inputs[0].shape}};
  return OkStatus();
}

constexpr OpDefinition kDefs[] = {
    {"DecodeProtoV2", "sizes,values*output_types", kOpFreshOutputs, PrepareDecodeProto},
    {"DecodeJSONExample", "binary_examples", kOpFreshOutputs, PrepareDecodeJsonExample},
    {"EncodeProto", "bytes", kOpFreshOutputs, PrepareEncodeProto},
};

}  // namespace

std::span<const OpDefinition> ProtoCodecOpDefs() { return kDefs; }

}  // namespace kiln::exec
