// Loading SavedModels written by real TensorFlow, and refusing broken ones clearly.
#include <doctest/doctest.h>

#include <atomic>
#include <cmath>
#include <thread>

#include "exec/test_util.h"
#include "kiln/exec/resources.h"
#include "kiln/exec/saved_model.h"
#include "tensorflow/saved_model.pb.h"

namespace kiln::exec {
namespace {

using kiln::testing::CopyFixture;
using kiln::testing::Fixture;
using kiln::testing::ReadAll;
using kiln::testing::TempDir;
using kiln::testing::WriteAll;

float VariableValue(const SavedModel& m, const std::string& path) {
  for (const auto& v : m.variables())
    if (v.path == path) return v.resource->Read()->scalar<float>();
  FAIL("no variable ", path);
  return 0;
}

bool Contains(const Status& s, const std::string& needle) {
  INFO(s.ToString());
  return s.message().find(needle) != std::string::npos;
}

TEST_CASE("VarsAndArithmeticObjectGraph (TF 2.1) loads and runs serving_default") {
  auto m = SavedModel::Load(Fixture("VarsAndArithmeticObjectGraph"));
  REQUIRE_MESSAGE(m.ok(), m.status().ToString());
  const float x = VariableValue(**m, "x"), y = VariableValue(**m, "y"),
              z = VariableValue(**m, "child/z");
  CHECK(x == 1.0f);
  CHECK(y == 2.0f);
  CHECK(z == 3.0f);
  auto sig = (*m)->GetSignature("serving_default");
  REQUIRE(sig.ok());
  REQUIRE((*sig)->inputs().size() == 2);
  CHECK((*sig)->inputs()[0].key == "a");
  CHECK((*sig)->inputs()[0].tensor_name == "serving_default_a:0");
  auto out = (*sig)->Run({{"a", Tensor::Scalar(4.0f)}, {"b", Tensor::Scalar(7.0f)}});
  REQUIRE_MESSAGE(out.ok(), out.status().ToString());
  // compute(a, b) = (a + x) * (b + y) / child.z + child.c, with c = 5 (a graph constant).
  CHECK(out->at("output_0").scalar<float>() == doctest::Approx((4 + x) * (7 + y) / z + 5));
  // The restored method is callable by name.
  auto fn = (*m)->GetFunction("compute");
  REQUIRE_MESSAGE(fn.ok(), fn.status().ToString());
  auto r = (*fn)->Call(std::vector{Tensor::Scalar(4.0f), Tensor::Scalar(7.0f)});
  REQUIRE_MESSAGE(r.ok(), r.status().ToString());
  CHECK((*r)[0].scalar<float>() == doctest::Approx((4 + x) * (7 + y) / z + 5));
}

TEST_CASE("variables no function writes are frozen: folded into the graphs, read-only") {
  auto m = SavedModel::Load(Fixture("VarsAndArithmeticObjectGraph"));
  REQUIRE_MESSAGE(m.ok(), m.status().ToString());
  for (const auto& v : (*m)->variables()) {
    CHECK(v.resource->frozen());
    const Status s = v.resource->Assign(Tensor::Scalar(9.0f));
    CHECK(s.code() == StatusCode::kFailedPrecondition);
    CHECK(Contains(s, "'" + v.resource->name() + "' is read-only"));
    CHECK(Contains(s, "freeze_variables"));
  }
  // The reads became constants: the signature's schedule has no ReadVariableOp steps left,
  // only the arithmetic (its shape is known, so no specialisation is involved).
  auto sig = (*m)->GetSignature("serving_default");
  REQUIRE(sig.ok());
  CHECK((*sig)->function().plan_stats().folded >= 3);

  LoadOptions options;
  options.freeze_variables = false;
  auto open = SavedModel::Load(Fixture("VarsAndArithmeticObjectGraph"), options);
  REQUIRE_MESSAGE(open.ok(), open.status().ToString());
  for (const auto& v : (*open)->variables()) CHECK_FALSE(v.resource->frozen());
  // Assignable, and calls see the new value.
  for (const auto& v : (*open)->variables())
    if (v.path == "x") REQUIRE(v.resource->Assign(Tensor::Scalar(10.0f)).ok());
  auto osig = (*open)->GetSignature("serving_default");
  REQUIRE(osig.ok());
  auto out = (*osig)->Run({{"a", Tensor::Scalar(4.0f)}, {"b", Tensor::Scalar(7.0f)}});
  REQUIRE_MESSAGE(out.ok(), out.status().ToString());
  CHECK(out->at("output_0").scalar<float>() == doctest::Approx((4 + 10) * (7 + 2) / 3.0f + 5));
}

TEST_CASE("x_plus_y_v2_debuginfo (TF 1.14) runs serving_default") {
  auto m = SavedModel::Load(Fixture("x_plus_y_v2_debuginfo"));
  REQUIRE_MESSAGE(m.ok(), m.status().ToString());
  auto sig = (*m)->GetSignature("serving_default");
  REQUIRE(sig.ok());
  auto out = (*sig)->Run({{"x", Tensor::Scalar(1.5f)}, {"y", Tensor::Scalar(2.25f)}});
  REQUIRE_MESSAGE(out.ok(), out.status().ToString());
  REQUIRE(out->size() == 1);
  CHECK(out->begin()->second.scalar<float>() == 3.75f);
}

TEST_CASE("tf_readvariableop_saved_model (TF 2.9) runs serving_default with batch shapes") {
  auto m = SavedModel::Load(Fixture("tf_readvariableop_saved_model"));
  REQUIRE_MESSAGE(m.ok(), m.status().ToString());
  auto sig = (*m)->GetSignature("serving_default");
  REQUIRE(sig.ok());
  const auto& vars = (*m)->variables();
  REQUIRE(vars.size() == 2);
  auto v1 = VariableValue(**m, "var1"), v2 = VariableValue(**m, "var2");
  Tensor a(DType::kFloat, Shape{3, 1, 1}), b(DType::kFloat, Shape{3, 1, 1});
  for (int i = 0; i < 3; ++i) {
    a.data<float>()[i] = 1.0f + i;
    b.data<float>()[i] = 10.0f * i;
  }
  auto out = (*sig)->Run({{"input1", a}, {"input2", b}});
  REQUIRE_MESSAGE(out.ok(), out.status().ToString());
  const Tensor& o = out->at("output_0");
  CHECK(o.shape() == Shape{3, 1, 1});
  for (int i = 0; i < 3; ++i)  // input1 * var1 + input2 * var2 - 45
    CHECK(o.data<float>()[i] == doctest::Approx((1.0f + i) * v1 + 10.0f * i * v2 - 45));
}

TEST_CASE("signature input errors name the input and what was expected") {
  auto m = SavedModel::Load(Fixture("VarsAndArithmeticObjectGraph"));
  REQUIRE(m.ok());
  auto sig = *(*m)->GetSignature("serving_default");
  auto a = Tensor::Scalar(1.0f);
  auto missing = sig->Run({{"a", a}});
  CHECK(Contains(missing.status(), "missing input 'b'"));
  auto extra = sig->Run({{"a", a}, {"b", a}, {"c", a}});
  CHECK(Contains(extra.status(), "no input named 'c'"));
  auto misspelt = sig->Run({{"a", a}, {"bb", a}});
  CHECK(Contains(misspelt.status(), "no input named 'bb'"));
  auto dtype = sig->Run({{"a", a}, {"b", Tensor::Scalar(int32_t{1})}});
  CHECK(dtype.status().code() == StatusCode::kInvalidArgument);
  CHECK(Contains(dtype.status(), "input 'b': expected dtype float32"));
  CHECK(Contains(dtype.status(), "got int32"));
  Tensor vec(DType::kFloat, Shape{2});
  auto shape = sig->Run({{"a", a}, {"b", vec}});
  CHECK(Contains(shape.status(), "input 'b': expected shape ()"));
  CHECK(Contains(shape.status(), "got (2,)"));
  auto unknown = (*m)->GetSignature("serving_defualt");
  CHECK(unknown.status().code() == StatusCode::kNotFound);
  CHECK(Contains(unknown.status(), "no signature 'serving_defualt'"));
  CHECK(Contains(unknown.status(), "'serving_default'"));
}

TEST_CASE("broken bundles are refused with a message naming the problem") {
  TempDir tmp;
  SUBCASE("no saved_model.pb") {
    auto m = SavedModel::Load(tmp.path());
    REQUIRE_FALSE(m.ok());
    CHECK(Contains(m.status(), "saved_model.pb"));
  }
  SUBCASE("directory does not exist") {
    auto m = SavedModel::Load(tmp.path() / "nope");
    REQUIRE_FALSE(m.ok());
    CHECK(Contains(m.status(), "nope"));
  }
  SUBCASE("truncated saved_model.pb") {
    auto d = CopyFixture("VarsAndArithmeticObjectGraph", tmp);
    std::string pb = ReadAll(d / "saved_model.pb");
    WriteAll(d / "saved_model.pb", pb.substr(0, pb.size() / 2));
    auto m = SavedModel::Load(d);
    REQUIRE_FALSE(m.ok());
    CHECK(Contains(m.status(), "saved_model.pb"));
  }
  SUBCASE("corrupted saved_model.pb") {
    auto d = CopyFixture("VarsAndArithmeticObjectGraph", tmp);
    WriteAll(d / "saved_model.pb", std::string(200, '\xff'));
    auto m = SavedModel::Load(d);
    REQUIRE_FALSE(m.ok());
    CHECK(Contains(m.status(), "saved_model.pb"));
  }
  SUBCASE("missing variables data file") {
    auto d = CopyFixture("VarsAndArithmeticObjectGraph", tmp);
    std::filesystem::remove(d / "variables" / "variables.data-00000-of-00001");
    auto m = SavedModel::Load(d);
    REQUIRE_FALSE(m.ok());
    CHECK(Contains(m.status(), "variables.data-00000-of-00001"));
  }
  SUBCASE("truncated variables data file") {
    auto d = CopyFixture("VarsAndArithmeticObjectGraph", tmp);
    auto data = d / "variables" / "variables.data-00000-of-00001";
    WriteAll(data, ReadAll(data).substr(0, 6));
    auto m = SavedModel::Load(d);
    REQUIRE_FALSE(m.ok());
    CHECK(Contains(m.status(), "variables.data-00000-of-00001"));
  }
  SUBCASE("one flipped byte in the data file") {
    auto d = CopyFixture("VarsAndArithmeticObjectGraph", tmp);
    auto data = d / "variables" / "variables.data-00000-of-00001";
    std::string bytes = ReadAll(data);
    bytes[5] ^= 0x01;  // inside y's value
    WriteAll(data, bytes);
    auto m = SavedModel::Load(d);
    REQUIRE_FALSE(m.ok());
    CHECK(m.status().code() == StatusCode::kDataLoss);
    CHECK(Contains(m.status(), "y/.ATTRIBUTES/VARIABLE_VALUE"));
  }
  SUBCASE("variables/ of another model: the variables it has no entry for are named") {
    // TF's assert_existing_objects_matched refuses this at load; the variables would otherwise
    // fail only when read ("read before any assignment").
    auto d = CopyFixture("VarsAndArithmeticObjectGraph", tmp);
    for (const char* f : {"variables.index", "variables.data-00000-of-00001"})
      std::filesystem::copy_file(Fixture("SimpleWhileLoop") / "variables" / f, d / "variables" / f,
                                 std::filesystem::copy_options::overwrite_existing);
    auto m = SavedModel::Load(d);
    REQUIRE_FALSE(m.ok());
    CHECK(m.status().code() == StatusCode::kNotFound);
    CHECK(Contains(m.status(), "variables.index' has no entry for 3 objects"));
    CHECK(Contains(m.status(), "'x' (object"));
    CHECK(Contains(m.status(), "'child/z' (object"));
  }
  SUBCASE("an op the runtime does not implement is named at load time") {
    auto m = SavedModel::Load(Fixture("tftrt_2.0_saved_model"));
    REQUIRE_FALSE(m.ok());
    CHECK(m.status().code() == StatusCode::kUnimplemented);
    CHECK(Contains(m.status(), "TRTEngineOp"));
  }
  SUBCASE("a tag-set that is not there") {
    LoadOptions o;
    o.tags = {"serve", "gpu"};
    auto m = SavedModel::Load(Fixture("VarsAndArithmeticObjectGraph"), o);
    REQUIRE_FALSE(m.ok());
    CHECK(Contains(m.status(), "['gpu', 'serve']"));
  }
}

TEST_CASE("a TF2 SignatureDef naming tensors its function does not use refuses that signature") {
  // TF Serving runs the SignatureDef's names; kiln runs the signature's function. A name that
  // is not the function's own input placeholder or call output would be answered with
  // something else, so that signature is refused (the others still load).
  TempDir tmp;
  struct Case {
    const char* what;
    bool output;
    const char* name;
    const char* needle;
  };
  for (const Case& c :
       {Case{"output names the input", true, "serving_default_a:0", "returns it as"},
        Case{"output names a missing tensor", true, "nope:0", "returns it as"},
        Case{"output index out of range", true, "StatefulPartitionedCall:9", "returns it as"},
        Case{"input names another placeholder", false, "serving_default_b:0", "takes"},
        Case{"input names a missing tensor", false, "nope:0", "takes"}}) {
    INFO(c.what);
    const auto d = CopyFixture("VarsAndArithmeticObjectGraph", tmp);
    tensorflow::SavedModel sm;
    REQUIRE(sm.ParseFromString(ReadAll(d / "saved_model.pb")));
    auto& sd = (*sm.mutable_meta_graphs(0)->mutable_signature_def())["serving_default"];
    auto& map = c.output ? *sd.mutable_outputs() : *sd.mutable_inputs();
    REQUIRE(map.count(c.output ? "output_0" : "a") == 1);
    map[c.output ? "output_0" : "a"].set_name(c.name);
    WriteAll(d / "saved_model.pb", sm.SerializeAsString());
    auto m = SavedModel::Load(d);
    REQUIRE_MESSAGE(m.ok(), m.status().ToString());  // the model loads ...
    auto sig = (*m)->GetSignature("serving_default");
    REQUIRE_FALSE(sig.ok());  // ... without that signature
    CHECK(Contains(sig.status(), "signature 'serving_default'"));
    CHECK(Contains(sig.status(), std::string("names tensor '") + c.name + "'"));
    CHECK(Contains(sig.status(), c.needle));
    CHECK((*m)->GetFunction("compute").ok());  // restored functions still load
    LoadOptions only;
    only.signatures = {"serving_default"};
    auto asked = SavedModel::Load(d, only);
    REQUIRE_FALSE(asked.ok());
    CHECK(Contains(asked.status(), std::string("names tensor '") + c.name + "'"));
    std::filesystem::remove_all(d);
  }
}

TEST_CASE("every malformed fixture is refused without a crash") {
  for (const char* name :
       {"malformed_bad_node_attr", "malformed_const_with_no_value", "malformed_negative_shape"}) {
    auto m = SavedModel::Load(Fixture(name));
    INFO(name);
    CHECK_FALSE(m.ok());
    CHECK_FALSE(m.status().message().empty());
  }
}

}  // namespace
}  // namespace kiln::exec

