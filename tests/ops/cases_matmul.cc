// Op-tester cases of the matrix products: MatMul (transposes, dtypes, shapes that reach the
// oneDNN and the Eigen paths), _FusedMatMul (bias, residual add, each activation) and the
// batched forms with broadcasting batch dims.
#include <cmath>
#include <limits>

#include "ops/op_cases.h"

namespace kiln::testing {
namespace {

// C[b, i, j] = sum_k A[b, i, k] * B[b, k, j], in double, over broadcast batch dims.
Tensor RefProduct(const Tensor& a, const Tensor& b, bool adj_a, bool adj_b, DType out_dtype) {
  const int ra = a.rank(), rb = b.rank();
  const int64_t m = a.dim(ra - (adj_a ? 1 : 2)), k = a.dim(ra - (adj_a ? 2 : 1));
  const int64_t n = b.dim(rb - (adj_b ? 2 : 1));
  Shape a_batch, b_batch;
  for (int i = 0; i < ra - 2; ++i) a_batch.AddDim(a.dim(i));
  for (int i = 0; i < rb - 2; ++i) b_batch.AddDim(b.dim(i));
  const Shape batch = RefBroadcastShape(a_batch, b_batch);
  Shape out_shape = batch;
  out_shape.AddDim(m);
  out_shape.AddDim(n);
  Tensor a64 = RefUnaryDouble(
      a, [](double x) { return x; }, DType::kDouble);
  Tensor b64 = RefUnaryDouble(
      b, [](double x) { return x; }, DType::kDouble);
  Tensor out(DType::kDouble, out_shape);
  const int64_t a_mat = a.dim(ra - 2) * a.dim(ra - 1), b_mat = b.dim(rb - 2) * b.dim(rb - 1);
  for (int64_t bi = 0; bi < batch.num_elements(); ++bi) {
    const std::vector<int64_t> idx = Unravel(bi, batch);
    const int64_t ao = (a_batch.rank() ? BroadcastIndex(idx, a_batch) : 0) * a_mat;
    const int64_t bo = (b_batch.rank() ? BroadcastIndex(idx, b_batch) : 0) * b_mat;
    for (int64_t i = 0; i < m; ++i) {
      for (int64_t j = 0; j < n; ++j) {
        double sum = 0;
        for (int64_t p = 0; p < k; ++p) {
          const double x = a64.data<double>()[ao + (adj_a ? p * m + i : i * k + p)];
          const double y = b64.data<double>()[bo + (adj_b ? j * k + p : p * n + j)];
          sum += x * y;
        }
        out.data<double>()[(bi * m + i) * n + j] = sum;
      }
    }
  }
  return RefUnaryDouble(
      out, [](double x) { return x; }, out_dtype);
}

double Activate(const std::string& act, double x) {
  if (act == "Relu") return std::max(x, 0.0);
  if (act == "Relu6") return std::clamp(x, 0.0, 6.0);
  if (act == "Elu") return x < 0 ? std::exp(x) - 1 : x;
  if (act == "LeakyRelu") return x < 0 ? 0.2 * x : x;
  if (act == "Tanh") return std::tanh(x);
  if (act == "Sigmoid") return 1 / (1 + std::exp(-x));
  if (act == "GeluExact") return 0.5 * x * (1 + std::erf(x / std::sqrt(2.0)));
  if (act == "GeluApproximate")
    return 0.5 * x * (1 + std::tanh(std::sqrt(2 / M_PI) * (x + 0.044715 * x * x * x)));
  return x;
}

}  // namespace

std::vector<OpCase> MatMulCases() {
  std::vector<OpCase> c;
  uint32_t seed = 1;
  // MatMul: every transpose combination, sizes from 1x1 to ones the library blocks.
  for (auto [m, k, n] : std::vector<std::array<int64_t, 3>>{{1, 1, 1},
                                                            {2, 3, 4},
                                                            {1, 784, 33},
                                                            {1, 50, 300},
                                                            {7, 1, 5},
                                                            {33, 65, 17},
                                                            {3, 0, 4},
                                                            {0, 3, 2}}) {
    for (bool ta : {false, true}) {
      for (bool tb : {false, true}) {
        for (DType t : {DType::kFloat, DType::kDouble, DType::kInt32}) {
          if (t != DType::kFloat && (m > 8 || k > 8)) continue;
          const bool ta_ = ta, tb_ = tb;
          c.push_back(OpCaseBuilder("MatMul")
                          .T(t)
                          .Bool("transpose_a", ta)
                          .Bool("transpose_b", tb)
                          .Input(RandomOf(t, ta ? Shape{k, m} : Shape{m, k}, NextSeed(seed)))
                          .Input(RandomOf(t, tb ? Shape{n, k} : Shape{k, n}, NextSeed(seed)))
                          .Reference1([ta_, tb_, t](const std::vector<Tensor>& in) {
                            return RefProduct(in[0], in[1], ta_, tb_, t);
                          })
                          // Float sums of k terms round differently in another order.
                          .Tolerance(2e-6 * static_cast<double>(std::max<int64_t>(k, 8)))
                          .Build());
        }
      }
    }
  }
  // Half and bfloat16 products accumulate in float32 and round once, as TF's CPU MatMul does: a
  // sum of 512 positive terms (~128) rounded at every step misses it by several ulps.
  for (DType t : {DType::kHalf, DType::kBFloat16}) {
    for (bool tb : {false, true}) {
      c.push_back(OpCaseBuilder("MatMul", std::string("MatMul ") + DTypeShortName(t) +
                                              " accumulates in float32" + (tb ? " (b^T)" : ""))
                      .T(t)
                      .Bool("transpose_b", tb)
                      .Input(RandomOf(t, Shape{3, 512}, NextSeed(seed), 0, 1))
                      .Input(RandomOf(t, tb ? Shape{5, 512} : Shape{512, 5}, NextSeed(seed), 0, 1))
                      .Reference1([tb, t](const std::vector<Tensor>& in) {
                        return RefProduct(in[0], in[1], false, tb, t);
                      })
                      .Build());
    }
  }
  // A constant right-hand side (the weights of a layer).
  c.push_back(OpCaseBuilder("MatMul", "MatMul with constant weights")
                  .T(DType::kFloat)
                  .Input(RandomOf(DType::kFloat, Shape{5, 64}, 3))
                  .ConstInput(RandomOf(DType::kFloat, Shape{64, 48}, 4))
                  .Reference1([](const std::vector<Tensor>& in) {
                    return RefProduct(in[0], in[1], false, false, DType::kFloat);
                  })
                  .Tolerance(1e-5)
                  .Build());
  // Constant weights that products of several rows read packed into oneDNN's layout: rows a
  // multiple of 512 bytes (packed from their padded copy), transposed, and a batch of rows
  // against one matrix (BatchMatMulV2 broadcasting the weights).
  for (const bool tb : {false, true}) {
    c.push_back(OpCaseBuilder("MatMul", std::string("MatMul with packed constant weights") +
                                            (tb ? " transposed" : ""))
                    .T(DType::kFloat)
                    .Bool("transpose_b", tb)
                    .Input(RandomOf(DType::kFloat, Shape{7, 96}, 21, -1, 1))
                    .ConstInput(RandomOf(DType::kFloat, tb ? Shape{256, 96} : Shape{96, 256}, 22))
                    .Reference1([tb](const std::vector<Tensor>& in) {
                      return RefProduct(in[0], in[1], false, tb, DType::kFloat);
                    })
                    .Tolerance(1e-5)
                    .Build());
  }
  c.push_back(OpCaseBuilder("BatchMatMulV2", "BatchMatMulV2 rows x packed constant weights")
                  .T(DType::kFloat)
                  .Input(RandomOf(DType::kFloat, Shape{2, 5, 64}, 23, -1, 1))
                  .ConstInput(RandomOf(DType::kFloat, Shape{64, 48}, 24))
                  .Reference1([](const std::vector<Tensor>& in) {
                    return RefProduct(in[0], in[1], false, false, DType::kFloat);
                  })
                  .Tolerance(1e-5)
                  .Build());
  // _FusedMatMul: BiasAdd, then each activation; BiasAdd + Add (+ Relu). One row (a Dense
  // layer at batch 1) takes the vector-loop path, 6 rows oneDNN's; 150 columns cover a whole
  // column block and a tail.
  for (const int64_t rows : {6, 1}) {
    for (const std::string act : {"", "Relu", "Relu6", "Elu", "LeakyRelu", "Tanh", "Sigmoid",
                                  "GeluExact", "GeluApproximate"}) {
      std::vector<std::string> ops = {"BiasAdd"};
      if (!act.empty()) ops.push_back(act);
      const int64_t n = rows == 1 ? 150 : 24;
      c.push_back(OpCaseBuilder("_FusedMatMul", "_FusedMatMul BiasAdd " + act + " " +
                                                    std::to_string(rows) + " row(s)")
                      .T(DType::kFloat)
                      .StringList("fused_ops", ops)
                      .Int("num_args", 1)
                      .Float("leakyrelu_alpha", 0.2f)
                      .Input(RandomOf(DType::kFloat, Shape{rows, 40}, 5, -1, 1))
                      .ConstInput(RandomOf(DType::kFloat, Shape{40, n}, 6, -1, 1))
                      .ConstInput(RandomOf(DType::kFloat, Shape{n}, 7))
                      .Reference1([act, n](const std::vector<Tensor>& in) {
                        Tensor p = RefProduct(in[0], in[1], false, false, DType::kDouble);
                        for (int64_t i = 0; i < p.NumElements(); ++i) {
                          double& v = p.data<double>()[i];
                          v = Activate(act, v + in[2].data<float>()[i % n]);
                        }
                        return RefUnaryDouble(
                            p, [](double x) { return x; }, DType::kFloat);
                      })
                      .Tolerance(1e-5)
                      .Build());
    }
  }
  // Non-finite inputs through each fused activation: NaN stays NaN and +-Inf goes where
  // TensorFlow's kernels send it (a max-based ReLU must not turn NaN into 0).
  for (const std::string act :
       {"Relu", "Relu6", "Elu", "LeakyRelu", "Tanh", "Sigmoid", "GeluExact", "GeluApproximate"}) {
    Tensor x = RandomOf(DType::kFloat, Shape{6, 40}, 12, -1, 1);
    x.data<float>()[0 * 40 + 3] = std::numeric_limits<float>::quiet_NaN();
    x.data<float>()[2 * 40 + 5] = std::numeric_limits<float>::infinity();
    x.data<float>()[4 * 40 + 7] = -std::numeric_limits<float>::infinity();
    Tensor row = RandomOf(DType::kFloat, Shape{1, 40}, 15, -1, 1);
    row.data<float>()[3] = std::numeric_limits<float>::quiet_NaN();
    c.push_back(OpCaseBuilder("_FusedMatMul", "_FusedMatMul BiasAdd " + act + " NaN in one row")
                    .T(DType::kFloat)
                    .StringList("fused_ops", {"BiasAdd", act})
                    .Int("num_args", 1)
                    .Float("leakyrelu_alpha", 0.2f)
                    .Input(row)
                    .ConstInput(RandomOf(DType::kFloat, Shape{40, 24}, 13, -1, 1))
                    .ConstInput(RandomOf(DType::kFloat, Shape{24}, 14))
                    .Reference1([](const std::vector<Tensor>&) {
                      Tensor out(DType::kFloat, Shape{1, 24});
                      for (int64_t i = 0; i < 24; ++i)
                        out.data<float>()[i] = std::numeric_limits<float>::quiet_NaN();
                      return out;
                    })
                    .Build());
    c.push_back(OpCaseBuilder("_FusedMatMul", "_FusedMatMul BiasAdd " + act + " NaN/Inf input")
                    .T(DType::kFloat)
                    .StringList("fused_ops", {"BiasAdd", act})
                    .Int("num_args", 1)
                    .Float("leakyrelu_alpha", 0.2f)
                    .Input(x)
                    .ConstInput(RandomOf(DType::kFloat, Shape{40, 24}, 13, -1, 1))
                    .ConstInput(RandomOf(DType::kFloat, Shape{24}, 14))
                    .Reference1([act](const std::vector<Tensor>& in) {
                      Tensor p = RefProduct(in[0], in[1], false, false, DType::kDouble);
                      for (int64_t i = 0; i < p.NumElements(); ++i) {
                        double& v = p.data<double>()[i];
                        v = Activate(act, v + in[2].data<float>()[i % 24]);
                      }
                      return RefUnaryDouble(
                          p, [](double x) { return x; }, DType::kFloat);
                    })
                    .Tolerance(1e-5)
                    .Build());
  }
  for (const int64_t rows : {4, 1}) {
    c.push_back(OpCaseBuilder("_FusedMatMul",
                              "_FusedMatMul BiasAdd Add Relu " + std::to_string(rows) + " row(s)")
                    .T(DType::kFloat)
                    .StringList("fused_ops", {"BiasAdd", "Add", "Relu"})
                    .Int("num_args", 2)
                    .Input(RandomOf(DType::kFloat, Shape{rows, 16}, 8))
                    .Input(RandomOf(DType::kFloat, Shape{16, 8}, 9))
                    .Input(RandomOf(DType::kFloat, Shape{8}, 10))
                    .Input(RandomOf(DType::kFloat, Shape{rows, 8}, 11))
                    .Reference1([](const std::vector<Tensor>& in) {
                      Tensor p = RefProduct(in[0], in[1], false, false, DType::kDouble);
                      for (int64_t i = 0; i < p.NumElements(); ++i) {
                        double& v = p.data<double>()[i];
                        v = std::max(v + in[2].data<float>()[i % 8] + in[3].data<float>()[i], 0.0);
                      }
                      return RefUnaryDouble(
                          p, [](double x) { return x; }, DType::kFloat);
                    })
                    .Tolerance(1e-5)
                    .Build());
  }
  // Batched products with broadcasting batch dims and adjoints.
  for (const std::string op : {"BatchMatMul", "BatchMatMulV2", "BatchMatMulV3"}) {
    for (auto [sa, sb] : std::vector<std::pair<Shape, Shape>>{{Shape{3, 2, 4}, Shape{3, 4, 5}},
                                                              {Shape{2, 1, 3, 4}, Shape{5, 4, 2}},
                                                              {Shape{4, 6}, Shape{2, 6, 3}}}) {
      if (op == "BatchMatMul" && sa.rank() != sb.rank()) continue;  // V1 does not broadcast
      if (op == "BatchMatMul" && (sa.dim(0) != sb.dim(0))) continue;
      for (bool adj_x : {false, true}) {
        Shape a = sa;
        if (adj_x) {
          a.set_dim(a.rank() - 1, sa.dim(sa.rank() - 2));
          a.set_dim(a.rank() - 2, sa.dim(sa.rank() - 1));
        }
        for (DType t : {DType::kFloat, DType::kDouble}) {
          OpCaseBuilder b(op);
          if (op == "BatchMatMulV3") {
            b.Type("Ta", t).Type("Tb", t).Type("Tout", t);
          } else {
            b.T(t);
          }
          const bool adj = adj_x;
          c.push_back(b.Bool("adj_x", adj_x)
                          .Bool("adj_y", false)
                          .Input(RandomOf(t, a, NextSeed(seed)))
                          .Input(RandomOf(t, sb, NextSeed(seed)))
                          .Reference1([adj, t](const std::vector<Tensor>& in) {
                            return RefProduct(in[0], in[1], adj, false, t);
                          })
                          .Tolerance(1e-5)
                          .Build());
        }
      }
    }
  }
  // BatchMatMulV3's mixed dtypes (Keras 3's int8 Dense and EinsumDense: int8 x int8 -> int32;
  // TF's bfloat16 x int8 weight-only forms): exact integer sums; bfloat16 rounded once.
  struct Mixed {
    DType ta, tb, tout;
  };
  for (const Mixed mx : {Mixed{DType::kInt8, DType::kInt8, DType::kInt32},
                         Mixed{DType::kUInt8, DType::kInt8, DType::kInt32},
                         Mixed{DType::kInt8, DType::kUInt8, DType::kInt32},
                         Mixed{DType::kUInt8, DType::kUInt8, DType::kInt32},
                         Mixed{DType::kBFloat16, DType::kInt8, DType::kBFloat16},
                         Mixed{DType::kUInt8, DType::kBFloat16, DType::kBFloat16}}) {
    for (bool adj_y : {false, true}) {
      auto range = [](DType t) {
        return t == DType::kInt8    ? std::pair<double, double>{-128, 127}
               : t == DType::kUInt8 ? std::pair<double, double>{0, 255}
                                    : std::pair<double, double>{-2, 2};
      };
      const auto [alo, ahi] = range(mx.ta);
      const auto [blo, bhi] = range(mx.tb);
      const DType tout = mx.tout;
      c.push_back(
          OpCaseBuilder("BatchMatMulV3", std::string("BatchMatMulV3 ") + DTypeShortName(mx.ta) +
                                             " x " + DTypeShortName(mx.tb) + " -> " +
                                             DTypeShortName(tout) + (adj_y ? " (adj_y)" : ""))
              .Type("Ta", mx.ta)
              .Type("Tb", mx.tb)
              .Type("Tout", tout)
              .Bool("adj_x", false)
              .Bool("adj_y", adj_y)
              .Input(RandomOf(mx.ta, Shape{2, 3, 40}, NextSeed(seed), alo, ahi))
              .Input(RandomOf(mx.tb, adj_y ? Shape{2, 6, 40} : Shape{2, 40, 6}, NextSeed(seed), blo,
                              bhi))
              .Reference1([adj_y, tout](const std::vector<Tensor>& in) {
                return RefProduct(in[0], in[1], false, adj_y, tout);
              })
              .Build());
    }
  }
  // Sums long enough to leave float32's exact integers (1100 * 128 * 128 > 2^24): the int32 path.
  c.push_back(OpCaseBuilder("BatchMatMulV3", "BatchMatMulV3 int8 x int8 -> int32, 1100 terms")
                  .Type("Ta", DType::kInt8)
                  .Type("Tb", DType::kInt8)
                  .Type("Tout", DType::kInt32)
                  .Input(RandomOf(DType::kInt8, Shape{2, 1100}, NextSeed(seed), -128, 127))
                  .Input(RandomOf(DType::kInt8, Shape{1100, 3}, NextSeed(seed), -128, 127))
                  .Reference1([](const std::vector<Tensor>& in) {
                    return RefProduct(in[0], in[1], false, false, DType::kInt32);
                  })
                  .Build());
  return c;
}

}  // namespace kiln::testing
