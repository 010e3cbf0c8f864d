// Functional control flow: If/StatelessIf and While/StatelessWhile over hand-written
// FunctionDefs, and TF's own SimpleWhileLoop SavedModel.
#include <doctest/doctest.h>
#include <google/protobuf/text_format.h>

#include <chrono>
#include <string>
#include <vector>

#include "kiln/exec/executor.h"
#include "kiln/exec/saved_model.h"
#include "tensorflow/framework.pb.h"
#include "test_util.h"

namespace kiln::exec {
namespace {

tensorflow::FunctionDefLibrary ParseLibrary(const std::string& text) {
  tensorflow::FunctionDefLibrary lib;
  REQUIRE_MESSAGE(google::protobuf::TextFormat::ParseFromString(text, &lib), text);
  return lib;
}

// Replaces every "$key" in `text`.
std::string Subst(std::string text, const std::string& key, const std::string& value) {
  for (size_t pos; (pos = text.find(key)) != std::string::npos;) {
    text.replace(pos, key.size(), value);
  }
  return text;
}

bool Has(const std::string& s, const std::string& part) {
  return s.find(part) != std::string::npos;
}

TensorSpec Spec(DType t, PartialShape s = PartialShape::Scalar()) { return {t, s}; }

// Captures prints made through the default sink while alive.
class PrintCapture {
 public:
  PrintCapture() : saved_(DefaultPrintSink()) {
    SetDefaultPrintSink(
        [this](std::string_view, std::string_view text) { lines_.emplace_back(text); });
  }
  ~PrintCapture() { SetDefaultPrintSink(saved_); }
  const std::vector<std::string>& lines() const { return lines_; }
  void clear() { lines_.clear(); }

