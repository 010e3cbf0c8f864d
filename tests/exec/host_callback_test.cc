// EagerPyFunc: runs a host callback registered in this process; the registration ends with its
// last handle.
#include "kiln/exec/host_callback.h"

#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "exec/kernel_test_util.h"

namespace kiln::exec {
namespace {

TEST_CASE("EagerPyFunc calls the registered callback on every run with the inputs") {
  int calls = 0;
  auto entry = RegisterHostCallback("double_it",
                                    [&calls](std::span<const Tensor> in, std::vector<Tensor>* out) {
                                      ++calls;
                                      out->push_back(Tensor::Scalar(in[0].scalar<float>() * 2.0f));
                                      return OkStatus();
                                    });
  CHECK(entry->token.rfind("kiln_host_callback_", 0) == 0);
  CHECK(FindHostCallback(entry->token) == entry);
  kiln::testing::OpRunner op("EagerPyFunc");
  op.String("token", entry->token)
      .TypeList("Tin", {DType::kFloat})
      .TypeList("Tout", {DType::kFloat})
      .Input(Tensor::Scalar(3.0f));
  REQUIRE(op.Prepare().ok());
  REQUIRE(op.output_specs().size() == 1);
  CHECK(op.output_specs()[0].dtype == DType::kFloat);
  auto r = op.Run1();
  REQUIRE(r.ok());
  CHECK(r->scalar<float>() == 6.0f);
  REQUIRE(op.Run1().ok());
  CHECK(calls == 2);
  CHECK((FindOp("EagerPyFunc")->flags & kOpStateful) != 0);
}

TEST_CASE("EagerPyFunc errors: unknown token, wrong output count or dtype, callback failure") {
  kiln::testing::OpRunner unknown("EagerPyFunc");
  unknown.String("token", "kiln_host_callback_nope").TypeList("Tin", {}).TypeList("Tout", {});
  Status s = unknown.Prepare();
  REQUIRE_FALSE(s.ok());
  CHECK(s.message().find("is not registered in this process") != std::string::npos);

  std::string token;
  {
    auto entry = RegisterHostCallback("wrong", [](std::span<const Tensor>, std::vector<Tensor>* o) {
      o->push_back(Tensor::Scalar(int32_t{1}));
      return OkStatus();
    });
    token = entry->token;
    kiln::testing::OpRunner op("EagerPyFunc");
    op.String("token", token).TypeList("Tin", {}).TypeList("Tout", {DType::kFloat});
    REQUIRE(op.Prepare().ok());
    auto r = op.Run();
    REQUIRE_FALSE(r.ok());
    CHECK(r.status().message().find("host callback 'wrong' output 0: expected dtype float32") !=
          std::string::npos);
  }
  CHECK(FindHostCallback(token) == nullptr);  // the last handle went

  auto failing = RegisterHostCallback("boom", [](std::span<const Tensor>, std::vector<Tensor>*) {
    return InvalidArgument("boom");
  });
  kiln::testing::OpRunner op("EagerPyFunc");
  op.String("token", failing->token).TypeList("Tin", {}).TypeList("Tout", {});
  REQUIRE(op.Prepare().ok());
  auto r = op.Run();
  REQUIRE_FALSE(r.ok());
  CHECK(r.status().message().find("host callback 'boom' failed: boom") != std::string::npos);
}

}  // namespace
}  // namespace kiln::exec
