// The executor: inlining, pruning (non-strict execution), ordering of side effects, slot reuse,
// and the errors of bad function bodies.
#include "kiln/exec/executor.h"

#include <doctest/doctest.h>
#include <google/protobuf/text_format.h>

#include <thread>

#include "graph/flat_graph.h"
#include "kiln/exec/resources.h"
#include "tensorflow/framework.pb.h"

namespace kiln::exec {
namespace {

tensorflow::FunctionDefLibrary ParseLibrary(const std::string& text) {
  tensorflow::FunctionDefLibrary lib;
  REQUIRE(google::protobuf::TextFormat::ParseFromString(text, &lib));
  return lib;
}

const char* kAddLib = R"pb(
  function {
    signature {
      name: "add"
      input_arg { name: "x" type: DT_FLOAT }
      input_arg { name: "y" type: DT_FLOAT }
      output_arg { name: "z" type: DT_FLOAT }
    }
    node_def {
      name: "sum"
      op: "AddV2"
      input: "x"
      input: "y"
      attr {
        key: "T"
        value { type: DT_FLOAT }
      }
    }
    ret { key: "z" value: "sum:z:0" }
  }
  function {
    signature {
      name: "twice_add"
      input_arg { name: "a" type: DT_FLOAT }
      output_arg { name: "out" type: DT_FLOAT }
    }
    node_def {
      name: "call"
      op: "StatefulPartitionedCall"
      input: "a"
      input: "a"
      attr {
        key: "f"
        value { func { name: "add" } }
      }
      attr {
        key: "Tin"
        value { list { type: DT_FLOAT type: DT_FLOAT } }
      }
      attr {
        key: "Tout"
        value { list { type: DT_FLOAT } }
      }
    }
    node_def { name: "direct" op: "add" input: "call:output:0" input: "a" }
    node_def {
      name: "id"
      op: "Identity"
      input: "direct:z:0"
      attr {
        key: "T"
        value { type: DT_FLOAT }
      }
    }
    ret { key: "out" value: "id:output:0" }
  }
)pb";

TensorSpec Scalar(DType t) { return {t, PartialShape::Scalar()}; }

TEST_CASE("a function runs, and calls are inlined into one flat schedule") {
  auto lib_proto = ParseLibrary(kAddLib);
  FunctionLibrary lib(lib_proto);
  auto pf =
      PreparedFunction::Prepare(*lib.Find("twice_add"), lib, std::vector{Scalar(DType::kFloat)});
  REQUIRE_MESSAGE(pf.ok(), pf.status().ToString());
  // Two AddV2 steps; the calls and the Identity leave no steps behind.
  CHECK((*pf)->num_steps() == 2);
  std::vector<Tensor> out;
  REQUIRE(((*pf)->Run(std::vector{Tensor::Scalar(2.5f)}, &out)).ok());
  REQUIRE(out.size() == 1);
  CHECK(out[0].scalar<float>() == doctest::Approx(7.5f));
  CHECK((*pf)->output_specs()[0].dtype == DType::kFloat);
}

// TF's functional While wraps a body that captures outside tensors in a function that calls the
// body by name and reads its outputs by their names ("body:second:0"), not by a list index.
const char* kNamedOutputsLib = R"pb(
  function {
    signature {
      name: "pair"
      input_arg { name: "x" type: DT_FLOAT }
      input_arg { name: "y" type: DT_FLOAT }
      output_arg { name: "first" type: DT_FLOAT }
      output_arg { name: "second" type: DT_FLOAT }
    }
    node_def {
      name: "sum"
      op: "AddV2"
      input: "x"
      input: "y"
      attr {
        key: "T"
        value { type: DT_FLOAT }
      }
    }
    node_def {
      name: "diff"
      op: "Sub"
      input: "x"
      input: "y"
      attr {
        key: "T"
        value { type: DT_FLOAT }
      }
    }
    ret { key: "first" value: "sum:z:0" }
    ret { key: "second" value: "diff:z:0" }
  }
  function {
    signature {
      name: "wrapper"
      input_arg { name: "a" type: DT_FLOAT }
      output_arg { name: "out" type: DT_FLOAT }
      output_arg { name: "missing" type: DT_FLOAT }
    }
    node_def { name: "call" op: "pair" input: "a" input: "a" }
    node_def {
      name: "twice"
      op: "AddV2"
      input: "call:second:0"
      input: "call:first:0"
      attr {
        key: "T"
        value { type: DT_FLOAT }
      }
    }
    ret { key: "out" value: "twice:z:0" }
    ret { key: "missing" value: "call:third:0" }
  }
)pb";