 private:
  PrintSink saved_;
  std::vector<std::string> lines_;
};

Result<std::vector<Tensor>> PrepareAndRun(const tensorflow::FunctionDefLibrary& proto,
                                          const std::string& fn, std::vector<TensorSpec> specs,
                                          std::vector<Tensor> args) {
  FunctionLibrary lib(proto);
  const tensorflow::FunctionDef* fdef = lib.Find(fn);
  if (fdef == nullptr) return NotFound("no function ", fn);
  KILN_ASSIGN_OR_RETURN(auto pf, PreparedFunction::Prepare(*fdef, lib, specs));
  std::vector<Tensor> out;
  KILN_RETURN_IF_ERROR(pf->Run(args, &out));
  return out;
}

// ---- If --------------------------------------------------------------------------------------

// then: print "then", x * x.  else: print "else", -x.  main($op): $op(c, x).
const char* kIfLib = R"pb(
  function {
    signature {
      name: "then_fn"
      input_arg { name: "x" type: DT_FLOAT }
      output_arg { name: "y" type: DT_FLOAT }
      is_stateful: true
    }
    node_def {
      name: "msg"
      op: "Const"
      attr {
        key: "dtype"
        value { type: DT_STRING }
      }
      attr {
        key: "value"
        value {
          tensor {
            dtype: DT_STRING
            tensor_shape {}
            string_val: "then"
          }
        }
      }
    }
    node_def {
      name: "print"
      op: "PrintV2"
      input: "msg:output:0"
      attr {
        key: "output_stream"
        value { s: "stdout" }
      }
    }
    node_def {
      name: "sq"
      op: "Mul"
      input: "x"
      input: "x"
      attr {
        key: "T"
        value { type: DT_FLOAT }
      }
    }
    ret { key: "y" value: "sq:z:0" }
  }
  function {
    signature {
      name: "else_fn"
      input_arg { name: "x" type: DT_FLOAT }
      output_arg { name: "y" type: DT_FLOAT }
      is_stateful: true
    }
    node_def {
      name: "msg"
      op: "Const"
      attr {
        key: "dtype"
        value { type: DT_STRING }
      }
      attr {
        key: "value"
        value {
          tensor {
            dtype: DT_STRING
            tensor_shape {}
            string_val: "else"
          }
        }
      }
    }
    node_def {
      name: "print"
      op: "PrintV2"
      input: "msg:output:0"
      attr {
        key: "output_stream"
        value { s: "stdout" }
      }
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
    ret { key: "y" value: "neg:y:0" }
  }
  function {
    signature {
      name: "main"
      input_arg { name: "c" type: $cond }
      input_arg { name: "x" type: DT_FLOAT }
      output_arg { name: "y" type: DT_FLOAT }
    }
    node_def {
      name: "if"
      op: "$op"
      input: "c"
      input: "x"
      attr {
        key: "Tcond"
        value { type: $cond }
      }
      attr {
        key: "Tin"
        value { list { type: DT_FLOAT } }
      }
      attr {
        key: "Tout"
        value { list { type: DT_FLOAT } }
      }
      attr {
        key: "then_branch"
        value { func { name: "then_fn" } }
      }
      attr {
        key: "else_branch"
        value { func { name: "$else" } }
      }
    }
    ret { key: "y" value: "if:output:0" }
  }
)pb";

tensorflow::FunctionDefLibrary IfLib(const std::string& op, const std::string& cond = "DT_BOOL",
                                     const std::string& else_fn = "else_fn") {
  return ParseLibrary(Subst(Subst(Subst(kIfLib, "$op", op), "$cond", cond), "$else", else_fn));
}

TEST_CASE("If runs only the branch the condition picks, prints included") {
  for (const char* op : {"If", "StatelessIf"}) {
    INFO(op);
    auto proto = IfLib(op);
    PrintCapture prints;
    auto out = PrepareAndRun(proto, "main", {Spec(DType::kBool), Spec(DType::kFloat)},
                             {Tensor::Scalar(true), Tensor::Scalar(3.0f)});
    REQUIRE_MESSAGE(out.ok(), out.status().ToString());
    CHECK((*out)[0].scalar<float>() == 9.0f);
    CHECK(prints.lines() == std::vector<std::string>{"then\n"});

    prints.clear();
    out = PrepareAndRun(proto, "main", {Spec(DType::kBool), Spec(DType::kFloat)},
                        {Tensor::Scalar(false), Tensor::Scalar(3.0f)});
    REQUIRE_MESSAGE(out.ok(), out.status().ToString());
    CHECK((*out)[0].scalar<float>() == -3.0f);
    CHECK(prints.lines() == std::vector<std::string>{"else\n"});
  }
}

TEST_CASE("If takes TF's truth value of numbers and of non-scalar conditions") {
  PrintCapture prints;
  auto run = [](const std::string& cond_type, const Tensor& c) -> float {
    auto proto = IfLib("If", cond_type);
    auto out = PrepareAndRun(proto, "main", {Spec(c.dtype(), c.shape()), Spec(DType::kFloat)},
                             {c, Tensor::Scalar(2.0f)});
    REQUIRE_MESSAGE(out.ok(), out.status().ToString());
    return (*out)[0].scalar<float>();
  };
  CHECK(run("DT_INT32", Tensor::Scalar(int32_t{5})) == 4.0f);
  CHECK(run("DT_INT32", Tensor::Scalar(int32_t{0})) == -2.0f);
  CHECK(run("DT_FLOAT", Tensor::Scalar(0.5f)) == 4.0f);
  CHECK(run("DT_FLOAT", Tensor::Scalar(0.0f)) == -2.0f);
  CHECK(run("DT_STRING", Tensor::StringScalar("x")) == 4.0f);
  CHECK(run("DT_STRING", Tensor::StringScalar("")) == -2.0f);
  // Non-scalar: true when it has elements, whatever they are.
  CHECK(run("DT_FLOAT", Tensor(DType::kFloat, Shape{2})) == 4.0f);
  CHECK(run("DT_FLOAT", Tensor(DType::kFloat, Shape{0})) == -2.0f);
}

TEST_CASE("a StatelessIf nothing uses is pruned, an If with side effects is not") {
  // main2 runs $op but returns x unchanged.
  const std::string extra = R"pb(
    function {
      signature {
        name: "main2"
        input_arg { name: "c" type: DT_BOOL }
        input_arg { name: "x" type: DT_FLOAT }
        output_arg { name: "y" type: DT_FLOAT }
      }
      node_def {
        name: "if"
        op: "$op"
        input: "c"
        input: "x"
        attr {
          key: "then_branch"
          value { func { name: "then_fn" } }
        }
        attr {
          key: "else_branch"
          value { func { name: "else_fn" } }
        }
      }
      ret { key: "y" value: "x" }
    }
  )pb";
  for (const char* op : {"If", "StatelessIf"}) {
    auto proto = ParseLibrary(
        Subst(Subst(Subst(kIfLib, "$op", op), "$cond", "DT_BOOL"), "$else", "else_fn") +
        Subst(extra, "$op", op));
    PrintCapture prints;
    auto out = PrepareAndRun(proto, "main2", {Spec(DType::kBool), Spec(DType::kFloat)},
                             {Tensor::Scalar(true), Tensor::Scalar(3.0f)});
    REQUIRE_MESSAGE(out.ok(), out.status().ToString());
    CHECK((*out)[0].scalar<float>() == 3.0f);
    CHECK(prints.lines().size() == (std::string(op) == "If" ? 1u : 0u));
  }
}

TEST_CASE("If infers the most specific shape both branches agree on") {
  // then returns x (2, 3); else returns a (2, 5) or (5,) constant.
  const std::string text = R"pb(
    function {
      signature {
        name: "keep"
        input_arg { name: "x" type: DT_FLOAT }
        output_arg { name: "y" type: DT_FLOAT }
      }
      ret { key: "y" value: "x" }
    }
    function {
      signature {
        name: "other"
        input_arg { name: "x" type: DT_FLOAT }
        output_arg { name: "y" type: $t }
      }
      node_def {
        name: "k"
        op: "Const"
        attr {
          key: "dtype"
          value { type: $t }
        }
        attr {
          key: "value"
          value { tensor { dtype: $t tensor_shape { $dims } } }
        }
      }
      ret { key: "y" value: "k:output:0" }
    }
    function {
      signature {
        name: "main"
        input_arg { name: "c" type: DT_BOOL }
        input_arg { name: "x" type: DT_FLOAT }
        output_arg { name: "y" type: $t }
      }
      node_def {
        name: "if"
        op: "StatelessIf"
        input: "c"
        input: "x"
        attr {
          key: "then_branch"
          value { func { name: "keep" } }
        }
        attr {
          key: "else_branch"
          value { func { name: "$else" } }
        }
      }
      ret { key: "y" value: "if:output:0" }
    }
  )pb";
  auto prepare = [&](const std::string& t, const std::string& dims, const std::string& else_fn) {
    // The prepared function keeps nothing of the protos, so they may go after preparing.
    auto proto = ParseLibrary(Subst(Subst(Subst(text, "$t", t), "$dims", dims), "$else", else_fn));
    FunctionLibrary lib(proto);
    return PreparedFunction::Prepare(
        *lib.Find("main"), lib,
        std::vector{Spec(DType::kBool), Spec(DType::kFloat, PartialShape{2, 3})});
  };
  auto pf = prepare("DT_FLOAT", "dim { size: 2 } dim { size: 5 }", "other");
  REQUIRE_MESSAGE(pf.ok(), pf.status().ToString());
  CHECK((*pf)->output_specs()[0].shape == PartialShape{2, -1});