namespace kiln::exec {
namespace {

TEST_CASE("a loaded signature runs from several threads at once") {
  auto m = SavedModel::Load(Fixture("VarsAndArithmeticObjectGraph"));
  REQUIRE(m.ok());
  const Signature* sig = *(*m)->GetSignature("serving_default");
  constexpr int kThreads = 4, kCalls = 300;
  std::atomic<int> wrong{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < kCalls; ++i) {
        const float a = static_cast<float>(t), b = static_cast<float>(i);
        std::vector<Tensor> out;
        Status s = sig->RunFlat(std::vector{Tensor::Scalar(a), Tensor::Scalar(b)}, &out);
        const float want = (a + 1) * (b + 2) / 3 + 5;
        if (!s.ok() || std::abs(out[0].scalar<float>() - want) > 1e-4f * std::abs(want)) ++wrong;
      }
    });
  }
  for (auto& th : threads) th.join();
  CHECK(wrong.load() == 0);
}

}  // namespace
}  // namespace kiln::exec

namespace kiln::exec {
namespace {

TEST_CASE("UninitializedVariable (TF 2.4): a variable saved without a value stays uninitialised") {
  auto m = SavedModel::Load(Fixture("UninitializedVariable"));
  REQUIRE_MESSAGE(m.ok(), m.status().ToString());
  int uninitialized = 0;
  for (const auto& v : (*m)->variables()) {
    if (v.resource->initialized()) continue;
    ++uninitialized;
    auto read = v.resource->Read();
    REQUIRE_FALSE(read.ok());
    CHECK(read.status().message().find(v.resource->name()) != std::string::npos);
  }
  CHECK(uninitialized == 2);
  // serving_default only uses the initialised variable: value + initialized_variable.
  float init = 0;
  for (const auto& v : (*m)->variables())
    if (v.path == "initialized_variable") init = v.resource->Read()->scalar<float>();
  auto sig = (*m)->GetSignature("serving_default");
  REQUIRE(sig.ok());
  auto out = (*sig)->Run({{"value", Tensor::Scalar(1.0f)}});
  REQUIRE_MESSAGE(out.ok(), out.status().ToString());
  CHECK(out->at("output_0").scalar<float>() == 1.0f + init);
}

}  // namespace
}  // namespace kiln::exec

