// Shape and data-movement kernels against plain-loop references: Shape/Size/Rank, Reshape,
// ExpandDims, Squeeze, Transpose, Pack/Unpack, ConcatV2, Fill, Range, Tile, BroadcastTo,
// StridedSlice (numpy indexing semantics, many random mask combinations) and GatherV2; static
// shape inference from constant inputs; and the error paths.
#include <doctest/doctest.h>

#include <algorithm>
#include <numeric>
#include <random>
#include <string>
#include <tuple>

#include "exec/kernel_test_util.h"

namespace kiln::exec {
namespace {

using testing::CheckClose;
using testing::CheckError;
using testing::Make;
using testing::OpRunner;
using testing::Random;
using testing::Unravel;

// A float tensor whose element i is i: every output value says where it came from.
Tensor Iota(const Shape& s) {
  Tensor t(DType::kFloat, s);
  float* p = t.data<float>();
  for (int64_t i = 0; i < s.num_elements(); ++i) p[i] = static_cast<float>(i);
  return t;
}

Tensor Strings(const Shape& s) {
  Tensor t(DType::kString, s);
  for (int64_t i = 0; i < s.num_elements(); ++i) t.data<std::string>()[i] = "s" + std::to_string(i);
  return t;
}

Tensor I32(const std::vector<int32_t>& v) {
  return Make<int32_t>(v, Shape{static_cast<int64_t>(v.size())});
}
Tensor I64(const std::vector<int64_t>& v) {
  return Make<int64_t>(v, Shape{static_cast<int64_t>(v.size())});
}

int64_t FlatIndex(const std::vector<int64_t>& idx, const Shape& s) {
  int64_t f = 0;
  for (int d = 0; d < s.rank(); ++d) f = f * s.dim(d) + idx[d];
  return f;
}

// ---- Shape, Size, Rank ---------------------------------------------------------------------

TEST_CASE("Shape, Size and Rank report the input's dims in int32 or int64") {
  Tensor x = Iota({2, 3, 4});
  auto s32 = OpRunner("Shape").T(DType::kFloat).Input(x).Run1();
  REQUIRE(s32.ok());
  CheckClose<int32_t>(*s32, I32({2, 3, 4}));
  auto s64 = OpRunner("Shape").T(DType::kFloat).Type("out_type", DType::kInt64).Input(x).Run1();
  REQUIRE(s64.ok());
  CheckClose<int64_t>(*s64, I64({2, 3, 4}));
  auto scalar_shape = OpRunner("Shape").T(DType::kInt32).Input(Tensor::Scalar<int32_t>(5)).Run1();
  REQUIRE(scalar_shape.ok());
  CHECK(scalar_shape->shape() == Shape{0});

  auto size = OpRunner("Size").T(DType::kFloat).Input(x).Run1();
  REQUIRE(size.ok());
  CheckClose<int32_t>(*size, Tensor::Scalar<int32_t>(24));
  auto size64 = OpRunner("Size")
                    .T(DType::kString)
                    .Type("out_type", DType::kInt64)
                    .Input(Strings({0, 7}))
                    .Run1();
  REQUIRE(size64.ok());
  CheckClose<int64_t>(*size64, Tensor::Scalar<int64_t>(0));

  auto rank = OpRunner("Rank").T(DType::kFloat).Input(x).Run1();
  REQUIRE(rank.ok());
  CheckClose<int32_t>(*rank, Tensor::Scalar<int32_t>(3));

  OpRunner unknown("Shape");
  unknown.T(DType::kFloat).InputSpec({DType::kFloat, PartialShape::UnknownRank()});
  REQUIRE(unknown.Prepare().ok());
  CHECK(unknown.output_specs()[0].shape == PartialShape{-1});
  OpRunner partial("Shape");
  partial.T(DType::kFloat).InputSpec({DType::kFloat, PartialShape{-1, 5}});
  REQUIRE(partial.Prepare().ok());
  CHECK(partial.output_specs()[0].shape == PartialShape{2});

  OpRunner bad("Shape", "sh");
  bad.T(DType::kFloat).Type("out_type", DType::kFloat).Input(x);
  CheckError(bad.Prepare(), {"node 'sh'", "out_type", "float32", "int32, int64"});
  OpRunner wrong("Rank");
  wrong.T(DType::kInt32).Input(x);
  CheckError(wrong.Prepare(), {"input 'input'", "expected dtype int32", "got float32"});
}

// ---- Reshape -----------------------------------------------------------------------------------

TEST_CASE("Reshape keeps the values in order and infers one -1") {
  Tensor x = Iota({2, 3, 4});
  struct Case {
    std::vector<int32_t> shape;
    Shape want;
  };
  for (const Case& c : std::vector<Case>{{{24}, {24}},
                                         {{-1}, {24}},
                                         {{4, -1}, {4, 6}},
                                         {{2, -1, 3}, {2, 4, 3}},
                                         {{1, 24, 1}, {1, 24, 1}},
                                         {{6, 4}, {6, 4}}}) {
    CAPTURE(c.want.ToString());
    auto got = OpRunner("Reshape").T(DType::kFloat).Input(x).Input(I32(c.shape)).Run1();
    REQUIRE_MESSAGE(got.ok(), got.status().ToString());
    CHECK(got->shape() == c.want);
    CHECK(got->SharesBufferWith(x));  // a view: no copy
    CheckClose<float>(*got, Iota(c.want));
  }
  // int64 shapes, strings, scalars.
  auto s = OpRunner("Reshape")
               .T(DType::kString)
               .Type("Tshape", DType::kInt64)
               .Input(Strings({6}))
               .Input(I64({3, 2}))
               .Run1();
  REQUIRE(s.ok());
  CHECK(s->shape() == Shape{3, 2});
  CHECK(s->data<std::string>()[5] == "s5");
  auto scalar = OpRunner("Reshape").T(DType::kFloat).Input(Iota({1, 1})).Input(I32({})).Run1();
  REQUIRE(scalar.ok());
  CHECK(scalar->shape() == Shape{});
}

TEST_CASE("Reshape of empty tensors follows TF's zero-size rules") {
  auto a = OpRunner("Reshape").T(DType::kFloat).Input(Iota({0, 6})).Input(I32({-1, 0, 2})).Run1();
  REQUIRE_MESSAGE(a.ok(), a.status().ToString());
  CHECK(a->shape() == Shape{3, 0, 2});
  auto b = OpRunner("Reshape").T(DType::kFloat).Input(Iota({0, 6})).Input(I32({-1, 3})).Run1();
  REQUIRE(b.ok());
  CHECK(b->shape() == Shape{0, 3});
}

TEST_CASE("Reshape errors name the element counts") {
  CheckError(
      OpRunner("Reshape", "r").T(DType::kFloat).Input(Iota({2, 3})).Input(I32({4})).Run1().status(),
      {"node 'r'", "6 values", "requested shape [4] has 4"});
  CheckError(
      OpRunner("Reshape").T(DType::kFloat).Input(Iota({7})).Input(I32({-1, 2})).Run1().status(),
      {"7 values", "multiple of 2"});
  CheckError(
      OpRunner("Reshape").T(DType::kFloat).Input(Iota({4})).Input(I32({-1, -1})).Run1().status(),
      {"only one dimension", "-1", "0 and 1"});
  CheckError(
      OpRunner("Reshape").T(DType::kFloat).Input(Iota({4})).Input(I32({-2, 2})).Run1().status(),
      {"non-negative", "-2"});
  // The same check at prepare time when the shape is a constant.
  OpRunner r("Reshape", "rc");
  r.T(DType::kFloat).Input(Iota({2, 3})).ConstantInput(I32({5}));
  CheckError(r.Prepare(), {"node 'rc'", "(Reshape)", "6 values", "has 5"});
  OpRunner bad_type("Reshape");
  bad_type.T(DType::kFloat).Input(Iota({2})).Input(Make<float>({2}, {1}));
  CheckError(bad_type.Prepare(), {"input 'shape'", "expected dtype int32", "float32"});
}

TEST_CASE("Reshape infers static shapes from a constant shape input") {
  auto prepare = [](const PartialShape& in, const std::vector<int32_t>& shape, bool constant) {
    OpRunner r("Reshape");
    r.T(DType::kFloat).InputSpec({DType::kFloat, in});
    if (constant) {
      r.ConstantInput(I32(shape));
    } else {
      r.Input(I32(shape));
    }
    Status s = r.Prepare();
    REQUIRE_MESSAGE(s.ok(), s.ToString());
    return r.output_specs()[0].shape;
  };
  CHECK(prepare(Shape{2, 3, 4}, {-1, 4}, true) == PartialShape{6, 4});
  CHECK(prepare(PartialShape{-1, 3}, {-1, 3}, true) == PartialShape{-1, 3});
  CHECK(prepare(PartialShape{-1, 3}, {3, 2}, true) == PartialShape{3, 2});
  CHECK(prepare(PartialShape::UnknownRank(), {2, -1}, true) == PartialShape{2, -1});
  CHECK(prepare(Shape{2, 3}, {3, 2}, false) == PartialShape{-1, -1});
}

// ---- ExpandDims, Squeeze ---------------------------------------------------------------------

TEST_CASE("ExpandDims inserts a 1 at every valid position") {
  Tensor x = Iota({2, 3});
  struct Case {
    int dim;
    Shape want;
  };
  for (const Case& c : std::vector<Case>{
           {0, {1, 2, 3}}, {1, {2, 1, 3}}, {2, {2, 3, 1}}, {-1, {2, 3, 1}}, {-3, {1, 2, 3}}}) {
    CAPTURE(c.dim);
    OpRunner r("ExpandDims");
    r.T(DType::kFloat).Input(x).ConstantInput(Tensor::Scalar<int32_t>(c.dim));
    auto got = r.Run1();
    REQUIRE(got.ok());
    CHECK(got->shape() == c.want);
    CHECK(r.output_specs()[0].shape == PartialShape(c.want));
    CheckClose<float>(*got, Iota(c.want));
  }
  auto scalar = OpRunner("ExpandDims")
                    .T(DType::kBool)
                    .Type("Tdim", DType::kInt64)
                    .Input(Tensor::Scalar<bool>(true))
                    .Input(I64({0}))
                    .Run1();
  REQUIRE(scalar.ok());
  CHECK(scalar->shape() == Shape{1});
  CheckError(OpRunner("ExpandDims", "e")
                 .T(DType::kFloat)
                 .Input(x)
                 .Input(Tensor::Scalar<int32_t>(3))
                 .Run1()
                 .status(),
             {"node 'e'", "dim index 3", "2 dimensions", "[-3, 2]"});
  OpRunner c("ExpandDims");
  c.T(DType::kFloat).Input(x).ConstantInput(Tensor::Scalar<int32_t>(-4));
  CheckError(c.Prepare(), {"dim index -4"});
}

TEST_CASE("Squeeze drops size-1 dims, all or the listed ones") {
  Tensor x = Iota({1, 2, 1, 3, 1});
  auto all = OpRunner("Squeeze").T(DType::kFloat).Input(x).Run1();
  REQUIRE(all.ok());
  CheckClose<float>(*all, Iota({2, 3}));
  auto listed =
      OpRunner("Squeeze").T(DType::kFloat).IntList("squeeze_dims", {0, -1}).Input(x).Run1();
  REQUIRE(listed.ok());
  CheckClose<float>(*listed, Iota({2, 1, 3}));

  OpRunner partial("Squeeze");
  partial.T(DType::kFloat)
      .IntList("squeeze_dims", {2})
      .InputSpec({DType::kFloat, PartialShape{-1, 2, -1}});
  REQUIRE(partial.Prepare().ok());
  CHECK(partial.output_specs()[0].shape == PartialShape{-1, 2});
  OpRunner unknown("Squeeze");
  unknown.T(DType::kFloat).InputSpec({DType::kFloat, PartialShape{-1, 1}});
  REQUIRE(unknown.Prepare().ok());
  CHECK(unknown.output_specs()[0].shape.unknown_rank());

  CheckError(OpRunner("Squeeze", "sq")
                 .T(DType::kFloat)
                 .IntList("squeeze_dims", {1})
                 .Input(x)
                 .Run1()
                 .status(),
             {"node 'sq'", "squeeze dim[1]", "expected a dimension of 1, got 2"});
  CheckError(
      OpRunner("Squeeze").T(DType::kFloat).IntList("squeeze_dims", {5}).Input(x).Run1().status(),
      {"squeeze_dims entry 5", "out of range", "rank 5"});
}

// ---- Transpose ---------------------------------------------------------------------------------

// out[i0..ik] = x[j] with j[perm[d]] = i[d].
template <typename T>
Tensor RefTranspose(const Tensor& x, const std::vector<int64_t>& perm) {
  Shape so;
  for (int64_t p : perm) so.AddDim(x.dim(p));
  Tensor out(x.dtype(), so);
  for (int64_t i = 0; i < so.num_elements(); ++i) {
    std::vector<int64_t> oi = Unravel(i, so), xi(x.rank());
    for (size_t d = 0; d < perm.size(); ++d) xi[perm[d]] = oi[d];
    out.data<T>()[i] = x.data<T>()[FlatIndex(xi, x.shape())];
  }
  return out;
}

TEST_CASE("Transpose matches a reference for every permutation up to rank 4") {
  const std::vector<Shape> shapes = {{5}, {3, 4}, {2, 3, 4}, {2, 1, 3, 5}, {0, 3, 2}, {}};
  for (const Shape& s : shapes) {
    std::vector<int64_t> perm(s.rank());
    std::iota(perm.begin(), perm.end(), 0);
    do {
      CAPTURE(s.ToString());
      CAPTURE(perm.size() > 0 ? perm[0] : -1);
      Tensor x = Iota(s);
      auto got = OpRunner("Transpose")
                     .T(DType::kFloat)
                     .Input(x)
                     .Input(I64(perm))
                     .Type("Tperm", DType::kInt64)
                     .Run1();
      REQUIRE_MESSAGE(got.ok(), got.status().ToString());
      CheckClose<float>(*got, RefTranspose<float>(x, perm));
    } while (std::next_permutation(perm.begin(), perm.end()));
  }
  Tensor big = Strings({3, 4, 5, 2, 3});
  std::vector<int64_t> perm = {4, 2, 0, 3, 1};
  auto got = OpRunner("Transpose").T(DType::kString).Input(big).Input(I32({4, 2, 0, 3, 1})).Run1();
  REQUIRE(got.ok());
  auto want = RefTranspose<std::string>(big, perm);
  for (int64_t i = 0; i < want.NumElements(); ++i) {
    REQUIRE(got->data<std::string>()[i] == want.data<std::string>()[i]);
  }
}

TEST_CASE(
    "Transpose infers shapes from a constant perm, negative entries too, and rejects bad perms") {
  OpRunner r("Transpose");
  r.T(DType::kFloat)
      .InputSpec({DType::kFloat, PartialShape{-1, 3, 5}})
      .ConstantInput(I32({2, 0, 1}));
  REQUIRE(r.Prepare().ok());
  CHECK(r.output_specs()[0].shape == PartialShape{5, -1, 3});
  CheckError(OpRunner("Transpose", "t")
                 .T(DType::kFloat)
                 .Input(Iota({2, 3}))
                 .Input(I32({0, 0}))
                 .Run1()
                 .status(),
             {"node 't'", "perm [0, 0]", "more than once"});
  CheckError(
      OpRunner("Transpose").T(DType::kFloat).Input(Iota({2, 3})).Input(I32({0, 2})).Run1().status(),
      {"perm [0, 2]", "out of range [-2, 2)"});
  // Negative entries count from the end (TF's kernel): -2 is 0, taken twice here.
  CheckError(OpRunner("Transpose")
                 .T(DType::kFloat)
                 .Input(Iota({2, 3}))
                 .Input(I32({0, -2}))
                 .Run1()
                 .status(),
             {"perm [0, -2]", "0 appears more than once"});
  CheckError(OpRunner("Transpose")
                 .T(DType::kFloat)
                 .Input(Iota({2, 3}))
                 .Input(I32({-3, 0}))
                 .Run1()
                 .status(),
             {"perm [-3, 0]", "-3 is out of range [-2, 2)"});
  OpRunner neg("Transpose");
  neg.T(DType::kFloat)
      .InputSpec({DType::kFloat, PartialShape{-1, 3, 5}})
      .ConstantInput(I32({-1, 0, -2}));
  REQUIRE(neg.Prepare().ok());
  CHECK(neg.output_specs()[0].shape == PartialShape{5, -1, 3});
  OpRunner len("Transpose");
  len.T(DType::kFloat).Input(Iota({2, 3})).Input(I32({1, 0, 2}));
  CheckError(len.Prepare(), {"'perm' has 3 entries", "(2, 3)"});
}

// ---- Pack, Unpack, ConcatV2 --------------------------------------------------------------------

TEST_CASE("Pack stacks along every axis and Unpack undoes it") {
  const Shape piece{2, 3};
  std::vector<Tensor> values;
  for (int k = 0; k < 3; ++k) values.push_back(Random<float>(piece, 10 + k));
  for (int axis : {0, 1, 2, -1, -3}) {
    CAPTURE(axis);
    OpRunner r("Pack");
    r.T(DType::kFloat).Int("N", 3).Int("axis", axis);
    for (const Tensor& v : values) r.Input(v);
    auto got = r.Run1();
    REQUIRE_MESSAGE(got.ok(), got.status().ToString());
    const int a = axis < 0 ? axis + 3 : axis;
    std::vector<int64_t> dims = piece.ToVector();
    dims.insert(dims.begin() + a, 3);
    REQUIRE(got->shape() == *Shape::FromDims(dims));
    CHECK(r.output_specs()[0].shape == PartialShape(got->shape()));
    for (int64_t i = 0; i < got->NumElements(); ++i) {
      std::vector<int64_t> idx = Unravel(i, got->shape());
      const int64_t k = idx[a];
      idx.erase(idx.begin() + a);
      REQUIRE(got->data<float>()[i] == values[k].data<float>()[FlatIndex(idx, piece)]);
    }
    auto back =
        OpRunner("Unpack").T(DType::kFloat).Int("num", 3).Int("axis", axis).Input(*got).Run();
    REQUIRE_MESSAGE(back.ok(), back.status().ToString());
    REQUIRE(back->size() == 3);
    for (int k = 0; k < 3; ++k) CheckClose<float>((*back)[k], values[k]);
  }
  // Scalars stack into a vector; strings move too.
  auto vec = OpRunner("Pack")
                 .T(DType::kString)
                 .Int("N", 2)
                 .Input(Tensor::StringScalar("a"))
                 .Input(Tensor::StringScalar("b"))
                 .Run1();
  REQUIRE(vec.ok());
  CHECK(vec->shape() == Shape{2});
  CHECK(vec->data<std::string>()[1] == "b");
}

TEST_CASE("Pack and Unpack errors") {
  CheckError(OpRunner("Pack", "p")
                 .T(DType::kFloat)
                 .Int("N", 2)
                 .Input(Iota({2}))
                 .Input(Iota({3}))
                 .Run1()
                 .status(),
             {"node 'p'", "shapes of all inputs must match", "(2,)", "values:1", "(3,)"});
  CheckError(OpRunner("Pack")
                 .T(DType::kFloat)
                 .Int("N", 3)
                 .Input(Iota({2}))
                 .Input(Iota({2}))
                 .Run1()
                 .status(),
             {"expected 3 inputs", "got 2"});
  CheckError(
      OpRunner("Pack").T(DType::kFloat).Int("N", 1).Int("axis", 2).Input(Iota({2})).Run1().status(),
      {"attr 'axis' 2", "out of range", "rank 2"});
  CheckError(
      OpRunner("Unpack", "u").T(DType::kFloat).Int("num", 3).Input(Iota({2, 4})).Run1().status(),
      {"node 'u'", "attr 'num' is 3", "dimension 0", "is 2"});
}

// Reference concat along `axis`.
Tensor RefConcat(const std::vector<Tensor>& xs, int axis) {
  Shape so = xs[0].shape();
  int64_t total = 0;
  for (const Tensor& x : xs) total += x.dim(axis);
  so.set_dim(axis, total);
  Tensor out(DType::kFloat, so);
  for (int64_t i = 0; i < so.num_elements(); ++i) {
    std::vector<int64_t> idx = Unravel(i, so);
    size_t k = 0;
    while (idx[axis] >= xs[k].dim(axis)) idx[axis] -= xs[k++].dim(axis);
    out.data<float>()[i] = xs[k].data<float>()[FlatIndex(idx, xs[k].shape())];
  }
  return out;
}

TEST_CASE("ConcatV2 joins along any axis, empty pieces included") {
  struct Case {
    std::vector<Shape> shapes;
    int axis;
  };
  const std::vector<Case> cases = {
      {{{2, 3}, {4, 3}}, 0},       {{{2, 3}, {2, 1}, {2, 5}}, 1},    {{{2, 3}, {2, 1}, {2, 5}}, -1},
      {{{2, 3, 4}, {2, 2, 4}}, 1}, {{{2, 0, 4}, {2, 2, 4}}, 1},      {{{0, 3}, {0, 3}}, 1},
      {{{5}, {0}, {2}}, 0},        {{{1, 2, 3, 4}, {1, 2, 3, 1}}, 3}};
  uint32_t seed = 1;
  for (const Case& c : cases) {
    CAPTURE(c.shapes[0].ToString());
    CAPTURE(c.axis);
    std::vector<Tensor> xs;
    OpRunner r("ConcatV2");
    r.T(DType::kFloat).Int("N", static_cast<int64_t>(c.shapes.size()));
    for (const Shape& s : c.shapes) {
      xs.push_back(Random<float>(s, seed++));
      r.Input(xs.back());
    }
    r.ConstantInput(Tensor::Scalar<int32_t>(c.axis));
    auto got = r.Run1();
    REQUIRE_MESSAGE(got.ok(), got.status().ToString());
    const int axis = c.axis < 0 ? c.axis + c.shapes[0].rank() : c.axis;
    CheckClose<float>(*got, RefConcat(xs, axis));
    CHECK(r.output_specs()[0].shape == PartialShape(got->shape()));
  }
}

TEST_CASE("ConcatV2 shape inference and errors") {
  OpRunner r("ConcatV2");
  r.T(DType::kFloat)
      .Int("N", 2)
      .InputSpec({DType::kFloat, PartialShape{-1, 3}})
      .InputSpec({DType::kFloat, PartialShape{2, 4}})
      .ConstantInput(Tensor::Scalar<int64_t>(1))
      .Type("Tidx", DType::kInt64);
  REQUIRE(r.Prepare().ok());
  CHECK(r.output_specs()[0].shape == PartialShape{2, 7});

  CheckError(OpRunner("ConcatV2", "c")
                 .T(DType::kFloat)
                 .Int("N", 2)
                 .Input(Iota({2, 3}))
                 .Input(Iota({3, 3}))
                 .Input(Tensor::Scalar<int32_t>(1))
                 .Run1()
                 .status(),
             {"node 'c'", "all dimensions but axis 1", "(2, 3)", "(3, 3)"});
  OpRunner pc("ConcatV2", "c");
  pc.T(DType::kFloat)
      .Int("N", 2)
      .Input(Iota({2, 3}))
      .Input(Iota({3, 3}))
      .ConstantInput(Tensor::Scalar<int32_t>(1));
  CheckError(pc.Prepare(), {"dimension 0", "values:1", "(3, 3)"});
  CheckError(OpRunner("ConcatV2")
                 .T(DType::kFloat)
                 .Int("N", 2)
                 .Input(Iota({2}))
                 .Input(Iota({2}))
                 .Input(Tensor::Scalar<int32_t>(1))
                 .Run1()
                 .status(),
             {"axis 1 is out of range", "rank 1"});
  CheckError(OpRunner("ConcatV2")
                 .T(DType::kFloat)
                 .Int("N", 2)
                 .Input(Tensor::Scalar<float>(1))
                 .Input(Tensor::Scalar<float>(2))
                 .Input(Tensor::Scalar<int32_t>(0))
                 .Run1()
                 .status(),
             {"cannot concatenate scalars"});
}

// ---- Fill, Range -------------------------------------------------------------------------------

TEST_CASE("Fill repeats a scalar of any dtype") {
  OpRunner r("Fill");
  r.T(DType::kFloat).ConstantInput(I32({2, 3})).Input(Tensor::Scalar<float>(1.5f));
  auto got = r.Run1();
  REQUIRE(got.ok());
  CHECK(r.output_specs()[0].shape == PartialShape{2, 3});
  CheckClose<float>(*got, Make<float>(std::vector<float>(6, 1.5f), {2, 3}));
  auto s = OpRunner("Fill")
               .T(DType::kString)
               .Type("index_type", DType::kInt64)
               .Input(I64({2, 0}))
               .Input(Tensor::StringScalar("x"))
               .Run1();
  REQUIRE(s.ok());
  CHECK(s->shape() == Shape{2, 0});
  auto scalar =
      OpRunner("Fill").T(DType::kInt64).Input(I32({})).Input(Tensor::Scalar<int64_t>(7)).Run1();
  REQUIRE(scalar.ok());
  CheckClose<int64_t>(*scalar, Tensor::Scalar<int64_t>(7));
  CheckError(OpRunner("Fill", "f")
                 .T(DType::kFloat)
                 .Input(I32({2, -1}))
                 .Input(Tensor::Scalar<float>(0))
                 .Run1()
                 .status(),
             {"node 'f'", "'dims' [2, -1]", "negative"});
  OpRunner notscalar("Fill");
  notscalar.T(DType::kFloat).Input(I32({2})).Input(Iota({2}));
  CheckError(notscalar.Prepare(), {"input 'value'", "expected rank 0"});
}

TEST_CASE("Range counts like Python's range, for ints and floats") {
  auto run_i = [](int32_t a, int32_t b, int32_t d) {
    return OpRunner("Range")
        .Input(Tensor::Scalar<int32_t>(a))
        .Input(Tensor::Scalar<int32_t>(b))
        .Input(Tensor::Scalar<int32_t>(d))
        .Run1();
  };
  auto ref = [](int64_t a, int64_t b, int64_t d) {
    std::vector<int32_t> v;
    for (int64_t x = a; d > 0 ? x < b : x > b; x += d) v.push_back(static_cast<int32_t>(x));
    return v;
  };
  for (auto item_ : std::vector<std::array<int32_t, 3>>{
           {0, 5, 1}, {2, 11, 3}, {10, 1, -2}, {5, 5, 1}, {-3, 3, 4}, {7, -8, -5}}) {
    auto a = std::get<0>(item_);
    auto b = std::get<1>(item_);
    auto d = std::get<2>(item_);
    CAPTURE(a);
    CAPTURE(b);
    CAPTURE(d);
    auto got = run_i(a, b, d);
    REQUIRE(got.ok());
    std::vector<int32_t> want = ref(a, b, d);
    CheckClose<int32_t>(*got, Make<int32_t>(want, Shape{static_cast<int64_t>(want.size())}));
  }
  OpRunner f("Range");
  f.Type("Tidx", DType::kDouble)
      .ConstantInput(Tensor::Scalar<double>(0.5))
      .ConstantInput(Tensor::Scalar<double>(2.0))
      .ConstantInput(Tensor::Scalar<double>(0.4));
  auto fd = f.Run1();
  REQUIRE(fd.ok());
  CHECK(f.output_specs()[0].shape == PartialShape{4});
  CheckClose<double>(*fd, Make<double>({0.5, 0.9, 1.3, 1.7}, {4}));
  auto ff = OpRunner("Range")
                .Type("Tidx", DType::kFloat)
                .Input(Tensor::Scalar<float>(1))
                .Input(Tensor::Scalar<float>(-1))
                .Input(Tensor::Scalar<float>(-0.5f))
                .Run1();
  REQUIRE(ff.ok());
  CheckClose<float>(*ff, Make<float>({1, 0.5f, 0, -0.5f}, {4}));

  // Float values are accumulated in float, as TF's kernel does; the count is taken in float.
  auto tenths = OpRunner("Range")
                    .Type("Tidx", DType::kFloat)
                    .Input(Tensor::Scalar<float>(0))
                    .Input(Tensor::Scalar<float>(1))
                    .Input(Tensor::Scalar<float>(0.1f))
                    .Run1();
  REQUIRE(tenths.ok());
  std::vector<float> acc;
  for (float v = 0; acc.size() < 10; v += 0.1f) acc.push_back(v);
  CheckClose<float>(*tenths, Make<float>(acc, {10}), 0);

  CheckError(run_i(0, 5, 0).status(), {"delta != 0"});
  CheckError(run_i(5, 0, 1).status(), {"start <= limit when delta > 0", "5/0"});
  CheckError(run_i(0, 5, -1).status(), {"start >= limit when delta < 0"});
  OpRunner pre("Range", "rg");
  pre.ConstantInput(Tensor::Scalar<int32_t>(0))
      .ConstantInput(Tensor::Scalar<int32_t>(3))
      .ConstantInput(Tensor::Scalar<int32_t>(0));
  CheckError(pre.Prepare(), {"node 'rg'", "delta != 0"});
  OpRunner mixed("Range");
  mixed.Input(Tensor::Scalar<int32_t>(0))
      .Input(Tensor::Scalar<int64_t>(3))
      .Input(Tensor::Scalar<int32_t>(1));
  CheckError(mixed.Prepare(), {"input 'limit'", "expected dtype int32", "int64"});
}

// ---- Tile, BroadcastTo -------------------------------------------------------------------------

TEST_CASE("Tile repeats along every dim") {
  struct Case {
    Shape in;
    std::vector<int32_t> mult;
  };
  for (const Case& c : std::vector<Case>{{{3}, {4}},
                                         {{2, 3}, {1, 1}},
                                         {{2, 3}, {2, 3}},
                                         {{2, 1, 3}, {1, 4, 2}},
                                         {{2, 3}, {0, 2}},
                                         {{}, {}},
                                         {{1, 2, 1, 2}, {3, 1, 2, 2}}}) {
    CAPTURE(c.in.ToString());
    Tensor x = Iota(c.in);
    OpRunner r("Tile");
    r.T(DType::kFloat).Input(x).ConstantInput(I32(c.mult));
    auto got = r.Run1();
    REQUIRE_MESSAGE(got.ok(), got.status().ToString());
    Shape so;
    for (int d = 0; d < c.in.rank(); ++d) so.AddDim(c.in.dim(d) * c.mult[d]);
    REQUIRE(got->shape() == so);
    CHECK(r.output_specs()[0].shape == PartialShape(so));
    for (int64_t i = 0; i < so.num_elements(); ++i) {
      std::vector<int64_t> idx = Unravel(i, so);
      for (int d = 0; d < c.in.rank(); ++d) idx[d] %= c.in.dim(d);
      REQUIRE(got->data<float>()[i] == x.data<float>()[FlatIndex(idx, c.in)]);
    }
  }
  CheckError(
      OpRunner("Tile", "tl").T(DType::kFloat).Input(Iota({2, 3})).Input(I32({2})).Run1().status(),
      {"node 'tl'", "'multiples' has 1 entries", "(2, 3)"});
  CheckError(OpRunner("Tile").T(DType::kFloat).Input(Iota({2})).Input(I32({-1})).Run1().status(),
             {"[-1]", "negative"});
}

TEST_CASE("BroadcastTo repeats size-1 and missing leading dims") {
  struct Case {
    Shape in, to;
  };
  for (const Case& c : std::vector<Case>{{{3}, {2, 3}},
                                         {{2, 1}, {2, 4}},
                                         {{1}, {3, 2, 2}},
                                         {{}, {2, 2}},
                                         {{2, 1, 3}, {4, 2, 5, 3}},
                                         {{2, 3}, {2, 3}},
                                         {{1, 3}, {0, 3}}}) {
    CAPTURE(c.in.ToString());
    CAPTURE(c.to.ToString());
    Tensor x = Iota(c.in);
    std::vector<int32_t> to(c.to.dims().begin(), c.to.dims().end());
    OpRunner r("BroadcastTo");
    r.T(DType::kFloat).Input(x).ConstantInput(I32(to));
    auto got = r.Run1();
    REQUIRE_MESSAGE(got.ok(), got.status().ToString());
    REQUIRE(got->shape() == c.to);
    CheckClose<float>(*got, [&] {
      Tensor want(DType::kFloat, c.to);
      for (int64_t i = 0; i < c.to.num_elements(); ++i) {
        want.data<float>()[i] = x.data<float>()[testing::BroadcastIndex(Unravel(i, c.to), c.in)];
      }
      return want;
    }());
  }
  CheckError(OpRunner("BroadcastTo", "b")
                 .T(DType::kFloat)
                 .Input(Iota({2}))
                 .Input(I32({2, 3}))
                 .Run1()
                 .status(),
             {"node 'b'", "cannot broadcast", "(2,)", "(2, 3)"});
  OpRunner pre("BroadcastTo");
  pre.T(DType::kFloat).Input(Iota({3, 2})).ConstantInput(I32({2}));
  CheckError(pre.Prepare(), {"cannot broadcast", "(3, 2)", "(2,)"});
}

// ---- StridedSlice ------------------------------------------------------------------------------

struct SliceSpec {
  std::vector<int64_t> begin, end, strides;
  int64_t begin_mask = 0, end_mask = 0, ellipsis_mask = 0, new_axis_mask = 0, shrink_mask = 0;
};

bool Has(int64_t mask, size_t i) { return (mask >> i) & 1; }

// numpy indexing, written out: for each input dim the list of picked indices, and the
// result shape. Precedence of an entry: ellipsis, then new axis, then shrink, then slice.
struct RefSliceResult {
  std::vector<std::vector<int64_t>> picks;
  std::vector<int64_t> shape;
};
RefSliceResult RefStridedSlice(const Shape& in, const SliceSpec& s) {
  RefSliceResult r;
  const size_t n = s.begin.size();
  int ellipsis = -1;
  for (size_t i = 0; i < n; ++i) {
    if (Has(s.ellipsis_mask, i)) ellipsis = static_cast<int>(i);
  }
  int real = 0;
  for (size_t i = 0; i < n; ++i) {
    if (static_cast<int>(i) != ellipsis && !Has(s.new_axis_mask, i)) ++real;
  }
  int d = 0;
  auto full_dims = [&](int count) {
    for (int k = 0; k < count; ++k, ++d) {
      std::vector<int64_t> all(in.dim(d));
      std::iota(all.begin(), all.end(), 0);
      r.picks.push_back(all);
      r.shape.push_back(in.dim(d));
    }
  };
  for (size_t i = 0; i < n; ++i) {
    if (static_cast<int>(i) == ellipsis) {
      full_dims(in.rank() - real);
    } else if (Has(s.new_axis_mask, i)) {
      r.shape.push_back(1);
    } else if (Has(s.shrink_mask, i)) {
      const int64_t dim = in.dim(d);
      r.picks.push_back({s.begin[i] < 0 ? s.begin[i] + dim : s.begin[i]});
      ++d;
    } else {
      const int64_t dim = in.dim(d), step = s.strides[i];
      const int64_t lower = step > 0 ? 0 : -1, upper = step > 0 ? dim : dim - 1;
      auto clamp = [&](int64_t x) {
        x = x < 0 ? x + dim : x;
        return std::clamp(x, lower, upper);
      };
      const int64_t start = Has(s.begin_mask, i) ? (step > 0 ? lower : upper) : clamp(s.begin[i]);
      const int64_t stop = Has(s.end_mask, i) ? (step > 0 ? upper : lower) : clamp(s.end[i]);
      std::vector<int64_t> picked;
      for (int64_t x = start; step > 0 ? x < stop : x > stop; x += step) picked.push_back(x);
      r.shape.push_back(static_cast<int64_t>(picked.size()));
      r.picks.push_back(picked);
      ++d;
    }
  }
  if (ellipsis < 0) full_dims(in.rank() - d);
  return r;
}

Tensor RefSliceValues(const Tensor& x, const RefSliceResult& r) {
  Tensor out(DType::kFloat, *Shape::FromDims(r.shape));
  int64_t o = 0;
  std::vector<size_t> idx(r.picks.size(), 0);
  const int64_t total = out.NumElements();
  for (; o < total; ++o) {
    std::vector<int64_t> xi(r.picks.size());
    for (size_t d = 0; d < r.picks.size(); ++d) xi[d] = r.picks[d][idx[d]];
    out.data<float>()[o] = x.data<float>()[FlatIndex(xi, x.shape())];
    for (int d = static_cast<int>(r.picks.size()) - 1; d >= 0; --d) {
      if (++idx[d] < r.picks[d].size()) break;
      idx[d] = 0;
    }
  }
  return out;
}

OpRunner SliceRunner(const Tensor& x, const SliceSpec& s, bool constant, bool int64 = false) {
  OpRunner r("StridedSlice", "slice");
  r.T(x.dtype()).Type("Index", int64 ? DType::kInt64 : DType::kInt32).Input(x);
  auto idx = [&](const std::vector<int64_t>& v) {
    if (int64) return I64(v);
    return I32(std::vector<int32_t>(v.begin(), v.end()));
  };
  for (const auto* v : {&s.begin, &s.end, &s.strides}) {
    if (constant) {
      r.ConstantInput(idx(*v));
    } else {
      r.Input(idx(*v));
    }
  }
  r.Int("begin_mask", s.begin_mask)
      .Int("end_mask", s.end_mask)
      .Int("ellipsis_mask", s.ellipsis_mask)
      .Int("new_axis_mask", s.new_axis_mask)
      .Int("shrink_axis_mask", s.shrink_mask);
  return r;
}

void CheckSlice(const Tensor& x, const SliceSpec& s) {
  RefSliceResult ref = RefStridedSlice(x.shape(), s);
  Tensor want = RefSliceValues(x, ref);
  for (bool constant : {true, false}) {
    OpRunner r = SliceRunner(x, s, constant, /*int64=*/!constant);
    auto got = r.Run1();
    REQUIRE_MESSAGE(got.ok(), got.status().ToString());
    CheckClose<float>(*got, want);
    if (constant) {
      CHECK_MESSAGE(r.output_specs()[0].shape == PartialShape(want.shape()),
                    r.output_specs()[0].ToString());
    }
  }
}

TEST_CASE("StridedSlice: the forms Python indexing produces") {
  Tensor x = Iota({4, 5, 6});
  SUBCASE("x[1]") { CheckSlice(x, {{1}, {2}, {1}, 0, 0, 0, 0, 1}); }
  SUBCASE("x[-1]") { CheckSlice(x, {{-1}, {0}, {1}, 0, 0, 0, 0, 1}); }
  SUBCASE("x[:, 1:3]") { CheckSlice(x, {{0, 1}, {0, 3}, {1, 1}, 1, 1}); }
  SUBCASE("x[..., 0]") { CheckSlice(x, {{0, 0}, {0, 1}, {1, 1}, 0, 0, 1, 0, 2}); }
  SUBCASE("x[::-1]") { CheckSlice(x, {{0}, {0}, {-1}, 1, 1}); }
  SUBCASE("x[3:0:-2, ::2, -2:]") { CheckSlice(x, {{3, 0, -2}, {0, 0, 0}, {-2, 2, 1}, 2, 6}); }
  SUBCASE("x[tf.newaxis, 1, ..., 2:]") {
    CheckSlice(x, {{0, 1, 0, 2}, {0, 2, 0, 0}, {1, 1, 1, 1}, 0, 8, 4, 1, 2});
  }
  SUBCASE("x[..., tf.newaxis]") { CheckSlice(x, {{0, 0}, {0, 0}, {1, 1}, 0, 0, 1, 2}); }
  SUBCASE("x[1, 2, 3] (a scalar)") {
    CheckSlice(x, {{1, 2, 3}, {2, 3, 4}, {1, 1, 1}, 0, 0, 0, 0, 7});
  }
  SUBCASE("x[10:20] (empty, clamped)") { CheckSlice(x, {{10}, {20}, {1}}); }
  SUBCASE("x[:, -100:100:3]") { CheckSlice(x, {{0, -100}, {0, 100}, {1, 3}, 1, 1}); }
  SUBCASE("x[:, 4:-100:-1]") { CheckSlice(x, {{0, 4}, {0, -100}, {1, -1}, 1, 1}); }
  SUBCASE("whole input") { CheckSlice(x, {{0}, {4}, {1}}); }
}

TEST_CASE("StridedSlice matches numpy indexing for random specs") {
  std::mt19937 rng(1234);
  auto uniform = [&](int64_t lo, int64_t hi) {
    return std::uniform_int_distribution<int64_t>(lo, hi)(rng);
  };
  int checked = 0;
  for (int iter = 0; iter < 600; ++iter) {
    const int rank = static_cast<int>(uniform(1, 4));
    Shape shape;
    for (int d = 0; d < rank; ++d) shape.AddDim(uniform(0, 5));
    Tensor x = Iota(shape);
    SliceSpec s;
    const int n = static_cast<int>(uniform(0, rank + 2));
    const int ellipsis = uniform(0, 2) == 0 ? static_cast<int>(uniform(0, std::max(n - 1, 0))) : -1;
    int real_dims = 0, d = 0;
    bool valid = true;
    for (int i = 0; i < n; ++i) {
      int64_t b = uniform(-7, 7), e = uniform(-7, 7);
      int64_t st = uniform(1, 3) * (uniform(0, 1) ? 1 : -1);
      if (i == ellipsis) {
        s.ellipsis_mask |= int64_t{1} << i;
      } else if (uniform(0, 6) == 0) {
        s.new_axis_mask |= int64_t{1} << i;
        if (uniform(0, 1)) s.shrink_mask |= int64_t{1} << i;  // new axis wins
      } else {
        ++real_dims;
        if (uniform(0, 3) == 0) {
          s.shrink_mask |= int64_t{1} << i;
          st = 1;
        }
      }
      if (uniform(0, 3) == 0) s.begin_mask |= int64_t{1} << i;
      if (uniform(0, 3) == 0) s.end_mask |= int64_t{1} << i;
      s.begin.push_back(b);
      s.end.push_back(e);
      s.strides.push_back(st);
    }
    if (real_dims > rank) continue;
    // Dims the entries map to, to keep shrink indices in range (checked separately below).
    const int covered = ellipsis >= 0 ? rank - real_dims : 0;
    for (int i = 0; i < n && valid; ++i) {
      if (i == ellipsis) {
        d += covered;
        continue;
      }
      if (Has(s.new_axis_mask, i)) continue;
      if (Has(s.shrink_mask, i)) {
        const int64_t dim = shape.dim(d);
        if (dim == 0) {
          valid = false;
        } else {
          s.begin[i] = uniform(-dim, dim - 1);
          s.end[i] = s.begin[i] + 1;
        }
      }
      ++d;
    }
    if (!valid) continue;
    RefSliceResult ref = RefStridedSlice(shape, s);
    if (ref.shape.size() > static_cast<size_t>(kMaxRank)) continue;
    CAPTURE(shape.ToString());
    CAPTURE(iter);
    CheckSlice(x, s);
    ++checked;
  }
  CHECK(checked > 300);
}

TEST_CASE("StridedSlice moves strings and infers partial shapes") {
  Tensor s = Strings({3, 4});
  auto got = SliceRunner(s, {{0, 3}, {0, 0}, {1, -2}, 1, 3}, false).Run1();  // s[:, 3::-2]
  REQUIRE(got.ok());
  REQUIRE(got->shape() == Shape{3, 2});
  CHECK(got->data<std::string>()[0] == "s3");
  CHECK(got->data<std::string>()[1] == "s1");
  CHECK(got->data<std::string>()[5] == "s9");

  // x[:, 1] on (None, 5): (None,). Unknown begin/end: rank still known when strides are.
  OpRunner p("StridedSlice");
  p.T(DType::kFloat)
      .Type("Index", DType::kInt32)
      .InputSpec({DType::kFloat, PartialShape{-1, 5}})
      .ConstantInput(I32({0, 1}))
      .ConstantInput(I32({0, 2}))
      .ConstantInput(I32({1, 1}))
      .Int("begin_mask", 1)
      .Int("end_mask", 1)
      .Int("shrink_axis_mask", 2);
  REQUIRE(p.Prepare().ok());
  CHECK(p.output_specs()[0].shape == PartialShape{-1});
  OpRunner q("StridedSlice");
  q.T(DType::kFloat)
      .Type("Index", DType::kInt32)
      .InputSpec({DType::kFloat, PartialShape{4, 5}})
      .Input(I32({0, 1}))
      .Input(I32({0, 2}))
      .ConstantInput(I32({1, 1}))
      .Int("begin_mask", 1)
      .Int("end_mask", 1)
      .Int("shrink_axis_mask", 2);
  REQUIRE(q.Prepare().ok());
  CHECK(q.output_specs()[0].shape == PartialShape{4});
}

TEST_CASE("StridedSlice errors") {
  Tensor x = Iota({4, 5});
  CheckError(SliceRunner(x, {{5}, {6}, {1}, 0, 0, 0, 0, 1}, false).Run1().status(),
             {"node 'slice'", "slice index 5 of dimension 0 out of bounds"});
  CheckError(SliceRunner(x, {{-5}, {0}, {1}, 0, 0, 0, 0, 1}, true).Prepare(),
             {"node 'slice'", "(StridedSlice)", "slice index -5"});
  CheckError(SliceRunner(x, {{0}, {1}, {0}}, false).Run1().status(),
             {"strides[0] must be non-zero"});
  CheckError(SliceRunner(x, {{0, 0, 0}, {1, 1, 1}, {1, 1, 1}}, false).Run1().status(),
             {"index out of range using input dim 2", "only 2 dims"});
  CheckError(SliceRunner(x, {{0, 0}, {1, 1}, {1, 1}, 0, 0, 3}, false).Run1().status(),
             {"multiple ellipses"});
  CheckError(SliceRunner(x, {{1}, {2}, {-1}, 0, 0, 0, 0, 1}, false).Run1().status(),
             {"only stride 1"});
  OpRunner len("StridedSlice");
  len.T(DType::kFloat)
      .Type("Index", DType::kInt32)
      .Input(x)
      .Input(I32({0, 0}))
      .Input(I32({1}))
      .Input(I32({1}));
  CheckError(len.Prepare(), {"vectors of equal length", "2, 1 and 1"});
  CheckError(len.Run1().status(), {"vectors of equal length"});
}

// ---- GatherV2 ----------------------------------------------------------------------------------

TEST_CASE("GatherV2 picks slices along any axis") {
  struct Case {
    Shape params;
    Shape indices;
    int axis;
  };
  for (const Case& c : std::vector<Case>{{{5}, {3}, 0},
                                         {{5, 3}, {2, 2}, 0},
                                         {{4, 5, 3}, {6}, 1},
                                         {{4, 5, 3}, {2, 3}, -1},
                                         {{4, 5}, {}, 1},
                                         {{4, 5}, {0}, 0},
                                         {{0, 5}, {3}, 1}}) {
    CAPTURE(c.params.ToString());
    CAPTURE(c.indices.ToString());
    CAPTURE(c.axis);
    const int axis = c.axis < 0 ? c.axis + c.params.rank() : c.axis;
    Tensor params = Iota(c.params);
    Tensor indices = Random<int64_t>(c.indices, 3, 0, static_cast<double>(c.params.dim(axis)) - 1);
    OpRunner r("GatherV2");
    r.Type("Tparams", DType::kFloat)
        .Type("Tindices", DType::kInt64)
        .Type("Taxis", DType::kInt32)
        .Input(params)
        .Input(indices)
        .ConstantInput(Tensor::Scalar<int32_t>(c.axis));
    auto got = r.Run1();
    REQUIRE_MESSAGE(got.ok(), got.status().ToString());
    std::vector<int64_t> dims(c.params.dims().begin(), c.params.dims().begin() + axis);
    for (int64_t d : c.indices.dims()) dims.push_back(d);
    for (int d = axis + 1; d < c.params.rank(); ++d) dims.push_back(c.params.dim(d));
    const Shape so = *Shape::FromDims(dims);
    REQUIRE(got->shape() == so);
    CHECK(r.output_specs()[0].shape == PartialShape(so));
    for (int64_t i = 0; i < so.num_elements(); ++i) {
      std::vector<int64_t> oi = Unravel(i, so);
      std::vector<int64_t> ii(oi.begin() + axis, oi.begin() + axis + c.indices.rank());
      std::vector<int64_t> pi(oi.begin(), oi.begin() + axis);
      pi.push_back(indices.data<int64_t>()[FlatIndex(ii, c.indices)]);
      pi.insert(pi.end(), oi.begin() + axis + c.indices.rank(), oi.end());
      REQUIRE(got->data<float>()[i] == params.data<float>()[FlatIndex(pi, c.params)]);
    }
  }
  auto s = OpRunner("GatherV2")
               .Type("Tparams", DType::kString)
               .Type("Tindices", DType::kInt32)
               .Type("Taxis", DType::kInt64)
               .Input(Strings({4}))
               .Input(I32({3, 3, 0}))
               .Input(Tensor::Scalar<int64_t>(0))
               .Run1();
  REQUIRE(s.ok());
  CHECK(s->data<std::string>()[0] == "s3");
  CHECK(s->data<std::string>()[2] == "s0");
}

TEST_CASE("GatherV2 errors name the bad index and the valid range") {
  auto run = [](const Tensor& indices, int axis) {
    return OpRunner("GatherV2", "g")
        .Type("Tparams", DType::kFloat)
        .Type("Tindices", DType::kInt32)
        .Type("Taxis", DType::kInt32)
        .Input(Iota({3, 4}))
        .Input(indices)
        .Input(Tensor::Scalar<int32_t>(axis))
        .Run1();
  };
  CheckError(run(Make<int32_t>({0, 1, 2, 7}, {2, 2}), 0).status(),
             {"node 'g'", "indices[1,1] = 7", "not in [0, 3)"});
  CheckError(run(I32({-1}), 1).status(), {"indices[0] = -1", "not in [0, 4)"});
  CheckError(run(I32({0}), 2).status(), {"axis 2 is out of range", "rank 2"});
  auto batched = [](int64_t batch_dims, int32_t axis, const Tensor& indices) {
    return OpRunner("GatherV2", "g")
        .Type("Tparams", DType::kFloat)
        .Type("Tindices", DType::kInt32)
        .Type("Taxis", DType::kInt32)
        .Int("batch_dims", batch_dims)
        .Input(Iota({2, 3, 4}))
        .Input(indices)
        .ConstantInput(Tensor::Scalar<int32_t>(axis))
        .Prepare();
  };
  CheckError(batched(3, 2, Make<int32_t>({0, 1}, {2, 1})),
             {"node 'g'", "batch_dims in the range [-2, 2], but got 3"});
  CheckError(batched(1, 0, Make<int32_t>({0, 1}, {2, 1})),
             {"batch_dims (1) must be less than or equal to axis (0)"});
  CheckError(batched(1, 1, Make<int32_t>({0, 1, 2}, {3, 1})),
             {"params.shape[0]: 2 should be equal to indices.shape[0]: 3"});
}

}  // namespace
}  // namespace kiln::exec
