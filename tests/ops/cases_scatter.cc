// Op-tester cases of scattering and partitioning: ScatterNd, TensorScatterUpdate/Add/Sub/Max/
// Min, DynamicPartition, DynamicStitch, ParallelDynamicStitch.
#include <algorithm>
#include <cmath>

#include "ops/array_ref.h"
#include "ops/op_cases.h"
#include "ops/ref_util.h"

namespace kiln::testing {
namespace {

std::vector<int64_t> IndexList(const Tensor& t) {
  std::vector<int64_t> v(t.NumElements());
  for (size_t i = 0; i < v.size(); ++i) {
    switch (t.dtype()) {
      case DType::kInt16:
        v[i] = t.data<int16_t>()[i];
        break;
      case DType::kInt32:
        v[i] = t.data<int32_t>()[i];
        break;
      default:
        v[i] = t.data<int64_t>()[i];
    }
  }
  return v;
}

// Applies updates slice by slice in index order; combine(old, new) per element (as doubles).
Tensor RefScatter(const Tensor& base, const Tensor& indices, const Tensor& updates,
                  const std::function<double(double, double)>& combine) {
  const int64_t k = indices.dim(indices.rank() - 1);
  const int64_t n = indices.NumElements() / std::max<int64_t>(k, 1);
  int64_t slice = 1;
  for (int d = static_cast<int>(k); d < base.rank(); ++d) slice *= base.dim(d);
  const std::vector<int64_t> idx = IndexList(indices);
  Tensor out = RefUnaryDouble(
      base, [](double x) { return x; }, DType::kDouble);
  const Tensor upd = RefUnaryDouble(
      updates, [](double x) { return x; }, DType::kDouble);
  for (int64_t j = 0; j < n; ++j) {
    int64_t flat = 0;
    for (int64_t q = 0; q < k; ++q) flat = flat * base.dim(static_cast<int>(q)) + idx[j * k + q];
    for (int64_t e = 0; e < slice; ++e) {
      double& o = out.data<double>()[flat * slice + e];
      o = combine(o, upd.data<double>()[j * slice + e]);
    }
  }
  return RefUnaryDouble(
      out, [](double x) { return x; }, base.dtype());
}

}  // namespace

namespace {

// ScatterNdNonAliasingAdd (TensorScatterAdd's TF 1 name) and the row updates
// InplaceUpdate/Add/Sub (duplicate rows apply in order).
void AddInplace(std::vector<OpCase>* c) {
  c->push_back(OpCaseBuilder("ScatterNdNonAliasingAdd", "ScatterNdNonAliasingAdd float")
                   .T(DType::kFloat)
                   .Type("Tindices", DType::kInt32)
                   .Input(Make<float>({1, 2, 3, 4, 5, 6, 7, 8}, Shape{8}))
                   .Input(Make<int32_t>({4, 3, 1, 7, 1}, Shape{5, 1}))
                   .Input(Make<float>({9, 10, 11, 12, 100}, Shape{5}))
                   .Reference1([](const auto&) {
                     return Make<float>({1, 113, 3, 14, 14, 6, 7, 20}, Shape{8});
                   })
                   .Build());
  for (const char* op : {"InplaceUpdate", "InplaceAdd", "InplaceSub"}) {
    const std::string name = op;
    for (DType t : {DType::kFloat, DType::kInt64, DType::kHalf}) {
      const Tensor x = RandomOf(t, Shape{5, 3}, 76, -5, 5);
      const Tensor v = RandomOf(t, Shape{3, 3}, 77, -5, 5);
      c->push_back(OpCaseBuilder(name, name + " " + DTypeShortName(t))
                       .T(t)
                       .Input(x)
                       .Input(Vec<int32_t>({4, 0, 4}))
                       .Input(v)
                       .Reference1([name, t](const std::vector<Tensor>& in) {
                         std::vector<double> out = Doubles(in[0]);
                         const std::vector<double> w = Doubles(in[2]);
                         const int32_t rows[] = {4, 0, 4};
                         for (int j = 0; j < 3; ++j)
                           for (int k = 0; k < 3; ++k) {
                             double& o = out[rows[j] * 3 + k];
                             o = name == "InplaceUpdate" ? w[j * 3 + k]
                                 : name == "InplaceAdd"  ? o + w[j * 3 + k]
                                                         : o - w[j * 3 + k];
                           }
                         return FromDoubles(t, Shape{5, 3}, out);
                       })
                       .Tolerance(t == DType::kHalf ? 1e-2 : 1e-6)
                       .Build());
    }
  }
  const Tensor s = Distinct(DType::kString, Shape{3, 2});
  c->push_back(OpCaseBuilder("InplaceUpdate", "InplaceUpdate string")
                   .T(DType::kString)
                   .Input(s)
                   .Input(Vec<int32_t>({1}))
                   .Input(Make<std::string>({"p", "q"}, Shape{1, 2}))
                   .Reference1([](const std::vector<Tensor>& in) {
                     Tensor out = in[0].DeepCopy();
                     out.data<std::string>()[2] = "p";
                     out.data<std::string>()[3] = "q";
                     return out;
                   })
                   .Build());
}

}  // namespace

std::vector<OpCase> ScatterCases() {
  std::vector<OpCase> c;
  const Tensor ind_rows = Make<int32_t>({3, 0, 3, 1}, Shape{4, 1});  // row 3 twice
  const Tensor ind_cells = Make<int64_t>({0, 1, 2, 2, 0, 1}, Shape{3, 2});
  auto add = [](double a, double b) { return a + b; };
  // ScatterNd into zeros: duplicates add up.
  for (DType t : {DType::kFloat, DType::kInt32, DType::kDouble, DType::kHalf, DType::kInt64,
                  DType::kUInt8, DType::kBFloat16}) {
    c.push_back(OpCaseBuilder("ScatterNd", "ScatterNd rows " + DTypeShortName(t))
                    .T(t)
                    .Type("Tindices", DType::kInt32)
                    .Input(ind_rows)
                    .Input(Distinct(t, Shape{4, 3}))
                    .ConstInput(Vec<int32_t>({5, 3}))
                    .Reference1([add](const std::vector<Tensor>& in) {
                      return RefScatter(Tensor(in[1].dtype(), Shape{5, 3}), in[0], in[1], add);
                    })
                    .Build());
    c.push_back(OpCaseBuilder("ScatterNd", "ScatterNd cells " + DTypeShortName(t))
                    .T(t)
                    .Type("Tindices", DType::kInt64)
                    .Input(ind_cells)
                    .Input(Distinct(t, Shape{3}))
                    .Input(Vec<int64_t>({3, 3}))
                    .Reference1([add](const std::vector<Tensor>& in) {
                      return RefScatter(Tensor(in[1].dtype(), Shape{3, 3}), in[0], in[1], add);
                    })
                    .Build());
  }
  c.push_back(OpCaseBuilder("ScatterNd", "ScatterNd strings concatenate, bools or")
                  .T(DType::kString)
                  .Type("Tindices", DType::kInt16)
                  .Input(Make<int16_t>({1, 1, 3}, Shape{3, 1}))
                  .Input(Vec<std::string>({"a", "b", "c"}))
                  .ConstInput(Vec<int16_t>({4}))
                  .Reference1([](const auto&) {
                    return Vec<std::string>({"", "ab", "", "c"});
                  })
                  .Build());
  c.push_back(OpCaseBuilder("ScatterNd", "ScatterNd bool")
                  .T(DType::kBool)
                  .Type("Tindices", DType::kInt32)
                  .Input(Make<int32_t>({1, 1, 2}, Shape{3, 1}))
                  .Input(Vec<bool>({true, false, false}))
                  .ConstInput(Vec<int32_t>({3}))
                  .Reference1([](const auto&) {
                    return Vec<bool>({false, true, false});
                  })
                  .Build());
  c.push_back(OpCaseBuilder("ScatterNd", "ScatterNd IGNORE drops bad indices")
                  .T(DType::kFloat)
                  .Type("Tindices", DType::kInt32)
                  .String("bad_indices_policy", "IGNORE")
                  .Input(Make<int32_t>({5, 1, -1}, Shape{3, 1}))
                  .Input(Vec<float>({1, 2, 3}))
                  .ConstInput(Vec<int32_t>({4}))
                  .Reference1([](const auto&) {
                    return Vec<float>({0, 2, 0, 0});
                  })
                  .Build());

  // TensorScatter*: into a copy of a tensor.
  struct Kind {
    const char* op;
    std::function<double(double, double)> f;
  };
  const Kind kinds[] = {{"TensorScatterUpdate", [](double, double b) { return b; }},
                        {"TensorScatterAdd", add},
                        {"TensorScatterSub", [](double a, double b) { return a - b; }},
                        {"TensorScatterMax", [](double a, double b) { return std::max(a, b); }},
                        {"TensorScatterMin", [](double a, double b) { return std::min(a, b); }}};
  for (const Kind& k : kinds) {
    const auto f = k.f;
    for (DType t : {DType::kFloat, DType::kInt32, DType::kHalf, DType::kInt64, DType::kDouble,
                    DType::kInt8}) {
      const Tensor base = RandomOf(t, Shape{5, 3}, 9, -5, 5);
      c.push_back(OpCaseBuilder(k.op, std::string(k.op) + " rows " + DTypeShortName(t))
                      .T(t)
                      .Type("Tindices", DType::kInt32)
                      .Input(base)
                      .Input(ind_rows)
                      .Input(RandomOf(t, Shape{4, 3}, 10, -5, 5))
                      .Reference1([f](const std::vector<Tensor>& in) {
                        return RefScatter(in[0], in[1], in[2], f);
                      })
                      .Build());
      c.push_back(OpCaseBuilder(k.op, std::string(k.op) + " cells " + DTypeShortName(t))
                      .T(t)
                      .Type("Tindices", DType::kInt64)
                      .Input(RandomOf(t, Shape{3, 3}, 11, -5, 5))
                      .Input(ind_cells)
                      .Input(RandomOf(t, Shape{3}, 12, -5, 5))
                      .Reference1([f](const std::vector<Tensor>& in) {
                        return RefScatter(in[0], in[1], in[2], f);
                      })
                      .Build());
    }
  }
  c.push_back(OpCaseBuilder("TensorScatterUpdate", "TensorScatterUpdate strings")
                  .T(DType::kString)
                  .Type("Tindices", DType::kInt32)
                  .Input(Vec<std::string>({"a", "b", "c"}))
                  .Input(Make<int32_t>({2, 0}, Shape{2, 1}))
                  .Input(Vec<std::string>({"x", "y"}))
                  .Reference1([](const auto&) {
                    return Vec<std::string>({"y", "b", "x"});
                  })
                  .Build());
  c.push_back(OpCaseBuilder("TensorScatterAdd", "TensorScatterAdd big")
                  .T(DType::kFloat)
                  .Type("Tindices", DType::kInt32)
                  .Input(Distinct(DType::kFloat, Shape{200, 500}))
                  .Input(Make<int32_t>({7, 199, 7}, Shape{3, 1}))
                  .Input(Distinct(DType::kFloat, Shape{3, 500}, 3))
                  .Reference1([add](const std::vector<Tensor>& in) {
                    return RefScatter(in[0], in[1], in[2], add);
                  })
                  .Build());

  // DynamicPartition and DynamicStitch (a partition then a stitch restores the data).
  for (DType t : {DType::kFloat, DType::kString, DType::kInt32, DType::kBool, DType::kHalf}) {
    const Tensor data = Distinct(t, Shape{6, 2});
    const Tensor parts = Vec<int32_t>({2, 0, 2, 1, 0, 2});
    c.push_back(OpCaseBuilder("DynamicPartition")
                    .T(t)
                    .Int("num_partitions", 4)  // partition 3 stays empty
                    .Input(data)
                    .Input(parts)
                    .Reference([](const std::vector<Tensor>& in) {
                      std::vector<Tensor> outs;
                      for (int32_t p = 0; p < 4; ++p) {
                        std::vector<int64_t> rows;
                        for (int64_t i = 0; i < 6; ++i)
                          if (in[1].data<int32_t>()[i] == p) rows.push_back(i);
                        outs.push_back(
                            RefMove(in[0], Shape{static_cast<int64_t>(rows.size()), 2},
                                    [&](const Index& o) { return rows[o[0]] * 2 + o[1]; }));
                      }
                      return outs;
                    })
                    .Build());
    c.push_back(
        OpCaseBuilder("DynamicPartition", "DynamicPartition 2-D partitions " + DTypeShortName(t))
            .T(t)
            .Int("num_partitions", 2)
            .Input(Distinct(t, Shape{2, 2, 3}))
            .Input(Make<int32_t>({1, 0, 0, 1}, Shape{2, 2}))
            .Reference([](const std::vector<Tensor>& in) {
              const int64_t order[2][2] = {{1, 2}, {0, 3}};
              std::vector<Tensor> outs;
              for (const auto& rows : order)
                outs.push_back(RefMove(in[0], Shape{2, 3},
                                       [&](const Index& o) { return rows[o[0]] * 3 + o[1]; }));
              return outs;
            })
            .Build());
    for (const char* op : {"DynamicStitch", "ParallelDynamicStitch"}) {
      c.push_back(OpCaseBuilder(op, std::string(op) + " " + DTypeShortName(t))
                      .T(t)
                      .Int("N", 2)
                      .Input(Make<int32_t>({0, 4, 2}, Shape{3}))
                      .Input(Make<int32_t>({5, 4}, Shape{1, 2}))  // 4 again: the later one wins
                      .Input(Distinct(t, Shape{3, 2}, 1))
                      .Input(Distinct(t, Shape{1, 2, 2}, 30))
                      .Reference1([](const std::vector<Tensor>& in) {
                        Tensor out(in[2].dtype(), Shape{6, 2});  // rows 1 and 3 stay zero
                        for (int m = 0; m < 2; ++m) {
                          const Tensor& ind = in[m];
                          for (int64_t i = 0; i < ind.NumElements(); ++i)
                            for (int64_t e = 0; e < 2; ++e)
                              CopyElement(in[2 + m], i * 2 + e, &out,
                                          ind.data<int32_t>()[i] * 2 + e);
                        }
                        return out;
                      })
                      .Build());
    }
  }
  AddInplace(&c);
  return c;
}

}  // namespace kiln::testing
