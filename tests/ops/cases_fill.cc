// Op-tester cases of tensors made from values: Fill, Range, Tile, BroadcastTo, OneHot.
#include <cmath>
#include <cstdint>
#include <limits>

#include "ops/array_ref.h"
#include "ops/op_cases.h"
#include "ops/ref_util.h"

namespace kiln::testing {

namespace {

// Empty: zeros (empty strings) of the shape.
void AddEmpty(std::vector<OpCase>* c) {
  for (DType t : {DType::kFloat, DType::kString, DType::kBool, DType::kHalf}) {
    for (const Shape& s : {Shape{2, 3}, Shape{0}, Shape{}}) {
      std::vector<int32_t> dims(s.dims().begin(), s.dims().end());
      c->push_back(OpCaseBuilder("Empty", "Empty " + DTypeShortName(t) + " " + s.ToString())
                       .Type("dtype", t)
                       .Bool("init", true)
                       .ConstInput(Make<int32_t>(dims, Shape{s.rank()}))
                       .Reference1([t, s](const auto&) { return Tensor(t, s); })
                       .Build());
    }
  }
}

}  // namespace

std::vector<OpCase> FillCases() {
  std::vector<OpCase> c;
  const DType types[] = {DType::kFloat, DType::kInt32, DType::kString, DType::kHalf,
                         DType::kBool,  DType::kInt64, DType::kUInt8};
  for (DType t : types) {
    const Tensor value = Distinct(t, Shape{}, 5);
    for (const Shape& s : {Shape{}, Shape{3, 2}, Shape{0, 4}}) {
      std::vector<int32_t> dims(s.dims().begin(), s.dims().end());
      for (bool constant : {true, false}) {
        OpCaseBuilder b("Fill");
        b.T(t).Type("index_type", DType::kInt32);
        if (constant) {
          b.ConstInput(Vec<int32_t>(dims));
        } else {
          b.Input(Vec<int32_t>(dims));
        }
        c.push_back(b.Input(value)
                        .Reference1([s](const std::vector<Tensor>& in) {
                          return RefMove(in[1], s, [](const Index&) { return int64_t{0}; });
                        })
                        .Build());
      }
    }
  }
  c.push_back(
      OpCaseBuilder("Fill", "Fill big int64 dims")
          .T(DType::kDouble)
          .Type("index_type", DType::kInt64)
          .Input(Vec<int64_t>({128, 1024}))
          .Input(Tensor::Scalar<double>(2.5))
          .Reference1([](const std::vector<Tensor>& in) {
            return RefMove(in[1], Shape{128, 1024}, [](const Index&) { return int64_t{0}; });
          })
          .Build());

  // Range: ints (both directions, empty) and floats, accumulated like TF.
  struct R {
    double start, limit, delta;
  };
  for (const R& r : {R{0, 10, 3}, R{10, -3, -4}, R{5, 5, 1}, R{-2, 7, 1}}) {
    for (DType t : {DType::kInt32, DType::kInt64, DType::kFloat, DType::kDouble}) {
      OpCaseBuilder b("Range");
      b.Type("Tidx", t);
      for (double v : {r.start, r.limit, r.delta})
        b.Input(RefUnaryDouble(
            Tensor::Scalar<double>(v), [](double x) { return x; }, t));
      c.push_back(b.Reference1([r, t](const auto&) {
                     std::vector<double> v;
                     for (double x = r.start; r.delta > 0 ? x < r.limit : x > r.limit; x += r.delta)
                       v.push_back(x);
                     return RefUnaryDouble(
                         Vec<double>(v), [](double x) { return x; }, t);
                   }).Build());
    }
  }
  // Integer ranges that end next to the type's limits: adding delta once more after the last
  // element would pass them (undefined for the signed types; UBSan stops there).
  c.push_back(
      OpCaseBuilder("Range", "Range int32 across the whole type")
          .Type("Tidx", DType::kInt32)
          .ConstInput(Tensor::Scalar<int32_t>(std::numeric_limits<int32_t>::min()))
          .ConstInput(Tensor::Scalar<int32_t>(std::numeric_limits<int32_t>::max()))
          .ConstInput(Tensor::Scalar<int32_t>(1 << 30))
          .Reference1([](const auto&) {
            return Vec<int32_t>({std::numeric_limits<int32_t>::min(), -(1 << 30), 0, 1 << 30});
          })
          .Build());
  c.push_back(OpCaseBuilder("Range", "Range int64 down to the type's lowest value")
                  .Type("Tidx", DType::kInt64)
                  .Input(Tensor::Scalar<int64_t>(std::numeric_limits<int64_t>::min() + 3))
                  .Input(Tensor::Scalar<int64_t>(std::numeric_limits<int64_t>::min()))
                  .Input(Tensor::Scalar<int64_t>(-2))
                  .Reference1([](const auto&) {
                    return Vec<int64_t>({std::numeric_limits<int64_t>::min() + 3,
                                         std::numeric_limits<int64_t>::min() + 1});
                  })
                  .Build());
  c.push_back(OpCaseBuilder("Range", "Range float fraction")
                  .Type("Tidx", DType::kFloat)
                  .ConstInput(Tensor::Scalar<float>(0.0f))
                  .ConstInput(Tensor::Scalar<float>(1.0f))
                  .ConstInput(Tensor::Scalar<float>(0.25f))
                  .Reference1([](const auto&) {
                    return Vec<float>({0.0f, 0.25f, 0.5f, 0.75f});
                  })
                  .Build());

  // Tile and BroadcastTo.
  for (DType t : types) {
    const Tensor x = Distinct(t, Shape{2, 3});
    c.push_back(OpCaseBuilder("Tile")
                    .T(t)
                    .Type("Tmultiples", DType::kInt32)
                    .Input(x)
                    .ConstInput(Vec<int32_t>({3, 2}))
                    .Reference1([](const std::vector<Tensor>& in) {
                      return RefMove(in[0], Shape{6, 6},
                                     [](const Index& o) { return (o[0] % 2) * 3 + o[1] % 3; });
                    })
                    .Build());
    c.push_back(OpCaseBuilder("Tile", "Tile with a zero multiple " + DTypeShortName(t))
                    .T(t)
                    .Type("Tmultiples", DType::kInt64)
                    .Input(x)
                    .Input(Vec<int64_t>({0, 2}))
                    .Reference1([](const std::vector<Tensor>& in) {
                      return Tensor(in[0].dtype(), Shape{0, 6});
                    })
                    .Build());
    const Tensor col = Distinct(t, Shape{3, 1});
    c.push_back(OpCaseBuilder("BroadcastTo")
                    .T(t)
                    .Type("Tidx", DType::kInt32)
                    .Input(col)
                    .ConstInput(Vec<int32_t>({2, 3, 4}))
                    .Reference1([](const std::vector<Tensor>& in) {
                      return RefMove(in[0], Shape{2, 3, 4}, [](const Index& o) { return o[1]; });
                    })
                    .Build());
    c.push_back(OpCaseBuilder("BroadcastTo", "BroadcastTo same shape " + DTypeShortName(t))
                    .T(t)
                    .Type("Tidx", DType::kInt64)
                    .Input(x)
                    .Input(Vec<int64_t>({2, 3}))
                    .Reference1([](const std::vector<Tensor>& in) { return in[0]; })
                    .Build());
  }
  c.push_back(OpCaseBuilder("Tile", "Tile big")
                  .T(DType::kFloat)
                  .Type("Tmultiples", DType::kInt32)
                  .Input(Distinct(DType::kFloat, Shape{64, 100}))
                  .Input(Vec<int32_t>({4, 3}))
                  .Reference1([](const std::vector<Tensor>& in) {
                    return RefMove(in[0], Shape{256, 300},
                                   [](const Index& o) { return (o[0] % 64) * 100 + o[1] % 100; });
                  })
                  .Build());

  // OneHot on every axis, out-of-range and negative indices, several dtypes.
  for (DType t : {DType::kFloat, DType::kInt32, DType::kString, DType::kBool, DType::kHalf}) {
    for (DType ti : {DType::kInt32, DType::kInt64, DType::kUInt8, DType::kInt8}) {
      // 3 is past the depth; -1 (or 200 for uint8) is out of range too: all off.
      const double bad = ti == DType::kUInt8 ? 200 : -1;
      const Tensor idx = RefUnaryDouble(
          Make<double>({0, 2, 3, 1, bad, 1}, Shape{2, 3}), [](double x) { return x; }, ti);
      for (int64_t axis : {-1, 0, 1}) {
        const Tensor on = Distinct(t, Shape{}, 3), off = Distinct(t, Shape{}, 4);
        c.push_back(OpCaseBuilder("OneHot", "OneHot " + DTypeShortName(t) + " TI " +
                                                DTypeShortName(ti) + " axis " +
                                                std::to_string(axis))
                        .T(t)
                        .Type("TI", ti)
                        .Int("axis", axis)
                        .Input(idx)
                        .ConstInput(Tensor::Scalar<int32_t>(3))
                        .Input(on)
                        .Input(off)
                        .Reference1([axis](const std::vector<Tensor>& in) {
                          const int a = axis < 0 ? 2 : static_cast<int>(axis);
                          std::vector<int64_t> dims = {2, 3};
                          dims.insert(dims.begin() + a, 3);
                          const Shape out = *Shape::FromDims(dims);
                          Tensor r(in[2].dtype(), out);
                          const Tensor as_double = RefUnaryDouble(
                              in[0], [](double x) { return x; }, DType::kDouble);
                          for (int64_t i = 0; i < out.num_elements(); ++i) {
                            Index o = Unravel(i, out);
                            const int64_t d = o[a];
                            o.erase(o.begin() + a);
                            const double v = as_double.data<double>()[FlatOf(o, in[0].shape())];
                            CopyElement(v == static_cast<double>(d) ? in[2] : in[3], 0, &r, i);
                          }
                          return r;
                        })
                        .Build());
      }
    }
  }
  AddEmpty(&c);
  return c;
}

}  // namespace kiln::testing
