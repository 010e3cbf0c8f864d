// Op-tester cases of SparseBincount and {Dense,Sparse,Ragged}CountSparseOutput. The references
// fill dense tables of counts with plain loops (a flag marks the bins a value reached) and list
// the flagged bins row by row; a few cases carry values recorded from TensorFlow 2.21.
#include <algorithm>
#include <string>
#include <vector>

#include "ops/array_ref.h"
#include "ops/op_cases.h"
#include "ops/ref_util.h"

namespace kiln::testing {
namespace {

std::vector<int64_t> Ints(const Tensor& t) {
  std::vector<int64_t> v;
  for (int64_t i = 0; i < t.NumElements(); ++i)
    v.push_back(t.dtype() == DType::kInt32 ? t.data<int32_t>()[i] : t.data<int64_t>()[i]);
  return v;
}

Tensor EmptyOf(DType t) { return Tensor(t, Shape{0}); }

// SparseBincount: dense bins per row (dense_shape of rank >= 2) or overall (rank 1).
template <typename T, typename Index>
OpCase SparseBincountCase(const std::string& name, const Tensor& indices,
                          const std::vector<Index>& values, const std::vector<int64_t>& shape,
                          Index size, const Tensor& weights, bool binary) {
  return OpCaseBuilder("SparseBincount", "SparseBincount " + name)
      .T(kDTypeOf<T>)
      .Type("Tidx", kDTypeOf<Index>)
      .Bool("binary_output", binary)
      .Input(indices)
      .Input(Vec<Index>(values))
      .ConstInput(Vec<int64_t>(shape))
      .ConstInput(Tensor::Scalar<Index>(size))
      .Input(weights)
      .Reference1([size, binary](const std::vector<Tensor>& in) {
        const std::vector<int64_t> idx = Ints(in[0]), val = Ints(in[1]), shp = Ints(in[2]);
        const int64_t r = static_cast<int64_t>(shp.size());
        const int64_t rows = r >= 2 ? shp[0] : 1;
        Tensor out(kDTypeOf<T>, r >= 2 ? Shape{rows, size} : Shape{int64_t{size}});
        std::fill_n(out.data<T>(), out.NumElements(), T(0));
        for (size_t i = 0; i < val.size(); ++i) {
          if (val[i] < 0 || val[i] >= size) continue;
          T& bin = out.data<T>()[(r >= 2 ? idx[i * r] * size : 0) + val[i]];
          if (binary) {
            bin = T(1);
          } else {
            bin += in[4].NumElements() > 0 ? in[4].data<T>()[i] : T(1);
          }
        }
        return out;
      })
      .Build();
}

// The sparse counts of values[i] in row batch[i] of a [rows, width] table (rows 1 and a rank-1
// result when is_1d), as TF's count ops write them.
template <typename W>
std::vector<Tensor> RefCounts(const std::vector<int64_t>& batch, const std::vector<int64_t>& val,
                              const Tensor& weights, int64_t rows, bool is_1d, int64_t minlength,
                              int64_t maxlength, bool binary) {
  int64_t max_value = 0;
  for (size_t i = 0; i < val.size(); ++i)
    if (maxlength <= 0 || val[i] < maxlength) max_value = std::max(max_value, val[i]);
  const int64_t width = maxlength > 0 ? maxlength : std::max(max_value + 1, minlength);
  const int64_t cols = std::max(width, max_value + 1);
  std::vector<W> table(rows * cols, W(0));
  std::vector<bool> seen(rows * cols, false);
  for (size_t i = 0; i < val.size(); ++i) {
    if (maxlength > 0 && val[i] >= maxlength) continue;
    const int64_t at = batch[i] * cols + val[i];
    seen[at] = true;
    if (binary) {
      table[at] = W(1);
    } else {
      table[at] += weights.NumElements() > 0 ? weights.data<W>()[i] : W(1);
    }
  }
  std::vector<int64_t> out_idx;
  std::vector<W> out_val;
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = 0; c < cols; ++c)
      if (seen[r * cols + c]) {
        if (!is_1d) out_idx.push_back(r);
        out_idx.push_back(c);
        out_val.push_back(table[r * cols + c]);
      }
  const int64_t n = static_cast<int64_t>(out_val.size());
  const std::vector<int64_t> shape =
      is_1d ? std::vector<int64_t>{width} : std::vector<int64_t>{rows, width};
  return {Make<int64_t>(out_idx, Shape{n, is_1d ? 1 : 2}), Vec<W>(out_val), Vec<int64_t>(shape)};
}

struct CountAttrs {
  int64_t minlength = -1;
  int64_t maxlength = -1;
  bool binary = false;
};

std::string AttrName(const CountAttrs& a) {
  return " min " + std::to_string(a.minlength) + " max " + std::to_string(a.maxlength) +
         (a.binary ? " binary" : "");
}

OpCaseBuilder CountBuilder(const std::string& op, const std::string& name, DType t, DType w,
                           const CountAttrs& a) {
  OpCaseBuilder b(op, op + " " + name + " " + DTypeShortName(w) + AttrName(a));
  b.T(t).Type("output_type", w).Int("minlength", a.minlength).Int("maxlength", a.maxlength);
  b.Bool("binary_output", a.binary);
  return b;
}

template <typename T, typename W>
OpCase DenseCountCase(const std::string& name, const Tensor& values, const Tensor& weights,
                      const CountAttrs& a) {
  return CountBuilder("DenseCountSparseOutput", name, kDTypeOf<T>, kDTypeOf<W>, a)
      .Input(values)
      .Input(weights)
      .Reference([a](const std::vector<Tensor>& in) {
        const bool is_1d = in[0].rank() == 1;
        const int64_t rows = is_1d ? 1 : in[0].dim(0);
        const int64_t per_row = is_1d ? in[0].NumElements() : in[0].dim(1);
        std::vector<int64_t> batch;
        for (int64_t i = 0; i < in[0].NumElements(); ++i) batch.push_back(i / per_row);
        return RefCounts<W>(batch, Ints(in[0]), in[1], rows, is_1d, a.minlength, a.maxlength,
                            a.binary);
      })
      .Build();
}

template <typename T, typename W>
OpCase SparseCountCase(const std::string& name, const Tensor& indices, const std::vector<T>& values,
                       const std::vector<int64_t>& shape, const Tensor& weights,
                       const CountAttrs& a) {
  return CountBuilder("SparseCountSparseOutput", name, kDTypeOf<T>, kDTypeOf<W>, a)
      .Input(indices)
      .Input(Vec<T>(values))
      .Input(Vec<int64_t>(shape))
      .Input(weights)
      .Reference([a](const std::vector<Tensor>& in) {
        const std::vector<int64_t> idx = Ints(in[0]), shp = Ints(in[2]);
        const int64_t r = static_cast<int64_t>(shp.size());
        std::vector<int64_t> batch;
        for (int64_t i = 0; i < in[1].NumElements(); ++i) batch.push_back(r == 1 ? 0 : idx[i * r]);
        return RefCounts<W>(batch, Ints(in[1]), in[3], r == 1 ? 1 : shp[0], r == 1, a.minlength,
                            a.maxlength, a.binary);
      })
      .Build();
}

template <typename T, typename W>
OpCase RaggedCountCase(const std::string& name, const std::vector<int64_t>& splits,
                       const std::vector<T>& values, const Tensor& weights, const CountAttrs& a) {
  return CountBuilder("RaggedCountSparseOutput", name, kDTypeOf<T>, kDTypeOf<W>, a)
      .Input(Vec<int64_t>(splits))
      .Input(Vec<T>(values))
      .Input(weights)
      .Reference([a, splits](const std::vector<Tensor>& in) {
        std::vector<int64_t> batch;
        for (size_t r = 0; r + 1 < splits.size(); ++r)
          for (int64_t i = splits[r]; i < splits[r + 1]; ++i)
            batch.push_back(static_cast<int64_t>(r));
        return RefCounts<W>(batch, Ints(in[1]), in[2], static_cast<int64_t>(splits.size()) - 1,
                            false, a.minlength, a.maxlength, a.binary);
      })
      .Build();
}

// A case whose expected outputs were recorded from TensorFlow 2.21.
OpCase Recorded(OpCase c, const std::vector<Tensor>& want) {
  c.name += " (TF values)";
  c.reference = [want](const std::vector<Tensor>&) { return want; };
  return c;
}

}  // namespace

