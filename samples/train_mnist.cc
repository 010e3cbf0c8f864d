// The seed notes' central example (seeds/003), in C++: a CNN (Conv2D 32x5x5 relu -> MaxPool 2
// -> Conv2D 64x5x5 relu -> MaxPool 2 -> Reshape -> Dense 1024 relu -> Dense 10 -> softmax)
// trained with a GradientTape and Adam (lr 0.001, batch 50) inside a traced train_one_step that
// returns the loss and the batch's accuracy, then tested on held-out digits and exported with
// two signatures, serving_default (predict) and train_one_step, in one bundle that TensorFlow
// loads and can go on training.
//
//   bash scripts/fetch-mnist.sh                       # 5 000 MNIST digits as .npy
//   build/samples/train_mnist out/data/mnist-5k out/mnist_cnn [--steps 1000] [--batch 50]
//       [--seed 0] [--threads N] [--logdir DIR] [--print-loss] [--quiet]
//
// Progress is Keras's progress line (modules::Progbar) on stdout: redrawn on a terminal, a
// line a second otherwise. --print-loss prints the seed's `loss:  2.30983639` from the graph
// every step instead (a PrintV2 in train_one_step, as the seed's tf.print); --quiet prints
// neither. --logdir writes TensorBoard events (loss, accuracy, learning_rate per step and the
// train step's graph): tensorboard --logdir DIR.
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "kiln/core/npy.h"
#include "kiln/exec/executor.h"
#include "kiln/exec/thread_pool.h"
#include "kiln/modules/conv.h"
#include "kiln/modules/core_layers.h"
#include "kiln/modules/dense.h"
#include "kiln/modules/losses.h"
#include "kiln/modules/optimizers.h"
#include "kiln/modules/pooling.h"
#include "kiln/modules/progress.h"
#include "kiln/modules/sequential.h"
#include "kiln/modules/summary_writer.h"
#include "kiln/trace/trace.h"

namespace {

using kiln::DType;
using kiln::PartialShape;
using kiln::Result;
using kiln::Shape;
using kiln::Status;
using kiln::Tensor;
using kiln::trace::Value;
using kiln::trace::Values;
namespace m = kiln::modules;

struct Args {
  std::filesystem::path data;
  std::filesystem::path out;
  int steps = 1000;
  int batch = 50;
  uint32_t seed = 0;
  int threads = 0;  // 0: all cores, as the tools' --threads
  std::filesystem::path logdir;
  bool print_loss = false;
  bool quiet = false;
};

// The seed's CNN and its Adam, with predict and train_one_step as traced methods.
class MnistTrainer : public kiln::trace::Module {
 public:
  explicit MnistTrainer(uint32_t seed)
      : Module("mnist_trainer"),
        model(EmplaceModule<m::Sequential>("model", "cnn")),
        optimizer(EmplaceModule<m::Adam>("optimizer",
                                         m::AdamOptions{.base = {.learning_rate = 0.001F}})) {
    m::ConvOptions conv1{.filters = 32,
                         .kernel_size = {5},
                         .padding = m::Padding::kSame,
                         .activation = m::Activation::kRelu,
                         .input_shape = {28, 28, 1},
                         .seed = seed};
    model.Add<m::Conv2D>(conv1);
    model.Add<m::MaxPooling2D>(2);
    m::ConvOptions conv2{.filters = 64,
                         .kernel_size = {5},
                         .padding = m::Padding::kSame,
                         .activation = m::Activation::kRelu,
                         .seed = seed + 1};
    model.Add<m::Conv2D>(conv2);
    model.Add<m::MaxPooling2D>(2);
    model.Add<m::Reshape>(std::vector<int64_t>{7 * 7 * 64});
    model.Add<m::Dense>(
        m::DenseOptions{.units = 1024, .activation = m::Activation::kRelu, .seed = seed + 2});
    model.Add<m::Dense>(m::DenseOptions{.units = 10, .seed = seed + 3});
    predict = &AddMethod("predict", {{"x", DType::kFloat, PartialShape({-1, 28, 28, 1})}},
                         [this](const Values& a) -> Result<Values> {
                           return Values{kiln::trace::Softmax(model(a[0]))};
                         });
    train_one_step =
        &AddMethod("train_one_step",
                   {{"x", DType::kFloat, PartialShape({-1, 28, 28, 1})},
                    {"y", DType::kInt32, PartialShape({-1})}},
                   [this](const Values& a) -> Result<Values> {
                     std::vector<kiln::trace::Variable> vars = model.trainable_variables();
                     kiln::trace::GradientTape tape;
                     Value probs = kiln::trace::Softmax(model(a[0], /*training=*/true));
                     Value loss = m::SparseCategoricalCrossentropy(a[1], probs);
                     KILN_RETURN_IF_ERROR(loss.status());
                     if (print_loss) {
                       // tf.print("loss: ", loss): the text is part of the format, as TensorFlow
                       // does it.
                       Value text = kiln::trace::StringFormat({loss}, "loss:  {}");
                       KILN_RETURN_IF_ERROR(kiln::trace::OpBuilder("PrintV2")
                                                .Input(text)
                                                .Attr("output_stream", "stdout")
                                                .BuildNoOutput());
                     }
                     KILN_ASSIGN_OR_RETURN(Values grads, tape.Gradient(loss, vars));
                     KILN_RETURN_IF_ERROR(optimizer.ApplyGradients(grads, vars));
                     return Values{loss, Accuracy(probs, a[1])};
                   });
  }

