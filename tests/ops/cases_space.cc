// Op-tester cases of moving spatial blocks: SpaceToBatchND, BatchToSpaceND (and the v1 ops),
// SpaceToDepth,
// DepthToSpace, ExtractImagePatches.
#include <algorithm>

#include "ops/array_ref.h"
#include "ops/op_cases.h"

namespace kiln::testing {

std::vector<OpCase> SpaceCases() {
  std::vector<OpCase> c;
  // SpaceToBatchND / BatchToSpaceND with 1 and 2 block dims, padding and cropping.
  struct B {
    Shape space;                 // [batch, spatial..., rest...]
    std::vector<int64_t> block;  // M entries
    std::vector<int64_t> pads;   // 2M entries
  };
  const B bs[] = {{Shape{2, 4, 4, 3}, {2, 2}, {0, 0, 0, 0}},
                  {Shape{1, 3, 5, 2}, {2, 3}, {1, 0, 0, 1}},
                  {Shape{2, 5, 2}, {3}, {2, 2}},
                  {Shape{1, 2, 2}, {1}, {0, 0}},
                  {Shape{1, 2, 4, 1}, {2, 2}, {1, 1, 0, 2}}};
  for (DType t :
       {DType::kFloat, DType::kInt32, DType::kHalf, DType::kUInt8, DType::kDouble, DType::kInt64}) {
    for (const B& b : bs) {
      const int m = static_cast<int>(b.block.size());
      int64_t prod = 1;
      for (int64_t v : b.block) prod *= v;
      // The batch-side shape.
      std::vector<int64_t> bdims = {b.space.dim(0) * prod};
      for (int i = 0; i < m; ++i)
        bdims.push_back((b.space.dim(1 + i) + b.pads[2 * i] + b.pads[2 * i + 1]) / b.block[i]);
      for (int d = 1 + m; d < b.space.rank(); ++d) bdims.push_back(b.space.dim(d));
      const Shape batch_shape = *Shape::FromDims(bdims);
      // Space-side coordinates of a batch-side index, or -1 in the padding.
      const B spec = b;
      auto space_of = [spec, m](const Index& o, const Shape& space) -> int64_t {
        const int64_t batch = space.dim(0);
        int64_t offset = o[0] / batch;
        Index s = o;
        s[0] = o[0] % batch;
        for (int i = m - 1; i >= 0; --i) {
          const int64_t bo = offset % spec.block[i];
          offset /= spec.block[i];
          s[1 + i] = o[1 + i] * spec.block[i] + bo - spec.pads[2 * i];
          if (s[1 + i] < 0 || s[1 + i] >= space.dim(1 + i)) return -1;
        }
        return FlatOf(s, space);
      };
      const Tensor x = Distinct(t, b.space);
      const Tensor block = Vec<int64_t>(b.block);
      const Tensor pads = Make<int64_t>(b.pads, Shape{m, 2});
      c.push_back(OpCaseBuilder("SpaceToBatchND",
                                "SpaceToBatchND " + DTypeShortName(t) + " " + b.space.ToString())
                      .T(t)
                      .Type("Tblock_shape", DType::kInt64)
                      .Type("Tpaddings", DType::kInt64)
                      .Input(x)
                      .ConstInput(block)
                      .ConstInput(pads)
                      .Reference1([batch_shape, space_of](const std::vector<Tensor>& in) {
                        Tensor zero(in[0].dtype(), Shape{1});
                        return RefMove(
                            in[0], batch_shape,
                            [&](const Index& o) { return space_of(o, in[0].shape()); }, &zero);
                      })
                      .Build());
      // The inverse: crops equal to the pads give back the input.
      const Tensor batched = Distinct(t, batch_shape, 3);
      const Shape space = b.space;
      c.push_back(OpCaseBuilder("BatchToSpaceND",
                                "BatchToSpaceND " + DTypeShortName(t) + " " + b.space.ToString())
                      .T(t)
                      .Type("Tblock_shape", DType::kInt32)
                      .Type("Tcrops", DType::kInt64)
                      .Input(batched)
                      .Input(Vec<int32_t>(std::vector<int32_t>(b.block.begin(), b.block.end())))
                      .Input(pads)
                      .Reference1([space, space_of](const std::vector<Tensor>& in) {
                        Tensor out(in[0].dtype(), space);
                        for (int64_t i = 0; i < in[0].NumElements(); ++i) {
                          const int64_t to = space_of(Unravel(i, in[0].shape()), space);
                          if (to >= 0) CopyElement(in[0], i, &out, to);
                        }
                        return out;
                      })
                      .Build());
      // The v1 ops: 4-D, one block_size for both spatial dims.
      if (m == 2 && b.block[0] == b.block[1] && b.space.rank() == 4) {
        c.push_back(OpCaseBuilder("SpaceToBatch",
                                  "SpaceToBatch " + DTypeShortName(t) + " " + b.space.ToString())
                        .T(t)
                        .Int("block_size", b.block[0])
                        .Type("Tpaddings", DType::kInt64)
                        .Input(x)
                        .ConstInput(pads)
                        .Reference1([batch_shape, space_of](const std::vector<Tensor>& in) {
                          Tensor zero(in[0].dtype(), Shape{1});
                          return RefMove(
                              in[0], batch_shape,
                              [&](const Index& o) { return space_of(o, in[0].shape()); }, &zero);
                        })
                        .Build());
        c.push_back(OpCaseBuilder("BatchToSpace",
                                  "BatchToSpace " + DTypeShortName(t) + " " + b.space.ToString())
                        .T(t)
                        .Int("block_size", b.block[0])
                        .Type("Tidx", DType::kInt64)
                        .Input(batched)
                        .Input(pads)
                        .Reference1([space, space_of](const std::vector<Tensor>& in) {
                          Tensor out(in[0].dtype(), space);
                          for (int64_t i = 0; i < in[0].NumElements(); ++i) {
                            const int64_t to = space_of(Unravel(i, in[0].shape()), space);
                            if (to >= 0) CopyElement(in[0], i, &out, to);
                          }
                          return out;
                        })
                        .Build());
      }
    }
  }

  // SpaceToDepth / DepthToSpace, NHWC.
  for (DType t : {DType::kFloat, DType::kString, DType::kInt8, DType::kHalf, DType::kBool}) {
    for (int64_t bsz : {2, 3}) {
      const Shape in_shape{2, 2 * bsz, 3 * bsz, 2};
      c.push_back(
          OpCaseBuilder("SpaceToDepth",
                        "SpaceToDepth " + DTypeShortName(t) + " bs " + std::to_string(bsz))
              .T(t)
              .Int("block_size", bsz)
              .Input(Distinct(t, in_shape))
              .Reference1([bsz](const std::vector<Tensor>& in) {
                const Shape& s = in[0].shape();
                const int64_t cin = s.dim(3);
                const Shape out{s.dim(0), s.dim(1) / bsz, s.dim(2) / bsz, cin * bsz * bsz};
                return RefMove(in[0], out, [&](const Index& o) {
                  const int64_t blk = o[3] / cin, ch = o[3] % cin;
                  return FlatOf({o[0], o[1] * bsz + blk / bsz, o[2] * bsz + blk % bsz, ch}, s);
                });
              })
              .Build());
      const Shape d_shape{2, 2, 3, 2 * bsz * bsz};
      c.push_back(OpCaseBuilder("DepthToSpace",
                                "DepthToSpace " + DTypeShortName(t) + " bs " + std::to_string(bsz))
                      .T(t)
                      .Int("block_size", bsz)
                      .String("data_format", "NHWC")
                      .Input(Distinct(t, d_shape))
                      .Reference1([bsz](const std::vector<Tensor>& in) {
                        const Shape& s = in[0].shape();
                        const int64_t cout = s.dim(3) / (bsz * bsz);
                        const Shape out{s.dim(0), s.dim(1) * bsz, s.dim(2) * bsz, cout};
                        return RefMove(in[0], out, [&](const Index& o) {
                          const int64_t blk = (o[1] % bsz) * bsz + o[2] % bsz;
                          return FlatOf({o[0], o[1] / bsz, o[2] / bsz, blk * cout + o[3]}, s);
                        });
                      })
                      .Build());
    }
  }

  // ExtractImagePatches: VALID and SAME, strides and rates.
  struct P {
    int64_t kr, kc, sr, sc, rr, rc;
    const char* padding;
  };
  const P ps[] = {{2, 2, 1, 1, 1, 1, "VALID"},
                  {3, 2, 2, 3, 1, 1, "SAME"},
                  {2, 3, 1, 2, 2, 1, "SAME"},
                  {3, 3, 2, 2, 2, 2, "VALID"},
                  {7, 1, 1, 1, 1, 1, "VALID"}};
  for (DType t : {DType::kFloat, DType::kInt32, DType::kHalf, DType::kUInt8}) {
    for (const P& p : ps) {
      const Shape in_shape{2, 6, 7, 3};
      c.push_back(
          OpCaseBuilder("ExtractImagePatches",
                        "ExtractImagePatches " + DTypeShortName(t) + " k" + std::to_string(p.kr) +
                            "x" + std::to_string(p.kc) + " s" + std::to_string(p.sr) +
                            std::to_string(p.sc) + " r" + std::to_string(p.rr) +
                            std::to_string(p.rc) + " " + p.padding)
              .T(t)
              .IntList("ksizes", {1, p.kr, p.kc, 1})
              .IntList("strides", {1, p.sr, p.sc, 1})
              .IntList("rates", {1, p.rr, p.rc, 1})
              .String("padding", p.padding)
              .Input(Distinct(t, in_shape))
              .Reference1([p](const std::vector<Tensor>& in) {
                const Shape& s = in[0].shape();
                const bool same = std::string(p.padding) == "SAME";
                int64_t out_hw[2], pad[2];
                const int64_t k[2] = {p.kr, p.kc}, st[2] = {p.sr, p.sc}, r[2] = {p.rr, p.rc};
                for (int i = 0; i < 2; ++i) {
                  const int64_t n = s.dim(1 + i), eff = (k[i] - 1) * r[i] + 1;
                  out_hw[i] =
                      same ? (n + st[i] - 1) / st[i] : std::max<int64_t>(0, (n - eff) / st[i] + 1);
                  pad[i] = same ? std::max<int64_t>(0, (out_hw[i] - 1) * st[i] + eff - n) / 2 : 0;
                }
                const Shape out{s.dim(0), out_hw[0], out_hw[1], p.kr * p.kc * s.dim(3)};
                Tensor zero(in[0].dtype(), Shape{1});
                return RefMove(
                    in[0], out,
                    [&](const Index& o) -> int64_t {
                      const int64_t ch = o[3] % s.dim(3), kk = o[3] / s.dim(3);
                      const int64_t y = o[1] * st[0] + (kk / p.kc) * r[0] - pad[0];
                      const int64_t x = o[2] * st[1] + (kk % p.kc) * r[1] - pad[1];
                      if (y < 0 || y >= s.dim(1) || x < 0 || x >= s.dim(2)) return -1;
                      return FlatOf({o[0], y, x, ch}, s);
                    },
                    &zero);
              })
              .Build());
    }
  }
  return c;
}

}  // namespace kiln::testing