std::vector<OpCase> CountSparseCases() {
  std::vector<OpCase> cases;
  const DType f32 = DType::kFloat;
  // SparseBincount.
  const Tensor idx2 = Make<int64_t>({0, 0, 0, 2, 2, 1, 1, 3, 2, 1}, Shape{5, 2});
  cases.push_back(SparseBincountCase<float, int32_t>("1-D", Make<int64_t>({0, 2, 3}, Shape{3, 1}),
                                                     {1, 3, 1}, {5}, 4, EmptyOf(f32), false));
  cases.push_back(SparseBincountCase<double, int64_t>(
      "1-D weighted", Make<int64_t>({0, 2, 3, 4}, Shape{4, 1}), {1, 3, 1, 9}, {5}, int64_t{4},
      Vec<double>({0.5, 1.5, 2.0, 7.0}), false));
  cases.push_back(SparseBincountCase<int32_t, int32_t>("2-D", idx2, {1, 3, 1, 0, 2}, {3, 4}, 4,
                                                       EmptyOf(DType::kInt32), false));
  cases.push_back(SparseBincountCase<int64_t, int64_t>("2-D weighted", idx2, {1, 3, 1, 0, 1},
                                                       {3, 4}, int64_t{3},
                                                       Vec<int64_t>({5, 6, 7, 8, 9}), false));
  cases.push_back(SparseBincountCase<float, int32_t>("2-D binary", idx2, {1, 3, 1, 0, 1}, {3, 4}, 4,
                                                     Vec<float>({5, 6, 7, 8, 9}), true));
  // Negative values of a batched input are dropped (TF 2.21).
  cases.push_back(SparseBincountCase<float, int32_t>("2-D negative", idx2, {1, -3, 1, 0, 2}, {3, 4},
                                                     4, EmptyOf(f32), false));
  cases.push_back(SparseBincountCase<float, int32_t>("3-D",
                                                     Make<int64_t>({0, 0, 0, 1, 0, 2}, Shape{2, 3}),
                                                     {1, 2}, {2, 3, 4}, 4, EmptyOf(f32), false));
  // TF: sparse_bincount(indices=[[0,0],[0,2],[2,1]], values=[1,3,1], dense_shape=[3,4], size=4,
  // weights=[0.5,1.5,2.0]).
  cases.push_back(Recorded(
      SparseBincountCase<float, int32_t>("recorded", Make<int64_t>({0, 0, 0, 2, 2, 1}, Shape{3, 2}),
                                         {1, 3, 1}, {3, 4}, 4, Vec<float>({0.5, 1.5, 2.0}), false),
      {Make<float>({0, 0.5, 0, 1.5, 0, 0, 0, 0, 0, 2, 0, 0}, Shape{3, 4})}));

  // DenseCountSparseOutput.
  const CountAttrs plain, binary{-1, -1, true}, min6{6, -1, false}, max5{3, 5, false};
  cases.push_back(
      DenseCountCase<int32_t, float>("1-D", Vec<int32_t>({1, 3, 1, 7}), EmptyOf(f32), plain));
  cases.push_back(DenseCountCase<int64_t, double>(
      "2-D weighted", Make<int64_t>({1, 3, 0, 7, 1, 1}, Shape{2, 3}),
      Make<double>({1, 2, 3, 4, 5, 6}, Shape{2, 3}), max5));
  cases.push_back(DenseCountCase<int32_t, int64_t>(
      "2-D", Make<int32_t>({1, 3, 0, 2, 2, 2}, Shape{3, 2}), EmptyOf(DType::kInt64), min6));
  cases.push_back(
      DenseCountCase<int32_t, int32_t>("2-D binary", Make<int32_t>({1, 3, 3, 2, 2, 2}, Shape{2, 3}),
                                       Make<int32_t>({4, 5, 6, 7, 8, 9}, Shape{2, 3}), binary));
  cases.push_back(DenseCountCase<int64_t, float>("empty", Tensor(DType::kInt64, Shape{0}),
                                                 EmptyOf(f32), plain));
  // TF: dense_count_sparse_output(values=[[1,3],[0,7]], weights=[[1,2],[3,4]], maxlength=5,
  // minlength=3).
  cases.push_back(Recorded(
      DenseCountCase<int32_t, float>("recorded", Make<int32_t>({1, 3, 0, 7}, Shape{2, 2}),
                                     Make<float>({1, 2, 3, 4}, Shape{2, 2}), {3, 5, false}),
      {Make<int64_t>({0, 1, 0, 3, 1, 0}, Shape{3, 2}), Vec<float>({1, 2, 3}),
       Vec<int64_t>({2, 5})}));

  // SparseCountSparseOutput.
  cases.push_back(SparseCountCase<int64_t, float>("1-D", Make<int64_t>({0, 2, 3}, Shape{3, 1}),
                                                  {5, 3, 5}, {4}, Vec<float>({1, 2, 3}), plain));
  cases.push_back(SparseCountCase<int32_t, int64_t>("2-D", idx2, {1, 3, 1, 0, 1}, {3, 4},
                                                    EmptyOf(DType::kInt64), min6));
  cases.push_back(SparseCountCase<int32_t, double>("2-D binary", idx2, {1, 3, 1, 0, 1}, {3, 4},
                                                   Vec<double>({5, 6, 7, 8, 9}), binary));
  cases.push_back(SparseCountCase<int64_t, int32_t>("2-D max", idx2, {1, 4, 9, 0, 1}, {3, 4},
                                                    Vec<int32_t>({5, 6, 7, 8, 9}), max5));
  cases.push_back(SparseCountCase<int64_t, float>("3-D",
                                                  Make<int64_t>({0, 0, 0, 1, 0, 2}, Shape{2, 3}),
                                                  {1, 2}, {2, 3, 4}, EmptyOf(f32), plain));
  // TF: sparse_count_sparse_output(indices=[[0,0],[0,2],[2,1]], values=[1,3,1],
  // dense_shape=[3,4], binary_output=True, minlength=6).
  cases.push_back(Recorded(
      SparseCountCase<int32_t, float>("recorded", Make<int64_t>({0, 0, 0, 2, 2, 1}, Shape{3, 2}),
                                      {1, 3, 1}, {3, 4}, EmptyOf(f32), {6, -1, true}),
      {Make<int64_t>({0, 1, 0, 3, 2, 1}, Shape{3, 2}), Vec<float>({1, 1, 1}),
       Vec<int64_t>({3, 6})}));

  // RaggedCountSparseOutput.
  cases.push_back(RaggedCountCase<int64_t, int64_t>("3 rows", {0, 2, 2, 5}, {1, 3, 1, 0, 4},
                                                    EmptyOf(DType::kInt64), plain));
  cases.push_back(RaggedCountCase<int32_t, float>("weighted", {0, 2, 3}, {1, 3, 1},
                                                  Vec<float>({2, 3, 4}), min6));
  cases.push_back(RaggedCountCase<int32_t, double>("binary", {0, 3, 6}, {2, 2, 1, 7, 7, 0},
                                                   Vec<double>({1, 2, 3, 4, 5, 6}), binary));
  cases.push_back(RaggedCountCase<int64_t, int32_t>("max", {0, 3, 6}, {2, 2, 1, 7, 7, 0},
                                                    Vec<int32_t>({1, 2, 3, 4, 5, 6}), max5));
  // TF: ragged_count_sparse_output(splits=[0,2,3], values=[1,3,1], weights=[2,3,4]).
  cases.push_back(Recorded(RaggedCountCase<int32_t, int32_t>("recorded", {0, 2, 3}, {1, 3, 1},
                                                             Vec<int32_t>({2, 3, 4}), plain),
                           {Make<int64_t>({0, 1, 0, 3, 1, 1}, Shape{3, 2}), Vec<int32_t>({2, 3, 4}),
                            Vec<int64_t>({2, 4})}));
  return cases;
}

}  // namespace kiln::testing