  // Keras's sparse_categorical_accuracy on the batch: mean(argmax(probs) == labels).
  static Value Accuracy(const Value& probs, const Value& labels) {
    Value predicted = kiln::trace::OpBuilder("ArgMax")
                          .Input(probs)
                          .Input(kiln::trace::Constant(Tensor::Scalar<int32_t>(1)))
                          .Attr("T", DType::kFloat)
                          .Attr("Tidx", DType::kInt32)
                          .Attr("output_type", DType::kInt32)
                          .BuildOne();
    return kiln::trace::Mean(
        kiln::trace::Cast(kiln::trace::Equal(predicted, labels), DType::kFloat));
  }

  m::Sequential& model;
  m::Adam& optimizer;
  kiln::trace::Function* predict = nullptr;
  kiln::trace::Function* train_one_step = nullptr;
  bool print_loss = false;
};

// Rows `idx` of a [n, ...] tensor.
Tensor Rows(const Tensor& t, const std::vector<int64_t>& idx) {
  std::vector<int64_t> dims = t.shape().ToVector();
  const int64_t row = t.NumElements() / dims[0];
  dims[0] = static_cast<int64_t>(idx.size());
  Tensor out(t.dtype(), *Shape::FromDims(dims));
  const size_t bytes = static_cast<size_t>(row) * kiln::DTypeSize(t.dtype());
  const auto* src = static_cast<const char*>(t.raw_data());
  auto* dst = static_cast<char*>(out.raw_data());
  for (size_t i = 0; i < idx.size(); ++i) std::memcpy(dst + i * bytes, src + idx[i] * bytes, bytes);
  return out;
}

// TensorBoard: the step's scalars (Keras's TensorBoard callback logs per batch from step 1),
// and the traced train step's graph once, with the first step.
Status WriteStepEvents(m::SummaryWriter& events, MnistTrainer& trainer, int step, float loss,
                       float accuracy) {
  if (step == 1) {
    KILN_ASSIGN_OR_RETURN(const kiln::trace::ConcreteFunction* traced,
                          trainer.train_one_step->GetConcreteFunction());
    KILN_RETURN_IF_ERROR(events.Graph(*traced));
  }
  KILN_ASSIGN_OR_RETURN(Tensor lr, trainer.optimizer.learning_rate().value());
  KILN_RETURN_IF_ERROR(events.Scalar("loss", loss, step));
  KILN_RETURN_IF_ERROR(events.Scalar("accuracy", accuracy, step));
  return events.Scalar("learning_rate", lr.flat<float>()[0], step);
}

Status Run(const Args& args) {
  KILN_ASSIGN_OR_RETURN(Tensor train_x, kiln::ReadNpy(args.data / "train_x.npy"));
  KILN_ASSIGN_OR_RETURN(Tensor train_y, kiln::ReadNpy(args.data / "train_y.npy"));
  KILN_ASSIGN_OR_RETURN(Tensor test_x, kiln::ReadNpy(args.data / "test_x.npy"));
  KILN_ASSIGN_OR_RETURN(Tensor test_y, kiln::ReadNpy(args.data / "test_y.npy"));
  const int64_t n = train_x.dim(0);

  MnistTrainer trainer(args.seed);
  trainer.print_loss = args.print_loss;
  KILN_RETURN_IF_ERROR(trainer.status());
  std::unique_ptr<m::SummaryWriter> events;
  if (!args.logdir.empty()) {
    KILN_ASSIGN_OR_RETURN(events, m::SummaryWriter::Create(args.logdir));
  }
  const kiln::exec::ThreadPool pool(args.threads);
  kiln::exec::RunOptions run;
  run.threads = &pool;
  std::optional<m::Progbar> progress;
  if (!args.quiet && !args.print_loss) progress.emplace(args.steps);
  // As the seed's get_batch: batch_size random training rows per step.
  std::mt19937 gen(args.seed);
  std::uniform_int_distribution<int64_t> pick(0, n - 1);
  const auto start = std::chrono::steady_clock::now();
  float loss = 0;
  for (int step = 1; step <= args.steps; ++step) {
    std::vector<int64_t> idx(args.batch);
    for (int64_t& i : idx) i = pick(gen);
    const kiln::trace::Args batch{Rows(train_x, idx), Rows(train_y, idx)};
    KILN_ASSIGN_OR_RETURN(std::vector<Tensor> out, trainer.train_one_step->Call(batch, run));
    loss = out[0].flat<float>()[0];
    const float accuracy = out[1].flat<float>()[0];
    if (progress) progress->Update(step, {{"loss", loss}, {"accuracy", accuracy}});
    if (events) KILN_RETURN_IF_ERROR(WriteStepEvents(*events, trainer, step, loss, accuracy));
  }
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::printf("trained %d steps of batch %d in %.1f s (%.1f ms/step), last loss %.4f\n", args.steps,
              args.batch, seconds, 1000 * seconds / std::max(1, args.steps), loss);

  // Accuracy on the held-out digits.
  int64_t correct = 0;
  const int64_t m_test = test_x.dim(0);
  for (int64_t begin = 0; begin < m_test; begin += 250) {
    std::vector<int64_t> idx;
    for (int64_t i = begin; i < std::min(begin + 250, m_test); ++i) idx.push_back(i);
    const kiln::trace::Args batch{Rows(test_x, idx)};
    KILN_ASSIGN_OR_RETURN(std::vector<Tensor> out, trainer.predict->Call(batch, run));
    const auto probs = out[0].flat<float>();
    for (size_t r = 0; r < idx.size(); ++r) {
      int best = 0;
      for (int c = 1; c < 10; ++c) {
        if (probs[r * 10 + c] > probs[r * 10 + best]) best = c;
      }
      correct += best == test_y.flat<int32_t>()[idx[r]];
    }
  }
  std::printf("test accuracy: %.4f (%lld of %lld held-out digits)\n",
              static_cast<double>(correct) / static_cast<double>(m_test),
              static_cast<long long>(correct), static_cast<long long>(m_test));

  KILN_RETURN_IF_ERROR(kiln::trace::Save(
      trainer, args.out,
      {{"serving_default", trainer.predict}, {"train_one_step", trainer.train_one_step}}));
  std::printf("saved %s (signatures serving_default, train_one_step)\n", args.out.c_str());
  return kiln::OkStatus();
}

}  // namespace