TEST_CASE("a function called by name is read by its outputs' names") {
  auto lib_proto = ParseLibrary(kNamedOutputsLib);
  // Only the first output: the second reads an output the callee does not have.
  lib_proto.mutable_function(1)->mutable_signature()->mutable_output_arg()->RemoveLast();
  lib_proto.mutable_function(1)->mutable_ret()->erase("missing");
  FunctionLibrary lib(lib_proto);
  auto pf =
      PreparedFunction::Prepare(*lib.Find("wrapper"), lib, std::vector{Scalar(DType::kFloat)});
  REQUIRE_MESSAGE(pf.ok(), pf.status().ToString());
  std::vector<Tensor> out;
  REQUIRE(((*pf)->Run(std::vector{Tensor::Scalar(2.5f)}, &out)).ok());
  REQUIRE(out.size() == 1);
  // (a - a) + (a + a): the names pick each output, whatever its position.
  CHECK(out[0].scalar<float>() == doctest::Approx(5.f));

  auto bad_proto = ParseLibrary(kNamedOutputsLib);
  FunctionLibrary bad(bad_proto);
  auto refused =
      PreparedFunction::Prepare(*bad.Find("wrapper"), bad, std::vector{Scalar(DType::kFloat)});
  REQUIRE_FALSE(refused.ok());
  CHECK(refused.status().message().find("has no output named 'third'") != std::string::npos);
}

TEST_CASE("run rejects wrong argument dtype and count, naming the argument") {
  auto lib_proto = ParseLibrary(kAddLib);
  FunctionLibrary lib(lib_proto);
  auto pf = PreparedFunction::Prepare(*lib.Find("add"), lib,
                                      std::vector{Scalar(DType::kFloat), Scalar(DType::kFloat)});
  REQUIRE(pf.ok());
  std::vector<Tensor> out;
  Status s = (*pf)->Run(std::vector{Tensor::Scalar(1.0f), Tensor::Scalar(int32_t{2})}, &out);
  CHECK(s.code() == StatusCode::kInvalidArgument);
  CHECK(s.message().find("'y'") != std::string::npos);
  CHECK(s.message().find("float32") != std::string::npos);
  CHECK(s.message().find("int32") != std::string::npos);
  s = (*pf)->Run(std::vector{Tensor::Scalar(1.0f)}, &out);
  CHECK(s.code() == StatusCode::kInvalidArgument);
}

TEST_CASE("ops that nothing needs are pruned: a failing unused MatMul does not fail the run") {
  auto lib_proto = ParseLibrary(R"pb(
    function {
      signature {
        name: "f"
        input_arg { name: "x" type: DT_FLOAT }
        output_arg { name: "y" type: DT_FLOAT }
      }
      node_def {
        name: "bad"
        op: "MatMul"
        input: "x"
        input: "x"
        attr {
          key: "T"
          value { type: DT_FLOAT }
        }
      }
      node_def {
        name: "neg"
        op: "Mul"
        input: "x"
        input: "x"
        attr {
          key: "T"
          value { type: DT_FLOAT }
        }
      }
      ret { key: "y" value: "neg:z:0" }
    }
  )pb");
  FunctionLibrary lib(lib_proto);
  // x is [2,3]: MatMul(x, x) would fail on the inner dimensions.
  auto pf = PreparedFunction::Prepare(*lib.Find("f"), lib,
                                      std::vector{TensorSpec{DType::kFloat, PartialShape{-1, -1}}});
  REQUIRE_MESSAGE(pf.ok(), pf.status().ToString());
  CHECK((*pf)->num_steps() == 1);
  Tensor x(DType::kFloat, Shape{2, 3});
  for (int i = 0; i < 6; ++i) x.data<float>()[i] = static_cast<float>(i);
  std::vector<Tensor> out;
  REQUIRE((*pf)->Run(std::vector{x}, &out).ok());
  CHECK(out[0].data<float>()[5] == 25.0f);

  PrepareOptions strict;
  strict.prune = false;
  auto all = PreparedFunction::Prepare(
      *lib.Find("f"), lib, std::vector{TensorSpec{DType::kFloat, PartialShape{-1, -1}}}, strict);
  REQUIRE(all.ok());
  CHECK((*all)->num_steps() == 2);
  CHECK_FALSE((*all)->Run(std::vector{x}, &out).ok());
}