  pf = prepare("DT_FLOAT", "dim { size: 5 }", "other");
  REQUIRE_MESSAGE(pf.ok(), pf.status().ToString());
  CHECK((*pf)->output_specs()[0].shape.unknown_rank());

  SUBCASE("branches that disagree on the dtype") {
    pf = prepare("DT_INT32", "dim { size: 2 } dim { size: 3 }", "other");
    // main declares int32, keep computes float32: the If itself must refuse first.
    REQUIRE_FALSE(pf.ok());
    CHECK(Has(pf.status().message(), "then_branch gives float32"));
    CHECK(Has(pf.status().message(), "else_branch gives int32"));
  }
  SUBCASE("a branch that is not in the library") {
    pf = prepare("DT_FLOAT", "dim { size: 2 }", "nowhere");
    REQUIRE_FALSE(pf.ok());
    CHECK(Has(pf.status().message(), "'nowhere', which is not in the function library"));
    CHECK(Has(pf.status().message(), "else_branch"));
  }
}

// ---- While -----------------------------------------------------------------------------------

// sum_to(n) = 1 + 2 + ... + n with loop variables (i, n, acc), while i != n.
const char* kSumLib = R"pb(
  function {
    signature {
      name: "sum_cond"
      input_arg { name: "i" type: DT_INT32 }
      input_arg { name: "n" type: DT_INT32 }
      input_arg { name: "acc" type: DT_INT32 }
      output_arg { name: "go" type: DT_BOOL }
    }
    node_def {
      name: "left"
      op: "Sub"
      input: "n"
      input: "i"
      attr {
        key: "T"
        value { type: DT_INT32 }
      }
    }
    node_def {
      name: "go"
      op: "Cast"
      input: "left:z:0"
      attr {
        key: "SrcT"
        value { type: DT_INT32 }
      }
      attr {
        key: "DstT"
        value { type: DT_BOOL }
      }
    }
    ret { key: "go" value: "go:y:0" }
  }
  function {
    signature {
      name: "sum_body"
      input_arg { name: "i" type: DT_INT32 }
      input_arg { name: "n" type: DT_INT32 }
      input_arg { name: "acc" type: DT_INT32 }
      output_arg { name: "i_out" type: DT_INT32 }
      output_arg { name: "n_out" type: DT_INT32 }
      output_arg { name: "acc_out" type: DT_INT32 }
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
      name: "next"
      op: "AddV2"
      input: "i"
      input: "one:output:0"
      attr {
        key: "T"
        value { type: DT_INT32 }
      }
    }
    node_def {
      name: "acc2"
      op: "AddV2"
      input: "acc"
      input: "next:z:0"
      attr {
        key: "T"
        value { type: DT_INT32 }
      }
    }
    ret { key: "i_out" value: "next:z:0" }
    ret { key: "n_out" value: "n" }
    ret { key: "acc_out" value: "acc2:z:0" }
  }
  function {
    signature {
      name: "sum_to"
      input_arg { name: "n" type: DT_INT32 }
      output_arg { name: "s" type: DT_INT32 }
      output_arg { name: "i" type: DT_INT32 }
    }
    node_def {
      name: "zero"
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
            int_val: 0
          }
        }
      }
    }
    node_def {
      name: "while"
      op: "$op"
      input: "zero:output:0"
      input: "n"
      input: "zero:output:0"
      attr {
        key: "T"
        value { list { type: DT_INT32 type: DT_INT32 type: DT_INT32 } }
      }
      attr {
        key: "cond"
        value { func { name: "sum_cond" } }
      }
      attr {
        key: "body"
        value { func { name: "$body" } }
      }
      attr {
        key: "parallel_iterations"
        value { i: 10 }
      }
      attr {
        key: "_num_original_outputs"
        value { i: 3 }
      }
    }
    ret { key: "s" value: "while:output:2" }
    ret { key: "i" value: "while:output:0" }
  }
)pb";

