// Op-tester cases of tf.random.Generator's ops (kernels/stateful_random_ops.cc): each case gets
// a fresh state variable [-3, -1, 0x12345678abcdef] (counter, key), and the values of the first
// call are TensorFlow 2.21's for that state (recorded with tf.raw_ops on the CPU). The calls
// move the state on, so only the first single-op call is compared (NonDeterministic); the state
// left behind is checked in tests/exec/kernels_stateful_random_test.cc.
#include <cstdint>

#include "kiln/exec/resources.h"
#include "ops/op_cases.h"
#include "ops/ref_util.h"

namespace kiln::testing {
namespace {

using exec::VariableResource;

const std::vector<int64_t> kState = {-3, -1, 0x12345678abcdef};

// A fresh Generator state variable, as a handle tensor.
Tensor StateHandle() {
  const Tensor value = Make<int64_t>(kState, {3});
  auto var =
      std::make_shared<VariableResource>("rng_state", DType::kInt64, PartialShape(value.shape()));
  REQUIRE(var->Assign(value).ok());
  Tensor h(DType::kResource, Shape());
  h.scalar<std::shared_ptr<ResourceBase>>() = var;
  return h;
}

// OpCaseBuilder(op) with a fresh state, algorithm Philox and the shape (a constant when
// `constant_shape`, so the output's shape is known at prepare time).
OpCaseBuilder Draw(const std::string& op, const std::string& name, DType dtype, int64_t n,
                   bool constant_shape = true) {
  OpCaseBuilder b(op, name);
  b.Type("dtype", dtype).Input(StateHandle()).Input(Tensor::Scalar<int64_t>(1));
  const Tensor shape = Make<int64_t>({n}, {1});
  if (constant_shape) {
    b.ConstInput(shape);
  } else {
    b.Input(shape);
  }
  return b;
}

void AddFloatDraws(std::vector<OpCase>* c) {
  struct Recorded {
    const char* op;
    DType dtype;
    std::vector<double> values;  // TF's
  };
  const Recorded recorded[] = {
      {"StatefulUniform",
       DType::kFloat,
       {0.7639955282211304, 0.33321893215179443, 0.8660199642181396, 0.22505402565002441,
        0.01456451416015625}},
      {"StatefulUniform",
       DType::kDouble,
       {0.11196428785700152, 0.9281597588677966, 0.11651705012345248, 0.6790403769646636,
        0.22161210541285392}},
      {"StatefulUniform",
       DType::kHalf,
       {0.6513671875, 0.7294921875, 0.435546875, 0.642578125, 0.3125}},
      {"StatefulUniform", DType::kBFloat16, {0.2109375, 0.8359375, 0.484375, 0.140625, 0.5}},
      {"StatefulStandardNormalV2",
       DType::kFloat,
       {0.6357082724571228, -0.3664173483848572, 0.5297965407371521, 0.08372717350721359,
        -0.6642183661460876}},
      {"StatefulStandardNormalV2",
       DType::kDouble,
       {-0.9128370863103183, 1.8830504740346559, -1.870808863544262, -0.8941529642472154,
        -0.6977412228951385}},
      {"StatefulStandardNormalV2",
       DType::kHalf,
       {0.6357421875, -0.366455078125, 0.52978515625, 0.083740234375, -0.6640625}},
      {"StatefulStandardNormalV2",
       DType::kBFloat16,
       {0.63671875, -0.3671875, 0.53125, 0.08349609375, -0.6640625}},
      {"StatefulTruncatedNormal",
       DType::kFloat,
       {0.6357082724571228, -0.3664173483848572, 0.5297965407371521, 0.08372717350721359,
        0.09697528183460236, -0.2844018042087555}},
      {"StatefulTruncatedNormal",
       DType::kDouble,
       {-0.9128370863103183, 1.8830504740346559, -0.7707916999240432, -1.5811794910070154,
        0.12430208040783278, -0.9250665589919487}},
      {"StatefulTruncatedNormal",
       DType::kHalf,
       {0.6357421875, -0.366455078125, 0.52978515625, 0.083740234375, 0.09698486328125,
        -0.284423828125}},
      {"StatefulTruncatedNormal",
       DType::kBFloat16,
       {0.63671875, -0.3671875, 0.53125, 0.08349609375, 0.09716796875, -0.28515625}},
  };
  for (const Recorded& r : recorded) {
    const auto n = static_cast<int64_t>(r.values.size());
    const Tensor want = FromDoubles(r.dtype, Shape{n}, r.values);
    for (bool constant_shape : {true, false}) {
      const std::string name = std::string(r.op) + " " + DTypeShortName(r.dtype) +
                               (constant_shape ? "" : ", shape at run time");
      c->push_back(Draw(r.op, name, r.dtype, n, constant_shape)
                       .NonDeterministic()
                       .Reference1([want](const auto&) { return want; })
                       .Build());
    }
  }
}

void AddIntDraws(std::vector<OpCase>* c) {
  const Tensor i32 = Make<int32_t>({8, -3, 7, -3, 1}, {5});
  c->push_back(Draw("StatefulUniformInt", "StatefulUniformInt int32 [-5, 10)", DType::kInt32, 5)
                   .Input(Tensor::Scalar<int32_t>(-5))
                   .Input(Tensor::Scalar<int32_t>(10))
                   .NonDeterministic()
                   .Reference1([i32](const auto&) { return i32; })
                   .Build());
  const Tensor i64 = Make<int64_t>({1012992472408, 630675622323, 356215452853}, {3});
  c->push_back(Draw("StatefulUniformInt", "StatefulUniformInt int64 [-5, 2^40)", DType::kInt64, 3)
                   .Input(Tensor::Scalar<int64_t>(-5))
                   .Input(Tensor::Scalar<int64_t>(int64_t{1} << 40))
                   .NonDeterministic()
                   .Reference1([i64](const auto&) { return i64; })
                   .Build());
  const Tensor full[] = {
      Make<int32_t>({-614348133, 279619307, -680601154}, {3}),
      Make<int64_t>({1200955782575803035, 872799557877946814, -325580429849404096}, {3}),
      Make<uint32_t>({3680619163u, 279619307u, 3614366142u}, {3}),
      Make<uint64_t>({1200955782575803035ull, 872799557877946814ull, 18121163643860147520ull}, {3}),
  };
  for (const Tensor& want : full) {
    c->push_back(Draw("StatefulUniformFullInt",
                      "StatefulUniformFullInt " + DTypeShortName(want.dtype()), want.dtype(), 3)
                     .NonDeterministic()
                     .Reference1([want](const auto&) { return want; })
                     .Build());
  }
}

void AddBinomial(std::vector<OpCase>* c) {
  struct Recorded {
    DType param, out;
    std::vector<double> counts, probs;
    std::vector<double> values;  // TF's, shape (rows, counts.size())
  };
  const Recorded recorded[] = {
      {DType::kFloat, DType::kInt32, {10, 20}, {0.3}, {3, 2, 3, 6, 2, 4, 4, 5, 1, 5}},
      {DType::kDouble,
       DType::kDouble,
       {10, 100, 5000},
       {0.3, 0.95, 0.5},
       {3, 95, 2473, 3, 100, 2524, 2, 95, 2506, 4, 97, 2460}},
  };
  for (const Recorded& r : recorded) {
    const auto cols = static_cast<int64_t>(r.counts.size());
    const auto rows = static_cast<int64_t>(r.values.size()) / cols;
    const Tensor want = FromDoubles(r.out, Shape{rows, cols}, r.values);
    c->push_back(
        OpCaseBuilder(
            "StatefulRandomBinomial",
            "StatefulRandomBinomial " + DTypeShortName(r.param) + " -> " + DTypeShortName(r.out))
            .Type("S", DType::kInt32)
            .Type("T", r.param)
            .Type("dtype", r.out)
            .Input(StateHandle())
            .Input(Tensor::Scalar<int64_t>(1))
            .ConstInput(
                Make<int32_t>({static_cast<int32_t>(rows), static_cast<int32_t>(cols)}, {2}))
            .Input(FromDoubles(r.param, Shape{cols}, r.counts))
            .Input(FromDoubles(r.param, Shape{static_cast<int64_t>(r.probs.size())}, r.probs))
            .NonDeterministic()
            .Reference1([want](const auto&) { return want; })
            .Build());
  }
}

void AddSkips(std::vector<OpCase>* c) {
  // RngReadAndSkip gives the state before the skip.
  const Tensor before = Make<int64_t>(kState, {3});
  c->push_back(OpCaseBuilder("RngReadAndSkip")
                   .Input(StateHandle())
                   .Input(Tensor::Scalar<int32_t>(1))
                   .Input(Tensor::Scalar<uint64_t>(7))
                   .NonDeterministic()
                   .Reference1([before](const auto&) { return before; })
                   .Build());
  c->push_back(OpCaseBuilder("RngSkip")
                   .Input(StateHandle())
                   .Input(Tensor::Scalar<int64_t>(1))
                   .Input(Tensor::Scalar<int64_t>(-2))
                   .NonDeterministic()
                   .Build());
}

}  // namespace

std::vector<OpCase> RngStateCases() {
  std::vector<OpCase> c;
  AddFloatDraws(&c);
  AddIntDraws(&c);
  AddBinomial(&c);
  AddSkips(&c);
  return c;
}

}  // namespace kiln::testing
