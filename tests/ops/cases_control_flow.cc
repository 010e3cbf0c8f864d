// Op-tester cases of functional control flow: If, StatelessIf, Case, StatelessCase, While,
// StatelessWhile, For, RemoteCall, MapDefun, over a small library of branch and loop functions
// (OpCase::functions).
#include <google/protobuf/text_format.h>

#include <algorithm>
#include <array>
#include <cstring>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "ops/array_ref.h"
#include "ops/op_cases.h"

namespace kiln::testing {
namespace {

// square(x) = x * x, negate(x) = -x, twice(x) = x + x (float tensors of any shape);
// cond(i, x) = i < 5, body(i, x) = (i + 1, x + x); for_body(i, x) = x + i.
const char* kLibrary = R"pb(
  function {
    signature {
      name: "square"
      input_arg { name: "x" type: DT_FLOAT }
      output_arg { name: "y" type: DT_FLOAT }
    }
    node_def {
      name: "m"
      op: "Mul"
      input: "x"
      input: "x"
      attr {
        key: "T"
        value { type: DT_FLOAT }
      }
    }
    ret { key: "y" value: "m:z:0" }
  }
  function {
    signature {
      name: "negate"
      input_arg { name: "x" type: DT_FLOAT }
      output_arg { name: "y" type: DT_FLOAT }
    }
    node_def {
      name: "n"
      op: "Neg"
      input: "x"
      attr {
        key: "T"
        value { type: DT_FLOAT }
      }
    }
    ret { key: "y" value: "n:y:0" }
  }
  function {
    signature {
      name: "twice"
      input_arg { name: "x" type: DT_FLOAT }
      output_arg { name: "y" type: DT_FLOAT }
    }
    node_def {
      name: "a"
      op: "AddV2"
      input: "x"
      input: "x"
      attr {
        key: "T"
        value { type: DT_FLOAT }
      }
    }
    ret { key: "y" value: "a:z:0" }
  }
  function {
    signature {
      name: "cond"
      input_arg { name: "i" type: DT_INT32 }
      input_arg { name: "x" type: DT_FLOAT }
      output_arg { name: "c" type: DT_BOOL }
    }
    node_def {
      name: "limit"
      op: "Const"
      attr {
        key: "dtype"
        value { type: DT_INT32 }
      }
      attr {
        key: "value"
        value {
          tensor {
            dtype: DT_INT32
            tensor_shape {}
            int_val: 5
          }
        }
      }
    }
    node_def {
      name: "less"
      op: "Less"
      input: "i"
      input: "limit:output:0"
      attr {
        key: "T"
        value { type: DT_INT32 }
      }
    }
    ret { key: "c" value: "less:z:0" }
  }
  function {
    signature {
      name: "body"
      input_arg { name: "i" type: DT_INT32 }
      input_arg { name: "x" type: DT_FLOAT }
      output_arg { name: "i2" type: DT_INT32 }
      output_arg { name: "x2" type: DT_FLOAT }
    }
    node_def {
      name: "one"
      op: "Const"
      attr {
        key: "dtype"
        value { type: DT_INT32 }
      }
      attr {
        key: "value"
        value {
          tensor {
            dtype: DT_INT32
            tensor_shape {}
            int_val: 1
          }
        }
      }
    }
    node_def {
      name: "inc"
      op: "AddV2"
      input: "i"
      input: "one:output:0"
      attr {
        key: "T"
        value { type: DT_INT32 }
      }
    }
    node_def {
      name: "dbl"
      op: "AddV2"
      input: "x"
      input: "x"
      attr {
        key: "T"
        value { type: DT_FLOAT }
      }
    }
    ret { key: "i2" value: "inc:z:0" }
    ret { key: "x2" value: "dbl:z:0" }
  }
  function {
    signature {
      name: "for_body"
      input_arg { name: "i" type: DT_INT32 }
      input_arg { name: "x" type: DT_FLOAT }
      output_arg { name: "y" type: DT_FLOAT }
    }
    node_def {
      name: "f"
      op: "Cast"
      input: "i"
      attr {
        key: "SrcT"
        value { type: DT_INT32 }
      }
      attr {
        key: "DstT"
        value { type: DT_FLOAT }
      }
    }
    node_def {
      name: "add"
      op: "AddV2"
      input: "x"
      input: "f:y:0"
      attr {
        key: "T"
        value { type: DT_FLOAT }
      }
    }
    ret { key: "y" value: "add:z:0" }
  }
)pb";

std::shared_ptr<const tensorflow::FunctionDefLibrary> Library() {
  static const auto lib = [] {
    auto l = std::make_shared<tensorflow::FunctionDefLibrary>();
    const bool ok = google::protobuf::TextFormat::ParseFromString(kLibrary, l.get());
    REQUIRE(ok);
    return std::shared_ptr<const tensorflow::FunctionDefLibrary>(l);
  }();
  return lib;
}

void SetFunc(OpCase* c, const std::string& attr, const std::string& fn) {
  c->attrs[attr].mutable_func()->set_name(fn);
}

Tensor Apply(const std::string& fn, const Tensor& x) {
  return RefUnaryDouble(x, [fn](double v) {
    return fn == "square" ? v * v : fn == "negate" ? -v : v + v;
  });
}

}  // namespace

