// Op-tester cases of sparse tensors: SparseToDense, SparseFillEmptyRows, SparseReshape, the set
// operations, SparseCross, and the sparse manipulations and arithmetic.
#include <algorithm>
#include <cmath>
#include <map>

#include "ops/array_ref.h"
#include "ops/op_cases.h"

namespace kiln::testing {

namespace {

// SparseCross / SparseCrossV2 / SparseCrossHashed: one sparse int64 column (rows [3, 7], [],
// [5]) and dense string and int64 columns, against TensorFlow 2.21's outputs.
void AddSparseCross(std::vector<OpCase>* c) {
  const Tensor ind = Make<int64_t>({0, 0, 0, 1, 2, 0}, {3, 2});
  const Tensor val = Make<int64_t>({3, 7, 5}, {3});
  const Tensor shp = Make<int64_t>({3, 2}, {2});
  const Tensor ds = Make<std::string>({"ant", "bee", "cat"}, {3, 1});
  const Tensor di = Make<int64_t>({1, -2, 4, 5, 0, 9}, {3, 2});
  const Tensor out_idx = Make<int64_t>({0, 0, 0, 1, 0, 2, 0, 3, 2, 0, 2, 1}, {6, 2});
  const Tensor out_shape = Make<int64_t>({3, 4}, {2});
  auto cross = [&](const std::string& op, const std::string& name) {
    OpCaseBuilder b(op, name);
    b.TypeList("sparse_types", {DType::kInt64})
        .TypeList("dense_types", {DType::kString, DType::kInt64})
        .Int("N", 1)
        .Input(ind)
        .Input(val)
        .Input(shp)
        .Input(ds)
        .Input(di);
    return b;
  };
  auto expect = [&](const Tensor& values) {
    return [=](const auto&) { return std::vector<Tensor>{out_idx, values, out_shape}; };
  };
  for (int64_t buckets : {0, 7}) {
    c->push_back(cross("SparseCross",
                       "SparseCross hashed, " + std::to_string(buckets) + " buckets, TF values")
                     .Bool("hashed_output", true)
                     .Int("num_buckets", buckets)
                     .Int("hash_key", 956888297470)
                     .Type("out_type", DType::kInt64)
                     .Type("internal_type", DType::kInt64)
                     .Reference(expect(
                         buckets == 0 ? Make<int64_t>({4255622886547393401, 6277270962488733420,
                                                       6145143118610164632, 8134466856290330567,
                                                       1635354828898756309, 3719948219991325817},
                                                      {6})
                                      : Make<int64_t>({5, 3, 5, 4, 1, 5}, {6})))
                     .Build());
  }
  c->push_back(
      cross("SparseCross", "SparseCross strings")
          .Bool("hashed_output", false)
          .Int("num_buckets", 0)
          .Int("hash_key", 0)
          .Type("out_type", DType::kString)
          .Type("internal_type", DType::kInt64)
          .Reference(expect(Make<std::string>({"3_X_ant_X_1", "3_X_ant_X_-2", "7_X_ant_X_1",
                                               "7_X_ant_X_-2", "5_X_cat_X_0", "5_X_cat_X_9"},
                                              {6})))
          .Build());
  OpCaseBuilder v2 = cross("SparseCrossV2", "SparseCrossV2 sep '--'");
  v2.ConstInput(Tensor::Scalar<std::string>("--"));
  c->push_back(v2.Reference(expect(Make<std::string>({"3--ant--1", "3--ant---2", "7--ant--1",
                                                      "7--ant---2", "5--cat--0", "5--cat--9"},
                                                     {6})))
                   .Build());
  OpCaseBuilder h = cross("SparseCrossHashed", "SparseCrossHashed TF values");
  h.ConstInput(Tensor::Scalar<int64_t>(0))
      .ConstInput(Tensor::Scalar<bool>(false))
      .ConstInput(Make<int64_t>({3, 11}, {2}));
  c->push_back(h.Reference(expect(Make<int64_t>(
                               {6357877043249746328, 7064664371500218647, 3535663713110834754,
                                483086882095681366, 6591875129012218970, 664759898398549915},
                               {6})))
                   .Build());
  // Dense only (int64 then string), 5 buckets.
  c->push_back(OpCaseBuilder("SparseCrossHashed", "SparseCrossHashed dense only, TF values")
                   .TypeList("sparse_types", {})
                   .TypeList("dense_types", {DType::kInt64, DType::kString})
                   .Int("N", 0)
                   .Input(di)
                   .Input(ds)
                   .ConstInput(Tensor::Scalar<int64_t>(5))
                   .ConstInput(Tensor::Scalar<bool>(false))
                   .ConstInput(Make<int64_t>({-1, 2}, {2}))
                   .Reference([=](const auto&) {
                     return std::vector<Tensor>{
                         Make<int64_t>({0, 0, 0, 1, 1, 0, 1, 1, 2, 0, 2, 1}, {6, 2}),
                         Make<int64_t>({4, 4, 1, 4, 3, 4}, {6}), Make<int64_t>({3, 2}, {2})};
                   })
                   .Build());
}

}  // namespace

namespace {

// The sparse manipulations and arithmetic (sparse_manip_ops.cc, sparse_math_ops.cc) and the set
// operations with sparse operands, on small tensors whose results are worked out by hand; the
// same ops against TensorFlow's outputs: tests/tf/test_math_ops_tf.py (method `sparse`).
Tensor I64(const std::vector<int64_t>& v, const Shape& s) { return Make<int64_t>(v, s); }

void AddSparseMath(std::vector<OpCase>* c) {
  // A = [[0, 1, 0, 2], [0, 0, 0, 0], [3, 0, 4, 0]] as a sparse tensor in row-major order.
  const Tensor ai = I64({0, 1, 0, 3, 2, 0, 2, 2}, {4, 2});
  const Tensor av = Make<float>({1, 2, 3, 4}, {4});
  const Tensor as = I64({3, 4}, {2});
  c->push_back(OpCaseBuilder("SparseReorder")
                   .T(DType::kFloat)
                   .Input(I64({2, 0, 0, 3, 0, 1}, {3, 2}))
                   .Input(Make<float>({3, 2, 1}, {3}))
                   .Input(as)
                   .Reference([](const auto&) {
                     return std::vector<Tensor>{I64({0, 1, 0, 3, 2, 0}, {3, 2}),
                                                Make<float>({1, 2, 3}, {3})};
                   })
                   .Build());
  c->push_back(OpCaseBuilder("SparseConcat", "SparseConcat along dim 1")
                   .T(DType::kFloat)
                   .Int("N", 2)
                   .Int("concat_dim", 1)
                   .Input(I64({0, 0, 1, 2}, {2, 2}))
                   .Input(I64({0, 1, 1, 0}, {2, 2}))
                   .Input(Make<float>({1, 2}, {2}))
                   .Input(Make<float>({3, 4}, {2}))
                   .Input(I64({2, 3}, {2}))
                   .Input(I64({2, 2}, {2}))
                   .Reference([](const auto&) {
                     return std::vector<Tensor>{I64({0, 0, 0, 4, 1, 2, 1, 3}, {4, 2}),
                                                Make<float>({1, 3, 2, 4}, {4}), I64({2, 5}, {2})};
                   })
                   .Build());
  c->push_back(OpCaseBuilder("SparseSlice", "SparseSlice rows 1.. columns 1..3")
                   .T(DType::kFloat)
                   .Input(ai)
                   .Input(av)
                   .Input(as)
                   .Input(I64({1, 1}, {2}))
                   .Input(I64({5, 2}, {2}))
                   .Reference([](const auto&) {
                     return std::vector<Tensor>{I64({1, 1}, {1, 2}), Make<float>({4}, {1}),
                                                I64({2, 2}, {2})};
                   })
                   .Build());
  // SparseSplit of the 4 columns in 3: widths 2, 1, 1.
  c->push_back(OpCaseBuilder("SparseSplit", "SparseSplit columns in 3")
                   .T(DType::kFloat)
                   .Int("num_split", 3)
                   .Input(Tensor::Scalar<int64_t>(1))
                   .Input(ai)
                   .Input(av)
                   .Input(as)
                   .Reference([](const auto&) {
                     return std::vector<Tensor>{
                         I64({0, 1, 2, 0}, {2, 2}), I64({2, 0}, {1, 2}),   I64({0, 0}, {1, 2}),
                         Make<float>({1, 3}, {2}),  Make<float>({4}, {1}), Make<float>({2}, {1}),
                         I64({3, 2}, {2}),          I64({3, 1}, {2}),      I64({3, 1}, {2})};
                   })
                   .Build());
  c->push_back(OpCaseBuilder("SparseSliceGrad")
                   .T(DType::kFloat)
                   .Input(Make<float>({7}, {1}))
                   .Input(ai)
                   .Input(I64({1, 1}, {2}))
                   .Input(I64({1, 1}, {1, 2}))
                   .Reference1([](const auto&) {
                     return Make<float>({0, 0, 0, 7}, {4});
                   })
                   .Build());
  c->push_back(OpCaseBuilder("SparseAddGrad")
                   .T(DType::kFloat)
                   .Input(Make<float>({5, 6, 7}, {3}))
                   .Input(I64({0, 1, 2, 2}, {2, 2}))
                   .Input(I64({0, 1, 1, 1}, {2, 2}))
                   .Input(I64({0, 1, 1, 1, 2, 2}, {3, 2}))
                   .Reference([](const auto&) {
                     return std::vector<Tensor>{Make<float>({5, 7}, {2}), Make<float>({5, 6}, {2})};
                   })
                   .Build());
  c->push_back(
      OpCaseBuilder("SparseFillEmptyRowsGrad")
          .T(DType::kFloat)
          .Input(I64({0, 2, 3}, {3}))
          .Input(Make<float>({1, 10, 100, 1000}, {4}))
          .Reference([](const auto&) {
            return std::vector<Tensor>{Make<float>({1, 100, 1000}, {3}), Tensor::Scalar<float>(10)};
          })
          .Build());
  // A x B, B = [[1, 2], [3, 4], [5, 6], [7, 8]]: [[17, 20], [0, 0], [23, 30]]; and the adjoints.
  const Tensor b = Make<float>({1, 2, 3, 4, 5, 6, 7, 8}, {4, 2});
  c->push_back(OpCaseBuilder("SparseTensorDenseMatMul")
                   .T(DType::kFloat)
                   .Input(ai)
                   .Input(av)
                   .Input(as)
                   .Input(b)
                   .Reference1([](const auto&) {
                     return Make<float>({17, 20, 0, 0, 23, 30}, {3, 2});
                   })
                   .Build());
  c->push_back(OpCaseBuilder("SparseTensorDenseMatMul", "SparseTensorDenseMatMul adjoints")
                   .T(DType::kDouble)
                   .Type("Tindices", DType::kInt32)
                   .Bool("adjoint_a", true)
                   .Bool("adjoint_b", true)
                   .Input(Make<int32_t>({0, 1, 0, 3, 2, 0, 2, 2}, {4, 2}))
                   .Input(Make<double>({1, 2, 3, 4}, {4}))
                   .Input(as)
                   .Input(Make<double>({1, 2, 3, 4, 5, 6}, {2, 3}))
                   .Reference1([](const auto&) {
                     // A^T [4, 3] x B^T [3, 2].
                     return Make<double>({9, 18, 1, 4, 12, 24, 2, 8}, {4, 2});
                   })
                   .Build());
  c->push_back(OpCaseBuilder("SparseTensorDenseAdd")
                   .T(DType::kFloat)
                   .Type("Tindices", DType::kInt64)
                   .Input(ai)
                   .Input(av)
                   .Input(as)
                   .Input(Make<float>(std::vector<float>(12, 0.5f), {3, 4}))
                   .Reference1([](const auto&) {
                     return Make<float>(
                         {0.5f, 1.5f, 0.5f, 2.5f, 0.5f, 0.5f, 0.5f, 0.5f, 3.5f, 0.5f, 4.5f, 0.5f},
                         {3, 4});
                   })
                   .Build());
  const Tensor dense_row = Make<float>({10, 20, 30, 40}, {4});
  for (const char* op : {"SparseDenseCwiseAdd", "SparseDenseCwiseMul", "SparseDenseCwiseDiv"}) {
    const std::string name = op;
    c->push_back(OpCaseBuilder(name, name + " broadcast row")
                     .T(DType::kFloat)
                     .Input(ai)
                     .Input(av)
                     .Input(as)
                     .Input(dense_row)
                     .Reference1([name](const auto&) {
                       const float v[] = {1, 2, 3, 4}, d[] = {20, 40, 10, 30};
                       std::vector<float> o;
                       for (int i = 0; i < 4; ++i)
                         o.push_back(name == "SparseDenseCwiseAdd"   ? v[i] + d[i]
                                     : name == "SparseDenseCwiseMul" ? v[i] * d[i]
                                                                     : v[i] / d[i]);
                       return Make<float>(o, {4});
                     })
                     .Build());
  }
  for (bool keep : {false, true}) {
    c->push_back(OpCaseBuilder("SparseReduceSum",
                               keep ? "SparseReduceSum keep_dims" : "SparseReduceSum over columns")
                     .T(DType::kFloat)
                     .Bool("keep_dims", keep)
                     .Input(ai)
                     .Input(av)
                     .Input(as)
                     .Input(Make<int32_t>({-1}, {1}))
                     .Reference1([keep](const auto&) {
                       return Make<float>({3, 0, 7}, keep ? Shape{3, 1} : Shape{3});
                     })
                     .Build());
  }
  c->push_back(OpCaseBuilder("SparseReduceMax", "SparseReduceMax over rows")
                   .T(DType::kFloat)
                   .Input(ai)
                   .Input(Make<float>({-1, -2, -3, -4}, {4}))
                   .Input(as)
                   .Input(Make<int32_t>({0}, {1}))
                   .Reference1([](const auto&) {
                     return Make<float>({-3, -1, -4, -2}, {4});
                   })
                   .Build());
  c->push_back(OpCaseBuilder("SparseReduceSumSparse")
                   .T(DType::kFloat)
                   .Input(ai)
                   .Input(av)
                   .Input(as)
                   .Input(Make<int32_t>({1}, {1}))
                   .Reference([](const auto&) {
                     return std::vector<Tensor>{I64({0, 2}, {2, 1}), Make<float>({3, 7}, {2}),
                                                I64({3}, {1})};
                   })
                   .Build());
  c->push_back(OpCaseBuilder("SparseReduceMaxSparse")
                   .T(DType::kInt32)
                   .Input(ai)
                   .Input(Make<int32_t>({5, 9, 3, 4}, {4}))
                   .Input(as)
                   .Input(Make<int32_t>({0, 1}, {2}))
                   .Reference([](const auto&) {
                     return std::vector<Tensor>{Tensor(DType::kInt64, Shape{1, 0}),
                                                Make<int32_t>({9}, {1}),
                                                Tensor(DType::kInt64, Shape{0})};
                   })
                   .Build());
  c->push_back(OpCaseBuilder("SparseSoftmax")
                   .T(DType::kDouble)
                   .Input(ai)
                   .Input(Make<double>({1, 2, 3, 3}, {4}))
                   .Input(as)
                   .Reference1([](const auto&) {
                     const double e = std::exp(1.0);
                     return Make<double>({1 / (1 + e), e / (1 + e), 0.5, 0.5}, {4});
                   })
                   .Tolerance(1e-12)
                   .Build());
  // B = [[0, 5, 0, 0], [0, 0, 0, 0], [0, 0, -4, 6]].
  const Tensor bi = I64({0, 1, 2, 2, 2, 3}, {3, 2});
  const Tensor bv = Make<float>({5, -4, 6}, {3});
  for (float thresh : {0.0f, 0.5f}) {
    c->push_back(OpCaseBuilder("SparseAdd", "SparseAdd thresh " + std::to_string(thresh))
                     .T(DType::kFloat)
                     .Type("Treal", DType::kFloat)
                     .Input(ai)
                     .Input(av)
                     .Input(as)
                     .Input(bi)
                     .Input(bv)
                     .Input(as)
                     .Input(Tensor::Scalar<float>(thresh))
                     .Reference([thresh](const auto&) {
                       if (thresh == 0.0f) {
                         return std::vector<Tensor>{I64({0, 1, 0, 3, 2, 0, 2, 2, 2, 3}, {5, 2}),
                                                    Make<float>({6, 2, 3, 0, 6}, {5}),
                                                    I64({3, 4}, {2})};
                       }
                       return std::vector<Tensor>{I64({0, 1, 0, 3, 2, 0, 2, 3}, {4, 2}),
                                                  Make<float>({6, 2, 3, 6}, {4}), I64({3, 4}, {2})};
                     })
                     .Build());
  }
  for (bool maximum : {true, false}) {
    c->push_back(OpCaseBuilder(maximum ? "SparseSparseMaximum" : "SparseSparseMinimum")
                     .T(DType::kFloat)
                     .Input(ai)
                     .Input(av)
                     .Input(as)
                     .Input(bi)
                     .Input(bv)
                     .Input(as)
                     .Reference([maximum](const auto&) {
                       return std::vector<Tensor>{I64({0, 1, 0, 3, 2, 0, 2, 2, 2, 3}, {5, 2}),
                                                  maximum ? Make<float>({5, 2, 3, 4, 6}, {5})
                                                          : Make<float>({1, 0, 0, -4, 0}, {5})};
                     })
                     .Build());
  }
  // Sets with sparse operands: rows of A's columns {1, 3}, {}, {0, 2} against dense rows.
  const Tensor set2 = Make<int64_t>({1, 2, 0, 0, 2, 2}, {3, 2});
  c->push_back(OpCaseBuilder("DenseToSparseSetOperation", "DenseToSparseSetOperation a-b")
                   .T(DType::kInt64)
                   .String("set_operation", "a-b")
                   .Input(set2)
                   .Input(ai)
                   .Input(I64({1, 3, 0, 2}, {4}))
                   .Input(as)
                   .Reference([](const auto&) {
                     return std::vector<Tensor>{I64({0, 0, 1, 0}, {2, 2}), I64({2, 0}, {2}),
                                                I64({3, 1}, {2})};
                   })
                   .Build());
  c->push_back(OpCaseBuilder("SparseToSparseSetOperation", "SparseToSparseSetOperation union")
                   .T(DType::kInt64)
                   .String("set_operation", "union")
                   .Input(ai)
                   .Input(I64({1, 3, 0, 2}, {4}))
                   .Input(as)
                   .Input(bi)
                   .Input(I64({5, 2, 6}, {3}))
                   .Input(as)
                   .Reference([](const auto&) {
                     return std::vector<Tensor>{I64({0, 0, 0, 1, 0, 2, 2, 0, 2, 1, 2, 2}, {6, 2}),
                                                I64({1, 3, 5, 0, 2, 6}, {6}), I64({3, 3}, {2})};
                   })
                   .Build());
  c->push_back(OpCaseBuilder("SetSize")
                   .T(DType::kString)
                   .Input(I64({0, 0, 0, 1, 0, 2, 2, 0}, {4, 2}))
                   .Input(Make<std::string>({"a", "b", "a", "c"}, {4}))
                   .Input(I64({3, 5}, {2}))
                   .Reference1([](const auto&) {
                     return Make<int32_t>({2, 0, 1}, {3});
                   })
                   .Build());
}

}  // namespace

std::vector<OpCase> SparseCases() {
  std::vector<OpCase> c;
  AddSparseCross(&c);
  // SparseToDense: [N, R] indices, [N] values or one scalar, 1-D and scalar index forms.
  for (DType t : {DType::kFloat, DType::kString, DType::kInt32, DType::kBool, DType::kHalf}) {
    const Tensor idx = Make<int64_t>({0, 1, 1, 0, 1, 2}, Shape{3, 2});
    const Tensor values = Distinct(t, Shape{3}, 4);
    const Tensor dflt = Distinct(t, Shape{}, 90);
    for (bool validate : {true, false}) {
      c.push_back(OpCaseBuilder("SparseToDense", "SparseToDense " + DTypeShortName(t) +
                                                     (validate ? "" : " unvalidated"))
                      .T(t)
                      .Type("Tindices", DType::kInt64)
                      .Bool("validate_indices", validate)
                      .Input(idx)
                      .ConstInput(Vec<int64_t>({2, 3}))
                      .Input(values)
                      .Input(dflt)
                      .Reference1([](const std::vector<Tensor>& in) {
                        return RefMove(
                            in[2], Shape{2, 3},
                            [](const Index& o) -> int64_t {
                              const int64_t flat = o[0] * 3 + o[1];
                              return flat == 1 ? 0 : flat == 3 ? 1 : flat == 5 ? 2 : -1;
                            },
                            &in[3]);
                      })
                      .Build());
    }
    c.push_back(OpCaseBuilder("SparseToDense", "SparseToDense scalar value " + DTypeShortName(t))
                    .T(t)
                    .Type("Tindices", DType::kInt32)
                    .Input(Vec<int32_t>({1, 3}))
                    .Input(Vec<int32_t>({5}))
                    .Input(Distinct(t, Shape{}, 6))
                    .Input(dflt)
                    .Reference1([](const std::vector<Tensor>& in) {
                      return RefMove(
                          in[2], Shape{5},
                          [](const Index& o) -> int64_t { return o[0] == 1 || o[0] == 3 ? 0 : -1; },
                          &in[3]);
                    })
                    .Build());
  }
  c.push_back(OpCaseBuilder("SparseToDense", "SparseToDense scalar index")
                  .T(DType::kInt64)
                  .Type("Tindices", DType::kInt32)
                  .Input(Tensor::Scalar<int32_t>(2))
                  .Input(Vec<int32_t>({3}))
                  .Input(Tensor::Scalar<int64_t>(7))
                  .Input(Tensor::Scalar<int64_t>(0))
                  .Reference1([](const auto&) {
                    return Vec<int64_t>({0, 0, 7});
                  })
                  .Build());

  // SparseFillEmptyRows: rows out of order, empty rows, an empty input.
  for (DType t : {DType::kFloat, DType::kString, DType::kInt64}) {
    const Tensor dflt = Distinct(t, Shape{}, 9);
    c.push_back(OpCaseBuilder("SparseFillEmptyRows")
                    .T(t)
                    .Input(Make<int64_t>({3, 1, 0, 2, 3, 0, 0, 0}, Shape{4, 2}))
                    .Input(Distinct(t, Shape{4}, 1))
                    .Input(Vec<int64_t>({5, 4}))
                    .Input(dflt)
                    .Reference([](const std::vector<Tensor>& in) {
                      // Rows in order; within a row the input order; empty rows get (row, 0).
                      const int64_t* idx = in[0].data<int64_t>();
                      std::vector<int64_t> oi;
                      std::vector<int64_t> src;  // input entry or -1 for the default
                      std::vector<int64_t> rev(4);
                      std::vector<bool> empty;
                      for (int64_t row = 0; row < 5; ++row) {
                        bool any = false;
                        for (int64_t i = 0; i < 4; ++i) {
                          if (idx[2 * i] != row) continue;
                          rev[i] = static_cast<int64_t>(src.size());
                          oi.insert(oi.end(), {idx[2 * i], idx[2 * i + 1]});
                          src.push_back(i);
                          any = true;
                        }
                        if (!any) {
                          oi.insert(oi.end(), {row, 0});
                          src.push_back(-1);
                        }
                        empty.push_back(!any);
                      }
                      const int64_t n = static_cast<int64_t>(src.size());
                      Tensor values = RefMove(
                          in[1], Shape{n}, [&](const Index& o) { return src[o[0]]; }, &in[3]);
                      Tensor e(DType::kBool, Shape{5});
                      for (int i = 0; i < 5; ++i) e.data<bool>()[i] = empty[i];
                      return std::vector<Tensor>{Make<int64_t>(oi, Shape{n, 2}), values, e,
                                                 Vec<int64_t>(rev)};
                    })
                    .Build());
    c.push_back(
        OpCaseBuilder("SparseFillEmptyRows", "SparseFillEmptyRows no entries " + DTypeShortName(t))
            .T(t)
            .Input(Make<int64_t>({}, Shape{0, 2}))
            .Input(Tensor(t, Shape{0}))
            .Input(Vec<int64_t>({2, 4}))
            .Input(dflt)
            .Reference([](const std::vector<Tensor>& in) {
              Tensor e(DType::kBool, Shape{2});
              e.data<bool>()[0] = e.data<bool>()[1] = true;
              return std::vector<Tensor>{
                  Make<int64_t>({0, 0, 1, 0}, Shape{2, 2}),
                  RefMove(in[3], Shape{2}, [](const Index&) { return int64_t{0}; }), e,
                  Tensor(DType::kInt64, Shape{0})};
            })
            .Build());
  }

  // SparseReshape: to a -1 shape, to more dims, to fewer.
  struct R {
    std::vector<int64_t> in_shape, new_shape, out_shape;
  };
  for (const R& r : {R{{2, 3}, {3, -1}, {3, 2}}, R{{2, 3, 4}, {6, 2, 2}, {6, 2, 2}},
                     R{{4, 5, 6}, {-1}, {120}}, R{{0, 3}, {-1, 5}, {0, 5}}}) {
    // Every other element of the dense space is present.
    int64_t dense = 1;
    for (int64_t d : r.in_shape) dense *= d;
    const Shape in_s = *Shape::FromDims(r.in_shape);
    const Shape out_s = *Shape::FromDims(r.out_shape);
    std::vector<int64_t> in_idx, out_idx;
    int64_t n = 0;
    for (int64_t f = 0; f < dense; f += 2, ++n) {
      const Index a = Unravel(f, in_s), b = Unravel(f, out_s);
      in_idx.insert(in_idx.end(), a.begin(), a.end());
      out_idx.insert(out_idx.end(), b.begin(), b.end());
    }
    const int64_t rin = in_s.rank(), rout = out_s.rank();
    std::string to;
    for (int64_t d : r.new_shape) to += (to.empty() ? "" : ",") + std::to_string(d);
    c.push_back(
        OpCaseBuilder("SparseReshape", "SparseReshape " + in_s.ToString() + " to [" + to + "]")
            .Input(Make<int64_t>(in_idx, Shape{n, rin}))
            .Input(Vec<int64_t>(r.in_shape))
            .Input(Vec<int64_t>(r.new_shape))
            .Reference([out_idx, n, rout, r](const auto&) {
              return std::vector<Tensor>{Make<int64_t>(out_idx, Shape{n, rout}),
                                         Vec<int64_t>(r.out_shape)};
            })
            .Build());
  }

  // DenseToDenseSetOperation, all four operations, against std::set.
  for (const std::string op : {"a-b", "b-a", "intersection", "union"}) {
    for (DType t : {DType::kInt32, DType::kInt64, DType::kUInt8, DType::kString, DType::kInt16}) {
      const Tensor a =
          t == DType::kString
              ? Make<std::string>({"b", "a", "b", "c", "x", "y"}, Shape{2, 3})
              : RefUnaryDouble(
                    Make<double>({3, 1, 3, 2, 9, 8}, Shape{2, 3}), [](double v) { return v; }, t);
      const Tensor b =
          t == DType::kString
              ? Make<std::string>({"c", "d", "a", "a", "y", "y", "z", "x"}, Shape{2, 4})
              : RefUnaryDouble(
                    Make<double>({2, 4, 3, 3, 8, 8, 7, 9}, Shape{2, 4}), [](double v) { return v; },
                    t);
      c.push_back(OpCaseBuilder("DenseToDenseSetOperation",
                                "DenseToDenseSetOperation " + op + " " + DTypeShortName(t))
                      .T(t)
                      .String("set_operation", op)
                      .Input(a)
                      .Input(b)
                      .Reference([op](const std::vector<Tensor>& in) {
                        std::vector<int64_t> idx;
                        std::vector<int64_t> src;  // flat position in a (>= 0) or b (< 0)
                        int64_t widest = 0;
                        for (int64_t g = 0; g < 2; ++g) {
                          // Sets keyed by the value's text, so strings and ints sort alike.
                          auto key = [&](const Tensor& t, int64_t i) {
                            return t.dtype() == DType::kString
                                       ? t.data<std::string>()[i]
                                       : std::to_string(
                                             1000 +
                                             static_cast<int64_t>(
                                                 RefUnaryDouble(
                                                     t, [](double v) { return v; }, DType::kDouble)
                                                     .data<double>()[i]));
                          };
                          std::map<std::string, int64_t> sa, sb;
                          for (int64_t i = 0; i < 3; ++i)
                            sa.emplace(key(in[0], g * 3 + i), g * 3 + i);
                          for (int64_t i = 0; i < 4; ++i)
                            sb.emplace(key(in[1], g * 4 + i), -1 - (g * 4 + i));
                          std::map<std::string, int64_t> r;
                          for (auto& [k, v] : sa)
                            if ((op == "a-b" && !sb.count(k)) ||
                                (op == "intersection" && sb.count(k)) || op == "union")
                              r.emplace(k, v);
                          for (auto& [k, v] : sb)
                            if ((op == "b-a" && !sa.count(k)) || (op == "union" && !sa.count(k)))
                              r.emplace(k, v);
                          int64_t j = 0;
                          for (auto& [k, v] : r) {
                            idx.insert(idx.end(), {g, j++});
                            src.push_back(v);
                          }
                          widest = std::max(widest, j);
                        }
                        const int64_t n = static_cast<int64_t>(src.size());
                        Tensor values(in[0].dtype(), Shape{n});
                        for (int64_t i = 0; i < n; ++i) {
                          if (src[i] >= 0) {
                            CopyElement(in[0], src[i], &values, i);
                          } else {
                            CopyElement(in[1], -1 - src[i], &values, i);
                          }
                        }
                        return std::vector<Tensor>{Make<int64_t>(idx, Shape{n, 2}), values,
                                                   Vec<int64_t>({2, widest})};
                      })
                      .Build());
    }
  }
  AddSparseMath(&c);
  return c;
}

}  // namespace kiln::testing