TEST_CASE("While sums 1..n, zero iterations give the inputs back") {
  for (const char* op : {"While", "StatelessWhile"}) {
    INFO(op);
    auto proto = ParseLibrary(Subst(Subst(kSumLib, "$op", op), "$body", "sum_body"));
    FunctionLibrary lib(proto);
    auto pf = PreparedFunction::Prepare(*lib.Find("sum_to"), lib, std::vector{Spec(DType::kInt32)});
    REQUIRE_MESSAGE(pf.ok(), pf.status().ToString());
    CHECK((*pf)->output_specs()[0] == Spec(DType::kInt32));
    for (int n : {0, 1, 10, 100}) {
      std::vector<Tensor> out;
      REQUIRE((*pf)->Run(std::vector{Tensor::Scalar(int32_t(n))}, &out).ok());
      CHECK(out[0].scalar<int32_t>() == n * (n + 1) / 2);
      CHECK(out[1].scalar<int32_t>() == n);
    }
  }
}

TEST_CASE("a deadline stops a call between kernels, inside loops too") {
  auto proto = ParseLibrary(Subst(Subst(kSumLib, "$op", "While"), "$body", "sum_body"));
  FunctionLibrary lib(proto);
  auto pf = PreparedFunction::Prepare(*lib.Find("sum_to"), lib, std::vector{Spec(DType::kInt32)});
  REQUIRE_MESSAGE(pf.ok(), pf.status().ToString());
  std::vector<Tensor> out;
  RunOptions options;
  options.deadline = std::chrono::steady_clock::now() - std::chrono::seconds(1);
  Status s = (*pf)->Run(std::vector{Tensor::Scalar(int32_t(10))}, &out, options);
  CHECK(s.code() == StatusCode::kDeadlineExceeded);
  // A loop of 2^31 - 1 iterations stops soon after its deadline, from inside the body.
  const auto start = std::chrono::steady_clock::now();
  options.deadline = start + std::chrono::milliseconds(20);  // far fewer than 65536 steps
  s = (*pf)->Run(std::vector{Tensor::Scalar(int32_t(0x7fffffff))}, &out, options);
  CHECK(s.code() == StatusCode::kDeadlineExceeded);
  CHECK_MESSAGE(Has(s.ToString(), "deadline"), s.ToString());
  CHECK(std::chrono::steady_clock::now() - start < std::chrono::seconds(5));
  // A deadline in the future changes nothing.
  options.deadline = std::chrono::steady_clock::now() + std::chrono::hours(1);
  REQUIRE((*pf)->Run(std::vector{Tensor::Scalar(int32_t(10))}, &out, options).ok());
  CHECK(out[0].scalar<int32_t>() == 55);
}

