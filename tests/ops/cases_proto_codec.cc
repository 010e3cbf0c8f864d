// Op-tester cases of DecodeProtoV2 and EncodeProto: a proto2 message type given as a
// FileDescriptorSet ("bytes://"), records written byte by byte from the wire format, and
// TensorFlow's tensorflow.Example from "local://". tests/tf/test_proto_codec.py holds both ops to
// TensorFlow on every field kind.
#include <google/protobuf/descriptor.pb.h>

#include <string>
#include <vector>

#include "ops/op_cases.h"
#include "ops/ref_util.h"
#include "tensorflow/example.pb.h"

namespace kiln::testing {
namespace {

namespace pb = google::protobuf;

// message Rec { optional int32 a = 1; repeated float b = 2 [packed = true];
//               optional string s = 3 [default = "x"]; }
std::string RecDescriptorSource() {
  pb::FileDescriptorSet set;
  pb::FileDescriptorProto* f = set.add_file();
  f->set_name("rec.proto");
  f->set_package("t");
  pb::DescriptorProto* m = f->add_message_type();
  m->set_name("Rec");
  auto add = [m](const char* name, int number, pb::FieldDescriptorProto::Type type,
                 pb::FieldDescriptorProto::Label label) {
    pb::FieldDescriptorProto* fd = m->add_field();
    fd->set_name(name);
    fd->set_number(number);
    fd->set_type(type);
    fd->set_label(label);
    return fd;
  };
  add("a", 1, pb::FieldDescriptorProto::TYPE_INT32, pb::FieldDescriptorProto::LABEL_OPTIONAL);
  add("b", 2, pb::FieldDescriptorProto::TYPE_FLOAT, pb::FieldDescriptorProto::LABEL_REPEATED)
      ->mutable_options()
      ->set_packed(true);
  add("s", 3, pb::FieldDescriptorProto::TYPE_STRING, pb::FieldDescriptorProto::LABEL_OPTIONAL)
      ->set_default_value("x");
  return "bytes://" + set.SerializeAsString();
}

// a = 5, b = [1.5, 2] (packed), s = "hi", in field order as protobuf writes them.
const std::string kRec =
    std::string("\x08\x05\x12\x08\x00\x00\xc0\x3f\x00\x00\x00\x40\x1a\x02hi", 16);

}  // namespace

std::vector<OpCase> ProtoCodecCases() {
  std::vector<OpCase> c;
  const std::string source = RecDescriptorSource();
  c.push_back(OpCaseBuilder("DecodeProtoV2", "DecodeProtoV2 bytes:// descriptor")
                  .String("descriptor_source", source)
                  .String("message_type", "t.Rec")
                  .StringList("field_names", {"a", "b", "s"})
                  .TypeList("output_types", {DType::kInt64, DType::kFloat, DType::kString})
                  .Input(Make<std::string>({kRec, ""}, {2}))
                  .Reference([](const std::vector<Tensor>&) {
                    return std::vector<Tensor>{Make<int32_t>({1, 2, 1, 0, 0, 0}, {2, 3}),
                                               Make<int64_t>({5, 0}, {2, 1}),
                                               Make<float>({1.5F, 2, 0, 0}, {2, 2}),
                                               Make<std::string>({"hi", "x"}, {2, 1})};
                  })
                  .Build());
  c.push_back(OpCaseBuilder("EncodeProto", "EncodeProto bytes:// descriptor")
                  .String("descriptor_source", source)
                  .String("message_type", "t.Rec")
                  .StringList("field_names", {"a", "b", "s"})
                  .TypeList("Tinput_types", {DType::kInt32, DType::kFloat, DType::kString})
                  .Input(Make<int32_t>({1, 2, 1, 0, 0, 0}, {2, 3}))
                  .Input(Make<int32_t>({5, 0}, {2, 1}))
                  .Input(Make<float>({1.5F, 2, 0, 0}, {2, 2}))
                  .Input(Make<std::string>({"hi", "x"}, {2, 1}))
                  .Reference([](const std::vector<Tensor>&) {
                    return std::vector<Tensor>{Make<std::string>({kRec, ""}, {2})};
                  })
                  .Build());
  // local://: TensorFlow's own message types.
  tensorflow::Example ex;
  (*ex.mutable_features()->mutable_feature())["k"].mutable_int64_list()->add_value(3);
  const std::string features = ex.features().SerializeAsString();
  c.push_back(OpCaseBuilder("DecodeProtoV2", "DecodeProtoV2 local:// tensorflow.Example")
                  .String("message_type", "tensorflow.Example")
                  .StringList("field_names", {"features"})
                  .TypeList("output_types", {DType::kString})
                  .Input(Make<std::string>({ex.SerializeAsString(), ""}, {2}))
                  .Reference([features](const std::vector<Tensor>&) {
                    return std::vector<Tensor>{Make<int32_t>({1, 0}, {2, 1}),
                                               Make<std::string>({features, ""}, {2, 1})};
                  })
                  .Build());
  return c;
}

}  // namespace kiln::testing
