// Signatures and restored functions made from their parts (Signature::Make,
// RestoredFunction::Make, as the loaders make them), and what PreparedFunction tells the
// serving plan (requested_specs, ArenaOffsets).
#include <doctest/doctest.h>
#include <google/protobuf/text_format.h>

#include "kiln/exec/executor.h"
#include "kiln/exec/saved_model.h"
#include "tensorflow/framework.pb.h"

namespace kiln::exec {
namespace {

// sub(x, y) = x - y: the order of the arguments shows in the result.
const char* kSubLib = R"pb(
  function {
    signature {
      name: "sub"
      input_arg { name: "x" type: DT_FLOAT }
      input_arg { name: "y" type: DT_FLOAT }
      output_arg { name: "z" type: DT_FLOAT }
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
    ret { key: "z" value: "diff:z:0" }
  }
  function {
    signature {
      name: "sub_twice"
      input_arg { name: "x" type: DT_FLOAT }
      input_arg { name: "y" type: DT_FLOAT }
      output_arg { name: "z" type: DT_FLOAT }
    }
    node_def {
      name: "once"
      op: "Sub"
      input: "x"
      input: "y"
      attr {
        key: "T"
        value { type: DT_FLOAT }
      }
    }
    node_def {
      name: "twice"
      op: "Sub"
      input: "once:z:0"
      input: "y"
      attr {
        key: "T"
        value { type: DT_FLOAT }
      }
    }
    ret { key: "z" value: "twice:z:0" }
  }
)pb";

TensorSpec Scalar() { return {DType::kFloat, PartialShape::Scalar()}; }

SignatureArg Arg(const std::string& key) { return SignatureArg{key, key + ":0", Scalar()}; }

struct SubFunction {
  SubFunction() {
    REQUIRE(google::protobuf::TextFormat::ParseFromString(kSubLib, &proto));
    lib = FunctionLibrary(proto);
    auto prepared =
        PreparedFunction::Prepare(*lib.Find("sub"), lib, std::vector{Scalar(), Scalar()});
    REQUIRE_MESSAGE(prepared.ok(), prepared.status().ToString());
    fn = *prepared;
  }
  tensorflow::FunctionDefLibrary proto;
  FunctionLibrary lib;
  std::shared_ptr<const PreparedFunction> fn;
};

// Inputs "a" and "b" (sorted) feed sub's y and x: a call computes b - a.
Signature::Parts SwappedParts(const SubFunction& sub) {
  Signature::Parts parts;
  parts.name = "swapped";
  parts.inputs = {Arg("a"), Arg("b")};
  parts.outputs = {Arg("z")};
  parts.function = sub.fn;
  parts.input_to_arg = {1, 0};
  parts.output_from_ret = {0};
  return parts;
}

TEST_CASE("Signature::Make: a signature made from its parts runs them and gives them back") {
  SubFunction sub;
  auto sig = Signature::Make(SwappedParts(sub), nullptr);
  REQUIRE_MESSAGE(sig.ok(), sig.status().ToString());
  CHECK(sig->name() == "swapped");
  REQUIRE(sig->inputs().size() == 2);
  CHECK(sig->inputs()[0].key == "a");
  CHECK(&sig->function() == sub.fn.get());
  CHECK(sig->parts().input_to_arg == std::vector<int>{1, 0});
  CHECK(sig->parts().output_from_ret == std::vector<int>{0});
  auto out = sig->Run({{"a", Tensor::Scalar(1.0f)}, {"b", Tensor::Scalar(5.0f)}});
  REQUIRE_MESSAGE(out.ok(), out.status().ToString());
  CHECK(out->at("z").scalar<float>() == doctest::Approx(4.0f));

  // A capture is the argument after the inputs.
  Signature::Parts captured;
  captured.name = "minus_two";
  captured.inputs = {Arg("x")};
  captured.outputs = {Arg("z")};
  captured.function = sub.fn;
  captured.input_to_arg = {0};
  captured.output_from_ret = {0};
  captured.captures = {Tensor::Scalar(2.0f)};
  auto minus_two = Signature::Make(std::move(captured), nullptr);
  REQUIRE_MESSAGE(minus_two.ok(), minus_two.status().ToString());
  std::vector<Tensor> flat;
  REQUIRE(minus_two->RunFlat(std::vector{Tensor::Scalar(7.0f)}, &flat).ok());
  CHECK(flat.at(0).scalar<float>() == doctest::Approx(5.0f));
}

TEST_CASE("Signature::Make refuses parts that do not fit together") {
  SubFunction sub;
  auto refused = [&](auto edit, const std::string& says) {
    Signature::Parts parts = SwappedParts(sub);
    edit(parts);
    auto sig = Signature::Make(std::move(parts), nullptr);
    REQUIRE_FALSE(sig.ok());
    CHECK(sig.status().code() == StatusCode::kInvalidArgument);
    CHECK_MESSAGE(sig.status().message().find(says) != std::string::npos, sig.status().message());
    CHECK(sig.status().message().find("signature 'swapped'") != std::string::npos);
  };
  refused([](Signature::Parts& p) { p.function = nullptr; }, "no function");
  refused([](Signature::Parts& p) { p.input_to_arg = {0}; }, "input_to_arg");
  refused([](Signature::Parts& p) { p.output_from_ret.clear(); }, "output_from_ret");
  refused([](Signature::Parts& p) { p.fed_shapes = {PartialShape::Scalar()}; }, "fed_shapes");
  refused([](Signature::Parts& p) { p.input_to_arg = {2, 0}; }, "input_to_arg 2 is out of range");
  refused([](Signature::Parts& p) { p.output_from_ret = {-1}; }, "out of range");
  // The function takes two arguments: two inputs and a capture are one too many.
  refused([](Signature::Parts& p) { p.captures = {Tensor::Scalar(1.0f)}; }, "takes 2 arguments");
  refused(
      [](Signature::Parts& p) {
        p.outputs.push_back(Arg("w"));
        p.output_from_ret.push_back(0);
      },
      "has 1 outputs");
}

TEST_CASE("RestoredFunction::Make: the first concrete function that fits runs") {
  SubFunction sub;
  RestoredFunction::Parts parts;
  parts.name = "method";
  RestoredFunction::Concrete one_arg;  // x - 10
  one_arg.function_name = "sub";
  one_arg.arg_names = {"x"};
  one_arg.arg_specs = {Scalar()};
  one_arg.function = sub.fn;
  one_arg.captures = {Tensor::Scalar(10.0f)};
  RestoredFunction::Concrete two_args;  // x - y
  two_args.function_name = "sub";
  two_args.arg_names = {"x", "y"};
  two_args.arg_specs = {Scalar(), Scalar()};
  two_args.function = sub.fn;
  parts.concretes = {one_arg, two_args};
  auto fn = RestoredFunction::Make(parts, nullptr);
  REQUIRE_MESSAGE(fn.ok(), fn.status().ToString());
  CHECK(fn->name() == "method");
  CHECK(fn->concrete_functions().size() == 2);
  auto one = fn->Call(std::vector{Tensor::Scalar(15.0f)});
  REQUIRE_MESSAGE(one.ok(), one.status().ToString());
  CHECK(one->at(0).scalar<float>() == doctest::Approx(5.0f));
  auto two = fn->Call(std::vector{Tensor::Scalar(15.0f), Tensor::Scalar(3.0f)});
  REQUIRE_MESSAGE(two.ok(), two.status().ToString());
  CHECK(two->at(0).scalar<float>() == doctest::Approx(12.0f));

  RestoredFunction::Parts bad = parts;
  bad.concretes[1].function = nullptr;
  auto missing = RestoredFunction::Make(bad, nullptr);
  REQUIRE_FALSE(missing.ok());
  CHECK(missing.status().message().find("no function") != std::string::npos);
  bad = parts;
  bad.concretes[0].arg_names.push_back("y");
  CHECK(RestoredFunction::Make(bad, nullptr).status().code() == StatusCode::kInvalidArgument);
  bad = parts;
  bad.concretes[0].captures.clear();  // one argument short of sub's two
  auto short_one = RestoredFunction::Make(bad, nullptr);
  REQUIRE_FALSE(short_one.ok());
  CHECK(short_one.status().message().find("takes 2 arguments") != std::string::npos);
}

TEST_CASE("a prepared function tells the serving plan its requested specs and arena offsets") {
  SubFunction sub;
  // Prepared for specs that leave the dtype to the function's declared types; the difference
  // in the middle is a tensor of the memory plan.
  auto prepared = PreparedFunction::Prepare(
      *sub.lib.Find("sub_twice"), sub.lib,
      std::vector{TensorSpec{DType::kInvalid, PartialShape::Scalar()}, Scalar()});
  REQUIRE_MESSAGE(prepared.ok(), prepared.status().ToString());
  const PreparedFunction& pf = **prepared;
  REQUIRE(pf.requested_specs().size() == 2);
  CHECK(pf.requested_specs()[0].dtype == DType::kInvalid);
  CHECK(pf.arg_specs()[0].dtype == DType::kFloat);
  CHECK(pf.plan_stats().planned_slots > 0);
  CHECK(pf.ArenaOffsets().size() == static_cast<size_t>(pf.plan_stats().planned_slots));
}

}  // namespace
}  // namespace kiln::exec