std::vector<OpCase> ControlFlowCases() {
  std::vector<OpCase> c;
  const auto lib = Library();
  const Tensor x = RandomOf(DType::kFloat, Shape{2, 3}, 7);
  // If / StatelessIf on bool and int32 conditions (a non-zero int is true).
  for (const char* op : {"If", "StatelessIf"}) {
    for (const Tensor& cond : {Tensor::Scalar<bool>(true), Tensor::Scalar<bool>(false),
                               Tensor::Scalar<int32_t>(3), Tensor::Scalar<int32_t>(0)}) {
      const bool taken =
          cond.dtype() == DType::kBool ? cond.scalar<bool>() : cond.scalar<int32_t>() != 0;
      OpCase oc = OpCaseBuilder(op, std::string(op) + " " + DTypeShortName(cond.dtype()) + " " +
                                        (taken ? "then" : "else"))
                      .Type("Tcond", cond.dtype())
                      .TypeList("Tin", {DType::kFloat})
                      .TypeList("Tout", {DType::kFloat})
                      .Input(cond)
                      .Input(x)
                      .Functions(lib)
                      .Reference1([taken](const std::vector<Tensor>& in) {
                        return Apply(taken ? "square" : "negate", in[1]);
                      })
                      .Tolerance(1e-6)
                      .Build();
      SetFunc(&oc, "then_branch", "square");
      SetFunc(&oc, "else_branch", "negate");
      c.push_back(std::move(oc));
    }
  }
  // Case / StatelessCase: each branch, and an out-of-range index running the last one.
  for (const char* op : {"Case", "StatelessCase"}) {
    const char* branches[] = {"square", "negate", "twice"};
    for (int32_t index : {0, 1, 2, 7, -1}) {
      const std::string taken = branches[index >= 0 && index < 3 ? index : 2];
      OpCase oc =
          OpCaseBuilder(op, std::string(op) + " index " + std::to_string(index))
              .TypeList("Tin", {DType::kFloat})
              .TypeList("Tout", {DType::kFloat})
              .Input(Tensor::Scalar<int32_t>(index))
              .Input(x)
              .Functions(lib)
              .Reference1([taken](const std::vector<Tensor>& in) { return Apply(taken, in[1]); })
              .Tolerance(1e-6)
              .Build();
      auto* list = oc.attrs["branches"].mutable_list();
      for (const char* b : branches) list->add_func()->set_name(b);
      c.push_back(std::move(oc));
    }
  }
  // While / StatelessWhile: (i, x) -> (5, x * 2^(5 - i)) for i <= 5; no iteration from 9.
  for (const char* op : {"While", "StatelessWhile"}) {
    for (int32_t start : {0, 3, 9}) {
      OpCase oc = OpCaseBuilder(op, std::string(op) + " from " + std::to_string(start))
                      .TypeList("T", {DType::kInt32, DType::kFloat})
                      .Int("parallel_iterations", 10)
                      .Input(Tensor::Scalar<int32_t>(start))
                      .Input(x)
                      .Functions(lib)
                      .Reference([start](const std::vector<Tensor>& in) {
                        const int32_t steps = std::max(0, 5 - start);
                        return std::vector<Tensor>{
                            Tensor::Scalar<int32_t>(start + steps),
                            RefUnaryDouble(in[1], [steps](double v) { return v * (1 << steps); })};
                      })
                      .Build();
      SetFunc(&oc, "cond", "cond");
      SetFunc(&oc, "body", "body");
      c.push_back(std::move(oc));
    }
  }
  // For: x plus every counter value of the range (none for an empty one).
  for (const auto& [start, limit, delta] : std::vector<std::array<int32_t, 3>>{
           {0, 4, 1}, {10, 0, -3}, {2, 2, 0}, {5, 5, 1}, {-3, 4, 2}}) {
    int64_t sum = 0;
    for (int64_t i = start; delta > 0 ? i < limit : i > limit; i += delta) sum += i;
    OpCase oc = OpCaseBuilder("For", "For " + std::to_string(start) + ":" + std::to_string(limit) +
                                         ":" + std::to_string(delta))
                    .TypeList("T", {DType::kFloat})
                    .Input(Tensor::Scalar<int32_t>(start))
                    .Input(Tensor::Scalar<int32_t>(limit))
                    .Input(Tensor::Scalar<int32_t>(delta))
                    .Input(x)
                    .Functions(lib)
                    .Reference1([sum](const std::vector<Tensor>& in) {
                      return RefUnaryDouble(
                          in[3], [sum](double v) { return v + static_cast<double>(sum); });
                    })
                    .Tolerance(1e-6)
                    .Build();
    SetFunc(&oc, "body", "for_body");
    c.push_back(std::move(oc));
  }
  // RemoteCall: the function, run here whatever the target.
  OpCase call =
      OpCaseBuilder("RemoteCall")
          .TypeList("Tin", {DType::kFloat})
          .TypeList("Tout", {DType::kFloat})
          .Input(Tensor::StringScalar("/job:worker/replica:0/task:1/device:CPU:0"))
          .Input(x)
          .Functions(lib)
          .Reference1([](const std::vector<Tensor>& in) { return Apply("square", in[1]); })
          .Tolerance(1e-6)
          .Build();
  SetFunc(&call, "f", "square");
  c.push_back(std::move(call));
  // MapDefun: square over the rows of x (captured: none), stacked again.
  OpCase map = OpCaseBuilder("MapDefun")
                   .TypeList("Targuments", {DType::kFloat})
                   .TypeList("Tcaptured", {})
                   .TypeList("output_types", {DType::kFloat})
                   .ShapeList("output_shapes", {PartialShape{3}})
                   .Int("max_intra_op_parallelism", 1)
                   .Input(x)
                   .Functions(lib)
                   .Reference1([](const std::vector<Tensor>& in) { return Apply("square", in[0]); })
                   .Tolerance(1e-6)
                   .Build();
  SetFunc(&map, "f", "square");
  c.push_back(std::move(map));
  // FakeParam: zeros of its shape, an unknown dim 0 (what it holds is unspecified in TF).
  for (const auto& [dtype, shape, want] : std::vector<std::tuple<DType, PartialShape, Shape>>{
           {DType::kFloat, PartialShape{2, -1, 3}, Shape{2, 0, 3}},
           {DType::kInt32, PartialShape{3}, Shape{3}},
           {DType::kDouble, PartialShape::Scalar(), Shape{}}}) {
    c.push_back(OpCaseBuilder("FakeParam", std::string("FakeParam ") + DTypeShortName(dtype) + " " +
                                               shape.ToPythonString())
                    .Type("dtype", dtype)
                    .ShapeAttr("shape", shape)
                    .Reference1([dt = dtype, w = want](const std::vector<Tensor>&) {
                      Tensor t(dt, w);
                      std::memset(t.raw_data(), 0, t.ByteSize());
                      return t;
                    })
                    .Build());
  }
  // DeviceIndex: where "CPU" stands in the list, or the list's length.
  for (const auto& [names, want] : std::vector<std::pair<std::vector<std::string>, int32_t>>{
           {{"GPU", "CPU"}, 1}, {{"CPU"}, 0}, {{"TPU", "GPU"}, 2}, {{}, 0}}) {
    c.push_back(OpCaseBuilder("DeviceIndex", "DeviceIndex of " + std::to_string(names.size()))
                    .StringList("device_names", names)
                    .Reference1([w = want](const std::vector<Tensor>&) {
                      return Tensor::Scalar<int32_t>(w);
                    })
                    .Build());
  }
  return c;
}

}  // namespace kiln::testing
