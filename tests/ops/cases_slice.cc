// Op-tester cases of selecting and reordering elements: Transpose, StridedSlice, Slice,
// XlaDynamicSlice, XlaDynamicUpdateSlice, GatherV2, Gather, GatherNd, ReverseV2, Reverse,
// ReverseSequence, Roll, Pad, PadV2, MirrorPad.
#include <algorithm>
#include <complex>
#include <functional>
#include <numeric>

#include "ops/array_ref.h"
#include "ops/op_cases.h"
#include "ops/ref_util.h"

namespace kiln::testing {
namespace {

const DType kTypes[] = {DType::kFloat,  DType::kInt32, DType::kString,   DType::kHalf,
                        DType::kBool,   DType::kInt64, DType::kBFloat16, DType::kUInt8,
                        DType::kDouble, DType::kInt16};

// Python's slice(begin, end, stride) over a dim of size n: the indices it selects. Masked
// begin/end take the full extent.
std::vector<int64_t> PySlice(int64_t n, int64_t b, int64_t e, int64_t s, bool bm, bool em) {
  std::vector<int64_t> out;
  auto clamp = [&](int64_t x) {
    if (x < 0) x += n;
    return s > 0 ? std::clamp<int64_t>(x, 0, n) : std::clamp<int64_t>(x, -1, n - 1);
  };
  const int64_t lo = bm ? (s > 0 ? 0 : n - 1) : clamp(b);
  const int64_t hi = em ? (s > 0 ? n : -1) : clamp(e);
  for (int64_t i = lo; s > 0 ? i < hi : i > hi; i += s) out.push_back(i);
  return out;
}

// The reference of a reversal of a rank-3 tensor along the dims whose bit is set in `mask`.
std::function<Tensor(const std::vector<Tensor>&)> RefReverse(int mask) {
  return [mask](const std::vector<Tensor>& in) {
    const Shape& s = in[0].shape();
    return RefMove(in[0], s, [&](const Index& o) {
      Index i = o;
      for (int d = 0; d < 3; ++d)
        if ((mask >> d) & 1) i[d] = s.dim(d) - 1 - o[d];
      return FlatOf(i, s);
    });
  };
}

}  // namespace

namespace {

// ConjugateTranspose; StridedSliceGrad and TensorStridedSliceUpdate (TF's values).
void AddStridedWrites(std::vector<OpCase>* c) {
  {
    const Shape s{2, 3};
    std::vector<std::complex<float>> v;
    for (int i = 0; i < 6; ++i)
      v.emplace_back(static_cast<float>(i), static_cast<float>(i * i - 2));
    const Tensor x = Make<std::complex<float>>(v, s);
    c->push_back(OpCaseBuilder("ConjugateTranspose", "ConjugateTranspose complex64 (2, 3)")
                     .T(DType::kComplex64)
                     .Input(x)
                     .ConstInput(Vec<int32_t>({1, 0}))
                     .Reference1([v](const auto&) {
                       std::vector<std::complex<float>> w;
                       for (int j = 0; j < 3; ++j)
                         for (int i = 0; i < 2; ++i) w.push_back(std::conj(v[i * 3 + j]));
                       return Make<std::complex<float>>(w, Shape{3, 2});
                     })
                     .Build());
    const Tensor y = Distinct(DType::kFloat, Shape{2, 3, 4});
    c->push_back(OpCaseBuilder("ConjugateTranspose", "ConjugateTranspose float (2, 3, 4)")
                     .T(DType::kFloat)
                     .Input(y)
                     .Input(Vec<int64_t>({2, 0, 1}))
                     .Type("Tperm", DType::kInt64)
                     .Reference1([](const std::vector<Tensor>& in) {
                       const Shape o{4, 2, 3};
                       return RefMove(in[0], o,
                                      [](const Index& i) { return (i[1] * 3 + i[2]) * 4 + i[0]; });
                     })
                     .Build());
  }
  // StridedSliceGrad: dy into zeros through the slice.
  struct G {
    std::vector<int32_t> begin, end, strides;
    int64_t shrink;
    Shape dy;
    std::vector<double> want;  // of shape [3, 4]
  };
  for (const G& g :
       {G{{0, 1}, {3, 4}, {2, 2}, 0, Shape{2, 2}, {0, 1, 0, 2, 0, 0, 0, 0, 0, 3, 0, 4}},
        G{{2, 3}, {0, 0}, {-1, -2}, 0, Shape{2, 2}, {0, 0, 0, 0, 0, 4, 0, 3, 0, 2, 0, 1}},
        G{{1}, {2}, {1}, 1, Shape{4}, {0, 0, 0, 0, 1, 2, 3, 4, 0, 0, 0, 0}}}) {
    for (DType t : {DType::kFloat, DType::kInt32}) {
      std::vector<double> dy(g.dy.num_elements());
      for (size_t i = 0; i < dy.size(); ++i) dy[i] = static_cast<double>(i + 1);
      const int64_t n = static_cast<int64_t>(g.begin.size());
      c->push_back(OpCaseBuilder("StridedSliceGrad",
                                 "StridedSliceGrad " + DTypeShortName(t) + " dy " + g.dy.ToString())
                       .T(t)
                       .Type("Index", DType::kInt32)
                       .Int("shrink_axis_mask", g.shrink)
                       .ConstInput(Vec<int32_t>({3, 4}))
                       .ConstInput(Make<int32_t>(g.begin, Shape{n}))
                       .ConstInput(Make<int32_t>(g.end, Shape{n}))
                       .ConstInput(Make<int32_t>(g.strides, Shape{n}))
                       .Input(FromDoubles(t, g.dy, dy))
                       .Reference1([g, t](const auto&) {
                         return FromDoubles(t, Shape{3, 4}, g.want);
                       })
                       .Build());
    }
  }
  // TensorStridedSliceUpdate of x = range(12) as [3, 4], rows 0 and 2, columns 1 and 3.
  struct U {
    Shape value;
    std::vector<double> v, want;
  };
  for (const U& u : {U{Shape{2, 2}, {10, 11, 12, 13}, {0, 10, 2, 11, 4, 5, 6, 7, 8, 12, 10, 13}},
                     U{Shape{}, {5}, {0, 5, 2, 5, 4, 5, 6, 7, 8, 5, 10, 5}},
                     U{Shape{2}, {5, 6}, {0, 5, 2, 6, 4, 5, 6, 7, 8, 5, 10, 6}}}) {
    for (DType t : {DType::kFloat, DType::kInt64}) {
      std::vector<double> x(12);
      for (int i = 0; i < 12; ++i) x[i] = i;
      c->push_back(OpCaseBuilder("TensorStridedSliceUpdate", "TensorStridedSliceUpdate " +
                                                                 DTypeShortName(t) + " value " +
                                                                 u.value.ToString())
                       .T(t)
                       .Type("Index", DType::kInt64)
                       .Input(FromDoubles(t, Shape{3, 4}, x))
                       .ConstInput(Vec<int64_t>({0, 1}))
                       .ConstInput(Vec<int64_t>({3, 4}))
                       .ConstInput(Vec<int64_t>({2, 2}))
                       .Input(FromDoubles(t, u.value, u.v))
                       .Reference1([u, t](const auto&) {
                         return FromDoubles(t, Shape{3, 4}, u.want);
                       })
                       .Build());
    }
  }
  // Strings move too; a new axis and an ellipsis in the spec.
  const Tensor s = Distinct(DType::kString, Shape{2, 3});
  c->push_back(OpCaseBuilder("TensorStridedSliceUpdate", "TensorStridedSliceUpdate string")
                   .T(DType::kString)
                   .Type("Index", DType::kInt32)
                   .Int("ellipsis_mask", 1)
                   .Input(s)
                   .ConstInput(Vec<int32_t>({0, 2}))
                   .ConstInput(Vec<int32_t>({0, 3}))
                   .ConstInput(Vec<int32_t>({1, 1}))
                   .Input(Make<std::string>({"x", "y"}, Shape{2, 1}))
                   .Reference1([](const std::vector<Tensor>& in) {
                     Tensor out = in[0].DeepCopy();
                     out.data<std::string>()[2] = "x";
                     out.data<std::string>()[5] = "y";
                     return out;
                   })
                   .Build());
}

}  // namespace

std::vector<OpCase> SliceCases() {
  std::vector<OpCase> c;
  // Transpose: every permutation of a rank-3 tensor, and a big 2-D one.
  for (DType t : {DType::kFloat, DType::kString, DType::kInt8, DType::kHalf}) {
    const Tensor x = Distinct(t, Shape{2, 3, 4});
    std::vector<int32_t> perm = {0, 1, 2};
    do {
      const std::vector<int32_t> p = perm;
      c.push_back(OpCaseBuilder("Transpose", "Transpose " + DTypeShortName(t) + " [" +
                                                 std::to_string(p[0]) + std::to_string(p[1]) +
                                                 std::to_string(p[2]) + "]")
                      .T(t)
                      .Type("Tperm", DType::kInt32)
                      .Input(x)
                      .ConstInput(Vec<int32_t>(p))
                      .Reference1([p](const std::vector<Tensor>& in) {
                        const Shape& s = in[0].shape();
                        const Shape out{s.dim(p[0]), s.dim(p[1]), s.dim(p[2])};
                        return RefMove(in[0], out, [&](const Index& o) {
                          Index i(3);
                          for (int d = 0; d < 3; ++d) i[p[d]] = o[d];
                          return FlatOf(i, s);
                        });
                      })
                      .Build());
    } while (std::next_permutation(perm.begin(), perm.end()));
  }
  // An attention head split (the innermost dim stays: the GPU moves it in 16-byte words).
  for (DType t : {DType::kFloat, DType::kHalf, DType::kInt8}) {
    c.push_back(OpCaseBuilder("Transpose", "Transpose " + DTypeShortName(t) + " head split")
                    .T(t)
                    .Type("Tperm", DType::kInt32)
                    .Input(Distinct(t, Shape{2, 5, 3, 32}))
                    .ConstInput(Vec<int32_t>({0, 2, 1, 3}))
                    .Reference1([](const std::vector<Tensor>& in) {
                      return RefMove(in[0], Shape{2, 3, 5, 32}, [](const Index& o) {
                        return ((o[0] * 5 + o[2]) * 3 + o[1]) * 32 + o[3];
                      });
                    })
                    .Build());
  }
  // Negative perm entries count from the end, as TF's kernel reads them: [-1, 0, 1] is
  // [2, 0, 1], constant (prepare infers the shape) or not, int32 or int64.
  for (bool constant : {true, false}) {
    OpCaseBuilder b("Transpose", std::string("Transpose negative perm [-1, 0, 1], ") +
                                     (constant ? "constant" : "not constant"));
    b.T(DType::kFloat).Type("Tperm", constant ? DType::kInt32 : DType::kInt64);
    b.Input(Distinct(DType::kFloat, Shape{2, 3, 4}));
    if (constant)
      b.ConstInput(Vec<int32_t>({-1, 0, 1}));
    else
      b.Input(Vec<int64_t>({-1, -3, 1}));
    c.push_back(b.Reference1([](const std::vector<Tensor>& in) {
                   return RefMove(in[0], Shape{4, 2, 3},
                                  [](const Index& o) { return (o[1] * 3 + o[2]) * 4 + o[0]; });
                 }).Build());
  }
  c.push_back(OpCaseBuilder("Transpose", "Transpose big, perm not constant")
                  .T(DType::kFloat)
                  .Type("Tperm", DType::kInt64)
                  .Input(Distinct(DType::kFloat, Shape{300, 400}))
                  .Input(Vec<int64_t>({1, 0}))
                  .Reference1([](const std::vector<Tensor>& in) {
                    return RefMove(in[0], Shape{400, 300},
                                   [](const Index& o) { return o[1] * 400 + o[0]; });
                  })
                  .Build());

  // StridedSlice: one spec entry per dim with begin/end masks, negative strides, shrinks.
  struct SliceSpec {
    std::vector<int64_t> b, e, s;
    int64_t bm = 0, em = 0, shrink = 0;
  };
  const SliceSpec specs[] = {
      {{0, 1, 0}, {2, 3, 4}, {1, 1, 1}},          {{1, -1, 3}, {0, 0, 0}, {-1, -1, -2}, 0, 0, 0},
      {{0, 0, 0}, {0, 0, 0}, {1, 2, 3}, 7, 7, 0}, {{1, 0, -1}, {2, 3, 0}, {1, 1, 1}, 0, 2, 5},
      {{-5, 2, 1}, {5, 1, 3}, {1, 1, 1}},         {{0, 2, 0}, {2, 0, 4}, {1, -1, 2}, 0, 0, 1},
  };
  for (DType t : kTypes) {
    for (const SliceSpec& sp : specs) {
      const Tensor x = Distinct(t, Shape{2, 3, 4});
      std::vector<std::vector<int64_t>> picks(3);
      std::vector<int64_t> out_dims;
      for (int d = 0; d < 3; ++d) {
        const bool shrink = (sp.shrink >> d) & 1;
        if (shrink) {
          const int64_t i = sp.b[d] < 0 ? sp.b[d] + x.dim(d) : sp.b[d];
          picks[d] = {i};
        } else {
          picks[d] =
              PySlice(x.dim(d), sp.b[d], sp.e[d], sp.s[d], (sp.bm >> d) & 1, (sp.em >> d) & 1);
          out_dims.push_back(static_cast<int64_t>(picks[d].size()));
        }
      }
      const Shape out = *Shape::FromDims(out_dims);
      for (bool constant : {true, false}) {
        OpCaseBuilder b("StridedSlice");
        b.T(t).Type("Index", DType::kInt64).Input(x);
        for (const auto* v : {&sp.b, &sp.e, &sp.s}) {
          if (constant) {
            b.ConstInput(Vec<int64_t>(*v));
          } else {
            b.Input(Vec<int64_t>(*v));
          }
        }
        b.Int("begin_mask", sp.bm).Int("end_mask", sp.em).Int("shrink_axis_mask", sp.shrink);
        c.push_back(b.Reference1([picks, out, sp](const std::vector<Tensor>& in) {
                       return RefMove(in[0], out, [&](const Index& o) {
                         Index i(3);
                         int k = 0;
                         for (int d = 0; d < 3; ++d)
                           i[d] = ((sp.shrink >> d) & 1) ? picks[d][0] : picks[d][o[k++]];
                         return FlatOf(i, in[0].shape());
                       });
                     }).Build());
      }
    }
  }
  // x[..., 1] and x[:, tf.newaxis, 1:] (ellipsis and new axis masks), values written out.
  c.push_back(OpCaseBuilder("StridedSlice", "StridedSlice ellipsis + shrink")
                  .T(DType::kInt32)
                  .Type("Index", DType::kInt32)
                  .Input(Make<int32_t>({0, 1, 2, 3, 4, 5}, Shape{2, 3}))
                  .ConstInput(Vec<int32_t>({0, 1}))
                  .ConstInput(Vec<int32_t>({0, 2}))
                  .ConstInput(Vec<int32_t>({1, 1}))
                  .Int("ellipsis_mask", 1)
                  .Int("shrink_axis_mask", 2)
                  .Reference1([](const auto&) {
                    return Vec<int32_t>({1, 4});
                  })
                  .Build());
  c.push_back(OpCaseBuilder("StridedSlice", "StridedSlice new axis")
                  .T(DType::kInt32)
                  .Type("Index", DType::kInt32)
                  .Input(Make<int32_t>({0, 1, 2, 3, 4, 5}, Shape{2, 3}))
                  .ConstInput(Vec<int32_t>({0, 0, 1}))
                  .ConstInput(Vec<int32_t>({0, 0, 0}))
                  .ConstInput(Vec<int32_t>({1, 1, 1}))
                  .Int("begin_mask", 1)
                  .Int("end_mask", 5)
                  .Int("new_axis_mask", 2)
                  .Reference1([](const auto&) {
                    return Make<int32_t>({1, 2, 4, 5}, Shape{2, 1, 2});
                  })
                  .Build());

  // Slice, with size -1 and an empty piece.
  for (DType t : kTypes) {
    const Tensor x = Distinct(t, Shape{3, 4, 5});
    struct S {
      std::vector<int64_t> b, s;
    };
    for (const S& sl :
         {S{{1, 0, 2}, {2, -1, 3}}, S{{0, 4, 0}, {-1, 0, -1}}, S{{2, 1, 4}, {1, 3, 1}}}) {
      Shape out;
      for (int d = 0; d < 3; ++d) out.AddDim(sl.s[d] == -1 ? x.dim(d) - sl.b[d] : sl.s[d]);
      for (bool constant : {true, false}) {
        OpCaseBuilder b("Slice");
        b.T(t).Type("Index", DType::kInt32).Input(x);
        std::vector<int32_t> bi(sl.b.begin(), sl.b.end()), si(sl.s.begin(), sl.s.end());
        if (constant) {
          b.ConstInput(Vec<int32_t>(bi)).ConstInput(Vec<int32_t>(si));
        } else {
          b.Input(Vec<int32_t>(bi)).Input(Vec<int32_t>(si));
        }
        const std::vector<int64_t> begin = sl.b;
        c.push_back(b.Reference1([out, begin](const std::vector<Tensor>& in) {
                       return RefMove(in[0], out, [&](const Index& o) {
                         Index i = o;
                         for (int d = 0; d < 3; ++d) i[d] += begin[d];
                         return FlatOf(i, in[0].shape());
                       });
                     }).Build());
      }
    }
  }
  c.push_back(OpCaseBuilder("Slice", "Slice big int64")
                  .T(DType::kFloat)
                  .Type("Index", DType::kInt64)
                  .Input(Distinct(DType::kFloat, Shape{400, 300}))
                  .Input(Vec<int64_t>({10, 7}))
                  .Input(Vec<int64_t>({380, 250}))
                  .Reference1([](const std::vector<Tensor>& in) {
                    return RefMove(in[0], Shape{380, 250},
                                   [](const Index& o) { return (o[0] + 10) * 300 + o[1] + 7; });
                  })
                  .Build());

  // XlaDynamicSlice and XlaDynamicUpdateSlice: starts out of range are clamped so that the
  // window fits (XLA's semantics; Keras 3's ops.slice_update writes the update form).
  for (DType t : kTypes) {
    const Tensor x = Distinct(t, Shape{3, 4, 5});
    for (bool constant : {true, false}) {
      OpCaseBuilder b("XlaDynamicSlice");
      b.T(t).Type("Tindices", DType::kInt32).Input(x).Input(Vec<int32_t>({1, 3, -2}));
      if (constant) {
        b.ConstInput(Vec<int32_t>({2, 2, 3}));
      } else {
        b.Input(Vec<int32_t>({2, 2, 3}));
      }
      // Starts {1, 3, -2} clamp to {1, 2, 0}.
      c.push_back(b.Reference1([](const std::vector<Tensor>& in) {
                     return RefMove(in[0], Shape{2, 2, 3}, [&](const Index& o) {
                       return FlatOf({o[0] + 1, o[1] + 2, o[2]}, in[0].shape());
                     });
                   }).Build());
    }
    const Tensor update = Distinct(t, Shape{2, 1, 3}, 101);
    for (DType index : {DType::kInt32, DType::kInt64}) {
      // Starts {2, 1, 7} clamp to {1, 1, 2}.
      const Tensor starts =
          index == DType::kInt32 ? Vec<int32_t>({2, 1, 7}) : Vec<int64_t>({2, 1, 7});
      c.push_back(
          OpCaseBuilder("XlaDynamicUpdateSlice")
              .T(t)
              .Type("Tindices", index)
              .Input(x)
              .Input(update)
              .Input(starts)
              .Reference1([](const std::vector<Tensor>& in) {
                Tensor out = RefMove(in[0], in[0].shape(), [](const Index& o) {
                  return FlatOf(o, Shape{3, 4, 5});
                });
                for (int64_t i = 0; i < in[1].NumElements(); ++i) {
                  const Index u = Unravel(i, in[1].shape());
                  CopyElement(in[1], i, &out, FlatOf({u[0] + 1, u[1] + 1, u[2] + 2}, out.shape()));
                }
                return out;
              })
              .Build());
    }
  }
  c.push_back(OpCaseBuilder("XlaDynamicUpdateSlice", "XlaDynamicUpdateSlice cache row")
                  .T(DType::kFloat)
                  .Type("Tindices", DType::kInt32)
                  .Input(Distinct(DType::kFloat, Shape{2, 64, 8}))
                  .Input(Distinct(DType::kFloat, Shape{2, 1, 8}, 500))
                  .Input(Vec<int32_t>({0, 37, 0}))
                  .Reference1([](const std::vector<Tensor>& in) {
                    Tensor out = RefMove(in[0], in[0].shape(), [](const Index& o) {
                      return FlatOf(o, Shape{2, 64, 8});
                    });
                    for (int64_t i = 0; i < in[1].NumElements(); ++i) {
                      const Index u = Unravel(i, in[1].shape());
                      CopyElement(in[1], i, &out, FlatOf({u[0], u[1] + 37, u[2]}, out.shape()));
                    }
                    return out;
                  })
                  .Build());

  // GatherV2 along each axis; Gather (v1) along axis 0; indices int32 and int64.
  for (DType t : kTypes) {
    const Tensor params = Distinct(t, Shape{4, 3, 2});
    const Tensor idx32 = Make<int32_t>({3, 0, 0, 2, 1, 3}, Shape{2, 3});
    for (int axis = 0; axis < 3; ++axis) {
      const Tensor idx = axis == 0 ? idx32 : Make<int32_t>({1, 0, 1, 1}, Shape{4});
      c.push_back(OpCaseBuilder("GatherV2",
                                "GatherV2 " + DTypeShortName(t) + " axis " + std::to_string(axis))
                      .Type("Tparams", t)
                      .Type("Tindices", DType::kInt32)
                      .Type("Taxis", DType::kInt32)
                      .Input(params)
                      .Input(idx)
                      .ConstInput(Tensor::Scalar<int32_t>(axis))
                      .Reference1([axis](const std::vector<Tensor>& in) {
                        const Shape& ps = in[0].shape();
                        const Shape& is = in[1].shape();
                        std::vector<int64_t> dims(ps.dims().begin(), ps.dims().begin() + axis);
                        dims.insert(dims.end(), is.dims().begin(), is.dims().end());
                        dims.insert(dims.end(), ps.dims().begin() + axis + 1, ps.dims().end());
                        const Shape out = *Shape::FromDims(dims);
                        return RefMove(in[0], out, [&](const Index& o) {
                          Index p(o.begin(), o.begin() + axis);
                          Index j(o.begin() + axis, o.begin() + axis + is.rank());
                          p.push_back(in[1].data<int32_t>()[FlatOf(j, is)]);
                          p.insert(p.end(), o.begin() + axis + is.rank(), o.end());
                          return FlatOf(p, ps);
                        });
                      })
                      .Build());
    }
    // batch_dims: each batch gathers from its own slice of params.
    for (auto [axis, bd] : {std::pair<int, int>{1, 1}, std::pair<int, int>{2, 1},
                            std::pair<int, int>{2, 2}, std::pair<int, int>{1, -1}}) {
      const int a = axis, b = bd < 0 ? bd + 2 : bd;
      // Indices valid for the gathered dim (3 for axis 1, 2 for axis 2).
      const Tensor idx = b == 2   ? Make<int64_t>({1, 0, 0, 1, 1, 1, 0, 0, 1, 0, 1, 1}, Shape{4, 3})
                         : a == 1 ? Make<int64_t>({2, 0, 1, 1, 0, 0, 2, 2}, Shape{4, 2})
                                  : Make<int64_t>({1, 0, 1, 1, 0, 0, 1, 0}, Shape{4, 2});
      const Tensor p2 = Distinct(t, Shape{4, 3, 2});
      c.push_back(OpCaseBuilder("GatherV2", "GatherV2 " + DTypeShortName(t) + " axis " +
                                                std::to_string(a) + " batch_dims " +
                                                std::to_string(bd))
                      .Type("Tparams", t)
                      .Type("Tindices", DType::kInt64)
                      .Type("Taxis", DType::kInt64)
                      .Int("batch_dims", bd)
                      .Input(p2)
                      .Input(idx)
                      .ConstInput(Tensor::Scalar<int64_t>(a))
                      .Reference1([a, b](const std::vector<Tensor>& in) {
                        const Shape& ps = in[0].shape();
                        const Shape& is = in[1].shape();
                        std::vector<int64_t> dims(ps.dims().begin(), ps.dims().begin() + a);
                        dims.insert(dims.end(), is.dims().begin() + b, is.dims().end());
                        dims.insert(dims.end(), ps.dims().begin() + a + 1, ps.dims().end());
                        const Shape out = *Shape::FromDims(dims);
                        const int ni = is.rank() - b;  // index dims past the batch
                        return RefMove(in[0], out, [&](const Index& o) {
                          Index iidx(o.begin(), o.begin() + b);  // the batch coordinates
                          iidx.insert(iidx.end(), o.begin() + a, o.begin() + a + ni);
                          Index p(o.begin(), o.begin() + a);
                          p.push_back(in[1].data<int64_t>()[FlatOf(iidx, is)]);
                          p.insert(p.end(), o.begin() + a + ni, o.end());
                          return FlatOf(p, ps);
                        });
                      })
                      .Build());
    }
    c.push_back(OpCaseBuilder("Gather")
                    .Type("Tparams", t)
                    .Type("Tindices", DType::kInt64)
                    .Input(params)
                    .Input(Make<int64_t>({2, 2, 0}, Shape{3}))
                    .Reference1([](const std::vector<Tensor>& in) {
                      const int64_t rows[] = {2, 2, 0};
                      return RefMove(in[0], Shape{3, 3, 2}, [&](const Index& o) {
                        return FlatOf({rows[o[0]], o[1], o[2]}, in[0].shape());
                      });
                    })
                    .Build());
  }

  // Rows longer than the short-row loop (20 values), and one-value rows in a batch of runs.
  for (const int64_t inner : {int64_t{1}, int64_t{20}}) {
    const Tensor params = Distinct(DType::kFloat, Shape{3, 5, inner});
    const Tensor idx = Make<int32_t>({4, 0, 4, 2, 1}, Shape{5});
    c.push_back(OpCaseBuilder("GatherV2", "GatherV2 f32 axis 1 rows of " + std::to_string(inner))
                    .Type("Tparams", DType::kFloat)
                    .Type("Tindices", DType::kInt32)
                    .Type("Taxis", DType::kInt32)
                    .Input(params)
                    .Input(idx)
                    .ConstInput(Tensor::Scalar<int32_t>(1))
                    .Reference1([inner](const std::vector<Tensor>& in) {
                      return RefMove(in[0], Shape{3, 5, inner}, [&](const Index& o) {
                        return FlatOf({o[0], in[1].data<int32_t>()[o[1]], o[2]}, in[0].shape());
                      });
                    })
                    .Build());
  }

  // GatherNd: full index vectors, partial ones, batch dims of indices, int16 indices, IGNORE.
  for (DType t : {DType::kFloat, DType::kString, DType::kInt32, DType::kHalf, DType::kBool}) {
    const Tensor params = Distinct(t, Shape{3, 4, 2});
    struct G {
      Tensor indices;
      std::string policy;
    };
    const G gs[] = {
        {Make<int32_t>({0, 1, 1, 2, 3, 0, 1, 0, 1}, Shape{3, 3}), ""},
        {Make<int64_t>({2, 0, 1, 3}, Shape{2, 1, 2}), ""},
        {Make<int32_t>({1, 2, 0}, Shape{3, 1}), ""},
        {Make<int32_t>({}, Shape{2, 0}), ""},
        {Make<int32_t>({0, 5, 2, 1, -1, 0}, Shape{3, 2}), "IGNORE"},
    };
    for (const G& g : gs) {
      OpCaseBuilder b("GatherNd");
      b.Type("Tparams", t).Type("Tindices", g.indices.dtype()).Input(params).Input(g.indices);
      if (!g.policy.empty()) b.String("bad_indices_policy", g.policy);
      c.push_back(b.Reference1([](const std::vector<Tensor>& in) {
                     const Shape& ps = in[0].shape();
                     const Tensor& ind = in[1];
                     const int64_t k = ind.dim(ind.rank() - 1);
                     std::vector<int64_t> dims(ind.shape().dims().begin(),
                                               ind.shape().dims().end() - 1);
                     dims.insert(dims.end(), ps.dims().begin() + k, ps.dims().end());
                     const Shape out = *Shape::FromDims(dims);
                     const std::vector<int64_t> iv = [&] {
                       std::vector<int64_t> v(ind.NumElements());
                       for (size_t i = 0; i < v.size(); ++i)
                         v[i] = ind.dtype() == DType::kInt32 ? ind.data<int32_t>()[i]
                                                             : ind.data<int64_t>()[i];
                       return v;
                     }();
                     const int lead = ind.rank() - 1;
                     Tensor zero(in[0].dtype(), Shape{1});  // IGNORE fills zeros
                     return RefMove(
                         in[0], out,
                         [&](const Index& o) -> int64_t {
                           Index j(o.begin(), o.begin() + lead);
                           int64_t row = 0;
                           for (int d = 0; d < lead; ++d) row = row * ind.dim(d) + j[d];
                           Index p;
                           for (int64_t q = 0; q < k; ++q) {
                             const int64_t v = iv[row * k + q];
                             if (v < 0 || v >= ps.dim(static_cast<int>(q))) return -1;
                             p.push_back(v);
                           }
                           p.insert(p.end(), o.begin() + lead, o.end());
                           return FlatOf(p, ps);
                         },
                         &zero);
                   }).Build());
    }
  }
  c.push_back(OpCaseBuilder("GatherNd", "GatherNd int16 indices")
                  .Type("Tparams", DType::kInt64)
                  .Type("Tindices", DType::kInt16)
                  .Input(Make<int64_t>({10, 11, 12, 13}, Shape{2, 2}))
                  .Input(Make<int16_t>({1, 0, 0, 1}, Shape{2, 2}))
                  .Reference1([](const auto&) {
                    return Vec<int64_t>({12, 11});
                  })
                  .Build());

  // ReverseV2 over every subset of 3 axes.
  for (DType t : kTypes) {
    const Tensor x = Distinct(t, Shape{2, 3, 4});
    for (int mask = 0; mask < 8; ++mask) {
      std::vector<int32_t> axes;
      for (int d = 0; d < 3; ++d)
        if ((mask >> d) & 1) axes.push_back(d == 2 && mask == 7 ? -1 : d);
      c.push_back(OpCaseBuilder("ReverseV2",
                                "ReverseV2 " + DTypeShortName(t) + " mask " + std::to_string(mask))
                      .T(t)
                      .Type("Tidx", DType::kInt32)
                      .Input(x)
                      .ConstInput(Vec<int32_t>(axes))
                      .Reference1(RefReverse(mask))
                      .Build());
    }
  }

  // Reverse (v1): a bool per dim.
  for (DType t : {DType::kFloat, DType::kString, DType::kInt8}) {
    const Tensor x = Distinct(t, Shape{2, 3, 4});
    for (int mask : {0, 5, 6}) {
      c.push_back(
          OpCaseBuilder("Reverse", "Reverse " + DTypeShortName(t) + " mask " + std::to_string(mask))
              .T(t)
              .Input(x)
              .ConstInput(Make<bool>({(mask & 1) != 0, (mask & 2) != 0, (mask & 4) != 0}, Shape{3}))
              .Reference1(RefReverse(mask))
              .Build());
    }
  }

  // ReverseSequence with batch before and after the sequence dim.
  for (DType t : {DType::kFloat, DType::kString, DType::kInt64, DType::kBool}) {
    const Tensor x = Distinct(t, Shape{3, 5, 2});
    for (auto [seq, batch] : {std::pair<int, int>{1, 0}, std::pair<int, int>{0, 2}}) {
      const int sd = seq, bd = batch;
      const Tensor lens =
          bd == 0 ? Make<int64_t>({5, 0, 3}, Shape{3}) : Make<int64_t>({2, 3}, Shape{2});
      c.push_back(OpCaseBuilder("ReverseSequence", "ReverseSequence " + DTypeShortName(t) +
                                                       " seq " + std::to_string(sd))
                      .T(t)
                      .Type("Tlen", DType::kInt64)
                      .Int("seq_dim", sd)
                      .Int("batch_dim", bd)
                      .Input(x)
                      .Input(lens)
                      .Reference1([sd, bd](const std::vector<Tensor>& in) {
                        const Shape& s = in[0].shape();
                        return RefMove(in[0], s, [&](const Index& o) {
                          Index i = o;
                          const int64_t len = in[1].data<int64_t>()[o[bd]];
                          if (o[sd] < len) i[sd] = len - 1 - o[sd];
                          return FlatOf(i, s);
                        });
                      })
                      .Build());
    }
  }
  c.push_back(OpCaseBuilder("ReverseSequence", "ReverseSequence int32 lengths")
                  .T(DType::kInt32)
                  .Type("Tlen", DType::kInt32)
                  .Int("seq_dim", 1)
                  .Input(Make<int32_t>({1, 2, 3, 4, 5, 6}, Shape{2, 3}))
                  .Input(Make<int32_t>({2, 3}, Shape{2}))
                  .Reference1([](const auto&) {
                    return Make<int32_t>({2, 1, 3, 6, 5, 4}, Shape{2, 3});
                  })
                  .Build());

  // Roll: one axis, several (the same axis twice adds up), negative and large shifts.
  for (DType t : {DType::kFloat, DType::kString, DType::kUInt8, DType::kHalf}) {
    const Tensor x = Distinct(t, Shape{4, 5});
    struct R {
      std::vector<int64_t> shift, axis;
    };
    for (const R& r : {R{{2}, {1}}, R{{-1, 7}, {0, 1}}, R{{3, 3}, {1, 1}}, R{{-9}, {-2}}}) {
      std::vector<int64_t> total(2, 0);
      for (size_t i = 0; i < r.shift.size(); ++i)
        total[r.axis[i] < 0 ? r.axis[i] + 2 : r.axis[i]] += r.shift[i];
      c.push_back(OpCaseBuilder("Roll")
                      .T(t)
                      .Type("Tshift", DType::kInt64)
                      .Type("Taxis", DType::kInt64)
                      .Input(x)
                      .Input(Vec<int64_t>(r.shift))
                      .Input(Vec<int64_t>(r.axis))
                      .Reference1([total](const std::vector<Tensor>& in) {
                        const Shape& s = in[0].shape();
                        return RefMove(in[0], s, [&](const Index& o) {
                          Index i = o;
                          for (int d = 0; d < 2; ++d) {
                            const int64_t n = s.dim(d);
                            i[d] = (((o[d] - total[d]) % n) + n) % n;
                          }
                          return FlatOf(i, s);
                        });
                      })
                      .Build());
    }
  }
  c.push_back(OpCaseBuilder("Roll", "Roll scalar shift int32")
                  .T(DType::kInt32)
                  .Type("Tshift", DType::kInt32)
                  .Type("Taxis", DType::kInt32)
                  .Input(Vec<int32_t>({0, 1, 2, 3, 4}))
                  .Input(Tensor::Scalar<int32_t>(2))
                  .Input(Tensor::Scalar<int32_t>(0))
                  .Reference1([](const auto&) {
                    return Vec<int32_t>({3, 4, 0, 1, 2});
                  })
                  .Build());

  // Pad, PadV2, MirrorPad (both modes).
  for (DType t : kTypes) {
    const Tensor x = Distinct(t, Shape{3, 4});
    const Tensor pads = Make<int32_t>({1, 2, 0, 3}, Shape{2, 2});
    auto padded = [](const Tensor& in, const Tensor& fill) {
      return RefMove(
          in, Shape{6, 7},
          [&](const Index& o) -> int64_t {
            const int64_t r = o[0] - 1, col = o[1];
            if (r < 0 || r >= 3 || col >= 4) return -1;
            return r * 4 + col;
          },
          &fill);
    };
    c.push_back(OpCaseBuilder("Pad")
                    .T(t)
                    .Type("Tpaddings", DType::kInt32)
                    .Input(x)
                    .ConstInput(pads)
                    .Reference1([padded](const std::vector<Tensor>& in) {
                      return padded(in[0], Tensor(in[0].dtype(), Shape{1}));  // zero / ""
                    })
                    .Build());
    const Tensor border = Distinct(t, Shape{}, 77);
    c.push_back(
        OpCaseBuilder("PadV2")
            .T(t)
            .Type("Tpaddings", DType::kInt32)
            .Input(x)
            .Input(pads)
            .Input(border)
            .Reference1([padded](const std::vector<Tensor>& in) { return padded(in[0], in[2]); })
            .Build());
    for (const std::string mode : {"REFLECT", "SYMMETRIC"}) {
      const int64_t edge = mode == "REFLECT" ? 0 : 1;
      const Tensor mp = Make<int64_t>({2, 1, 3, 0}, Shape{2, 2});
      c.push_back(OpCaseBuilder("MirrorPad", "MirrorPad " + mode + " " + DTypeShortName(t))
                      .T(t)
                      .Type("Tpaddings", DType::kInt64)
                      .String("mode", mode)
                      .Input(x)
                      .ConstInput(mp)
                      .Reference1([edge](const std::vector<Tensor>& in) {
                        auto reflect = [edge](int64_t i, int64_t n) {
                          if (i < 0) return -i - edge;
                          if (i >= n) return 2 * n - 2 + edge - i;
                          return i;
                        };
                        return RefMove(in[0], Shape{6, 7}, [&](const Index& o) {
                          return reflect(o[0] - 2, 3) * 4 + reflect(o[1] - 3, 4);
                        });
                      })
                      .Build());
    }
  }
  c.push_back(OpCaseBuilder("Pad", "Pad big, paddings not constant")
                  .T(DType::kFloat)
                  .Type("Tpaddings", DType::kInt64)
                  .Input(Distinct(DType::kFloat, Shape{300, 200}))
                  .Input(Make<int64_t>({5, 0, 1, 10}, Shape{2, 2}))
                  .Reference1([](const std::vector<Tensor>& in) {
                    Tensor zero(DType::kFloat, Shape{1});
                    return RefMove(
                        in[0], Shape{305, 211},
                        [](const Index& o) -> int64_t {
                          if (o[0] < 5 || o[1] < 1 || o[1] > 200) return -1;
                          return (o[0] - 5) * 200 + o[1] - 1;
                        },
                        &zero);
                  })
                  .Build());
  AddStridedWrites(&c);
  return c;
}

}  // namespace kiln::testing