namespace kiln::exec {
namespace {

TEST_CASE("AssetModule (TF 2.4): a function reads its asset through the captured asset path") {
  auto m = SavedModel::Load(Fixture("AssetModule"));
  REQUIRE_MESSAGE(m.ok(), m.status().ToString());
  auto sig = (*m)->GetSignature("serving_default");
  REQUIRE(sig.ok());
  std::map<std::string, Tensor> inputs;
  for (const auto& in : (*sig)->inputs()) inputs[in.key] = Tensor(in.spec.dtype, Shape());
  auto out = (*sig)->Run(inputs);
  REQUIRE_MESSAGE(out.ok(), out.status().ToString());
  CHECK(out->begin()->second.scalar<std::string>() ==
        ReadAll(Fixture("AssetModule") / "assets" / "test_asset.txt"));
}

}  // namespace
}  // namespace kiln::exec

namespace kiln::exec {
namespace {

TEST_CASE(
    "TF1-style bundles run like a Session: trt_sample_model's conv net, from placeholder to "
    "fetch") {
  auto m = SavedModel::Load(Fixture("trt_sample_model"));
  REQUIRE_MESSAGE(m.ok(), m.status().ToString());
  auto sig = (*m)->GetSignature("serving_default");
  REQUIRE(sig.ok());
  REQUIRE((*sig)->inputs().size() == 1);
  CHECK((*sig)->inputs()[0].tensor_name == "Placeholder:0");
  Tensor x(DType::kFloat, Shape{2, 28, 28, 3});
  for (int64_t i = 0; i < x.NumElements(); ++i)
    x.data<float>()[i] = static_cast<float>(i % 17) / 17.0f;
  auto out = (*sig)->Run({{"input", x}});
  REQUIRE_MESSAGE(out.ok(), out.status().ToString());
  const Tensor& y = out->at("output");
  CHECK(y.shape() == Shape{2, 22, 22, 8});
  bool any_positive = false, any_negative = false;
  for (float v : y.flat<float>()) {
    any_positive |= v > 0;
    any_negative |= v < 0;
  }
  CHECK(any_positive);
  CHECK_FALSE(any_negative);  // the net ends in Relu
}

TEST_CASE("a TF1 bundle's classify and regress signatures parse tf.Example: TF's y = x / 2 + 2") {
  // half_plus_two's classify/regress signatures parse tf.Example protos (ParseExample).
  auto m = SavedModel::Load(Fixture("half_plus_two_v1"));
  REQUIRE_MESSAGE(m.ok(), m.status().ToString());
  // tf.train.Example with feature x = [3.0], as TensorFlow serialises it.
  const std::string example("\n\x0f\n\r\n\x01x\x12\x08\x12\x06\n\x04\x00\x00@@", 17);
  Tensor in(DType::kString, Shape{1});
  in.data<std::string>()[0] = example;
  for (const char* key : {"regress_x_to_y", "classify_x_to_y"}) {
    INFO(key);
    auto sig = (*m)->GetSignature(key);
    REQUIRE(sig.ok());
    auto out = (*sig)->Run({{"inputs", in}});
    REQUIRE_MESSAGE(out.ok(), out.status().ToString());
    const Tensor& y = out->begin()->second;
    REQUIRE(y.shape() == Shape{1, 1});
    CHECK(y.data<float>()[0] == 3.5f);  // TensorFlow's value for the same example
  }
}

}  // namespace
}  // namespace kiln::exec
