// Case / StatelessCase at prepare time: every branch is prepared, and branches that disagree
// in their outputs, or names that are not in the library, fail naming the branch. Running the
// branches is covered by the op tester (tests/ops/cases_control_flow.cc).
#include <doctest/doctest.h>
#include <google/protobuf/text_format.h>

#include <string>

#include "exec/kernel_test_util.h"
#include "kiln/exec/executor.h"

namespace kiln::exec {
namespace {

using testing::CheckError;

// f(x: float) -> float, g(x: float) -> (float, float), h(x: float) -> int32.
const char* kLib = R"pb(
  function {
    signature {
      name: "f"
      input_arg { name: "x" type: DT_FLOAT }
      output_arg { name: "y" type: DT_FLOAT }
    }
    ret { key: "y" value: "x" }
  }
  function {
    signature {
      name: "g"
      input_arg { name: "x" type: DT_FLOAT }
      output_arg { name: "y" type: DT_FLOAT }
      output_arg { name: "z" type: DT_FLOAT }
    }
    ret { key: "y" value: "x" }
    ret { key: "z" value: "x" }
  }
  function {
    signature {
      name: "h"
      input_arg { name: "x" type: DT_FLOAT }
      output_arg { name: "y" type: DT_INT32 }
    }
    node_def {
      name: "c"
      op: "Cast"
      input: "x"
      attr {
        key: "SrcT"
        value { type: DT_FLOAT }
      }
      attr {
        key: "DstT"
        value { type: DT_INT32 }
      }
    }
    ret { key: "y" value: "c:y:0" }
  }
)pb";

Status PrepareCase(const std::vector<std::string>& branches) {
  tensorflow::FunctionDefLibrary proto;
  REQUIRE(google::protobuf::TextFormat::ParseFromString(kLib, &proto));
  FunctionLibrary lib(proto);
  ProtoAttrMap attrs;
  for (const std::string& b : branches) attrs["branches"].mutable_list()->add_func()->set_name(b);
  attrs["Tin"].mutable_list()->add_type(tensorflow::DT_FLOAT);
  const std::vector<TensorSpec> specs = {TensorSpec{DType::kInt32, PartialShape::Scalar()},
                                         TensorSpec{DType::kFloat, PartialShape{2}}};
  const std::vector<const Tensor*> values(2, nullptr);
  SingleOpOptions options;
  options.library = &lib;
  return SingleOp::Prepare("Case", "case", attrs, specs, values, options).status();
}

TEST_CASE("Case: branches are checked when the node is prepared") {
  CHECK(PrepareCase({"f", "f"}).ok());
  CheckError(PrepareCase({}), {"node 'case' (Case)", "attr 'branches'", "at least one"});
  CheckError(PrepareCase({"f", "nope"}), {"branches[1]", "'nope'", "not in the function library"});
  CheckError(PrepareCase({"f", "g"}), {"branch 0 'f' has 1 outputs, branch 1 'g' has 2"});
  CheckError(PrepareCase({"f", "h"}), {"output 0", "branch 1 gives int32"});
}

}  // namespace
}  // namespace kiln::exec
