// Placement and copies: with the test device first in the list, nodes it has kernels for run
// there, the rest fall back to the host, host-memory arguments stay on the host, and copy steps
// move tensors across. The test device's kernels check where every input lives, so a missing
// copy fails the run. Results are bit-identical to the host alone (the same CPU kernels run).
#include <doctest/doctest.h>
#include <google/protobuf/text_format.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <thread>

#include "device/test_device.h"
#include "exec/test_util.h"
#include "kiln/exec/executor.h"
#include "kiln/exec/saved_model.h"
#include "kiln/exec/serving_plan.h"
#include "tensorflow/framework.pb.h"

namespace kiln::exec {
namespace {

using kiln::testing::GetTestDevice;
using kiln::testing::TestDevice;
using Args = std::vector<Tensor>;

tensorflow::FunctionDefLibrary ParseLibrary(const std::string& text) {
  tensorflow::FunctionDefLibrary lib;
  REQUIRE(google::protobuf::TextFormat::ParseFromString(text, &lib));
  return lib;
}

// dense: relu(x @ w + b), w and b constants; floor_relu: relu(floor(x)) with Floor host-only;
// reshape: x reshaped to (3, 2) by its own runtime Shape; dense64: a float64 MatMul.
const char* kLib = R"pb(
  function {
    signature {
      name: "dense"
      input_arg { name: "x" type: DT_FLOAT }
      output_arg { name: "y" type: DT_FLOAT }
    }
    node_def {
      name: "w"
      op: "Const"
      attr {
        key: "dtype"
        value { type: DT_FLOAT }
      }
      attr {
        key: "value"
        value {
          tensor {
            dtype: DT_FLOAT
            tensor_shape {
              dim { size: 3 }
              dim { size: 2 }
            }
            float_val: [ 1, -2, 0.5, 3, -1, 0.25 ]
          }
        }
      }
    }
    node_def {
      name: "b"
      op: "Const"
      attr {
        key: "dtype"
        value { type: DT_FLOAT }
      }
      attr {
        key: "value"
        value {
          tensor {
            dtype: DT_FLOAT
            tensor_shape { dim { size: 2 } }
            float_val: [ 0.5, -0.75 ]
          }
        }
      }
    }
    node_def {
      name: "mm"
      op: "MatMul"
      input: "x"
      input: "w:output:0"
      attr {
        key: "T"
        value { type: DT_FLOAT }
      }
    }
    node_def {
      name: "bias"
      op: "BiasAdd"
      input: "mm:product:0"
      input: "b:output:0"
      attr {
        key: "T"
        value { type: DT_FLOAT }
      }
    }
    node_def {
      name: "relu"
      op: "Relu"
      input: "bias:output:0"
      attr {
        key: "T"
        value { type: DT_FLOAT }
      }
    }
    ret { key: "y" value: "relu:activations:0" }
  }
  function {
    signature {
      name: "floor_relu"
      input_arg { name: "x" type: DT_FLOAT }
      output_arg { name: "y" type: DT_FLOAT }
    }
    node_def {
      name: "fl"
      op: "Floor"
      input: "x"
      attr {
        key: "T"
        value { type: DT_FLOAT }
      }
    }
    node_def {
      name: "relu"
      op: "Relu"
      input: "fl:y:0"
      attr {
        key: "T"
        value { type: DT_FLOAT }
      }
    }
    node_def {
      name: "sq"
      op: "Square"
      input: "relu:activations:0"
      attr {
        key: "T"
        value { type: DT_FLOAT }
      }
    }
    ret { key: "y" value: "sq:y:0" }
  }
  function {
    signature {
      name: "reshape"
      input_arg { name: "x" type: DT_FLOAT }
      input_arg { name: "dims" type: DT_INT32 }
      output_arg { name: "y" type: DT_FLOAT }
    }
    node_def {
      name: "neg"
      op: "Neg"
      input: "x"
      attr {
        key: "T"
        value { type: DT_FLOAT }
      }
    }
    node_def {
      name: "r"
      op: "Reshape"
      input: "neg:y:0"
      input: "dims"
      attr {
        key: "T"
        value { type: DT_FLOAT }
      }
      attr {
        key: "Tshape"
        value { type: DT_INT32 }
      }
    }
    node_def {
      name: "t"
      op: "Tanh"
      input: "r:output:0"
      attr {
        key: "T"
        value { type: DT_FLOAT }
      }
    }
    ret { key: "y" value: "t:y:0" }
  }
  function {
    signature {
      name: "dense64"
      input_arg { name: "x" type: DT_DOUBLE }
      input_arg { name: "w" type: DT_DOUBLE }
      output_arg { name: "y" type: DT_DOUBLE }
    }
    node_def {
      name: "mm"
      op: "MatMul"
      input: "x"
      input: "w"
      attr {
        key: "T"
        value { type: DT_DOUBLE }
      }
    }
    ret { key: "y" value: "mm:product:0" }
  }
  function {
    signature {
      name: "half_softmax"
      input_arg { name: "x" type: DT_FLOAT }
      output_arg { name: "y" type: DT_FLOAT }
    }
    node_def {
      name: "to_half"
      op: "Cast"
      input: "x"
      attr {
        key: "SrcT"
        value { type: DT_FLOAT }
      }
      attr {
        key: "DstT"
        value { type: DT_HALF }
      }
    }
    node_def {
      name: "sm"
      op: "Softmax"
      input: "to_half:y:0"
      attr {
        key: "T"
        value { type: DT_HALF }
      }
    }
    node_def {
      name: "to_float"
      op: "Cast"
      input: "sm:softmax:0"
      attr {
        key: "SrcT"
        value { type: DT_HALF }
      }
      attr {
        key: "DstT"
        value { type: DT_FLOAT }
      }
    }
    ret { key: "y" value: "to_float:y:0" }
  }
  function {
    signature {
      name: "shape_of_relu"
      input_arg { name: "x" type: DT_FLOAT }
      output_arg { name: "y" type: DT_INT32 }
    }
    node_def {
      name: "relu"
      op: "Relu"
      input: "x"
      attr {
        key: "T"
        value { type: DT_FLOAT }
      }
    }
    node_def {
      name: "shape"
      op: "Shape"
      input: "relu:activations:0"
      attr {
        key: "T"
        value { type: DT_FLOAT }
      }
      attr {
        key: "out_type"
        value { type: DT_INT32 }
      }
    }
    ret { key: "y" value: "shape:output:0" }
  }
)pb";

Tensor Matrix(int64_t rows, int64_t cols, float start) {
  Tensor t(DType::kFloat, Shape({rows, cols}));
  for (int64_t i = 0; i < t.NumElements(); ++i)
    t.data<float>()[i] = start + 0.37f * static_cast<float>(i) * (i % 2 == 0 ? 1.0f : -1.0f);
  return t;
}

struct Prepared {
  std::shared_ptr<const PreparedFunction> host, test;
};

Prepared PrepareBoth(const FunctionLibrary& lib, const std::string& name,
                     std::vector<TensorSpec> specs) {
  Prepared p;
  auto host = PreparedFunction::Prepare(*lib.Find(name), lib, specs);
  REQUIRE_MESSAGE(host.ok(), host.status().ToString());
  PrepareOptions options;
  options.devices = {GetTestDevice()};
  auto test = PreparedFunction::Prepare(*lib.Find(name), lib, specs, options);
  REQUIRE_MESSAGE(test.ok(), test.status().ToString());
  p.host = *host;
  p.test = *test;
  return p;
}

int StepsOn(const PlanStats& st, const std::string& device) {
  for (const auto& [name, n] : st.device_steps)
    if (name == device) return n;
  return -1;
}

void CheckSameResults(const Prepared& p, const std::vector<Tensor>& args) {
  std::vector<Tensor> want, got;
  REQUIRE(p.host->Run(args, &want).ok());
  const int64_t calls = GetTestDevice()->kernel_calls();
  Status st = p.test->Run(args, &got);
  REQUIRE_MESSAGE(st.ok(), st.ToString());
  REQUIRE(got.size() == want.size());
  for (size_t i = 0; i < want.size(); ++i) {
    CHECK(TensorsEqual(got[i], want[i]));
    CHECK(got[i].HostAccessible());
    CHECK_FALSE(GetTestDevice()->Owns(got[i].raw_data()));  // results come back to the host
  }
  if (StepsOn(p.test->plan_stats(), "test:0") > p.test->plan_stats().copies)
    CHECK(GetTestDevice()->kernel_calls() > calls);
}

// `t` copied into the test device's memory.
Tensor OnTestDevice(const Tensor& t) {
  auto moved = CopyTensor(t, HostDevice(), GetTestDevice());
  REQUIRE_MESSAGE(moved.ok(), moved.status().ToString());
  CHECK(DeviceHolding(*moved) == GetTestDevice());
  return *moved;
}

TEST_CASE("placement: a dense layer runs on the first device, with one copy in and one out") {
  auto proto = ParseLibrary(kLib);
  FunctionLibrary lib(proto);
  Prepared p = PrepareBoth(lib, "dense", {TensorSpec{DType::kFloat, PartialShape({4, 3})}});
  const PlanStats& host = p.host->plan_stats();
  const PlanStats& st = p.test->plan_stats();
  // On the host alone: no copies, every step on cpu.
  CHECK(host.copies == 0);
  CHECK(StepsOn(host, "cpu") == host.steps);
  // On the test device: the fused product on test:0, x copied in, y copied out; the weights
  // were copied once, at prepare time.
  CHECK(st.copies == 2);
  CHECK(st.copy_bytes == (4 * 3 + 4 * 2) * 4);
  // Each side keeps the two weights it reads: the device's copies leave no host copy behind.
  CHECK(host.constants == 2);
  CHECK(st.constants == 2);
  CHECK(StepsOn(st, "test:0") == st.steps);
  CHECK(StepsOn(st, "cpu") == 0);
  const std::vector<ScheduledStep> schedule = p.test->Schedule();
  REQUIRE(schedule.size() == 3);
  CHECK(schedule[0].op == "_Copy");
  CHECK(schedule[0].from == "cpu");
  CHECK(schedule[0].device == "test:0");
  CHECK(schedule[0].bytes == 4 * 3 * 4);
  CHECK(schedule[1].op == "_FusedMatMul");
  CHECK(schedule[1].device == "test:0");
  CHECK(schedule[2].op == "_Copy");
  CHECK(schedule[2].device == "cpu");
  const int64_t in = GetTestDevice()->copies_to_device(), out = GetTestDevice()->copies_to_host();
  CheckSameResults(p, {Matrix(4, 3, -1.0f)});
  CHECK(GetTestDevice()->copies_to_device() == in + 1);
  CHECK(GetTestDevice()->copies_to_host() == out + 1);
}

TEST_CASE("placement: an op the device lacks falls back to the host between copies") {
  auto proto = ParseLibrary(kLib);
  FunctionLibrary lib(proto);
  Prepared p = PrepareBoth(lib, "floor_relu", {TensorSpec{DType::kFloat, PartialShape({5, 7})}});
  const PlanStats& st = p.test->plan_stats();
  // Floor on cpu (x needs no copy), its result to test:0 for Relu and Square, back for y.
  CHECK(StepsOn(st, "cpu") == 1);
  CHECK(StepsOn(st, "test:0") == 4);
  CHECK(st.copies == 2);
  CheckSameResults(p, {Matrix(5, 7, -3.0f)});
}

TEST_CASE("placement: host-memory arguments stay on the host") {
  auto proto = ParseLibrary(kLib);
  FunctionLibrary lib(proto);
  Prepared p = PrepareBoth(lib, "reshape",
                           {TensorSpec{DType::kFloat, PartialShape({2, 3})},
                            TensorSpec{DType::kInt32, PartialShape({2})}});
  // x in and y out; Reshape reads `dims` on the host, so no copy of it (the test device's
  // Reshape fails the run if its shape argument were in device memory).
  CHECK(p.test->plan_stats().copies == 2);
  Tensor dims(DType::kInt32, Shape({2}));
  dims.data<int32_t>()[0] = 3;
  dims.data<int32_t>()[1] = 2;
  CheckSameResults(p, {Matrix(2, 3, 0.5f), dims});
}

TEST_CASE("placement: a dtype the device does not take goes to the next device") {
  auto proto = ParseLibrary(kLib);
  FunctionLibrary lib(proto);
  const TensorSpec spec{DType::kDouble, PartialShape({2, 2})};
  Prepared p = PrepareBoth(lib, "dense64", {spec, spec});
  CHECK(p.test->plan_stats().copies == 0);
  CHECK(StepsOn(p.test->plan_stats(), "cpu") == 1);
  Tensor x(DType::kDouble, Shape({2, 2}));
  for (int i = 0; i < 4; ++i) x.data<double>()[i] = 1.5 * i - 2;
  CheckSameResults(p, {x, x});
}

TEST_CASE("placement: each device plans its own arena, and nothing leaks on the device") {
  auto proto = ParseLibrary(kLib);
  FunctionLibrary lib(proto);
  const int64_t live = GetTestDevice()->live_bytes();
  {
    Prepared p =
        PrepareBoth(lib, "floor_relu", {TensorSpec{DType::kFloat, PartialShape({64, 64})}});
    CHECK(p.test->plan_stats().planned_slots > 0);
    CHECK(p.test->plan_stats().arena_bytes > 0);
    for (int call = 0; call < 3; ++call) CheckSameResults(p, {Matrix(64, 64, -8.0f)});
  }
  CHECK(GetTestDevice()->live_bytes() == live);
}

TEST_CASE("placement: a loaded SavedModel runs on the device list it was given") {
  GetTestDevice();  // registered: findable by name
  LoadOptions options;
  options.devices = {"test"};
  auto m = SavedModel::Load(kiln::testing::Fixture("VarsAndArithmeticObjectGraph"), options);
  REQUIRE_MESSAGE(m.ok(), m.status().ToString());
  auto host = SavedModel::Load(kiln::testing::Fixture("VarsAndArithmeticObjectGraph"));
  REQUIRE(host.ok());
  auto sig = (*m)->GetSignature("serving_default");
  auto hsig = (*host)->GetSignature("serving_default");
  REQUIRE(sig.ok());
  REQUIRE(hsig.ok());
  const PlanStats& st = (*sig)->function().plan_stats();
  CHECK(StepsOn(st, "test:0") > 0);
  CHECK(st.copies >= 2);
  auto got = (*sig)->Run({{"a", Tensor::Scalar(4.0f)}, {"b", Tensor::Scalar(7.0f)}});
  auto want = (*hsig)->Run({{"a", Tensor::Scalar(4.0f)}, {"b", Tensor::Scalar(7.0f)}});
  REQUIRE_MESSAGE(got.ok(), got.status().ToString());
  REQUIRE(want.ok());
  CHECK(TensorsEqual(got->at("output_0"), want->at("output_0")));
}

TEST_CASE("placement: a SavedModel loaded with results on the device returns them there") {
  GetTestDevice();
  LoadOptions options;
  options.devices = {"test"};
  options.results_on_device = true;
  auto m = SavedModel::Load(kiln::testing::Fixture("VarsAndArithmeticObjectGraph"), options);
  REQUIRE_MESSAGE(m.ok(), m.status().ToString());
  auto host = SavedModel::Load(kiln::testing::Fixture("VarsAndArithmeticObjectGraph"));
  REQUIRE(host.ok());
  auto sig = (*m)->GetSignature("serving_default");
  auto hsig = (*host)->GetSignature("serving_default");
  REQUIRE(sig.ok());
  REQUIRE(hsig.ok());
  auto want = (*hsig)->Run({{"a", Tensor::Scalar(4.0f)}, {"b", Tensor::Scalar(7.0f)}});
  REQUIRE(want.ok());
  auto got = (*sig)->Run(
      {{"a", OnTestDevice(Tensor::Scalar(4.0f))}, {"b", OnTestDevice(Tensor::Scalar(7.0f))}});
  REQUIRE_MESSAGE(got.ok(), got.status().ToString());
  const Tensor& y = got->at("output_0");
  Device* where = DeviceHolding(y);
  REQUIRE(where != nullptr);
  CHECK(where->name() == "test:0");
  auto back = CopyTensor(y, where, HostDevice());
  REQUIRE(back.ok());
  CHECK(TensorsEqual(*back, want->at("output_0")));
}

TEST_CASE("placement: a serving plan records each node's device and loads with it") {
  GetTestDevice();
  kiln::testing::TempDir tmp;
  const auto dir = kiln::testing::CopyFixture("VarsAndArithmeticObjectGraph", tmp);
  CompileOptions copts;
  copts.devices = {"test"};
  auto report = CompilePlan(dir, copts);
  REQUIRE_MESSAGE(report.ok(), report.status().ToString());
  // The nodes' kernel entries name the device they were placed on.
  const std::string plan = kiln::testing::ReadAll(dir / kPlanPath);
  CHECK(plan.find("test:0") != std::string::npos);
  LoadOptions options;
  options.devices = {"test"};
  options.plan = PlanUse::kRequire;
  auto m = SavedModel::Load(dir, options);
  REQUIRE_MESSAGE(m.ok(), m.status().ToString());
  CHECK((*m)->plan_status().functions_from_plan > 0);
  auto sig = (*m)->GetSignature("serving_default");
  REQUIRE(sig.ok());
  CHECK(StepsOn((*sig)->function().plan_stats(), "test:0") > 0);
  auto got = (*sig)->Run({{"a", Tensor::Scalar(4.0f)}, {"b", Tensor::Scalar(7.0f)}});
  REQUIRE_MESSAGE(got.ok(), got.status().ToString());
  // A plan made on the host alone records cpu for every node.
  REQUIRE(CompilePlan(dir).ok());
  CHECK(kiln::testing::ReadAll(dir / kPlanPath).find("test:0") == std::string::npos);
}

TEST_CASE("placement: an unknown or absent device is a load error that lists the devices") {
  GetTestDevice();
  LoadOptions options;
  if (FindDevice("gpu").ok()) {
    MESSAGE("this machine has a GPU: the absent-device half of the test does not apply");
  } else {
    options.devices = {"gpu"};
    auto m = SavedModel::Load(kiln::testing::Fixture("VarsAndArithmeticObjectGraph"), options);
    REQUIRE_FALSE(m.ok());
    CHECK(m.status().message().find("'gpu'") != std::string::npos);
    CHECK(m.status().message().find("available devices: cpu, test:0") != std::string::npos);
  }
  options.devices = {"tpu"};
  auto bad = SavedModel::Load(kiln::testing::Fixture("VarsAndArithmeticObjectGraph"), options);
  REQUIRE_FALSE(bad.ok());
  CHECK(bad.status().message().find("unknown device 'tpu'") != std::string::npos);
}

TEST_CASE("placement: device graphs are planned only where a replay gives the same results") {
  auto proto = ParseLibrary(kLib);
  FunctionLibrary lib(proto);
  auto plan = [&](const std::string& name, std::vector<TensorSpec> specs) {
    PrepareOptions options;
    options.devices = {GetTestDevice()};
    options.device_graphs = true;
    auto fn = PreparedFunction::Prepare(*lib.Find(name), lib, specs, options);
    REQUIRE_MESSAGE(fn.ok(), fn.status().ToString());
    return *fn;
  };
  const std::vector<TensorSpec> dense_specs = {TensorSpec{DType::kFloat, PartialShape({4, 3})}};
  GetTestDevice()->claims_capture = false;
  CHECK(plan("dense", dense_specs)->plan_stats().device_graph ==
        "not recorded: test:0 cannot record its work");
  GetTestDevice()->claims_capture = true;
  auto dense = plan("dense", dense_specs);
  CHECK(dense->plan_stats().device_graph == "test:0");
  // Floor runs on the host, on the device's result: a replay would not run it.
  CHECK(plan("floor_relu", {TensorSpec{DType::kFloat, PartialShape({5, 7})}})
            ->plan_stats()
            .device_graph.find("node 'fl' (Floor) reads a value that changes") !=
        std::string::npos);
  // Reshape's dims are an argument read on the host.
  CHECK(plan("reshape", {TensorSpec{DType::kFloat, PartialShape({2, 3})},
                         TensorSpec{DType::kInt32, PartialShape({2})}})
            ->plan_stats()
            .device_graph.find("(Reshape) reads a value that changes") != std::string::npos);
  // Unknown shapes are recorded per specialisation, never in the general function.
  CHECK(plan("dense", {TensorSpec{DType::kFloat, PartialShape({-1, 3})}})
            ->plan_stats()
            .device_graph == "not recorded: the arguments' shapes are not all known");
  // The third call's recording fails on this device: it and every later call run the steps.
  auto host = PreparedFunction::Prepare(*lib.Find("dense"), lib, dense_specs);
  REQUIRE(host.ok());
  for (int call = 0; call < 5; ++call) {
    const std::vector<Tensor> args = {Matrix(4, 3, -1.0f + static_cast<float>(call))};
    std::vector<Tensor> want, got;
    REQUIRE((*host)->Run(args, &want).ok());
    Status st = dense->Run(args, &got);
    REQUIRE_MESSAGE(st.ok(), st.ToString());
    CHECK(TensorsEqual(got[0], want[0]));
  }
  GetTestDevice()->claims_capture = false;
}

// `fn` prepared for the test device first, with results left where they were computed.
std::shared_ptr<const PreparedFunction> PrepareResultsOnDevice(const FunctionLibrary& lib,
                                                               const std::string& name,
                                                               std::vector<TensorSpec> specs) {
  PrepareOptions options;
  options.devices = {GetTestDevice()};
  options.results_on_device = true;
  auto fn = PreparedFunction::Prepare(*lib.Find(name), lib, specs, options);
  REQUIRE_MESSAGE(fn.ok(), fn.status().ToString());
  return *fn;
}

TEST_CASE("placement: an argument in the device's memory is used there, and results may stay") {
  auto proto = ParseLibrary(kLib);
  FunctionLibrary lib(proto);
  const std::vector<TensorSpec> specs = {TensorSpec{DType::kFloat, PartialShape({4, 3})}};
  Prepared p = PrepareBoth(lib, "dense", specs);
  const Tensor x = Matrix(4, 3, -1.0f);
  const std::vector<Tensor> on_device = {OnTestDevice(x)};
  std::vector<Tensor> want, got;
  REQUIRE(p.host->Run(Args{x}, &want).ok());
  TestDevice& dev = *GetTestDevice();
  // The copy step passes the caller's device tensor through: nothing is copied in.
  int64_t in = dev.copies_to_device(), out = dev.copies_to_host();
  Status st = p.test->Run(on_device, &got);
  REQUIRE_MESSAGE(st.ok(), st.ToString());
  CHECK(dev.copies_to_device() == in);
  CHECK(dev.copies_to_host() == out + 1);
  CHECK(TensorsEqual(got[0], want[0]));
  CHECK(DeviceHolding(got[0]) == HostDevice());
  // The caller's tensor is unchanged (the device's kernels only read it).
  CHECK(TensorsEqual(*CopyTensor(on_device[0], &dev, HostDevice()), x));

  // With results on the device, the result is the device's tensor: no copy either way.
  auto kept = PrepareResultsOnDevice(lib, "dense", specs);
  CHECK(kept->plan_stats().copies == 1);  // the argument's, which passes a device tensor through
  for (int call = 0; call < 3; ++call) {
    in = dev.copies_to_device();
    out = dev.copies_to_host();
    st = kept->Run(on_device, &got);
    REQUIRE_MESSAGE(st.ok(), st.ToString());
    CHECK(dev.copies_to_device() == in);
    CHECK(dev.copies_to_host() == out);
    REQUIRE(DeviceHolding(got[0]) == &dev);
    CHECK(dev.Owns(got[0].raw_data()));
    CHECK(dev.Synchronize().ok());
    CHECK(TensorsEqual(*CopyTensor(got[0], &dev, HostDevice()), want[0]));
  }
  // A host argument is copied in as usual, and the result still stays.
  in = dev.copies_to_device();
  REQUIRE(kept->Run(Args{x}, &got).ok());
  CHECK(dev.copies_to_device() == in + 1);
  CHECK(DeviceHolding(got[0]) == &dev);
  // A replay copies results off the device, so such a load records nothing.
  PrepareOptions graphs;
  graphs.devices = {&dev};
  graphs.results_on_device = true;
  graphs.device_graphs = true;
  dev.claims_capture = true;
  auto recorded = PreparedFunction::Prepare(*lib.Find("dense"), lib, specs, graphs);
  dev.claims_capture = false;
  REQUIRE(recorded.ok());
  CHECK((*recorded)->plan_stats().device_graph == "not recorded: results stay on the device");
}

TEST_CASE("placement: a device argument that a host step reads comes to the host first") {
  auto proto = ParseLibrary(kLib);
  FunctionLibrary lib(proto);
  TestDevice& dev = *GetTestDevice();
  // Floor (host only) reads x.
  Prepared p = PrepareBoth(lib, "floor_relu", {TensorSpec{DType::kFloat, PartialShape({5, 7})}});
  const Tensor x = Matrix(5, 7, -3.0f);
  std::vector<Tensor> floored, want, got;
  REQUIRE(p.host->Run(Args{x}, &floored).ok());
  const int64_t out = dev.copies_to_host();
  Status st = p.test->Run(Args{OnTestDevice(x)}, &got);
  REQUIRE_MESSAGE(st.ok(), st.ToString());
  CHECK(dev.copies_to_host() == out + 2);  // x to the host, y back
  CHECK(TensorsEqual(got[0], floored[0]));
  // Reshape reads its dims on the host; given in device memory, they are copied there.
  Prepared r = PrepareBoth(lib, "reshape",
                           {TensorSpec{DType::kFloat, PartialShape({2, 3})},
                            TensorSpec{DType::kInt32, PartialShape({2})}});
  Tensor dims(DType::kInt32, Shape({2}));
  dims.data<int32_t>()[0] = 3;
  dims.data<int32_t>()[1] = 2;
  REQUIRE(r.host->Run(Args{Matrix(2, 3, 0.5f), dims}, &want).ok());
  st = r.test->Run(Args{OnTestDevice(Matrix(2, 3, 0.5f)), OnTestDevice(dims)}, &got);
  REQUIRE_MESSAGE(st.ok(), st.ToString());
  CHECK(TensorsEqual(got[0], want[0]));
  // A host-only function takes the device's tensors too.
  REQUIRE(p.host->Run(Args{OnTestDevice(x)}, &got).ok());
  CHECK(TensorsEqual(got[0], floored[0]));
}

// Memory the host cannot read, made by no device of the process.
class ForeignAllocator final : public Allocator {
 public:
  void* Allocate(size_t bytes) override { return CpuAllocator()->Allocate(bytes); }
  void Deallocate(void* p, size_t bytes) override { CpuAllocator()->Deallocate(p, bytes); }
  std::string_view Name() const override { return "foreign"; }
  bool HostAccessible() const override { return false; }
};

TEST_CASE("placement: an argument in memory no device made is an error naming it") {
  auto proto = ParseLibrary(kLib);
  FunctionLibrary lib(proto);
  Prepared p = PrepareBoth(lib, "dense", {TensorSpec{DType::kFloat, PartialShape({4, 3})}});
  ForeignAllocator foreign;
  auto t = Tensor::Allocate(&foreign, DType::kFloat, Shape({4, 3}));
  REQUIRE(t.ok());
  CHECK(DeviceHolding(*t) == nullptr);
  for (const auto& fn : {p.host, p.test}) {
    std::vector<Tensor> got;
    Status st = fn->Run(Args{*t}, &got);
    REQUIRE_FALSE(st.ok());
    CHECK(st.code() == StatusCode::kInvalidArgument);
    CHECK_MESSAGE(st.message().find("argument #0 'x' is in memory of no device of this process "
                                    "(foreign)") != std::string::npos,
                  st.message());
  }
}

TEST_CASE("placement: the op tester's devices include the test device") {
  GetTestDevice();
  auto d = FindDevice("test");
  REQUIRE(d.ok());
  CHECK(*d == static_cast<Device*>(GetTestDevice()));
  CHECK(FindDevice("cpu").ok());
  CHECK(ListDevices().size() >= 2);
  CHECK(RegisterDevice(GetTestDevice()).code() == StatusCode::kAlreadyExists);
}

}  // namespace
}  // namespace kiln::exec

