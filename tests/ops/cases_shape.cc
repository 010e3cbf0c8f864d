// Op-tester cases of shapes and views: Shape, Size, Rank, Reshape, ExpandDims, Squeeze,
// EnsureShape, PlaceholderWithDefault, PreventGradient, BroadcastArgs, BroadcastGradientArgs.
#include <algorithm>
#include <cstring>

#include "ops/array_ref.h"
#include "ops/op_cases.h"
#include "ops/ref_util.h"

namespace kiln::testing {
namespace {

const DType kMoveTypes[] = {DType::kFloat, DType::kInt32, DType::kString, DType::kHalf,
                            DType::kBool,  DType::kInt64, DType::kUInt8,  DType::kBFloat16};

// The same elements in the same order under a new shape.
Tensor SameElements(const Tensor& in, const Shape& s) {
  return RefMove(in, s, [&](const Index& o) { return FlatOf(o, s); });
}

template <typename T>
Tensor DimsOf(const Shape& s) {
  std::vector<T> v;
  for (int64_t d : s.dims()) v.push_back(static_cast<T>(d));
  return Vec<T>(v);
}

}  // namespace

namespace {

// Bitcast, DataFormatDimMap/VecPermute, ToBool, HostConst, GuaranteeConst, DeepCopy.
void AddBitcastAndLayout(std::vector<OpCase>* c) {
  struct B {
    DType from, to;
    Shape in, out;
  };
  for (const B& b : {B{DType::kFloat, DType::kInt32, Shape{2, 3}, Shape{2, 3}},
                     B{DType::kFloat, DType::kUInt8, Shape{2, 2}, Shape{2, 2, 4}},
                     B{DType::kUInt8, DType::kFloat, Shape{3, 4}, Shape{3}},
                     B{DType::kInt64, DType::kInt32, Shape{2}, Shape{2, 2}},
                     B{DType::kHalf, DType::kInt32, Shape{3, 2}, Shape{3}},
                     B{DType::kComplex64, DType::kDouble, Shape{0, 2}, Shape{0, 2}}}) {
    const Tensor x = RandomOf(b.from, b.in, 17);
    c->push_back(OpCaseBuilder("Bitcast", "Bitcast " + DTypeShortName(b.from) + " " +
                                              b.in.ToString() + " to " + DTypeShortName(b.to))
                     .T(b.from)
                     .Type("type", b.to)
                     .Input(x)
                     .Reference1([b](const std::vector<Tensor>& in) {
                       Tensor out(b.to, b.out);
                       if (in[0].NumElements() > 0) {
                         std::memcpy(out.raw_data(), in[0].raw_data(),
                                     in[0].NumElements() * DTypeSize(b.from));
                       }
                       return out;
                     })
                     .Build());
  }
  // TF's values (tf.raw_ops.DataFormatDimMap / DataFormatVecPermute).
  c->push_back(OpCaseBuilder("DataFormatDimMap", "DataFormatDimMap NHWC to NCHW")
                   .T(DType::kInt32)
                   .Input(Vec<int32_t>({0, 1, 2, 3, -1, -2, -3, -4}))
                   .Reference1([](const auto&) {
                     return Vec<int32_t>({0, 2, 3, 1, 1, 3, 2, 0});
                   })
                   .Build());
  c->push_back(OpCaseBuilder("DataFormatDimMap", "DataFormatDimMap NCDHW to NDHWC int64")
                   .T(DType::kInt64)
                   .String("src_format", "NCDHW")
                   .String("dst_format", "NDHWC")
                   .Input(Make<int64_t>({1, 4, -4, 0}, Shape{2, 2}))
                   .Reference1([](const auto&) {
                     return Make<int64_t>({4, 3, 4, 0}, Shape{2, 2});
                   })
                   .Build());
  c->push_back(OpCaseBuilder("DataFormatVecPermute", "DataFormatVecPermute NHWC to NCHW")
                   .T(DType::kInt32)
                   .Input(Vec<int32_t>({10, 20, 30, 40}))
                   .Reference1([](const auto&) {
                     return Vec<int32_t>({10, 40, 20, 30});
                   })
                   .Build());
  c->push_back(OpCaseBuilder("DataFormatVecPermute", "DataFormatVecPermute NCHW to NHWC rows")
                   .T(DType::kInt64)
                   .String("src_format", "NCHW")
                   .String("dst_format", "NHWC")
                   .Input(Make<int64_t>({1, 2, 3, 4, 5, 6, 7, 8}, Shape{4, 2}))
                   .Reference1([](const auto&) {
                     return Make<int64_t>({1, 2, 5, 6, 7, 8, 3, 4}, Shape{4, 2});
                   })
                   .Build());
  c->push_back(OpCaseBuilder("DataFormatVecPermute", "DataFormatVecPermute spatial NHWC to NWHC")
                   .T(DType::kInt32)
                   .String("dst_format", "NWHC")
                   .Input(Vec<int32_t>({7, 9}))
                   .Reference1([](const auto&) {
                     return Vec<int32_t>({9, 7});
                   })
                   .Build());
  struct Truth {
    Tensor x;
    bool want;
    std::string what;
  };
  for (const Truth& t : {Truth{Tensor::Scalar<float>(0.0f), false, "float 0"},
                         Truth{Tensor::Scalar<float>(-0.0f), false, "float -0"},
                         Truth{Tensor::Scalar<double>(2.5), true, "double 2.5"},
                         Truth{Tensor::Scalar<int32_t>(0), false, "int32 0"},
                         Truth{Tensor::Scalar<int64_t>(-3), true, "int64 -3"},
                         Truth{Tensor::Scalar<bool>(true), true, "bool true"},
                         Truth{Tensor::StringScalar(""), false, "empty string"},
                         Truth{Tensor::StringScalar("a"), true, "string"},
                         Truth{Vec<float>({0.0f}), true, "vector of a zero"},
                         Truth{Tensor(DType::kFloat, Shape{0, 3}), false, "empty matrix"}}) {
    c->push_back(OpCaseBuilder("ToBool", "ToBool " + t.what)
                     .T(t.x.dtype())
                     .Input(t.x)
                     .Reference1([w = t.want](const auto&) { return Tensor::Scalar<bool>(w); })
                     .Build());
  }
  for (DType t : {DType::kFloat, DType::kString, DType::kInt64}) {
    const Tensor v = Distinct(t, Shape{2, 3});
    c->push_back(OpCaseBuilder("HostConst", "HostConst " + DTypeShortName(t))
                     .Type("dtype", t)
                     .TensorAttr("value", v)
                     .Reference1([v](const auto&) { return v; })
                     .Build());
    for (const char* op : {"GuaranteeConst", "DeepCopy"}) {
      c->push_back(OpCaseBuilder(op, std::string(op) + " " + DTypeShortName(t))
                       .T(t)
                       .Input(v)
                       .Reference1([](const std::vector<Tensor>& in) { return in[0]; })
                       .Build());
    }
  }
}

}  // namespace

std::vector<OpCase> ShapeCases() {
  std::vector<OpCase> c;
  for (const Shape& s : {Shape{}, Shape{0}, Shape{2, 3, 4}, Shape{5, 1}}) {
    for (DType t : {DType::kFloat, DType::kString}) {
      const Tensor x = Distinct(t, s);
      c.push_back(OpCaseBuilder("Shape")
                      .T(t)
                      .Input(x)
                      .Reference1([s](const auto&) { return DimsOf<int32_t>(s); })
                      .Build());
      c.push_back(OpCaseBuilder("Size")
                      .T(t)
                      .Input(x)
                      .Reference1([s](const auto&) {
                        return Tensor::Scalar<int32_t>(static_cast<int32_t>(s.num_elements()));
                      })
                      .Build());
      c.push_back(OpCaseBuilder("Rank")
                      .T(t)
                      .Input(x)
                      .Reference1([s](const auto&) { return Tensor::Scalar<int32_t>(s.rank()); })
                      .Build());
    }
    c.push_back(OpCaseBuilder("Shape", "Shape int64 " + s.ToString())
                    .T(DType::kInt8)
                    .Type("out_type", DType::kInt64)
                    .Input(Distinct(DType::kInt8, s))
                    .Reference1([s](const auto&) { return DimsOf<int64_t>(s); })
                    .Build());
    c.push_back(
        OpCaseBuilder("Size", "Size int64 " + s.ToString())
            .T(DType::kBool)
            .Type("out_type", DType::kInt64)
            .Input(Distinct(DType::kBool, s))
            .Reference1([s](const auto&) { return Tensor::Scalar<int64_t>(s.num_elements()); })
            .Build());
  }

  // ShapeN: the shapes of N inputs of different ranks and dtypes, int32 and int64.
  for (DType out : {DType::kInt32, DType::kInt64}) {
    const std::vector<Shape> shapes = {Shape{2, 3, 4}, Shape{}, Shape{0, 5}};
    c.push_back(OpCaseBuilder("ShapeN", "ShapeN " + std::string(DTypeShortName(out)))
                    .T(DType::kFloat)
                    .Int("N", 3)
                    .Type("out_type", out)
                    .Input(Distinct(DType::kFloat, shapes[0]))
                    .Input(Distinct(DType::kFloat, shapes[1]))
                    .Input(Distinct(DType::kFloat, shapes[2]))
                    .Reference([shapes, out](const auto&) {
                      std::vector<Tensor> r;
                      for (const Shape& s : shapes)
                        r.push_back(out == DType::kInt32 ? DimsOf<int32_t>(s) : DimsOf<int64_t>(s));
                      return r;
                    })
                    .Build());
  }

  // Reshape: known sizes, one -1, empty tensors; the shape constant or not.
  struct ReshapeCase {
    Shape in;
    std::vector<int64_t> sizes;
    Shape out;
  };
  const ReshapeCase reshapes[] = {{Shape{2, 3, 4}, {6, 4}, Shape{6, 4}},
                                  {Shape{2, 3, 4}, {-1}, Shape{24}},
                                  {Shape{2, 3, 4}, {4, -1, 2}, Shape{4, 3, 2}},
                                  {Shape{6}, {1, 6, 1}, Shape{1, 6, 1}},
                                  {Shape{1}, {}, Shape{}},
                                  {Shape{0, 3}, {-1, 0}, Shape{3, 0}},
                                  {Shape{0, 3}, {3, -1}, Shape{3, 0}}};
  for (const ReshapeCase& r : reshapes) {
    for (DType t : kMoveTypes) {
      const Tensor x = Distinct(t, r.in);
      const Shape out = r.out;
      for (bool constant : {true, false}) {
        OpCaseBuilder b("Reshape");
        b.T(t).Type("Tshape", DType::kInt32).Input(x);
        std::vector<int32_t> sizes(r.sizes.begin(), r.sizes.end());
        const Tensor shape = Vec<int32_t>(sizes);
        if (constant) {
          b.ConstInput(shape);
        } else {
          b.Input(shape);
        }
        c.push_back(b.Reference1([out](const std::vector<Tensor>& in) {
                       return SameElements(in[0], out);
                     }).Build());
      }
    }
  }
  c.push_back(OpCaseBuilder("Reshape", "Reshape int64 shape")
                  .T(DType::kDouble)
                  .Type("Tshape", DType::kInt64)
                  .Input(Distinct(DType::kDouble, Shape{64, 100}))
                  .ConstInput(Vec<int64_t>({-1, 32, 25}))
                  .Reference1([](const std::vector<Tensor>& in) {
                    return SameElements(in[0], Shape{8, 32, 25});
                  })
                  .Build());

  // ExpandDims at every position, negative ones included.
  for (DType t : {DType::kFloat, DType::kString, DType::kInt16}) {
    const Shape s{2, 3};
    for (int64_t dim = -3; dim <= 2; ++dim) {
      std::vector<int64_t> dims = {2, 3};
      dims.insert(dims.begin() + (dim < 0 ? dim + 3 : dim), 1);
      const Shape out = *Shape::FromDims(dims);
      c.push_back(
          OpCaseBuilder("ExpandDims",
                        "ExpandDims " + DTypeShortName(t) + " dim " + std::to_string(dim))
              .T(t)
              .Type("Tdim", DType::kInt32)
              .Input(Distinct(t, s))
              .ConstInput(Tensor::Scalar<int32_t>(static_cast<int32_t>(dim)))
              .Reference1([out](const std::vector<Tensor>& in) { return SameElements(in[0], out); })
              .Build());
    }
  }
  c.push_back(
      OpCaseBuilder("ExpandDims", "ExpandDims scalar, int64 dim, not constant")
          .T(DType::kInt64)
          .Type("Tdim", DType::kInt64)
          .Input(Tensor::Scalar<int64_t>(7))
          .Input(Tensor::Scalar<int64_t>(-1))
          .Reference1([](const std::vector<Tensor>& in) { return SameElements(in[0], Shape{1}); })
          .Build());

  // Squeeze: all size-1 dims, or the listed ones.
  for (DType t : {DType::kFloat, DType::kBool, DType::kString}) {
    const Tensor x = Distinct(t, Shape{1, 3, 1, 2, 1});
    c.push_back(OpCaseBuilder("Squeeze", "Squeeze all " + DTypeShortName(t))
                    .T(t)
                    .Input(x)
                    .Reference1([](const std::vector<Tensor>& in) {
                      return SameElements(in[0], Shape{3, 2});
                    })
                    .Build());
    c.push_back(OpCaseBuilder("Squeeze", "Squeeze dims [0, -1] " + DTypeShortName(t))
                    .T(t)
                    .IntList("squeeze_dims", {0, -1})
                    .Input(x)
                    .Reference1([](const std::vector<Tensor>& in) {
                      return SameElements(in[0], Shape{3, 1, 2});
                    })
                    .Build());
  }

  // Identity-like ops: the input, unchanged.
  for (DType t : {DType::kFloat, DType::kString, DType::kInt8}) {
    const Tensor x = Distinct(t, Shape{4, 3});
    auto same = [](const std::vector<Tensor>& in) { return in[0]; };
    c.push_back(OpCaseBuilder("EnsureShape")
                    .T(t)
                    .ShapeAttr("shape", PartialShape{-1, 3})
                    .Input(x)
                    .Reference1(same)
                    .Build());
    c.push_back(OpCaseBuilder("EnsureShape", "EnsureShape unknown rank " + DTypeShortName(t))
                    .T(t)
                    .ShapeAttr("shape", PartialShape::UnknownRank())
                    .Input(x)
                    .Reference1(same)
                    .Build());
    c.push_back(OpCaseBuilder("PlaceholderWithDefault")
                    .Type("dtype", t)
                    .ShapeAttr("shape", PartialShape{-1, -1})
                    .Input(x)
                    .Reference1(same)
                    .Build());
    c.push_back(OpCaseBuilder("PreventGradient")
                    .T(t)
                    .String("message", "no gradient here")
                    .Input(x)
                    .Reference1(same)
                    .Build());
  }
  // Snapshot (a copy TF1 graphs and tf.function's variable reads hold) for each dtype TF's CPU
  // kernel takes; the executor forwards it in graphs, its kernel copies on the single-op path.
  for (DType t :
       {DType::kFloat, DType::kDouble, DType::kHalf, DType::kBFloat16, DType::kInt8, DType::kInt16,
        DType::kInt32, DType::kInt64, DType::kUInt8, DType::kUInt16, DType::kUInt32, DType::kUInt64,
        DType::kComplex64, DType::kComplex128, DType::kBool}) {
    c.push_back(OpCaseBuilder("Snapshot", "Snapshot " + DTypeShortName(t))
                    .T(t)
                    .Input(Distinct(t, Shape{2, 3}))
                    .Reference1([](const std::vector<Tensor>& in) { return in[0]; })
                    .Build());
  }

  // BroadcastArgs / BroadcastGradientArgs against a plain-loop broadcast.
  struct BroadcastCase {
    std::vector<int64_t> a, b;
  };
  const BroadcastCase bcs[] = {{{2, 3}, {3}},    {{1, 1}, {1}},   {{2, 1, 3}, {4, 1}},
                               {{}, {}},         {{5}, {}},       {{1, 5}, {5, 1}},
                               {{0, 1}, {1, 3}}, {{3, 1}, {1, 1}}};
  for (const BroadcastCase& bc : bcs) {
    const size_t rank = std::max(bc.a.size(), bc.b.size());
    std::vector<int64_t> shape, r0, r1;
    for (size_t i = 0; i < rank; ++i) {
      const int64_t da = i + bc.a.size() >= rank ? bc.a[i + bc.a.size() - rank] : 1;
      const int64_t db = i + bc.b.size() >= rank ? bc.b[i + bc.b.size() - rank] : 1;
      shape.push_back(da == 1 ? db : da);
      if (da == 1) r0.push_back(static_cast<int64_t>(i));
      if (db == 1) r1.push_back(static_cast<int64_t>(i));
    }
    for (bool constant : {false, true}) {
      OpCaseBuilder args("BroadcastArgs");
      OpCaseBuilder grad("BroadcastGradientArgs");
      for (OpCaseBuilder* b : {&args, &grad}) {
        b->T(DType::kInt64);
        if (constant) {
          b->ConstInput(Vec<int64_t>(bc.a)).ConstInput(Vec<int64_t>(bc.b));
        } else {
          b->Input(Vec<int64_t>(bc.a)).Input(Vec<int64_t>(bc.b));
        }
      }
      c.push_back(args.Reference1([shape](const auto&) { return Vec<int64_t>(shape); }).Build());
      c.push_back(grad.Reference([r0, r1](const auto&) {
                        return std::vector<Tensor>{Vec<int64_t>(r0), Vec<int64_t>(r1)};
                      })
                      .Build());
    }
  }
  c.push_back(OpCaseBuilder("BroadcastArgs", "BroadcastArgs int32")
                  .T(DType::kInt32)
                  .Input(Vec<int32_t>({7, 1, 3}))
                  .Input(Vec<int32_t>({2, 1}))
                  .Reference1([](const auto&) {
                    return Vec<int32_t>({7, 2, 3});
                  })
                  .Build());
  AddBitcastAndLayout(&c);
  return c;
}

}  // namespace kiln::testing