TEST_CASE("side effects run in program order and survive pruning") {
  auto lib_proto = ParseLibrary(R"pb(
    function {
      signature {
        name: "bump"
        input_arg { name: "v" type: DT_RESOURCE }
        input_arg { name: "d" type: DT_FLOAT }
        output_arg { name: "before" type: DT_FLOAT }
        is_stateful: true
      }
      node_def {
        name: "read0"
        op: "ReadVariableOp"
        input: "v"
        attr {
          key: "dtype"
          value { type: DT_FLOAT }
        }
      }
      node_def {
        name: "assign"
        op: "AssignAddVariableOp"
        input: "v"
        input: "d"
        input: "^read0"
        attr {
          key: "dtype"
          value { type: DT_FLOAT }
        }
      }
      node_def {
        name: "assign2"
        op: "AssignAddVariableOp"
        input: "v"
        input: "d"
        input: "^assign"
        attr {
          key: "dtype"
          value { type: DT_FLOAT }
        }
      }
      ret { key: "before" value: "read0:value:0" }
    }
  )pb");
  FunctionLibrary lib(lib_proto);
  auto var = std::make_shared<VariableResource>("v", DType::kFloat, PartialShape::Scalar());
  REQUIRE(var->Assign(Tensor::Scalar(1.0f)).ok());
  auto pf = PreparedFunction::Prepare(*lib.Find("bump"), lib,
                                      std::vector{Scalar(DType::kResource), Scalar(DType::kFloat)});
  REQUIRE_MESSAGE(pf.ok(), pf.status().ToString());
  Tensor handle(DType::kResource, Shape());
  handle.scalar<std::shared_ptr<ResourceBase>>() = var;
  std::vector<Tensor> out;
  REQUIRE((*pf)->Run(std::vector{handle, Tensor::Scalar(10.0f)}, &out).ok());
  CHECK(out[0].scalar<float>() == 1.0f);  // read before both assignments
  CHECK(var->Read()->scalar<float>() == 21.0f);
  REQUIRE((*pf)->Run(std::vector{handle, Tensor::Scalar(1.0f)}, &out).ok());
  CHECK(out[0].scalar<float>() == 21.0f);
  CHECK(var->Read()->scalar<float>() == 23.0f);
}

TEST_CASE("bad bodies are refused at prepare time with the node named") {
  auto check = [](const std::string& text, const std::string& fn, const std::string& needle) {
    auto lib_proto = ParseLibrary(text);
    FunctionLibrary lib(lib_proto);
    std::vector<TensorSpec> specs(lib.Find(fn)->signature().input_arg_size(),
                                  Scalar(DType::kFloat));
    auto pf = PreparedFunction::Prepare(*lib.Find(fn), lib, specs);
    REQUIRE_FALSE(pf.ok());
    INFO(pf.status().ToString());
    CHECK(pf.status().message().find(needle) != std::string::npos);
  };
  SUBCASE("unknown op") {
    check(R"pb(function {
                 signature {
                   name: "f"
                   input_arg { name: "x" type: DT_FLOAT }
                   output_arg { name: "y" type: DT_FLOAT }
                 }
                 node_def { name: "n" op: "FancyOp" input: "x" }
                 ret { key: "y" value: "x" }
               })pb",
          "f", "op 'FancyOp' (node 'n' in function 'f') is not implemented");
  }
  SUBCASE("input naming nothing") {
    check(R"pb(function {
                 signature {
                   name: "f"
                   input_arg { name: "x" type: DT_FLOAT }
                   output_arg { name: "y" type: DT_FLOAT }
                 }
                 node_def {
                   name: "n"
                   op: "Neg"
                   input: "missing:y:0"
                   attr {
                     key: "T"
                     value { type: DT_FLOAT }
                   }
                 }
                 ret { key: "y" value: "n:y:0" }
               })pb",
          "f", "'missing:y:0' names no node");
  }
  SUBCASE("cycle") {
    check(R"pb(function {
                 signature {
                   name: "f"
                   input_arg { name: "x" type: DT_FLOAT }
                   output_arg { name: "y" type: DT_FLOAT }
                 }
                 node_def {
                   name: "a"
                   op: "AddV2"
                   input: "x"
                   input: "b:z:0"
                   attr {
                     key: "T"
                     value { type: DT_FLOAT }
                   }
                 }
                 node_def {
                   name: "b"
                   op: "AddV2"
                   input: "x"
                   input: "a:z:0"
                   attr {
                     key: "T"
                     value { type: DT_FLOAT }
                   }
                 }
                 ret { key: "y" value: "a:z:0" }
               })pb",
          "f", "cycle");
  }
  SUBCASE("recursion") {
    check(R"pb(function {
                 signature {
                   name: "f"
                   input_arg { name: "x" type: DT_FLOAT }
                   output_arg { name: "y" type: DT_FLOAT }
                 }
                 node_def { name: "c" op: "f" input: "x" }
                 ret { key: "y" value: "c:y:0" }
               })pb",
          "f", "recursive function");
  }
  SUBCASE("call of a missing function") {
    check(R"pb(function {
                 signature {
                   name: "f"
                   input_arg { name: "x" type: DT_FLOAT }
                   output_arg { name: "y" type: DT_FLOAT }
                 }
                 node_def {
                   name: "c"
                   op: "PartitionedCall"
                   input: "x"
                   attr {
                     key: "f"
                     value { func { name: "nowhere" } }
                   }
                 }
                 ret { key: "y" value: "c:output:0" }
               })pb",
          "f", "'nowhere', which is not in the library");
  }
}

}  // namespace
}  // namespace kiln::exec