namespace kiln::exec {
namespace {

// ---- a real GPU: the same functions against the host, within float32 tolerance -------------

// The GPU, or null (the GPU cases then skip with a message: a machine without one).
Device* Gpu() {
  auto d = FindDevice("gpu");
  if (!d.ok()) MESSAGE("no GPU here; skipped: ", d.status().message());
  return d.ok() ? *d : nullptr;
}

// `name` prepared with the GPU first in the device list (the host comes last on its own).
std::shared_ptr<const PreparedFunction> PrepareOnGpu(Device* gpu, const FunctionLibrary& lib,
                                                     const std::string& name,
                                                     const std::vector<TensorSpec>& specs) {
  PrepareOptions options;
  options.devices = {gpu};
  auto fn = PreparedFunction::Prepare(*lib.Find(name), lib, specs, options);
  REQUIRE_MESSAGE(fn.ok(), fn.status().ToString());
  return *fn;
}

// Runs `name` on the GPU and on the host and compares; returns the GPU's prepared function
// (null without a GPU).
std::shared_ptr<const PreparedFunction> CheckCloseOnGpu(
    const FunctionLibrary& lib, const std::string& name, const std::vector<TensorSpec>& specs,
    const std::vector<Tensor>& args, int want_gpu_steps_at_least, float tolerance = 1e-4f) {
  Device* gpu = Gpu();
  if (gpu == nullptr) return nullptr;
  auto host = PreparedFunction::Prepare(*lib.Find(name), lib, specs);
  REQUIRE_MESSAGE(host.ok(), host.status().ToString());
  std::shared_ptr<const PreparedFunction> on_gpu = PrepareOnGpu(gpu, lib, name, specs);
  CHECK(StepsOn(on_gpu->plan_stats(), "gpu:0") >= want_gpu_steps_at_least);
  std::vector<Tensor> want, got;
  REQUIRE((*host)->Run(args, &want).ok());
  for (int call = 0; call < 2; ++call) {  // the second call reuses the planned device memory
    Status st = on_gpu->Run(args, &got);
    REQUIRE_MESSAGE(st.ok(), st.ToString());
    REQUIRE(got.size() == want.size());
    for (size_t i = 0; i < want.size(); ++i) {
      REQUIRE(got[i].HostAccessible());
      REQUIRE(got[i].shape() == want[i].shape());
      for (int64_t j = 0; j < want[i].NumElements(); ++j) {
        const float w = want[i].data<float>()[j], g = got[i].data<float>()[j];
        CHECK_MESSAGE(std::abs(g - w) <= tolerance * std::max(1.0f, std::abs(w)), name, " output ",
                      i, " element ", j, ": GPU ", g, ", CPU ", w);
      }
    }
  }
  return on_gpu;
}

TEST_CASE("gpu: a dense layer, a host fallback and host-memory arguments match the host") {
  auto proto = ParseLibrary(kLib);
  FunctionLibrary lib(proto);
  CheckCloseOnGpu(lib, "dense", {TensorSpec{DType::kFloat, PartialShape({4, 3})}},
                  {Matrix(4, 3, -1.0f)}, 1);
  CheckCloseOnGpu(lib, "floor_relu", {TensorSpec{DType::kFloat, PartialShape({5, 7})}},
                  {Matrix(5, 7, -3.0f)}, 1);
  Tensor dims(DType::kInt32, Shape({2}));
  dims.data<int32_t>()[0] = 3;
  dims.data<int32_t>()[1] = 2;
  CheckCloseOnGpu(lib, "reshape",
                  {TensorSpec{DType::kFloat, PartialShape({2, 3})},
                   TensorSpec{DType::kInt32, PartialShape({2})}},
                  {Matrix(2, 3, 0.5f), dims}, 0);
}

TEST_CASE("gpu: a float16 op whose definition takes float32 only runs on the GPU as float16") {
  // Softmax's definition widens float16 (the host computes it in float32 between casts); a
  // GPU kernel that computes float16 itself takes the node, with no casts and no copies.
  auto proto = ParseLibrary(kLib);
  FunctionLibrary lib(proto);
  auto fn = CheckCloseOnGpu(lib, "half_softmax", {TensorSpec{DType::kFloat, PartialShape({3, 8})}},
                            {Matrix(3, 8, -0.5f)}, 3, /*tolerance=*/1e-3f);  // a float16 ulp
  if (fn == nullptr) return;
  CHECK(StepsOn(fn->plan_stats(), "cpu") <= 0);
  CHECK(fn->plan_stats().copies == 2);  // the input in, the result out
}

TEST_CASE("gpu: Shape of a GPU tensor reads its dims there, with no copy of its elements") {
  Device* gpu = Gpu();
  if (gpu == nullptr) return;
  auto proto = ParseLibrary(kLib);
  FunctionLibrary lib(proto);
  auto fn =
      PrepareOnGpu(gpu, lib, "shape_of_relu", {TensorSpec{DType::kFloat, PartialShape({-1, 3})}});
  CHECK(fn->plan_stats().copies == 1);  // the input in; the shape is written on the host
  std::vector<Tensor> out;
  const std::vector<Tensor> args = {Matrix(5, 3, 1.0f)};
  Status st = fn->Run(args, &out);
  REQUIRE_MESSAGE(st.ok(), st.ToString());
  REQUIRE(out.size() == 1);
  REQUIRE(out[0].NumElements() == 2);
  CHECK(out[0].data<int32_t>()[0] == 5);
  CHECK(out[0].data<int32_t>()[1] == 3);
}

TEST_CASE("gpu: a recorded call (a CUDA graph) gives the steps' results for each new input") {
  Device* gpu = Gpu();
  if (gpu == nullptr) return;
  auto proto = ParseLibrary(kLib);
  FunctionLibrary lib(proto);
  const std::vector<TensorSpec> specs = {TensorSpec{DType::kFloat, PartialShape({64, 3})}};
  PrepareOptions options;
  options.devices = {gpu};
  options.device_graphs = true;
  auto fn = PreparedFunction::Prepare(*lib.Find("dense"), lib, specs, options);
  REQUIRE_MESSAGE(fn.ok(), fn.status().ToString());
  CHECK((*fn)->plan_stats().device_graph == "gpu:0");
  auto plain = PrepareOnGpu(gpu, lib, "dense", specs);
  for (int call = 0; call < 8; ++call) {  // calls 3 on are replays
    const std::vector<Tensor> args = {Matrix(64, 3, -2.0f + 0.5f * static_cast<float>(call))};
    std::vector<Tensor> want, got;
    REQUIRE(plain->Run(args, &want).ok());
    Status st = (*fn)->Run(args, &got);
    REQUIRE_MESSAGE(st.ok(), st.ToString());
    CHECK_MESSAGE(TensorsEqual(got[0], want[0]), "call ", call);
  }
}

TEST_CASE("gpu: inputs and results kept in GPU memory give the results of host copies") {
  Device* gpu = Gpu();
  if (gpu == nullptr) return;
  auto proto = ParseLibrary(kLib);
  FunctionLibrary lib(proto);
  const std::vector<TensorSpec> specs = {TensorSpec{DType::kFloat, PartialShape({64, 3})}};
  PrepareOptions options;
  options.devices = {gpu};
  options.results_on_device = true;
  auto kept = PreparedFunction::Prepare(*lib.Find("dense"), lib, specs, options);
  REQUIRE_MESSAGE(kept.ok(), kept.status().ToString());
  auto plain = PrepareOnGpu(gpu, lib, "dense", specs);
  for (int call = 0; call < 4; ++call) {
    const Tensor x = Matrix(64, 3, -2.0f + 0.5f * static_cast<float>(call));
    auto x_gpu = CopyTensor(x, HostDevice(), gpu);
    REQUIRE_MESSAGE(x_gpu.ok(), x_gpu.status().ToString());
    CHECK_FALSE(x_gpu->HostAccessible());
    std::vector<Tensor> want, got;
    REQUIRE(plain->Run(Args{x}, &want).ok());
    Status st = (*kept)->Run(Args{*x_gpu}, &got);
    REQUIRE_MESSAGE(st.ok(), st.ToString());
    REQUIRE(DeviceHolding(got[0]) == gpu);
    REQUIRE(gpu->Synchronize().ok());
    auto back = CopyTensor(got[0], gpu, HostDevice());
    REQUIRE_MESSAGE(back.ok(), back.status().ToString());
    CHECK_MESSAGE(TensorsEqual(*back, want[0]), "call ", call);
    // The host-result function takes the GPU tensor too, and a host function copies it first.
    REQUIRE(plain->Run(Args{*x_gpu}, &got).ok());
    CHECK(TensorsEqual(got[0], want[0]));
  }
}

// With device graphs on (the replay path) and off (the steps), 16 threads calling one function
// get what serial calls got.
void CheckThreadsOnGpu(Device* gpu, bool graphs) {
  auto proto = ParseLibrary(kLib);
  FunctionLibrary lib(proto);
  PrepareOptions options;
  options.devices = {gpu};
  options.device_graphs = graphs;
  const std::vector<TensorSpec> specs = {TensorSpec{DType::kFloat, PartialShape({64, 3})}};
  auto prepared = PreparedFunction::Prepare(*lib.Find("dense"), lib, specs, options);
  REQUIRE_MESSAGE(prepared.ok(), prepared.status().ToString());
  std::shared_ptr<const PreparedFunction> fn = *prepared;
  std::vector<Tensor> inputs, serial;
  for (int t = 0; t < 16; ++t) {
    inputs.push_back(Matrix(64, 3, -2.0f + 0.25f * static_cast<float>(t)));
    std::vector<Tensor> out;
    const std::vector<Tensor> args = {inputs.back()};
    REQUIRE(fn->Run(args, &out).ok());
    serial.push_back(out[0]);
  }
  std::vector<std::thread> threads;
  std::atomic<int> mismatches{0}, failures{0};
  for (int t = 0; t < 16; ++t)
    threads.emplace_back([&, t] {
      for (int rep = 0; rep < 20; ++rep) {
        std::vector<Tensor> out;
        const std::vector<Tensor> args = {inputs[t]};
        if (!fn->Run(args, &out).ok()) {
          ++failures;
          return;
        }
        if (!TensorsEqual(out[0], serial[t])) ++mismatches;
      }
    });
  for (std::thread& th : threads) th.join();
  CHECK_MESSAGE(failures == 0, "graphs ", graphs);
  CHECK_MESSAGE(mismatches == 0, "graphs ", graphs);
}

TEST_CASE("gpu: 16 threads calling one GPU function get the serial results") {
  Device* gpu = Gpu();
  if (gpu == nullptr) return;
  CheckThreadsOnGpu(gpu, /*graphs=*/false);
  CheckThreadsOnGpu(gpu, /*graphs=*/true);
}

}  // namespace
}  // namespace kiln::exec
