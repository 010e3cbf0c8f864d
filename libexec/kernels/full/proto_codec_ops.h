// The state DecodeProtoV2's and EncodeProto's definitions build (kernels/full/proto_codec_ops.cc)
// and their CPU kernels read (kernels/cpu/full/proto_codec_ops.cc): the message type prepared.
#pragma once

#include <google/protobuf/descriptor.h>
#include <google/protobuf/dynamic_message.h>
#include <google/protobuf/message.h>

#include <memory>
#include <vector>

#include "kiln/core/dtype.h"
#include "kiln/exec/op_table.h"

namespace kiln::exec::proto_codec {

namespace pb = google::protobuf;
using FD = pb::FieldDescriptor;

// The pool, factory and message type one node decodes or encodes; read-only once prepared.
struct ProtoState : OpState {
  std::unique_ptr<pb::DescriptorPool> own_pool;  // null for local://
  std::unique_ptr<pb::DynamicMessageFactory> factory;
  const pb::Message* prototype = nullptr;
  std::vector<const FD*> fields;
  std::vector<DType> types;
  bool text = false;  // DecodeProtoV2's message_format "text"
};

}  // namespace kiln::exec::proto_codec