namespace kiln::exec {
namespace {

TEST_CASE("a function body names outputs node:out_arg:index and arguments bare, as TF requires") {
  // TF refuses the GraphDef forms ("n:0", "n") and an argument with an index ("x:0") inside a
  // FunctionDef at load (a KeyError); only the functions kiln makes from a TF1 GraphDef, marked
  // with kGraphStyleInputsAttr, keep GraphDef names.
  auto body = [](const std::string& input, bool graph_style) {
    std::string text = R"pb(function {
                              signature {
                                name: "f"
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
                              node_def {
                                name: "m"
                                op: "Neg"
                                input: "INPUT"
                                attr {
                                  key: "T"
                                  value { type: DT_FLOAT }
                                }
                              }
                              ret { key: "y" value: "m:y:0" } ATTR
                            })pb";
    text.replace(text.find("INPUT"), 5, input);
    text.replace(text.find("ATTR"), 4,
                 graph_style ? "attr { key: \"" + std::string(kGraphStyleInputsAttr) +
                                   "\" value { b: true } }"
                             : std::string());
    return ParseLibrary(text);
  };
  auto prepare = [](const tensorflow::FunctionDefLibrary& lib_proto) {
    FunctionLibrary lib(lib_proto);
    const std::vector<TensorSpec> specs = {Scalar(DType::kFloat)};
    return PreparedFunction::Prepare(*lib.Find("f"), lib, specs);
  };
  for (const char* bad : {"n:0", "n", "x:0", "x:y:0"}) {
    INFO(bad);
    auto pf = prepare(body(bad, false));
    REQUIRE_FALSE(pf.ok());
    INFO(pf.status().ToString());
    CHECK(pf.status().message().find("function 'f', node 'm'") != std::string::npos);
    CHECK(pf.status().message().find("input '" + std::string(bad) + "'") != std::string::npos);
  }
  auto graphdef_form = prepare(body("n:0", false));
  CHECK(graphdef_form.status().message().find("'n:y:0'") == std::string::npos);
  CHECK(graphdef_form.status().message().find("GraphDef form") != std::string::npos);
  // The function form runs: -(-x) = x.
  for (const char* good : {"n:y:0", "x"}) {
    auto pf = prepare(body(good, false));
    REQUIRE_MESSAGE(pf.ok(), pf.status().ToString());
    std::vector<Tensor> out;
    REQUIRE((*pf)->Run(std::vector{Tensor::Scalar(3.0f)}, &out).ok());
    CHECK(out[0].scalar<float>() == (std::string(good) == "x" ? -3.0f : 3.0f));
  }
  // A function made from a TF1 GraphDef keeps the GraphDef names.
  for (const char* tf1 : {"n:0", "n", "x:0"}) {
    auto pf = prepare(body(tf1, true));
    CHECK_MESSAGE(pf.ok(), tf1, ": ", pf.status().ToString());
  }
}

TEST_CASE("concurrent runs of one prepared function lose no variable update") {
  auto lib_proto = ParseLibrary(R"pb(
    function {
      signature {
        name: "inc"
        input_arg { name: "v" type: DT_RESOURCE }
        input_arg { name: "d" type: DT_FLOAT }
        is_stateful: true
      }
      node_def {
        name: "assign"
        op: "AssignAddVariableOp"
        input: "v"
        input: "d"
        attr {
          key: "dtype"
          value { type: DT_FLOAT }
        }
      }
      control_ret { key: "assign" value: "assign" }
    }
  )pb");
  FunctionLibrary lib(lib_proto);
  auto var = std::make_shared<VariableResource>("v", DType::kFloat, PartialShape::Scalar());
  REQUIRE(var->Assign(Tensor::Scalar(0.0f)).ok());
  auto pf = PreparedFunction::Prepare(*lib.Find("inc"), lib,
                                      std::vector{Scalar(DType::kResource), Scalar(DType::kFloat)});
  REQUIRE_MESSAGE(pf.ok(), pf.status().ToString());
  Tensor handle(DType::kResource, Shape());
  handle.scalar<std::shared_ptr<ResourceBase>>() = var;
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&] {
      std::vector<Tensor> out;
      for (int i = 0; i < 500; ++i)
        (void)(*pf)->Run(std::vector{handle, Tensor::Scalar(1.0f)}, &out);
    });
  for (auto& th : threads) th.join();
  CHECK(var->Read()->scalar<float>() == 2000.0f);
}

}  // namespace
}  // namespace kiln::exec