TEST_CASE("a loop body that changes a loop variable's dtype is refused, naming it") {
  const std::string bad_body = R"pb(
    function {
      signature {
        name: "bad_body"
        input_arg { name: "i" type: DT_INT32 }
        input_arg { name: "n" type: DT_INT32 }
        input_arg { name: "acc" type: DT_INT32 }
        output_arg { name: "i_out" type: DT_INT32 }
        output_arg { name: "n_out" type: DT_INT32 }
        output_arg { name: "acc_out" type: DT_FLOAT }
      }
      node_def {
        name: "f"
        op: "Cast"
        input: "acc"
        attr {
          key: "SrcT"
          value { type: DT_INT32 }
        }
        attr {
          key: "DstT"
          value { type: DT_FLOAT }
        }
      }
      ret { key: "i_out" value: "i" }
      ret { key: "n_out" value: "n" }
      ret { key: "acc_out" value: "f:y:0" }
    }
  )pb";
  auto proto =
      ParseLibrary(Subst(Subst(kSumLib, "$op", "StatelessWhile"), "$body", "bad_body") + bad_body);
  FunctionLibrary lib(proto);
  auto pf = PreparedFunction::Prepare(*lib.Find("sum_to"), lib, std::vector{Spec(DType::kInt32)});
  REQUIRE_FALSE(pf.ok());
  INFO(pf.status().ToString());
  CHECK(Has(pf.status().message(), "node 'while'"));
  CHECK(Has(pf.status().message(), "changes the dtype of loop variable 2 from int32 to float32"));
}

