// Op-tester cases of joining and splitting: Pack, Unpack, ConcatV2, Concat (v1), Split, SplitV.
#include "ops/array_ref.h"
#include "ops/op_cases.h"
#include "ops/ref_util.h"

namespace kiln::testing {
namespace {

const DType kTypes[] = {DType::kFloat, DType::kInt32,  DType::kString, DType::kHalf,
                        DType::kBool,  DType::kUInt16, DType::kDouble};

// Concatenation of `parts` along `axis`, one output element at a time.
Tensor RefConcat(const std::vector<Tensor>& parts, int axis) {
  Shape out = parts[0].shape();
  int64_t total = 0;
  for (const Tensor& p : parts) total += p.dim(axis);
  out.set_dim(axis, total);
  Tensor r(parts[0].dtype(), out);
  for (int64_t i = 0; i < out.num_elements(); ++i) {
    Index o = Unravel(i, out);
    size_t k = 0;
    while (o[axis] >= parts[k].dim(axis)) o[axis] -= parts[k++].dim(axis);
    CopyElement(parts[k], FlatOf(o, parts[k].shape()), &r, i);
  }
  return r;
}

// Piece [begin, begin + size) of `x` along `axis`.
Tensor RefPiece(const Tensor& x, int axis, int64_t begin, int64_t size) {
  Shape s = x.shape();
  s.set_dim(axis, size);
  return RefMove(x, s, [&](const Index& o) {
    Index i = o;
    i[axis] += begin;
    return FlatOf(i, x.shape());
  });
}

}  // namespace

namespace {

// ParallelConcat ([1, ...] values stacked on dim 0) and ConcatOffset (TF's values).
void AddParallelConcatAndOffset(std::vector<OpCase>* c) {
  for (DType t : {DType::kFloat, DType::kString, DType::kInt8}) {
    const Tensor a = Distinct(t, Shape{1, 2, 3}, 1), b = Distinct(t, Shape{1, 2, 3}, 20),
                 d = Distinct(t, Shape{1, 2, 3}, 40);
    c->push_back(OpCaseBuilder("ParallelConcat", "ParallelConcat " + DTypeShortName(t))
                     .T(t)
                     .Int("N", 3)
                     .ShapeAttr("shape", PartialShape(Shape{3, 2, 3}))
                     .Input(a)
                     .Input(b)
                     .Input(d)
                     .Reference1([](const std::vector<Tensor>& in) {
                       Tensor out(in[0].dtype(), Shape{3, 2, 3});
                       for (int k = 0; k < 3; ++k)
                         for (int64_t i = 0; i < 6; ++i) CopyElement(in[k], i, &out, k * 6 + i);
                       return out;
                     })
                     .Build());
  }
  for (DType t : {DType::kInt32, DType::kInt64}) {
    c->push_back(OpCaseBuilder("ConcatOffset", "ConcatOffset " + DTypeShortName(t))
                     .Int("N", 3)
                     .Type("shape_type", t)
                     .Input(Tensor::Scalar<int32_t>(1))
                     .Input(FromDoubles(t, Shape{3}, {2, 3, 5}))
                     .Input(FromDoubles(t, Shape{3}, {2, 7, 5}))
                     .Input(FromDoubles(t, Shape{3}, {2, 1, 5}))
                     .Reference([t](const auto&) {
                       return std::vector<Tensor>{FromDoubles(t, Shape{3}, {0, 0, 0}),
                                                  FromDoubles(t, Shape{3}, {0, 3, 0}),
                                                  FromDoubles(t, Shape{3}, {0, 10, 0})};
                     })
                     .Build());
  }
  c->push_back(OpCaseBuilder("ConcatOffset", "ConcatOffset negative axis")
                   .Int("N", 2)
                   .Input(Tensor::Scalar<int32_t>(-2))
                   .Input(Vec<int32_t>({4, 6}))
                   .Input(Vec<int32_t>({3, 6}))
                   .Reference([](const auto&) {
                     return std::vector<Tensor>{Vec<int32_t>({0, 0}), Vec<int32_t>({4, 0})};
                   })
                   .Build());
}

}  // namespace

std::vector<OpCase> ConcatCases() {
  std::vector<OpCase> c;
  // Pack and Unpack along every axis of a (2, 3) piece.
  for (DType t : kTypes) {
    const Shape piece{2, 3};
    for (int64_t axis = -3; axis <= 2; ++axis) {
      const int a = static_cast<int>(axis < 0 ? axis + 3 : axis);
      std::vector<Tensor> parts = {Distinct(t, piece, 1), Distinct(t, piece, 7),
                                   Distinct(t, piece, 13), Distinct(t, piece, 19)};
      OpCaseBuilder pack("Pack", "Pack " + DTypeShortName(t) + " axis " + std::to_string(axis));
      pack.T(t).Int("N", 4).Int("axis", axis);
      for (const Tensor& p : parts) pack.Input(p);
      c.push_back(pack.Reference1([a](const std::vector<Tensor>& in) {
                        std::vector<int64_t> dims = {2, 3};
                        dims.insert(dims.begin() + a, 4);
                        const Shape out = *Shape::FromDims(dims);
                        Tensor r(in[0].dtype(), out);
                        for (int64_t i = 0; i < out.num_elements(); ++i) {
                          Index o = Unravel(i, out);
                          const int64_t k = o[a];
                          o.erase(o.begin() + a);
                          CopyElement(in[k], FlatOf(o, in[k].shape()), &r, i);
                        }
                        return r;
                      })
                      .Build());
      if (axis < -2 || axis >= 2) continue;  // Unpack's axis: over the packed input's 2 dims
      const Tensor packed = Distinct(t, Shape{4, 5});
      const int ua = static_cast<int>(axis < 0 ? axis + 2 : axis);
      c.push_back(
          OpCaseBuilder("Unpack", "Unpack " + DTypeShortName(t) + " axis " + std::to_string(axis))
              .T(t)
              .Int("num", packed.dim(ua))
              .Int("axis", axis)
              .Input(packed)
              .Reference([ua](const std::vector<Tensor>& in) {
                std::vector<Tensor> outs;
                for (int64_t k = 0; k < in[0].dim(ua); ++k) {
                  const Shape s = ua == 0 ? Shape{in[0].dim(1)} : Shape{in[0].dim(0)};
                  outs.push_back(RefMove(in[0], s, [&](const Index& o) {
                    return ua == 0 ? k * in[0].dim(1) + o[0] : o[0] * in[0].dim(1) + k;
                  }));
                }
                return outs;
              })
              .Build());
    }
  }

  // ConcatV2 and Concat (v1) along each axis, with an empty piece and a big one.
  for (DType t : kTypes) {
    for (int axis = 0; axis < 3; ++axis) {
      std::vector<Tensor> parts;
      for (int64_t len : {2, 0, 3}) {
        std::vector<int64_t> dims = {2, 3, 4};
        dims[axis] = len;
        parts.push_back(Distinct(t, *Shape::FromDims(dims), static_cast<uint32_t>(len * 11)));
      }
      for (bool v1 : {false, true}) {
        OpCaseBuilder b(v1 ? "Concat" : "ConcatV2");
        b.T(t).Int("N", 3);
        const int32_t given = axis == 2 ? -1 : axis;  // a negative axis too
        if (v1) b.ConstInput(Tensor::Scalar<int32_t>(given));
        for (const Tensor& p : parts) b.Input(p);
        if (!v1) b.Type("Tidx", DType::kInt32).ConstInput(Tensor::Scalar<int32_t>(given));
        c.push_back(b.Reference1([axis, v1](const std::vector<Tensor>& in) {
                       std::vector<Tensor> ps(in.begin() + (v1 ? 1 : 0), in.end() - (v1 ? 0 : 1));
                       return RefConcat(ps, axis);
                     }).Build());
      }
    }
  }
  {
    std::vector<Tensor> parts = {Distinct(DType::kFloat, Shape{512, 300}, 1),
                                 Distinct(DType::kFloat, Shape{512, 200}, 3)};
    c.push_back(OpCaseBuilder("ConcatV2", "ConcatV2 big, axis not constant")
                    .T(DType::kFloat)
                    .Int("N", 2)
                    .Type("Tidx", DType::kInt64)
                    .Input(parts[0])
                    .Input(parts[1])
                    .Input(Tensor::Scalar<int64_t>(1))
                    .Reference1([](const std::vector<Tensor>& in) {
                      return RefConcat({in[0], in[1]}, 1);
                    })
                    .Build());
    c.push_back(OpCaseBuilder("Concat", "Concat v1 big, axis not constant")
                    .T(DType::kFloat)
                    .Int("N", 2)
                    .Input(Tensor::Scalar<int32_t>(-1))
                    .Input(parts[0])
                    .Input(parts[1])
                    .Reference1([](const std::vector<Tensor>& in) {
                      return RefConcat({in[1], in[2]}, 1);
                    })
                    .Build());
  }

  // Split into equal pieces, SplitV into given sizes (one inferred).
  for (DType t : kTypes) {
    const Tensor x = Distinct(t, Shape{4, 6, 2});
    for (int axis = 0; axis < 3; ++axis) {
      const int64_t num = axis == 1 ? 3 : 2;  // dims 4, 6, 2 in 2, 3, 2 pieces
      c.push_back(
          OpCaseBuilder("Split", "Split " + DTypeShortName(t) + " axis " + std::to_string(axis))
              .T(t)
              .Int("num_split", num)
              .ConstInput(Tensor::Scalar<int32_t>(axis))
              .Input(x)
              .Reference([axis, num](const std::vector<Tensor>& in) {
                std::vector<Tensor> outs;
                const int64_t size = in[1].dim(axis) / num;
                for (int64_t k = 0; k < num; ++k)
                  outs.push_back(RefPiece(in[1], axis, k * size, size));
                return outs;
              })
              .Build());
    }
    for (DType tlen : {DType::kInt32, DType::kInt64, DType::kInt8}) {
      Tensor sizes(tlen, Shape{3});
      const int64_t values[] = {1, -1, 2};  // the -1 is 6 - 3 = 3
      for (int i = 0; i < 3; ++i) {
        if (tlen == DType::kInt32) sizes.data<int32_t>()[i] = static_cast<int32_t>(values[i]);
        if (tlen == DType::kInt64) sizes.data<int64_t>()[i] = values[i];
        if (tlen == DType::kInt8) sizes.data<int8_t>()[i] = static_cast<int8_t>(values[i]);
      }
      c.push_back(
          OpCaseBuilder("SplitV", "SplitV " + DTypeShortName(t) + " Tlen " + DTypeShortName(tlen))
              .T(t)
              .Type("Tlen", tlen)
              .Int("num_split", 3)
              .Input(x)
              .ConstInput(sizes)
              .ConstInput(Tensor::Scalar<int32_t>(-2))
              .Reference([](const std::vector<Tensor>& in) {
                return std::vector<Tensor>{RefPiece(in[0], 1, 0, 1), RefPiece(in[0], 1, 1, 3),
                                           RefPiece(in[0], 1, 4, 2)};
              })
              .Build());
    }
  }
  c.push_back(OpCaseBuilder("SplitV", "SplitV sizes not constant, a zero-size piece")
                  .T(DType::kFloat)
                  .Type("Tlen", DType::kInt64)
                  .Int("num_split", 3)
                  .Input(Distinct(DType::kFloat, Shape{5, 3}))
                  .Input(Vec<int64_t>({2, 0, 3}))
                  .Input(Tensor::Scalar<int32_t>(0))
                  .Reference([](const std::vector<Tensor>& in) {
                    return std::vector<Tensor>{RefPiece(in[0], 0, 0, 2), RefPiece(in[0], 0, 2, 0),
                                               RefPiece(in[0], 0, 2, 3)};
                  })
                  .Build());
  c.push_back(OpCaseBuilder("Split", "Split big, axis not constant")
                  .T(DType::kFloat)
                  .Int("num_split", 4)
                  .Input(Tensor::Scalar<int32_t>(1))
                  .Input(Distinct(DType::kFloat, Shape{256, 512}))
                  .Reference([](const std::vector<Tensor>& in) {
                    std::vector<Tensor> outs;
                    for (int k = 0; k < 4; ++k) outs.push_back(RefPiece(in[1], 1, k * 128, 128));
                    return outs;
                  })
                  .Build());
  AddParallelConcatAndOffset(&c);
  return c;
}

}  // namespace kiln::testing
