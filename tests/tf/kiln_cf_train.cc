// Test-only helper for tests/tf/test_control_flow_gradients.py: exports a module whose traced
// train_step differentiates through a Cond and a ForRange (with a Cond nested in its body),
// so TensorFlow can run the gradient ops kiln emits for them.
//
//   kiln_cf_train DIR
//
// Saves DIR as a SavedModel with one signature, train_step(x: float32 [3], n: int32 scalar)
// -> (loss, dw, db, dx), which also applies plain SGD (lr 0.1) to the variables w [3] and b
// (scalar). The math (mirrored in the test with tf.cond / tf.while_loop):
//   h   = cond(sum(x * w) > 0, tanh(x * w) + b, x * w * b)
//   acc = h; for i in range(n): acc = cond(i % 2 == 0, tanh(acc * w), acc * sigmoid(x) * b) + x
//   loss = sum(acc * acc)
// Exit 1 with the error on stderr.
#include <iostream>
#include <vector>

#include "kiln/trace/trace.h"

namespace t = kiln::trace;
using kiln::DType;
using kiln::PartialShape;
using kiln::Result;
using kiln::Status;
using kiln::Tensor;
using t::Value;
using t::Values;

namespace {

constexpr float kLearningRate = 0.1F;

Tensor Vec3(float a, float b, float c) {
  Tensor x(DType::kFloat, kiln::Shape{3});
  x.flat<float>()[0] = a;
  x.flat<float>()[1] = b;
  x.flat<float>()[2] = c;
  return x;
}

class CfTrainer : public t::Module {
 public:
  CfTrainer()
      : Module("cf_trainer"),
        w(AddVariable("w", Vec3(0.6F, -0.4F, 0.9F))),
        b(AddVariable("b", Tensor::Scalar(0.3F))) {
    train_step =
        &AddMethod("train_step", {{"x", DType::kFloat, PartialShape({3})}, {"n", DType::kInt32}},
                   [this](const Values& a) -> Result<Values> { return Step(a[0], a[1]); });
  }

  Result<Values> Step(const Value& x, const Value& n) {
    t::GradientTape tape({.persistent = true});
    tape.Watch(x);
    KILN_ASSIGN_OR_RETURN(
        Values h, t::Cond(
                      t::Sum(x * w.Read()) > 0.0,
                      [&]() -> Result<Values> { return Values{t::Tanh(x * w.Read()) + b.Read()}; },
                      [&]() -> Result<Values> { return Values{x * w.Read() * b.Read()}; }));
    KILN_ASSIGN_OR_RETURN(
        Values acc,
        t::ForRange(
            t::Scalar<int32_t>(0), n, t::Scalar<int32_t>(1),
            [&](const Value& i, const Values& v) -> Result<Values> {
              KILN_ASSIGN_OR_RETURN(
                  Values next,
                  t::Cond(
                      t::Equal(i % 2, 0.0),
                      [&]() -> Result<Values> { return Values{t::Tanh(v[0] * w.Read())}; },
                      [&]() -> Result<Values> { return Values{v[0] * t::Sigmoid(x) * b.Read()}; }));
              return Values{next[0] + x};
            },
            {h[0]}));
    Value loss = t::Sum(acc[0] * acc[0]);
    KILN_ASSIGN_OR_RETURN(Values g, tape.Gradient(loss, Values{x}));
    KILN_ASSIGN_OR_RETURN(Values gv, tape.Gradient(loss, std::vector<t::Variable>{w, b}));
    if (g[0].empty() || gv[0].empty() || gv[1].empty()) {
      return kiln::Internal("a gradient did not reach its source");
    }
    KILN_RETURN_IF_ERROR(w.AssignAdd(gv[0] * -kLearningRate).status());
    KILN_RETURN_IF_ERROR(b.AssignAdd(gv[1] * -kLearningRate).status());
    return Values{loss, gv[0], gv[1], g[0]};
  }

  t::Variable w;
  t::Variable b;
  t::Function* train_step = nullptr;
};

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::cerr << "usage: kiln_cf_train DIR\n";
    return 2;
  }
  CfTrainer trainer;
  Status s = t::Save(trainer, argv[1], {{"train_step", trainer.train_step}});
  if (!s.ok()) {
    std::cerr << "kiln_cf_train: " << s.ToString() << "\n";
    return 1;
  }
  return 0;
}