int main(int argc, char** argv) {
  // As the tools: libgomp's threads sleep soon after a step instead of spinning (may re-exec).
  kiln::exec::BoundOpenMpSpinning(argv);
  Args args;
  std::vector<std::string> pos;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto next = [&]() -> std::string {
      if (i + 1 >= argc) {
        std::fprintf(stderr, "train_mnist: %s needs a value\n", a.c_str());
        std::exit(2);
      }
      return argv[++i];
    };
    if (a == "--steps") {
      args.steps = std::atoi(next().c_str());
    } else if (a == "--batch") {
      args.batch = std::atoi(next().c_str());
    } else if (a == "--seed") {
      args.seed = static_cast<uint32_t>(std::atoi(next().c_str()));
    } else if (a == "--threads") {
      args.threads = std::atoi(next().c_str());
    } else if (a == "--logdir") {
      args.logdir = next();
    } else if (a == "--print-loss") {
      args.print_loss = true;
    } else if (a == "--quiet") {
      args.quiet = true;
    } else {
      pos.push_back(a);
    }
  }
  if (pos.size() != 2 || args.steps < 0 || args.batch < 1 || args.threads < 0) {
    std::fprintf(
        stderr,
        "usage: train_mnist DATA_DIR OUT_BUNDLE [--steps N] [--batch B] [--seed S] "
        "[--threads N] [--logdir DIR] [--print-loss] [--quiet]\n"
        "  DATA_DIR holds train_x/train_y/test_x/test_y.npy (bash scripts/fetch-mnist.sh)\n"
        "  --threads: intra-op threads (0: all cores); --logdir: TensorBoard events;\n"
        "  --print-loss: the graph prints the loss every step (the seed's tf.print)\n"
        "  instead of the progress line; --quiet: neither\n");
    return 2;
  }
  args.data = pos[0];
  args.out = pos[1];
  Status s = Run(args);
  if (!s.ok()) {
    std::fprintf(stderr, "train_mnist: %s\n", s.ToString().c_str());
    return 1;
  }
  return 0;
}
