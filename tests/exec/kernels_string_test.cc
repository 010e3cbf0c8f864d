// String kernels: StringFormat, PrintV2, Print, StringJoin.
#include <doctest/doctest.h>

#include "exec/kernel_test_util.h"

namespace kiln::exec {
namespace {

using testing::CheckError;
using testing::Make;
using testing::OpRunner;

Tensor Iota(int64_t n) {
  Tensor t(DType::kInt32, Shape{n});
  for (int64_t i = 0; i < n; ++i) t.data<int32_t>()[i] = static_cast<int32_t>(i);
  return t;
}

TEST_CASE("StringFormat: defaults are template %s, placeholder %s, summarize 3") {
  Tensor x = Make<int32_t>({1, 2, 3}, {3});
  auto got = OpRunner("StringFormat").TypeList("T", {DType::kInt32}).Input(x).Run1();
  REQUIRE_MESSAGE(got.ok(), got.status().ToString());
  REQUIRE(got->dtype() == DType::kString);
  REQUIRE(got->rank() == 0);
  CHECK(got->scalar<std::string>() == "[1 2 3]");
  // summarize 3 by default: 10 elements print 3 at each end.
  auto long_vec = OpRunner("StringFormat").TypeList("T", {DType::kInt32}).Input(Iota(10)).Run1();
  REQUIRE(long_vec.ok());
  CHECK(long_vec->scalar<std::string>() == "[0 1 2 ... 7 8 9]");
}

TEST_CASE("StringFormat: template, placeholder and summarize attrs") {
  Tensor a = Iota(10);
  Tensor b = Make<float>({0.5f, -1}, {2, 1});
  auto got = OpRunner("StringFormat")
                 .TypeList("T", {DType::kInt32, DType::kFloat})
                 .String("template", "a={} and b={}!")
                 .String("placeholder", "{}")
                 .Int("summarize", 2)
                 .Input(a)
                 .Input(b)
                 .Run1();
  REQUIRE_MESSAGE(got.ok(), got.status().ToString());
  CHECK(got->scalar<std::string>() ==
        "a=" + a.SummarizeValue(2) + " and b=" + b.SummarizeValue(2) + "!");
  CHECK(got->scalar<std::string>().rfind("a=[0 1 ... 8 9] and b=", 0) == 0);

  auto all = OpRunner("StringFormat")
                 .TypeList("T", {DType::kInt32})
                 .String("template", "<%s>")
                 .Int("summarize", -1)
                 .Input(a)
                 .Run1();
  REQUIRE(all.ok());
  CHECK(all->scalar<std::string>() == "<[0 1 2 3 4 5 6 7 8 9]>");

  auto none = OpRunner("StringFormat").TypeList("T", {}).String("template", "just text").Run1();
  REQUIRE_MESSAGE(none.ok(), none.status().ToString());
  CHECK(none->scalar<std::string>() == "just text");
}

TEST_CASE("StringFormat: placeholder count must match the inputs") {
  OpRunner r("StringFormat", "fmt");
  r.TypeList("T", {DType::kInt32})
      .String("template", "{} {}")
      .String("placeholder", "{}")
      .InputSpec({DType::kInt32, Shape{}});
  CheckError(r.Prepare(), {"node 'fmt'", "2 placeholder", "1 input"});

  OpRunner types("StringFormat");
  types.TypeList("T", {DType::kInt32}).InputSpec({DType::kFloat, Shape{}});
  CheckError(types.Prepare(), {"expected dtype int32", "got float32"});

  OpRunner missing("StringFormat");
  missing.InputSpec({DType::kFloat, Shape{}});
  CheckError(missing.Prepare(), {"missing attr 'T'"});
}

TEST_CASE("PrintV2 writes input and end to the run's sink") {
  OpRunner r("PrintV2", "print");
  r.String("output_stream", "stdout").Input(Tensor::StringScalar("hello"));
  auto outs = r.Run();
  REQUIRE_MESSAGE(outs.ok(), outs.status().ToString());
  CHECK(outs->empty());
  REQUIRE(r.printed().size() == 1);
  CHECK(r.printed()[0].first == "stdout");
  CHECK(r.printed()[0].second == "hello\n");

  OpRunner d("PrintV2");
  d.String("end", "").Input(Tensor::StringScalar("x"));
  REQUIRE(d.Run().ok());
  REQUIRE(d.printed().size() == 1);
  CHECK(d.printed()[0].first == "stderr");
  CHECK(d.printed()[0].second == "x");

  const OpDefinition* def = FindOp("PrintV2");
  REQUIRE(def != nullptr);
  CHECK((def->flags & kOpStateful) != 0);
}

TEST_CASE("Print (TF1's tf.Print) passes its input on and writes the message and data") {
  OpRunner r("Print", "print");
  r.T(DType::kFloat)
      .TypeList("U", {DType::kInt32, DType::kString})
      .String("message", "x is ")
      .Input(Make<float>({1.5F, -2}, Shape{2}))
      .Input(Make<int32_t>({1, 2, 3, 4, 5}, Shape{5}))
      .Input(Tensor::StringScalar("s"));
  auto outs = r.Run();
  REQUIRE_MESSAGE(outs.ok(), outs.status().ToString());
  REQUIRE(outs->size() == 1);
  CHECK((*outs)[0].data<float>()[1] == -2);
  REQUIRE(r.printed().size() == 1);
  CHECK(r.printed()[0].first == "stderr");
  // TF's format: the message, then each data tensor's first `summarize` (3) values in brackets.
  CHECK(r.printed()[0].second == "x is [1 2 3...][s]\n");

  // What TF 2.21 printed for the same data (tf.compat.v1.Print, summarize=5).
  OpRunner tf("Print");
  tf.T(DType::kFloat)
      .TypeList("U", {DType::kBool, DType::kInt64, DType::kFloat, DType::kString, DType::kHalf,
                      DType::kFloat, DType::kInt32})
      .String("message", "m:")
      .Int("summarize", 5)
      .Input(Tensor::Scalar<float>(1))
      .Input(Make<bool>({true, false}, Shape{2}))
      .Input(Make<int64_t>({0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11}, Shape{3, 4}))
      .Input(Make<float>({0.1F, 2e10F, 1 / 3.0F, 4}, Shape{2, 2}))
      .Input(Make<std::string>({"a\nb", "c"}, Shape{2}))
      .Input(Make<Half>({Half{0x4280}}, Shape{}))
      .Input(Tensor(DType::kFloat, Shape{1, 0}))
      .Input(Tensor::Scalar<int32_t>(7));
  REQUIRE(tf.Run().ok());
  REQUIRE(tf.printed().size() == 1);
  CHECK(tf.printed()[0].second ==
        "m:[1 0][[0 1 2 3][4...]...][[0.1 2e+10][0.333333343 4]][a\\nb c][3.25][][7]\n");

  OpRunner quiet("Print");
  quiet.T(DType::kFloat).Int("first_n", 0).Input(Tensor::Scalar<float>(1));
  REQUIRE(quiet.Run().ok());
  CHECK(quiet.printed().empty());
}

TEST_CASE("PrintV2: prepare errors") {
  OpRunner stream("PrintV2", "p");
  stream.String("output_stream", "printer").InputSpec({DType::kString, Shape{}});
  CheckError(stream.Prepare(), {"node 'p'", "attr 'output_stream'", "printer"});
  OpRunner dtype("PrintV2");
  dtype.InputSpec({DType::kInt32, Shape{}});
  CheckError(dtype.Prepare(), {"input 'input'", "expected dtype string", "got int32"});
  OpRunner rank("PrintV2");
  rank.InputSpec({DType::kString, Shape{2}});
  CheckError(rank.Prepare(), {"input 'input'", "expected rank 0", "(2,)"});
}

TEST_CASE("StringJoin joins element-wise, repeating scalars") {
  Tensor a = Make<std::string>({"a", "b", "c", "d"}, {2, 2});
  Tensor b = Make<std::string>({"1", "2", "3", "4"}, {2, 2});
  auto got = OpRunner("StringJoin")
                 .Int("N", 3)
                 .String("separator", "-")
                 .Input(a)
                 .Input(Tensor::StringScalar("x"))
                 .Input(b)
                 .Run1();
  REQUIRE_MESSAGE(got.ok(), got.status().ToString());
  CHECK(TensorsEqual(*got, Make<std::string>({"a-x-1", "b-x-2", "c-x-3", "d-x-4"}, {2, 2})));

  auto scalars = OpRunner("StringJoin")
                     .Int("N", 2)
                     .Input(Tensor::StringScalar("ab"))
                     .Input(Tensor::StringScalar("cd"))
                     .Run1();
  REQUIRE(scalars.ok());
  CHECK(TensorsEqual(*scalars, Tensor::StringScalar("abcd")));
}

TEST_CASE("StringJoin: shape and dtype errors") {
  OpRunner shapes("StringJoin", "join");
  shapes.Int("N", 2).InputSpec({DType::kString, Shape{2}}).InputSpec({DType::kString, Shape{3}});
  CheckError(shapes.Prepare(), {"node 'join'", "same shape", "(2,)", "(3,)"});
  OpRunner dtype("StringJoin");
  dtype.Int("N", 2).InputSpec({DType::kString, Shape{2}}).InputSpec({DType::kInt32, Shape{2}});
  CheckError(dtype.Prepare(), {"inputs:1", "expected dtype string", "got int32"});
  OpRunner count("StringJoin");
  count.Int("N", 3).InputSpec({DType::kString, Shape{2}}).InputSpec({DType::kString, Shape{2}});
  CheckError(count.Prepare(), {"expected 3 inputs", "got 2"});
  auto late =
      OpRunner("StringJoin")
          .Int("N", 2)
          .Input(Make<std::string>({"a", "b"}, {2}), {DType::kString, PartialShape{-1}})
          .Input(Make<std::string>({"a", "b", "c"}, {3}), {DType::kString, PartialShape{-1}})
          .Run1();
  CheckError(late.status(), {"same shape", "(2,)", "(3,)"});
}

}  // namespace
}  // namespace kiln::exec
