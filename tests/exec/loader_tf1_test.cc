// TF1 bundles the way TensorFlow Serving loads them: the saver's restore op fills the
// reference variables, the main/legacy init op runs with the asset paths fed, then signatures
// run Session-style; SavedModel::Save runs the bundle's own save op. Plus the load-time check
// that names every op a bundle needs and this runtime lacks.
#include <doctest/doctest.h>

#include "exec/kernel_test_util.h"
#include "exec/test_util.h"
#include "kiln/exec/op_coverage.h"
#include "kiln/exec/saved_model.h"
#include "kiln/exec/tensor_bundle.h"
#include "tensorflow/saved_model.pb.h"

namespace kiln::exec {
namespace {

using testing::Fixture;
using testing::Make;
using testing::TempDir;

bool Contains(const Status& s, const std::string& part) {
  return s.message().find(part) != std::string::npos;
}

Result<std::unique_ptr<SavedModel>> LoadServing(const std::string& fixture) {
  LoadOptions o;
  o.signatures = {"serving_default"};
  return SavedModel::Load(Fixture(fixture), o);
}

TEST_CASE("half_plus_two v1 and v2 (TF Serving's example): restored variables, y = 0.5x + 2") {
  for (const char* name : {"half_plus_two_v1", "half_plus_two_v2"}) {
    INFO(name);
    auto m = LoadServing(name);
    REQUIRE_MESSAGE(m.ok(), m.status().ToString());
    CHECK((*m)->SignatureNames() == std::vector<std::string>{"serving_default"});
    auto sig = (*m)->GetSignature("serving_default");
    REQUIRE(sig.ok());
    auto out = (*sig)->Run({{"x", Make<float>({1, 2, 5}, {3, 1})}});
    REQUIRE_MESSAGE(out.ok(), out.status().ToString());
    CHECK(TensorsEqual(out->at("y"), Make<float>({2.5f, 3, 4.5f}, {3, 1})));
    // TF Serving's README call, instances [1, 2, 5]: x (an Identity the SignatureDef calls
    // (-1, 1)) is fed with shape (3,), as a TF1 Session takes it.
    out = (*sig)->Run({{"x", Make<float>({1, 2, 5}, {3})}});
    REQUIRE_MESSAGE(out.ok(), out.status().ToString());
    CHECK(TensorsEqual(out->at("y"), Make<float>({2.5f, 3, 4.5f}, {3})));
    // The signature still says what the SignatureDef says.
    CHECK((*sig)->inputs()[0].spec.shape.ToPythonString() == "(None, 1)");
  }
}

// A TF1 graph: placeholder p (shape attr (None, 2)) and q = Identity(r), r a placeholder with
// no shape; the SignatureDef claims (None, 2) for both.
std::unique_ptr<tensorflow::SavedModel> FedShapesModel() {
  auto sm = std::make_unique<tensorflow::SavedModel>();
  auto* mg = sm->add_meta_graphs();
  mg->mutable_meta_info_def()->add_tags("serve");
  auto* g = mg->mutable_graph_def();
  g->mutable_versions()->set_producer(1087);
  auto placeholder = [&](const std::string& name, bool with_shape) {
    auto* n = g->add_node();
    n->set_name(name);
    n->set_op("Placeholder");
    (*n->mutable_attr())["dtype"].set_type(tensorflow::DT_FLOAT);
    auto* shape = (*n->mutable_attr())["shape"].mutable_shape();
    if (with_shape) {
      shape->add_dim()->set_size(-1);
      shape->add_dim()->set_size(2);
    } else {
      shape->set_unknown_rank(true);
    }
  };
  placeholder("p", true);
  placeholder("r", false);
  for (const auto& [name, in] : {std::pair<std::string, std::string>{"q", "r"}, {"sum", "p"}}) {
    auto* n = g->add_node();
    n->set_name(name);
    n->set_op("Identity");
    n->add_input(in);
    (*n->mutable_attr())["T"].set_type(tensorflow::DT_FLOAT);
  }
  auto& sig = (*mg->mutable_signature_def())["serving_default"];
  sig.set_method_name("tensorflow/serving/predict");
  auto info = [](const std::string& tensor) {
    tensorflow::TensorInfo t;
    t.set_name(tensor);
    t.set_dtype(tensorflow::DT_FLOAT);
    t.mutable_tensor_shape()->add_dim()->set_size(-1);
    t.mutable_tensor_shape()->add_dim()->set_size(2);
    return t;
  };
  (*sig.mutable_inputs())["p"] = info("p:0");
  (*sig.mutable_inputs())["q"] = info("q:0");
  (*sig.mutable_outputs())["p_out"] = info("sum:0");
  (*sig.mutable_outputs())["q_out"] = info("q:0");
  return sm;
}

TEST_CASE(
    "TF1 signatures check a fed tensor against the fed Placeholder's shape, not the "
    "SignatureDef's") {
  auto m = SavedModel::LoadFromProto(FedShapesModel(), "/nonexistent/kiln");
  REQUIRE_MESSAGE(m.ok(), m.status().ToString());
  auto sig = (*m)->GetSignature("serving_default");
  REQUIRE(sig.ok());
  // q is an Identity: replaced by the fed tensor whatever its shape.
  auto out = (*sig)->Run({{"p", Make<float>({1, 2}, {1, 2})}, {"q", Make<float>({7, 8, 9}, {3})}});
  REQUIRE_MESSAGE(out.ok(), out.status().ToString());
  CHECK(TensorsEqual(out->at("q_out"), Make<float>({7, 8, 9}, {3})));
  CHECK(TensorsEqual(out->at("p_out"), Make<float>({1, 2}, {1, 2})));
  // p's own shape attr (None, 2) is the check.
  out = (*sig)->Run({{"p", Make<float>({1, 2, 3}, {3})}, {"q", Make<float>({7}, {1})}});
  REQUIRE_FALSE(out.ok());
  CHECK(Contains(out.status(), "signature 'serving_default' input 'p': expected shape (None, 2)"));
  // The dtype is still checked for every input.
  out = (*sig)->Run({{"p", Make<float>({1, 2}, {1, 2})}, {"q", Make<int32_t>({7}, {1})}});
  REQUIRE_FALSE(out.ok());
  CHECK(Contains(out.status(), "input 'q': expected dtype float32"));
}

TEST_CASE("a TF1 signature that parses tf.Example loads alone, and an unknown one is named") {
  LoadOptions o;
  o.signatures = {"regress_x_to_y"};
  auto m = SavedModel::Load(Fixture("half_plus_two_v2"), o);
  REQUIRE_MESSAGE(m.ok(), m.status().ToString());
  // An empty record: feature x is required, and TF's error says so.
  Tensor in(DType::kString, Shape{1});
  auto sig = (*m)->GetSignature("regress_x_to_y");
  REQUIRE(sig.ok());
  auto out = (*sig)->Run({{"inputs", in}});
  REQUIRE_FALSE(out.ok());
  CHECK(Contains(out.status(), "Feature: x (data type: float) is required but could not be found"));
  o.signatures = {"no_such_signature"};
  m = SavedModel::Load(Fixture("half_plus_two_v2"), o);
  REQUIRE_FALSE(m.ok());
  CHECK(Contains(m.status(), "no signature 'no_such_signature'"));
  CHECK(Contains(m.status(), "'serving_default'"));
}

TEST_CASE("a TF2 bundle's unsupported ops are all named, with counts and the first node") {
  auto m = SavedModel::Load(Fixture("tftrt_2.0_saved_model"));
  REQUIRE_FALSE(m.ok());
  CHECK(m.status().code() == StatusCode::kUnimplemented);
  CHECK(Contains(m.status(), "that this runtime does not implement: "));
  CHECK(Contains(m.status(), "TRTEngineOp ("));
  CHECK(Contains(m.status(), "first '"));
}

TEST_CASE("SavedModel::Save runs the bundle's save op: TF1 reference variables") {
  TempDir dir;
  auto m = LoadServing("half_plus_two_v2");
  REQUIRE_MESSAGE(m.ok(), m.status().ToString());
  const auto prefix = dir.path() / "ckpt" / "variables";
  REQUIRE_MESSAGE((*m)->Save(prefix).ok(), (*m)->Save(prefix).ToString());
  auto reader = BundleReader::Open(prefix);
  REQUIRE_MESSAGE(reader.ok(), reader.status().ToString());
  auto original = BundleReader::Open(Fixture("half_plus_two_v2") / "variables" / "variables");
  REQUIRE(original.ok());
  CHECK((*reader)->Keys() == (*original)->Keys());
  for (const std::string& key : (*original)->Keys())
    CHECK(TensorsEqual(*(*reader)->Read(key), *(*original)->Read(key)));
}

TEST_CASE(
    "SavedModel::Save: a TF2 bundle's traced save function writes the object graph's variables") {
  TempDir dir;
  auto m = SavedModel::Load(Fixture("VarsAndArithmeticObjectGraph"));
  REQUIRE_MESSAGE(m.ok(), m.status().ToString());
  const auto prefix = dir.path() / "variables";
  Status s = (*m)->Save(prefix);
  REQUIRE_MESSAGE(s.ok(), s.ToString());
  auto reader = BundleReader::Open(prefix);
  REQUIRE_MESSAGE(reader.ok(), reader.status().ToString());
  auto original =
      BundleReader::Open(Fixture("VarsAndArithmeticObjectGraph") / "variables" / "variables");
  REQUIRE(original.ok());
  CHECK((*reader)->Keys() == (*original)->Keys());
  for (const std::string& key : (*original)->Keys()) {
    if (key == "_CHECKPOINTABLE_OBJECT_GRAPH") continue;
    INFO(key);
    CHECK(TensorsEqual(*(*reader)->Read(key), *(*original)->Read(key)));
  }
}

TEST_CASE("OpIsRunnable: kernels, inlined calls and library functions") {
  CHECK(OpIsRunnable("MatMul"));
  CHECK(OpIsRunnable("StatefulPartitionedCall"));
  CHECK(OpIsRunnable("PartitionedCall"));
  CHECK_FALSE(OpIsRunnable("TRTEngineOp"));
  CHECK(OpIsRunnable("ParseExample"));
}

}  // namespace
}  // namespace kiln::exec