// Loop variables (i, n, k, acc). Each step: i += 1, k -= 1; if k != 0 then acc += i, else print
// "fizz <i>", acc += 1000 and k = 3 (an If inside the body).
const char* kFizzLib = R"pb(
  function {
    signature {
      name: "fb_count"
      input_arg { name: "i" type: DT_INT32 }
      input_arg { name: "acc" type: DT_INT32 }
      input_arg { name: "k" type: DT_INT32 }
      output_arg { name: "acc_out" type: DT_INT32 }
      output_arg { name: "k_out" type: DT_INT32 }
    }
    node_def {
      name: "a"
      op: "AddV2"
      input: "acc"
      input: "i"
      attr {
        key: "T"
        value { type: DT_INT32 }
      }
    }
    ret { key: "acc_out" value: "a:z:0" }
    ret { key: "k_out" value: "k" }
  }
  function {
    signature {
      name: "fb_fizz"
      input_arg { name: "i" type: DT_INT32 }
      input_arg { name: "acc" type: DT_INT32 }
      input_arg { name: "k" type: DT_INT32 }
      output_arg { name: "acc_out" type: DT_INT32 }
      output_arg { name: "k_out" type: DT_INT32 }
      is_stateful: true
    }
    node_def {
      name: "fmt"
      op: "StringFormat"
      input: "i"
      attr {
        key: "T"
        value { list { type: DT_INT32 } }
      }
      attr {
        key: "template"
        value { s: "fizz %s" }
      }
    }
    node_def {
      name: "print"
      op: "PrintV2"
      input: "fmt:output:0"
      attr {
        key: "output_stream"
        value { s: "stdout" }
      }
    }
    node_def {
      name: "big"
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
            int_val: 1000
          }
        }
      }
    }
    node_def {
      name: "three"
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
            int_val: 3
          }
        }
      }
    }
    node_def {
      name: "a"
      op: "AddV2"
      input: "acc"
      input: "big:output:0"
      attr {
        key: "T"
        value { type: DT_INT32 }
      }
    }
    ret { key: "acc_out" value: "a:z:0" }
    ret { key: "k_out" value: "three:output:0" }
    control_ret { key: "print" value: "print" }
  }
  function {
    signature {
      name: "fb_cond"
      input_arg { name: "i" type: DT_INT32 }
      input_arg { name: "n" type: DT_INT32 }
      input_arg { name: "k" type: DT_INT32 }
      input_arg { name: "acc" type: DT_INT32 }
      output_arg { name: "go" type: DT_BOOL }
    }
    node_def {
      name: "left"
      op: "Sub"
      input: "n"
      input: "i"
      attr {
        key: "T"
        value { type: DT_INT32 }
      }
    }
    node_def {
      name: "go"
      op: "Cast"
      input: "left:z:0"
      attr {
        key: "SrcT"
        value { type: DT_INT32 }
      }
      attr {
        key: "DstT"
        value { type: DT_BOOL }
      }
    }
    ret { key: "go" value: "go:y:0" }
  }
  function {
    signature {
      name: "fb_body"
      input_arg { name: "i" type: DT_INT32 }
      input_arg { name: "n" type: DT_INT32 }
      input_arg { name: "k" type: DT_INT32 }
      input_arg { name: "acc" type: DT_INT32 }
      output_arg { name: "i_out" type: DT_INT32 }
      output_arg { name: "n_out" type: DT_INT32 }
      output_arg { name: "k_out" type: DT_INT32 }
      output_arg { name: "acc_out" type: DT_INT32 }
      is_stateful: true
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
      name: "i1"
      op: "AddV2"
      input: "i"
      input: "one:output:0"
      attr {
        key: "T"
        value { type: DT_INT32 }
      }
    }
    node_def {
      name: "k1"
      op: "Sub"
      input: "k"
      input: "one:output:0"
      attr {
        key: "T"
        value { type: DT_INT32 }
      }
    }
    node_def {
      name: "if"
      op: "If"
      input: "k1:z:0"
      input: "i1:z:0"
      input: "acc"
      input: "k1:z:0"
      attr {
        key: "Tcond"
        value { type: DT_INT32 }
      }
      attr {
        key: "Tin"
        value { list { type: DT_INT32 type: DT_INT32 type: DT_INT32 } }
      }
      attr {
        key: "Tout"
        value { list { type: DT_INT32 type: DT_INT32 } }
      }
      attr {
        key: "then_branch"
        value { func { name: "fb_count" } }
      }
      attr {
        key: "else_branch"
        value { func { name: "fb_fizz" } }
      }
    }
    ret { key: "i_out" value: "i1:z:0" }
    ret { key: "n_out" value: "n" }
    ret { key: "k_out" value: "if:output:1" }
    ret { key: "acc_out" value: "if:output:0" }
  }
  function {
    signature {
      name: "fizz"
      input_arg { name: "n" type: DT_INT32 }
      output_arg { name: "acc" type: DT_INT32 }
      is_stateful: true
    }
    node_def {
      name: "zero"
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
            int_val: 0
          }
        }
      }
    }
    node_def {
      name: "three"
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
            int_val: 3
          }
        }
      }
    }
    node_def {
      name: "loop"
      op: "While"
      input: "zero:output:0"
      input: "n"
      input: "three:output:0"
      input: "zero:output:0"
      attr {
        key: "T"
        value { list { type: DT_INT32 type: DT_INT32 type: DT_INT32 type: DT_INT32 } }
      }
      attr {
        key: "cond"
        value { func { name: "fb_cond" } }
      }
      attr {
        key: "body"
        value { func { name: "fb_body" } }
      }
    }
    ret { key: "acc" value: "loop:output:3" }
  }
)pb";

