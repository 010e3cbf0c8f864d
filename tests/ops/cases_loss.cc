// Op-tester cases of the softmax cross-entropy losses: the reference computes each row's
// softmax and -sum(labels * log(softmax)) directly in double.
#include <cmath>

#include "ops/op_cases.h"

namespace kiln::testing {
namespace {

Tensor AsDouble(const Tensor& t) {
  return RefUnaryDouble(
      t, [](double v) { return v; }, DType::kDouble);
}

// Loss and backprop of logits [batch, classes] against dense labels of the same shape.
std::vector<Tensor> RefXent(const Tensor& logits, const Tensor& labels, DType t) {
  const int64_t batch = logits.dim(0), classes = logits.dim(1);
  Tensor loss(DType::kDouble, Shape{batch}), backprop(DType::kDouble, logits.shape());
  for (int64_t r = 0; r < batch; ++r) {
    const double* x = logits.data<double>() + r * classes;
    const double* y = labels.data<double>() + r * classes;
    double norm = 0;
    for (int64_t j = 0; j < classes; ++j) norm += std::exp(x[j]);
    double l = 0;
    for (int64_t j = 0; j < classes; ++j) {
      const double p = std::exp(x[j]) / norm;
      l -= y[j] * std::log(p);
      backprop.data<double>()[r * classes + j] = p - y[j];
    }
    loss.data<double>()[r] = l;
  }
  auto back = [t](const Tensor& d) {
    return RefUnaryDouble(
        d, [](double v) { return v; }, t);
  };
  return {back(loss), back(backprop)};
}

// `t` broadcast to [batch, classes].
Tensor Broadcast(const Tensor& t, const Shape& s) {
  Tensor out(DType::kDouble, s);
  for (int64_t e = 0; e < s.num_elements(); ++e)
    out.data<double>()[e] = t.data<double>()[BroadcastIndex(Unravel(e, s), t.shape())];
  return out;
}

}  // namespace

std::vector<OpCase> LossCases() {
  std::vector<OpCase> c;
  uint32_t seed = 1;
  struct Shapes {
    Shape features, labels;
  };
  for (const Shapes& s : std::vector<Shapes>{{Shape{4, 5}, Shape{4, 5}},
                                             {Shape{3, 6}, Shape{1, 6}},
                                             {Shape{1, 7}, Shape{5, 7}},
                                             {Shape{200, 300}, Shape{200, 300}},
                                             {Shape{0, 3}, Shape{0, 3}}}) {
    for (DType t : {DType::kFloat, DType::kDouble, DType::kHalf}) {
      if (s.features.num_elements() > 1000 && t != DType::kFloat) continue;
      // Labels: a distribution per row (non-negative, summing to 1).
      Tensor raw = RandomOf(DType::kDouble, s.labels, seed++, 0.05, 1);
      Tensor labels(DType::kDouble, s.labels);
      const int64_t classes = s.labels.dim(1);
      for (int64_t r = 0; r < s.labels.dim(0); ++r) {
        double sum = 0;
        for (int64_t j = 0; j < classes; ++j) sum += raw.data<double>()[r * classes + j];
        for (int64_t j = 0; j < classes; ++j)
          labels.data<double>()[r * classes + j] = raw.data<double>()[r * classes + j] / sum;
      }
      c.push_back(OpCaseBuilder("SoftmaxCrossEntropyWithLogits")
                      .T(t)
                      .Input(RandomOf(t, s.features, seed++, -4, 4))
                      .Input(RefUnaryDouble(
                          labels, [](double v) { return v; }, t))
                      .Reference([t](const std::vector<Tensor>& in) {
                        const Shape out{std::max(in[0].dim(0), in[1].dim(0)), in[0].dim(1)};
                        return RefXent(Broadcast(AsDouble(in[0]), out),
                                       Broadcast(AsDouble(in[1]), out), t);
                      })
                      .Tolerance(t == DType::kDouble ? 1e-12 : 1e-5)
                      .Build());
    }
  }
  // Sparse labels: class ids, int32 or int64.
  for (const Shape& s : {Shape{4, 5}, Shape{1, 1}, Shape{300, 200}, Shape{0, 4}}) {
    for (DType t : {DType::kFloat, DType::kDouble, DType::kBFloat16}) {
      if (s.num_elements() > 1000 && t != DType::kFloat) continue;
      for (DType index : {DType::kInt64, DType::kInt32}) {
        OpCaseBuilder b("SparseSoftmaxCrossEntropyWithLogits");
        if (index != DType::kInt64) b.Type("Tlabels", index);
        const uint32_t s0 = seed++, s1 = seed++;
        c.push_back(b.T(t)
                        .Input(RandomOf(t, s, s0, -4, 4))
                        .Input(RandomOf(index, Shape{s.dim(0)}, s1, 0, s.dim(1) - 1))
                        .Reference([t](const std::vector<Tensor>& in) {
                          Tensor onehot(DType::kDouble, in[0].shape());
                          const Tensor ids = AsDouble(in[1]);
                          for (int64_t r = 0; r < in[0].dim(0); ++r)
                            onehot.data<double>()[r * in[0].dim(1) +
                                                  static_cast<int64_t>(ids.data<double>()[r])] = 1;
                          return RefXent(AsDouble(in[0]), onehot, t);
                        })
                        .Tolerance(t == DType::kDouble ? 1e-12 : 1e-5)
                        .Build());
      }
    }
  }
  // L2Loss: sum(t^2) / 2, a scalar.
  for (DType t : {DType::kFloat, DType::kDouble, DType::kHalf, DType::kBFloat16}) {
    for (const Shape& s : {Shape{}, Shape{0}, Shape{4, 9}}) {
      c.push_back(OpCaseBuilder("L2Loss", "L2Loss " + DTypeShortName(t) + " " + s.ToString())
                      .T(t)
                      .Input(RandomOf(t, s, 61))
                      .Reference1([](const std::vector<Tensor>& in) {
                        const Tensor x = AsDouble(in[0]);
                        double sum = 0;
                        for (int64_t i = 0; i < x.NumElements(); ++i)
                          sum += x.data<double>()[i] * x.data<double>()[i];
                        return RefUnaryDouble(
                            Tensor::Scalar(sum / 2), [](double v) { return v; }, in[0].dtype());
                      })
                      .Tolerance(t == DType::kDouble ? 1e-12 : 1e-5)
                      .Build());
    }
  }
  return c;
}

}  // namespace kiln::testing
