// Serving plans (kiln/exec/serving_plan.h): compile, load with and without the plan, stale and
// corrupt plans, and hand-made plans that break one rule each.
#include "kiln/exec/serving_plan.h"

#include <doctest/doctest.h>

#include <cstring>

#include "exec/test_util.h"
#include "kiln/exec/plan_model.h"
#include "kiln/exec/saved_model.h"
#include "kiln/plan_generated.h"
#include "plan/plan_reader.h"
#include "tensorflow/saved_model.pb.h"

namespace kiln::exec {
namespace {

using testing::CopyFixture;
using testing::ReadAll;
using testing::TempDir;
using testing::WriteAll;

// Deterministic inputs for a signature: unknown dims become 2.
std::vector<Tensor> InputsFor(const Signature& sig) {
  std::vector<Tensor> inputs;
  int seed = 1;
  for (const SignatureArg& a : sig.inputs()) {
    Shape shape;
    if (!a.spec.shape.unknown_rank())
      for (int64_t d : a.spec.shape.dims()) shape.AddDim(d < 0 ? 2 : d);
    Tensor t(a.spec.dtype, shape);
    const int64_t n = t.NumElements();
    switch (a.spec.dtype) {
      case DType::kFloat:
        for (int64_t i = 0; i < n; ++i)
          t.data<float>()[i] = 0.25f * static_cast<float>((i + seed) % 7) - 0.5f;
        break;
      case DType::kInt32:
        for (int64_t i = 0; i < n; ++i) t.data<int32_t>()[i] = static_cast<int32_t>((i + seed) % 5);
        break;
      case DType::kInt64:
        for (int64_t i = 0; i < n; ++i) t.data<int64_t>()[i] = (i + seed) % 5;
        break;
      case DType::kString:
        for (int64_t i = 0; i < n; ++i) t.data<std::string>()[i] = "s" + std::to_string(i);
        break;
      default:
        break;
    }
    ++seed;
    inputs.push_back(std::move(t));
  }
  return inputs;
}

bool SameBits(const Tensor& a, const Tensor& b) {
  if (a.dtype() != b.dtype() || a.shape() != b.shape()) return false;
  if (a.dtype() == DType::kString) {
    for (int64_t i = 0; i < a.NumElements(); ++i)
      if (a.data<std::string>()[i] != b.data<std::string>()[i]) return false;
    return true;
  }
  if (!DTypeIsPod(a.dtype())) return true;
  const size_t bytes = static_cast<size_t>(a.NumElements()) * DTypeSize(a.dtype());
  return std::memcmp(a.raw_data(), b.raw_data(), bytes) == 0;
}

// Every signature of `dir` gives the same bits loaded with the plan and without it.
void CheckSameWithAndWithoutPlan(const std::filesystem::path& dir,
                                 const std::vector<std::string>& signatures) {
  LoadOptions without;
  without.plan = PlanUse::kIgnore;
  without.signatures = signatures;
  auto reference = SavedModel::Load(dir, without);
  REQUIRE_MESSAGE(reference.ok(), reference.status().ToString());
  CompileOptions copts;
  copts.signatures = signatures;
  auto compiled = CompilePlan(dir, copts);
  REQUIRE_MESSAGE(compiled.ok(), compiled.status().ToString());
  CHECK_MESSAGE(compiled->not_planned.empty(), dir.string());
  LoadOptions with;
  with.plan = PlanUse::kRequire;
  with.signatures = signatures;
  auto planned = SavedModel::Load(dir, with);
  REQUIRE_MESSAGE(planned.ok(), planned.status().ToString());
  size_t functions = (*reference)->SignatureNames().size();
  for (const std::string& f : (*reference)->FunctionNames())
    functions += (*(*reference)->GetFunction(f))->concrete_functions().size();
  CHECK(static_cast<size_t>(planned->get()->plan_status().functions_from_plan) == functions);
  CHECK(planned->get()->plan_status().reason.empty());
  CHECK((*planned)->SignatureNames() == (*reference)->SignatureNames());
  CHECK((*planned)->FunctionNames() == (*reference)->FunctionNames());
  for (const std::string& name : (*reference)->SignatureNames()) {
    const Signature* a = *(*reference)->GetSignature(name);
    const Signature* b = *(*planned)->GetSignature(name);
    const std::vector<Tensor> inputs = InputsFor(*a);
    std::vector<Tensor> out_a, out_b;
    Status sa = a->RunFlat(inputs, &out_a);
    Status sb = b->RunFlat(inputs, &out_b);
    CHECK_MESSAGE(sa.ok() == sb.ok(), name, ": ", sa.ToString(), " / ", sb.ToString());
    if (!sa.ok() || !sb.ok()) continue;
    REQUIRE(out_a.size() == out_b.size());
    for (size_t i = 0; i < out_a.size(); ++i)
      CHECK_MESSAGE(SameBits(out_a[i], out_b[i]), dir.filename().string(), " signature ", name,
                    " output ", i);
  }
}

TEST_CASE("serving plan: TF-written fixtures give the same outputs with and without a plan") {
  // Each fixture that loads, with the signatures this runtime runs (half_plus_two's classify
  // and regress signatures need ParseExample).
  const std::vector<std::pair<std::string, std::vector<std::string>>> corpus = {
      {"half_plus_two_v2", {"serving_default"}},
      {"half_plus_two_v1", {"serving_default"}},
      {"VarsAndArithmeticObjectGraph", {}},
      {"SimpleWhileLoop", {}},
      {"AssetModule", {}},
      {"CyclicModule", {}},
      {"x_plus_y_v2_debuginfo", {}},
      {"tf_readvariableop_saved_model", {}},
      {"non_chunked_model", {}},
      {"SimpleV1Model", {}},
  };
  for (const auto& [name, signatures] : corpus) {
    SUBCASE(name.c_str()) {
      TempDir tmp;
      CheckSameWithAndWithoutPlan(CopyFixture(name, tmp), signatures);
    }
  }
}

TEST_CASE("serving plan: a self-contained plan loads without reading saved_model.pb") {
  TempDir tmp;
  const auto dir = CopyFixture("VarsAndArithmeticObjectGraph", tmp);
  auto report = CompilePlan(dir);
  REQUIRE_MESSAGE(report.ok(), report.status().ToString());
  CHECK(report->self_contained);
  CHECK(std::filesystem::exists(dir / kPlanPath));
  auto m = SavedModel::Load(dir);
  REQUIRE(m.ok());
  CHECK((*m)->loaded_from_plan());
  // The proto is read on first use, and saving says why it cannot.
  CHECK((*m)->meta_graph().signature_def_size() > 0);
  Status save = (*m)->Save(tmp.path() / "ckpt");
  CHECK(save.code() == StatusCode::kFailedPrecondition);
  CHECK(save.message().find("serving plan") != std::string::npos);
  // A bundle that calls functions from its graphs (a while loop) keeps reading the protobuf.
  const auto loop = CopyFixture("SimpleWhileLoop", tmp);
  auto loop_report = CompilePlan(loop);
  REQUIRE(loop_report.ok());
  CHECK_FALSE(loop_report->self_contained);
  auto lm = SavedModel::Load(loop);
  REQUIRE(lm.ok());
  CHECK_FALSE((*lm)->loaded_from_plan());
  CHECK((*lm)->plan_status().functions_from_plan > 0);
}

TEST_CASE("serving plan: PlanModel serves a self-contained plan with SavedModel's outputs") {
  TempDir tmp;
  const auto dir = CopyFixture("VarsAndArithmeticObjectGraph", tmp);
  auto missing = PlanModel::Load(dir);
  REQUIRE_FALSE(missing.ok());
  CHECK(missing.status().code() == StatusCode::kNotFound);
  CHECK(missing.status().message().find("savedmodel-cli compile --dir") != std::string::npos);
  REQUIRE(CompilePlan(dir).ok());
  LoadOptions without;
  without.plan = PlanUse::kIgnore;
  auto reference = SavedModel::Load(dir, without);
  REQUIRE(reference.ok());
  auto pm = PlanModel::Load(dir);
  REQUIRE_MESSAGE(pm.ok(), pm.status().ToString());
  CHECK((*pm)->SignatureNames() == (*reference)->SignatureNames());
  CHECK((*pm)->FunctionNames() == (*reference)->FunctionNames());
  CHECK((*pm)->variables().size() == (*reference)->variables().size());
  CHECK((*pm)->functions_from_plan() > 0);
  // Every variable a signature captures is restored (PlanModel restores no others).
  for (const std::string& name : (*pm)->SignatureNames()) {
    for (const Tensor& c : (*(*pm)->GetSignature(name))->captures()) {
      if (c.dtype() != DType::kResource) continue;
      auto var =
          std::dynamic_pointer_cast<VariableResource>(c.scalar<std::shared_ptr<ResourceBase>>());
      REQUIRE(var != nullptr);
      CHECK_MESSAGE(var->initialized(), var->name());
    }
  }
  for (const std::string& name : (*reference)->SignatureNames()) {
    const Signature* a = *(*reference)->GetSignature(name);
    const Signature* b = *(*pm)->GetSignature(name);
    const std::vector<Tensor> inputs = InputsFor(*a);
    std::vector<Tensor> out_a, out_b;
    REQUIRE(a->RunFlat(inputs, &out_a).ok());
    REQUIRE(b->RunFlat(inputs, &out_b).ok());
    REQUIRE(out_a.size() == out_b.size());
    for (size_t i = 0; i < out_a.size(); ++i) CHECK(SameBits(out_a[i], out_b[i]));
  }
  auto nope = (*pm)->GetSignature("nope");
  CHECK(nope.status().code() == StatusCode::kNotFound);
  CHECK(nope.status().message().find("available:") != std::string::npos);
  // Asking for a signature the plan lacks names what it has.
  LoadOptions some;
  some.signatures = {"nope"};
  auto lacking = PlanModel::Load(dir, some);
  REQUIRE_FALSE(lacking.ok());
  CHECK_MESSAGE(lacking.status().message().find("has no signature 'nope'") != std::string::npos,
                lacking.status().ToString());
  // A plan compiled for other load options is stale for this load.
  LoadOptions unfrozen;
  unfrozen.freeze_variables = false;
  auto stale = PlanModel::Load(dir, unfrozen);
  REQUIRE_FALSE(stale.ok());
  CHECK(stale.status().message().find("stale") != std::string::npos);
  // A plan that is not self-contained cannot serve without saved_model.pb.
  const auto loop = CopyFixture("SimpleWhileLoop", tmp);
  REQUIRE(CompilePlan(loop).ok());
  auto lm = PlanModel::Load(loop);
  REQUIRE_FALSE(lm.ok());
  CHECK(lm.status().message().find("without saved_model.pb") != std::string::npos);
}

TEST_CASE("serving plan: a bundle changed after compiling falls back, naming the file") {
  TempDir tmp;
  const auto dir = CopyFixture("VarsAndArithmeticObjectGraph", tmp);
  REQUIRE(CompilePlan(dir).ok());
  // Rewrite saved_model.pb with one field changed: same meaning, different bytes.
  tensorflow::SavedModel proto;
  REQUIRE(proto.ParseFromString(ReadAll(dir / "saved_model.pb")));
  proto.set_saved_model_schema_version(proto.saved_model_schema_version() + 1);
  WriteAll(dir / "saved_model.pb", proto.SerializeAsString());
  std::vector<std::string> warnings;
  LoadOptions options;
  options.warn = [&](std::string_view w) { warnings.emplace_back(w); };
  auto m = SavedModel::Load(dir, options);
  REQUIRE(m.ok());
  CHECK((*m)->plan_status().functions_from_plan == 0);
  REQUIRE(warnings.size() == 1);
  CHECK(warnings[0].find("saved_model.pb changed") != std::string::npos);
  CHECK((*m)->plan_status().reason.find("saved_model.pb") != std::string::npos);
  options.plan = PlanUse::kRequire;
  auto required = SavedModel::Load(dir, options);
  REQUIRE_FALSE(required.ok());
  CHECK(required.status().message().find("saved_model.pb changed") != std::string::npos);
}

TEST_CASE("serving plan: require without a plan says how to make one") {
  TempDir tmp;
  const auto dir = CopyFixture("half_plus_two_v2", tmp);
  LoadOptions options;
  options.plan = PlanUse::kRequire;
  auto m = SavedModel::Load(dir, options);
  REQUIRE_FALSE(m.ok());
  CHECK(m.status().code() == StatusCode::kNotFound);
  CHECK(m.status().message().find("savedmodel-cli compile") != std::string::npos);
}

TEST_CASE("serving plan: truncated and bit-flipped plans are refused, never run") {
  TempDir tmp;
  const auto dir = CopyFixture("VarsAndArithmeticObjectGraph", tmp);
  REQUIRE(CompilePlan(dir).ok());
  const std::string good = ReadAll(dir / kPlanPath);
  REQUIRE(ServingPlan::FromBytes(good).ok());
  for (size_t cut : {size_t{0}, size_t{7}, good.size() / 2, good.size() - 1}) {
    auto p = ServingPlan::FromBytes(good.substr(0, cut));
    CHECK_FALSE(p.ok());
  }
  // Every byte flipped in turn (the checksum catches what structure cannot).
  for (size_t i = 0; i < good.size(); ++i) {
    std::string bad = good;
    bad[i] = static_cast<char>(bad[i] ^ 0x20);
    auto p = ServingPlan::FromBytes(bad);
    CHECK_MESSAGE(!p.ok(), "byte ", i);
  }
  // A load with a corrupt plan warns and runs from the protobuf with the right answer.
  std::string bad = good;
  bad[bad.size() / 2] = static_cast<char>(bad[bad.size() / 2] ^ 1);
  WriteAll(dir / kPlanPath, bad);
  std::vector<std::string> warnings;
  LoadOptions options;
  options.warn = [&](std::string_view w) { warnings.emplace_back(w); };
  auto m = SavedModel::Load(dir, options);
  REQUIRE(m.ok());
  CHECK((*m)->plan_status().functions_from_plan == 0);
  REQUIRE(warnings.size() == 1);
  CHECK(warnings[0].find("checksum") != std::string::npos);
}

// Hand-made plans: each breaks one rule the reader must catch, naming the field.
namespace fb = ::flatbuffers;
namespace kp = ::kiln::plan;

struct PlanSpec {
  std::vector<std::pair<std::string, std::vector<kp::Edge>>> nodes;  // op, inputs
  std::vector<int64_t> constant_shape = {2};
  size_t constant_bytes = 8;
  std::vector<kp::Edge> outputs = {kp::Edge(1, 0)};
  std::vector<std::string> devices;
  std::string tuning_device = "gpu:0";
  std::string tuning_key;  // empty: no tuning record
  size_t tuning_value_bytes = 16;
};

std::string MakePlan(const PlanSpec& spec) {
  fb::FlatBufferBuilder b;
  std::vector<fb::Offset<kp::Node>> nodes;
  std::vector<fb::Offset<fb::String>> kernels;
  for (size_t i = 0; i < spec.nodes.size(); ++i) {
    const auto& [op, inputs] = spec.nodes[i];
    auto name = b.CreateString("n" + std::to_string(i));
    auto op_s = b.CreateString(op);
    std::vector<fb::Offset<kp::Attr>> attrs;
    auto attrs_v = b.CreateVectorOfSortedTables(&attrs);
    auto in_v = b.CreateVectorOfStructs(inputs);
    const bool is_arg = op == "_Arg";
    const bool is_const = op == "Const";
    nodes.push_back(kp::CreateNode(b, name, op_s, is_arg || is_const ? 0 : attrs_v, in_v, 0,
                                   is_arg ? static_cast<int32_t>(i) : -1, is_const ? 0 : -1));
    kernels.push_back(b.CreateString(is_arg || is_const ? "" : "cpu"));
  }
  std::vector<fb::Offset<fb::String>> arg_names = {b.CreateString("x")};
  std::vector<int32_t> dtypes = {1};
  std::vector<fb::Offset<kp::Shape>> shapes = {kp::CreateShape(b, true, 0)};
  auto fn = kp::CreateFunction(
      b, b.CreateString("f"), b.CreateVector(arg_names), b.CreateVector(dtypes), 0,
      b.CreateVector(dtypes), b.CreateVector(shapes),
      b.CreateVector(std::vector<fb::Offset<fb::String>>{b.CreateString("y")}),
      b.CreateVector(dtypes), b.CreateVector(nodes), b.CreateVectorOfStructs(spec.outputs), 0,
      b.CreateString("cpu"), b.CreateVector(kernels), 1, 0, 0);
  std::vector<uint8_t> data(spec.constant_bytes, 0);
  auto constant =
      kp::CreateConstant(b, 1, b.CreateVector(spec.constant_shape), b.CreateVector(data), 0);
  auto fns = b.CreateVector(std::vector<fb::Offset<kp::Function>>{fn});
  auto consts = b.CreateVector(std::vector<fb::Offset<kp::Constant>>{constant});
  auto devices = b.CreateVectorOfStrings(spec.devices);
  std::vector<fb::Offset<kp::TuningRecord>> records;
  if (!spec.tuning_key.empty())
    records.push_back(kp::CreateTuningRecord(
        b, b.CreateString(spec.tuning_device), b.CreateString(spec.tuning_key),
        b.CreateVector(std::vector<uint8_t>(spec.tuning_value_bytes, 1))));
  auto root = kp::CreatePlan(b, kPlanFormatVersion, b.CreateString(kPlanRuntime), 0, true, 0, fns,
                             consts, 0, devices, b.CreateVector(records));
  b.Finish(root, kp::PlanIdentifier());
  std::string bytes(reinterpret_cast<const char*>(b.GetBufferPointer()), b.GetSize());
  AppendPlanTrailer(&bytes);
  return bytes;
}

std::string RefusalOf(const PlanSpec& spec) {
  auto p = ServingPlan::FromBytes(MakePlan(spec));
  return p.ok() ? "" : p.status().message();
}

TEST_CASE("serving plan: hand-made plans that break a rule are refused, naming the field") {
  PlanSpec ok;
  ok.nodes = {{"_Arg", {}}, {"Relu", {kp::Edge(0, 0)}}};
  CHECK(RefusalOf(ok).empty());

  PlanSpec out_of_range = ok;
  out_of_range.nodes[1].second = {kp::Edge(5, 0)};
  CHECK(RefusalOf(out_of_range).find("functions[0].nodes[1].inputs[0]") != std::string::npos);

  PlanSpec cycle = ok;  // a node fed by itself: a cycle
  cycle.nodes[1].second = {kp::Edge(1, 0)};
  CHECK(RefusalOf(cycle).find("earlier node") != std::string::npos);

  PlanSpec unknown = ok;
  unknown.nodes[1].first = "NoSuchOp";
  CHECK(RefusalOf(unknown).find("'NoSuchOp' is not an op") != std::string::npos);

  PlanSpec overflow = ok;
  overflow.constant_shape = {int64_t{1} << 40, int64_t{1} << 40};
  CHECK(RefusalOf(overflow).find("constants[0]") != std::string::npos);

  PlanSpec short_data = ok;
  short_data.constant_bytes = 4;
  CHECK(RefusalOf(short_data).find("constants[0].data") != std::string::npos);

  PlanSpec bad_output = ok;
  bad_output.outputs = {kp::Edge(9, 0)};
  CHECK(RefusalOf(bad_output).find("functions[0].outputs[0]") != std::string::npos);

  PlanSpec arg_late = ok;  // an _Arg that is not among the first nodes
  arg_late.nodes = {{"_Arg", {}}, {"Relu", {kp::Edge(0, 0)}}, {"_Arg", {}}};
  CHECK(RefusalOf(arg_late).find("nodes[2].op") != std::string::npos);

  PlanSpec tuned = ok;  // a measured choice within the limits is taken
  tuned.devices = {"gpu:0", "cpu"};
  tuned.tuning_key = "cudnn-conv fwd";
  CHECK(RefusalOf(tuned).empty());

  PlanSpec long_key = tuned;
  long_key.tuning_key = std::string(4096, 'k');
  CHECK(RefusalOf(long_key).find("tuning[0].key") != std::string::npos);

  PlanSpec big_value = tuned;
  big_value.tuning_value_bytes = 1 << 20;
  CHECK(RefusalOf(big_value).find("tuning[0].value") != std::string::npos);

  PlanSpec no_device = tuned;
  no_device.tuning_device = "";
  CHECK(RefusalOf(no_device).find("tuning[0].device") != std::string::npos);

  PlanSpec empty_device = ok;
  empty_device.devices = {"gpu:0", ""};
  CHECK(RefusalOf(empty_device).find("devices[1]") != std::string::npos);
}

}  // namespace
}  // namespace kiln::exec