TEST_CASE("a fizzbuzz-like loop: an If inside the body, prints from the taken branch only") {
  auto proto = ParseLibrary(kFizzLib);
  FunctionLibrary lib(proto);
  auto pf = PreparedFunction::Prepare(*lib.Find("fizz"), lib, std::vector{Spec(DType::kInt32)});
  REQUIRE_MESSAGE(pf.ok(), pf.status().ToString());
  PrintCapture prints;
  std::vector<Tensor> out;
  REQUIRE((*pf)->Run(std::vector{Tensor::Scalar(int32_t{7})}, &out).ok());
  // 1 + 2 + 1000 + 4 + 5 + 1000 + 7
  CHECK(out[0].scalar<int32_t>() == 2019);
  CHECK(prints.lines() == std::vector<std::string>{"fizz 3\n", "fizz 6\n"});
}

TEST_CASE("a loop variable whose shape the body changes is relaxed, like a shape invariant") {
  // (x, y, k): x = x + y while k != 0, k -= 1. x starts (1,), becomes (3,).
  auto proto = ParseLibrary(R"pb(
    function {
      signature {
        name: "c"
        input_arg { name: "x" type: DT_FLOAT }
        input_arg { name: "y" type: DT_FLOAT }
        input_arg { name: "k" type: DT_INT32 }
        output_arg { name: "go" type: DT_INT32 }
      }
      ret { key: "go" value: "k" }
    }
    function {
      signature {
        name: "b"
        input_arg { name: "x" type: DT_FLOAT }
        input_arg { name: "y" type: DT_FLOAT }
        input_arg { name: "k" type: DT_INT32 }
        output_arg { name: "x_out" type: DT_FLOAT }
        output_arg { name: "y_out" type: DT_FLOAT }
        output_arg { name: "k_out" type: DT_INT32 }
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
        name: "k1"
        op: "Sub"
        input: "k"
        input: "one:output:0"
        attr {
          key: "T"
          value { type: DT_INT32 }
        }
      }
      node_def {
        name: "x1"
        op: "AddV2"
        input: "x"
        input: "y"
        attr {
          key: "T"
          value { type: DT_FLOAT }
        }
      }
      ret { key: "x_out" value: "x1:z:0" }
      ret { key: "y_out" value: "y" }
      ret { key: "k_out" value: "k1:z:0" }
    }
    function {
      signature {
        name: "main"
        input_arg { name: "x" type: DT_FLOAT }
        input_arg { name: "y" type: DT_FLOAT }
        input_arg { name: "k" type: DT_INT32 }
        output_arg { name: "x_final" type: DT_FLOAT }
      }
      node_def {
        name: "w"
        op: "StatelessWhile"
        input: "x"
        input: "y"
        input: "k"
        attr {
          key: "cond"
          value { func { name: "c" } }
        }
        attr {
          key: "body"
          value { func { name: "b" } }
        }
      }
      ret { key: "x_final" value: "w:output:0" }
    }
  )pb");
  FunctionLibrary lib(proto);
  auto pf = PreparedFunction::Prepare(
      *lib.Find("main"), lib,
      std::vector{Spec(DType::kFloat, PartialShape{1}), Spec(DType::kFloat, PartialShape{3}),
                  Spec(DType::kInt32)});
  REQUIRE_MESSAGE(pf.ok(), pf.status().ToString());
  CHECK((*pf)->output_specs()[0].shape == PartialShape{-1});
  std::vector<Tensor> out;
  Tensor x = *Tensor::FromVector<float>({1}, Shape{1});
  Tensor y = *Tensor::FromVector<float>({1, 2, 3}, Shape{3});
  REQUIRE((*pf)->Run(std::vector{x, y, Tensor::Scalar(int32_t{2})}, &out).ok());
  REQUIRE(out[0].shape() == Shape{3});
  CHECK(out[0].data<float>()[0] == 3.0f);
  CHECK(out[0].data<float>()[1] == 5.0f);
  CHECK(out[0].data<float>()[2] == 7.0f);
  // No iterations: x comes back as it went in, shape (1,).
  REQUIRE((*pf)->Run(std::vector{x, y, Tensor::Scalar(int32_t{0})}, &out).ok());
  CHECK(out[0].shape() == Shape{1});
}

// ---- TF-written SavedModel -------------------------------------------------------------------

// SimpleWhileLoop computes: acc = 0; while value > 0: acc += value; value -= 1; return acc
// (StatelessWhile with loop variables (counter, max_iterations, acc, value), Greater in cond).
TEST_CASE("TF's SimpleWhileLoop SavedModel loads and runs serving_default") {
  const auto dir = testing::Fixture("SimpleWhileLoop");
  auto model = SavedModel::Load(dir);
  REQUIRE_MESSAGE(model.ok(), model.status().ToString());
  auto sig = (*model)->GetSignature("serving_default");
  REQUIRE_MESSAGE(sig.ok(), sig.status().ToString());
  auto run = [&](float v) {
    auto out = (*sig)->Run({{"value", Tensor::Scalar(v)}});
    REQUIRE_MESSAGE(out.ok(), out.status().ToString());
    REQUIRE(out->count("output_0") == 1);
    return out->at("output_0").scalar<float>();
  };
  CHECK(run(5.0f) == 15.0f);  // 5 + 4 + 3 + 2 + 1
  CHECK(run(2.5f) == 4.5f);   // 2.5 + 1.5 + 0.5
  CHECK(run(0.0f) == 0.0f);   // no iterations
  CHECK(run(-3.0f) == 0.0f);
}

}  // namespace
}  // namespace kiln::exec
