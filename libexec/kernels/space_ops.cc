// Moving spatial blocks between dims: SpaceToBatchND / BatchToSpaceND (blocks of the spatial
// dims to and from the batch, with padding and cropping; the v1 ops' one block_size too),
// SpaceToDepth / DepthToSpace (blocks to and from channels; NHWC, as TF's CPU kernels) and
// ExtractImagePatches / ExtractVolumePatches (sliding windows flattened into channels).
#include <algorithm>
#include <complex>
#include <cstdint>
#include <string>
#include <vector>

#include "kernels/array_util.h"
#include "kernels/type_lists.h"

namespace kiln::exec {
namespace {

// ---- SpaceToBatchND, BatchToSpaceND ----------------------------------------------------------

// block_shape [M] and the [M, 2] paddings (or crops) for an input of `rank` dims.
struct BlockSpec {
  std::vector<int64_t> block;
  std::vector<int64_t> pads;  // (before, after) per block dim
};

Result<BlockSpec> ReadBlockSpec(const Tensor& block_t, const Tensor& pads_t, int rank,
                                std::string_view pads_name) {
  if (block_t.rank() != 1) {
    return InvalidArgument("block_shape must be 1-D, got shape ", block_t.shape().ToString());
  }
  const int64_t m = block_t.NumElements();
  if (pads_t.rank() != 2 || pads_t.dim(0) != m || pads_t.dim(1) != 2) {
    return InvalidArgument(pads_name, " should have shape [", m, ", 2] instead of ",
                           pads_t.shape().ToString());
  }
  if (m < 1 || rank < 1 + m) {
    return InvalidArgument("input rank should be >= ", 1 + m, " (1 + the ", m,
                           " block dims) instead of ", rank);
  }
  BlockSpec s{IndexValues(block_t), IndexValues(pads_t)};
  for (int64_t i = 0; i < m; ++i) {
    if (s.block[i] < 1) {
      return InvalidArgument("all values in block_shape must be positive, got value ", s.block[i],
                             " at index ", i);
    }
    if (s.pads[2 * i] < 0 || s.pads[2 * i + 1] < 0) {
      return InvalidArgument("all values in ", pads_name, " must be non-negative, got (",
                             s.pads[2 * i], ", ", s.pads[2 * i + 1], ") at index ", i);
    }
  }
  return s;
}

bool ToBatch(std::string_view op) { return op == "SpaceToBatchND"; }

// The output dims of SpaceToBatchND / BatchToSpaceND for input dims `in` (-1 unknown).
Result<std::vector<int64_t>> BlockOutputDims(bool to_batch, std::span<const int64_t> in,
                                             const BlockSpec& s) {
  std::vector<int64_t> out(in.begin(), in.end());
  int64_t prod = 1;
  for (int64_t b : s.block) prod *= b;
  const size_t m = s.block.size();
  if (to_batch) {
    out[0] = in[0] < 0 ? -1 : in[0] * prod;
    for (size_t i = 0; i < m; ++i) {
      if (in[1 + i] < 0) {
        out[1 + i] = -1;
        continue;
      }
      const int64_t padded = in[1 + i] + s.pads[2 * i] + s.pads[2 * i + 1];
      if (padded % s.block[i] != 0) {
        return InvalidArgument("padded_shape[", i, "]=", padded,
                               " is not divisible by block_shape[", i, "]=", s.block[i]);
      }
      out[1 + i] = padded / s.block[i];
    }
  } else {
    if (in[0] >= 0) {
      if (in[0] % prod != 0) {
        return InvalidArgument("input batch dimension (", in[0],
                               ") is not divisible by product of block sizes (", prod, ")");
      }
      out[0] = in[0] / prod;
    }
    for (size_t i = 0; i < m; ++i) {
      if (in[1 + i] < 0) {
        out[1 + i] = -1;
        continue;
      }
      const int64_t cropped = in[1 + i] * s.block[i] - s.pads[2 * i] - s.pads[2 * i + 1];
      if (cropped < 0) {
        return InvalidArgument("cropped size of dim ", 1 + i, " (", in[1 + i], " * ", s.block[i],
                               " - ", s.pads[2 * i], " - ", s.pads[2 * i + 1],
                               ") must be non-negative");
      }
      out[1 + i] = cropped;
    }
  }
  return out;
}

Status PrepareBlockBatch(PrepareContext& ctx) {
  const bool to_batch = ToBatch(ctx.op);
  const char* pads_name = to_batch ? "paddings" : "crops";
  KILN_RETURN_IF_ERROR(ctx.ExpectInputs(3));
  KILN_PREPARE_ASSIGN(ctx, DType t, ctx.attrs.GetType("T"));
  KILN_RETURN_IF_ERROR(ExpectAttrDTypeIn(ctx, "T", t, RealTypes::kDTypes));
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 0, "input", t));
  KILN_RETURN_IF_ERROR(IndexInputDType(ctx, 1, "block_shape", "Tblock_shape").status());
  KILN_RETURN_IF_ERROR(
      IndexInputDType(ctx, 2, pads_name, to_batch ? "Tpaddings" : "Tcrops").status());
  KILN_RETURN_IF_ERROR(ExpectInputRank(ctx, 1, "block_shape", 1));
  KILN_RETURN_IF_ERROR(ExpectInputRank(ctx, 2, pads_name, 2));
  const PartialShape& in = ctx.inputs[0].shape;
  PartialShape out = UnknownDims(in.rank());
  const Tensor* block_t = ConstantInput(ctx, 1);
  const Tensor* pads_t = ConstantInput(ctx, 2);
  if (block_t != nullptr && pads_t != nullptr && !in.unknown_rank()) {
    auto spec = ReadBlockSpec(*block_t, *pads_t, in.rank(), pads_name);
    if (!spec.ok()) return ctx.Error(spec.status().message());
    auto dims = BlockOutputDims(to_batch, in.dims(), *spec);
    if (!dims.ok()) return ctx.Error(dims.status().message());
    out = *PartialShape::FromDims(*dims);
  }
  ctx.outputs = {TensorSpec{t, out}};
  return OkStatus();
}

Status RunBlockBatch(const KernelContext& ctx, const Tensor& x, bool to_batch,
                     const Result<BlockSpec>& spec) {
  if (!spec.ok()) return Wrap(ctx, spec.status());
  auto dims = BlockOutputDims(to_batch, x.shape().dims(), *spec);
  if (!dims.ok()) return Wrap(ctx, dims.status());
  const Shape out_shape = *Shape::FromDims(*dims);
  KILN_ASSIGN_OR_RETURN(Tensor * out, ctx.AllocateOutput(0, out_shape));
  if (out->NumElements() == 0) return OkStatus();
  // The batch-side tensor has dims [block offsets..., batch, blocked spatial..., rest]; the
  // space-side one [batch, spatial..., rest]. Walk the batch side: each of its (spatial)
  // positions is one `rest`-sized run of the space side, or padding.
  const Shape& batch_shape = to_batch ? out_shape : x.shape();
  const Shape& space_shape = to_batch ? x.shape() : out_shape;
  const int m = static_cast<int>(spec->block.size());
  int64_t rest = 1;
  for (int d = 1 + m; d < x.rank(); ++d) rest *= x.dim(d);
  const int64_t batch = space_shape.dim(0);
  const auto space_strides = RowMajorStrides(space_shape);
  int64_t positions = 1;  // spatial positions per batch-side image
  for (int i = 0; i < m; ++i) positions *= batch_shape.dim(1 + i);
  return DispatchStorage(x.dtype(), [&](auto tag) {
    using U = typename decltype(tag)::type;
    const U* src = Elems<U>(x);
    U* dst = Elems<U>(*out);
    ctx.threads().ParallelFor(batch_shape.dim(0) * positions, std::max<int64_t>(1, 16384 / rest),
                              [&](int64_t begin, int64_t end) {
                                for (int64_t r = begin; r < end; ++r) {
                                  const int64_t image = r / positions;  // batch-side batch index
                                  int64_t pos = r % positions;
                                  int64_t offset = image / batch;  // flat block offset
                                  const int64_t b = image % batch;
                                  // Space-side coordinates of this position, innermost dim first.
                                  int64_t space_off = b * space_strides[0];
                                  bool inside = true;
                                  for (int i = m - 1; i >= 0; --i) {
                                    const int64_t p = pos % batch_shape.dim(1 + i);
                                    pos /= batch_shape.dim(1 + i);
                                    const int64_t o = offset % spec->block[i];
                                    offset /= spec->block[i];
                                    const int64_t s = p * spec->block[i] + o -
                                                      spec->pads[2 * static_cast<size_t>(i)];
                                    inside &= s >= 0 && s < space_shape.dim(1 + i);
                                    space_off += s * space_strides[1 + i];
                                  }
                                  if (to_batch) {
                                    U* run = dst + r * rest;
                                    if (inside) {
                                      std::copy(src + space_off, src + space_off + rest, run);
                                    } else {
                                      std::fill(run, run + rest, U{});  // padding
                                    }
                                  } else if (inside) {  // positions outside were cropped away
                                    const U* run = src + r * rest;
                                    std::copy(run, run + rest, dst + space_off);
                                  }
                                }
                              });
    return OkStatus();
  });
}

Status ComputeBlockBatch(const KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  const bool to_batch = ctx.state<TypedOpState<bool>>().value;
  return RunBlockBatch(
      ctx, x, to_batch,
      ReadBlockSpec(ctx.input(1), ctx.input(2), x.rank(), to_batch ? "paddings" : "crops"));
}

// SpaceToBatch / BatchToSpace (v1): 4-D NHWC input, one block_size for both spatial dims (attr)
// and [2, 2] paddings or crops; the ND kernel with block_shape [block_size, block_size].
struct BlockV1State : OpState {
  bool to_batch = false;
  int64_t block_size = 2;
};

Result<BlockSpec> BlockSpecV1(const Tensor& x, const Tensor& pads, const BlockV1State& st) {
  if (x.rank() != 4) {
    return InvalidArgument("input should have rank 4 instead of ", x.rank());
  }
  Tensor block(DType::kInt64, Shape{2});
  block.data<int64_t>()[0] = block.data<int64_t>()[1] = st.block_size;
  return ReadBlockSpec(block, pads, 4, st.to_batch ? "paddings" : "crops");
}

Status PrepareBlockBatchV1(PrepareContext& ctx) {
  auto st = std::make_shared<BlockV1State>();
  st->to_batch = ctx.op == "SpaceToBatch";
  const char* pads_name = st->to_batch ? "paddings" : "crops";
  KILN_RETURN_IF_ERROR(ctx.ExpectInputs(2));
  KILN_ASSIGN_OR_RETURN(DType t, ValueDType(ctx, 0, "input"));
  KILN_RETURN_IF_ERROR(
      IndexInputDType(ctx, 1, pads_name, st->to_batch ? "Tpaddings" : "Tidx").status());
  KILN_RETURN_IF_ERROR(ExpectInputRank(ctx, 0, "input", 4));
  KILN_RETURN_IF_ERROR(ExpectInputRank(ctx, 1, pads_name, 2));
  KILN_PREPARE_ASSIGN(ctx, st->block_size, ctx.attrs.GetInt("block_size"));
  if (st->block_size < 2) {
    return ctx.Error("attr 'block_size' must be at least 2, got ", st->block_size);
  }
  const PartialShape& in = ctx.inputs[0].shape;
  PartialShape out = UnknownDims(4);
  if (const Tensor* pads_t = ConstantInput(ctx, 1); pads_t != nullptr && !in.unknown_rank()) {
    Tensor block(DType::kInt64, Shape{2});
    block.data<int64_t>()[0] = block.data<int64_t>()[1] = st->block_size;
    auto spec = ReadBlockSpec(block, *pads_t, 4, pads_name);
    if (!spec.ok()) return ctx.Error(spec.status().message());
    auto dims = BlockOutputDims(st->to_batch, in.dims(), *spec);
    if (!dims.ok()) return ctx.Error(dims.status().message());
    out = *PartialShape::FromDims(*dims);
  }
  ctx.outputs = {TensorSpec{t, out}};
  ctx.state = std::move(st);
  return OkStatus();
}

Status ComputeBlockBatchV1(const KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  const auto& st = ctx.state<BlockV1State>();
  return RunBlockBatch(ctx, x, st.to_batch, BlockSpecV1(x, ctx.input(1), st));
}

Status PrepareBlockBatchWithState(PrepareContext& ctx) {
  KILN_RETURN_IF_ERROR(PrepareBlockBatch(ctx));
  ctx.state = std::make_shared<TypedOpState<bool>>(ToBatch(ctx.op));
  return OkStatus();
}

// ---- SpaceToDepth, DepthToSpace --------------------------------------------------------------

using BlockState = TypedOpState<int64_t>;

Status PrepareDepth(PrepareContext& ctx) {
  KILN_RETURN_IF_ERROR(ctx.ExpectInputs(1));
  KILN_ASSIGN_OR_RETURN(DType t, ValueDType(ctx, 0, "input"));
  KILN_PREPARE_ASSIGN(ctx, int64_t bs, ctx.attrs.GetInt("block_size"));
  if (bs < 2) return ctx.Error("attr 'block_size' must be at least 2, got ", bs);
  KILN_PREPARE_ASSIGN(ctx, std::string format, ctx.attrs.GetString("data_format", "NHWC"));
  if (format != "NHWC") {
    return PrepareUnimplemented(ctx, "attr 'data_format' \"", format,
                                "\" is not supported: TensorFlow's CPU kernel takes NHWC only");
  }
  KILN_RETURN_IF_ERROR(ExpectInputRank(ctx, 0, "input", 4));
  const PartialShape& in = ctx.inputs[0].shape;
  PartialShape out = UnknownDims(4);
  if (!in.unknown_rank()) {
    std::vector<int64_t> dims(in.dims().begin(), in.dims().end());
    if (ctx.op == "SpaceToDepth") {
      for (int d = 1; d <= 2; ++d) {
        if (dims[d] >= 0 && dims[d] % bs != 0) {
          return ctx.Error("image width and height ", in.ToPythonString(),
                           " should be divisible by block_size: ", bs);
        }
        if (dims[d] >= 0) dims[d] /= bs;
      }
      if (dims[3] >= 0) dims[3] *= bs * bs;
    } else {
      if (dims[3] >= 0 && dims[3] % (bs * bs) != 0) {
        return ctx.Error("input depth dimension ", dims[3], " should be divisible by: ", bs * bs);
      }
      for (int d = 1; d <= 2; ++d)
        if (dims[d] >= 0) dims[d] *= bs;
      if (dims[3] >= 0) dims[3] /= bs * bs;
    }
    out = *PartialShape::FromDims(dims);
  }
  ctx.outputs = {TensorSpec{t, out}};
  ctx.state = std::make_shared<BlockState>(bs);
  return OkStatus();
}

Status ComputeSpaceToDepth(const KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  const int64_t bs = ctx.state<BlockState>().value;
  if (x.rank() != 4) return ctx.Error("input rank should be 4 instead of ", x.rank());
  const int64_t n = x.dim(0), h = x.dim(1), w = x.dim(2), c = x.dim(3);
  if (h % bs != 0 || w % bs != 0) {
    return ctx.Error("image width ", w, " and height ", h,
                     " should be divisible by block_size: ", bs);
  }
  // out[b, y, x, (oy*bs + ox)*C + c] = in[b, y*bs + oy, x*bs + ox, c]: a transpose of the input
  // viewed as [N, H/bs, bs, W/bs, bs, C] to [N, H/bs, W/bs, bs, bs, C].
  CopyPlan plan;
  AddCopyDim(&plan, n, h * w * c);
  AddCopyDim(&plan, h / bs, bs * w * c);
  AddCopyDim(&plan, w / bs, bs * c);
  AddCopyDim(&plan, bs, w * c);
  AddCopyDim(&plan, bs, c);
  AddCopyDim(&plan, c, 1);
  return CopyIntoOutput(ctx, 0, x, Shape{n, h / bs, w / bs, c * bs * bs}, plan);
}

Status ComputeDepthToSpace(const KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  const int64_t bs = ctx.state<BlockState>().value;
  if (x.rank() != 4) return ctx.Error("input rank should be 4 instead of ", x.rank());
  const int64_t n = x.dim(0), h = x.dim(1), w = x.dim(2), cin = x.dim(3);
  if (cin % (bs * bs) != 0) {
    return ctx.Error("input depth dimension ", cin, " should be divisible by: ", bs * bs);
  }
  const int64_t c = cin / (bs * bs);
  // out[b, y*bs + oy, x*bs + ox, c] = in[b, y, x, (oy*bs + ox)*C + c]: the output viewed as
  // [N, H, bs, W, bs, C].
  CopyPlan plan;
  AddCopyDim(&plan, n, h * w * cin);
  AddCopyDim(&plan, h, w * cin);
  AddCopyDim(&plan, bs, bs * c);
  AddCopyDim(&plan, w, cin);
  AddCopyDim(&plan, bs, c);
  AddCopyDim(&plan, c, 1);
  return CopyIntoOutput(ctx, 0, x, Shape{n, h * bs, w * bs, c}, plan);
}

// ---- ExtractImagePatches, ExtractVolumePatches ----------------------------------------------

using PatchTypes =
    TypeList<float, double, Half, BFloat16, int8_t, int16_t, int32_t, int64_t, uint8_t, uint16_t,
             uint32_t, uint64_t, std::complex<float>, std::complex<double>>;

// Windows over three spatial dims (planes, rows, cols); images are volumes one plane deep.
struct PatchState : OpState {
  int64_t k[3] = {1, 1, 1}, s[3] = {1, 1, 1}, r[3] = {1, 1, 1};
  bool same = false;
  int rank = 4;  // the input's: 4 (images) or 5 (volumes)
};

// Output size and leading padding of one spatial dim, as TF's GetWindowedOutputSize.
void WindowedSize(int64_t in, int64_t k, int64_t s, int64_t r, bool same, int64_t* out,
                  int64_t* pad) {
  const int64_t eff = k + (k - 1) * (r - 1);
  if (same) {
    *out = (in + s - 1) / s;
    const int64_t total = std::max<int64_t>((*out - 1) * s + eff - in, 0);
    *pad = total / 2;
  } else {
    *out = in < eff ? 0 : (in - eff + s) / s;
    *pad = 0;
  }
}

Status PreparePatches(PrepareContext& ctx) {
  const bool volume = ctx.op == "ExtractVolumePatches";
  const int spatial = volume ? 3 : 2, rank = spatial + 2;
  const char* input_name = volume ? "input" : "images";
  KILN_RETURN_IF_ERROR(ctx.ExpectInputs(1));
  KILN_PREPARE_ASSIGN(ctx, DType t, ctx.attrs.GetType("T"));
  KILN_RETURN_IF_ERROR(ExpectAttrDTypeIn(ctx, "T", t, PatchTypes::kDTypes));
  if (volume && IsComplex(t))
    return ctx.Error("attr 'T' is ", DTypeShortName(t), ", expected a real number type");
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 0, input_name, t));
  KILN_RETURN_IF_ERROR(ExpectInputRank(ctx, 0, input_name, rank));
  auto state = std::make_shared<PatchState>();
  state->rank = rank;
  const char* names[] = {"ksizes", "strides", "rates"};
  int64_t* targets[] = {state->k, state->s, state->r};
  for (int a = 0; a < (volume ? 2 : 3); ++a) {
    KILN_PREPARE_ASSIGN(ctx, std::vector<int64_t> v, ctx.attrs.GetIntList(names[a]));
    if (static_cast<int>(v.size()) != rank || v[0] != 1 || v[rank - 1] != 1) {
      return ctx.Error("attr '", names[a], "' must be [1, ", volume ? "planes, " : "",
                       "rows, cols, 1], got ", DimsString(v),
                       " (only windows across space are supported)");
    }
    for (int i = 0; i < spatial; ++i) {
      if (v[1 + i] < 1)
        return ctx.Error("attr '", names[a], "' ", DimsString(v), " must be positive");
      targets[a][3 - spatial + i] = v[1 + i];
    }
  }
  KILN_PREPARE_ASSIGN(ctx, std::string padding, ctx.attrs.GetString("padding"));
  if (padding != "SAME" && padding != "VALID") {
    return ctx.Error("attr 'padding' must be \"SAME\" or \"VALID\", got \"", padding, "\"");
  }
  state->same = padding == "SAME";
  const PartialShape& in = ctx.inputs[0].shape;
  PartialShape out = UnknownDims(rank);
  if (!in.unknown_rank()) {
    std::vector<int64_t> dims(rank, -1);
    dims[0] = in.dim(0);
    if (in.dim(rank - 1) >= 0)
      dims[rank - 1] = in.dim(rank - 1) * state->k[0] * state->k[1] * state->k[2];
    for (int i = 0; i < spatial; ++i) {
      if (in.dim(1 + i) < 0) continue;
      const int d = 3 - spatial + i;
      int64_t pad = 0;
      WindowedSize(in.dim(1 + i), state->k[d], state->s[d], state->r[d], state->same, &dims[1 + i],
                   &pad);
    }
    out = *PartialShape::FromDims(dims);
  }
  ctx.outputs = {TensorSpec{t, out}};
  ctx.state = std::move(state);
  return OkStatus();
}

Status ComputePatches(const KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  const auto& st = ctx.state<PatchState>();
  const int rank = st.rank;
  if (x.rank() != rank) return ctx.Error("input must have rank ", rank, ", got ", x.rank());
  // As a volume: [n, planes, rows, cols, c].
  const int64_t n = x.dim(0), c = x.dim(rank - 1);
  const int64_t in[3] = {rank == 5 ? x.dim(1) : 1, x.dim(rank - 3), x.dim(rank - 2)};
  int64_t o[3], pad[3];
  for (int d = 0; d < 3; ++d)
    WindowedSize(in[d], st.k[d], st.s[d], st.r[d], st.same, &o[d], &pad[d]);
  const int64_t taps = st.k[0] * st.k[1] * st.k[2];
  std::vector<int64_t> out_dims = {n};
  for (int d = 3 - (rank - 2); d < 3; ++d) out_dims.push_back(o[d]);
  out_dims.push_back(taps * c);
  KILN_ASSIGN_OR_RETURN(Shape out_shape, Shape::FromDims(out_dims));
  KILN_ASSIGN_OR_RETURN(Tensor * out, ctx.AllocateOutput(0, out_shape));
  if (out->NumElements() == 0) return OkStatus();
  const int64_t pixels = o[0] * o[1] * o[2];
  return DispatchStorage(x.dtype(), [&](auto tag) {
    using U = typename decltype(tag)::type;
    const U* src = Elems<U>(x);
    U* dst = Elems<U>(*out);
    // One output pixel at a time: taps runs of C channels, zeros outside the volume.
    ctx.threads().ParallelFor(
        n * pixels, std::max<int64_t>(1, 16384 / (taps * c)), [&](int64_t b, int64_t e) {
          for (int64_t p = b; p < e; ++p) {
            const int64_t img = p / pixels, op = p / (o[1] * o[2]) % o[0], oy = p / o[2] % o[1],
                          ox = p % o[2];
            U* to = dst + p * taps * c;
            for (int64_t a = 0; a < st.k[0]; ++a) {
              const int64_t z = op * st.s[0] + a * st.r[0] - pad[0];
              for (int64_t i = 0; i < st.k[1]; ++i) {
                const int64_t y = oy * st.s[1] + i * st.r[1] - pad[1];
                for (int64_t j = 0; j < st.k[2]; ++j, to += c) {
                  const int64_t xx = ox * st.s[2] + j * st.r[2] - pad[2];
                  if (z < 0 || z >= in[0] || y < 0 || y >= in[1] || xx < 0 || xx >= in[2]) {
                    std::fill(to, to + c, U{});
                  } else {
                    const U* from = src + (((img * in[0] + z) * in[1] + y) * in[2] + xx) * c;
                    std::copy(from, from + c, to);
                  }
                }
              }
            }
          }
        });
    return OkStatus();
  });
}

// ---- tables ----------------------------------------------------------------------------------

constexpr OpDefinition kDefs[] = {
    {"SpaceToBatchND", "output", kOpFreshOutputs, PrepareBlockBatchWithState},
    {"SpaceToBatch", "output", kOpFreshOutputs, PrepareBlockBatchV1},
    {"BatchToSpace", "output", kOpFreshOutputs, PrepareBlockBatchV1},
    {"BatchToSpaceND", "output", kOpFreshOutputs, PrepareBlockBatchWithState},
    {"SpaceToDepth", "output", kOpFreshOutputs, PrepareDepth},
    {"DepthToSpace", "output", kOpFreshOutputs, PrepareDepth},
    {"ExtractImagePatches", "patches", kOpFreshOutputs, PreparePatches},
    {"ExtractVolumePatches", "patches", kOpFreshOutputs, PreparePatches},
};

constexpr KernelEntry kCpu[] = {
    {"SpaceToBatchND", ComputeBlockBatch},   {"BatchToSpaceND", ComputeBlockBatch},
    {"SpaceToBatch", ComputeBlockBatchV1},   {"BatchToSpace", ComputeBlockBatchV1},
    {"SpaceToDepth", ComputeSpaceToDepth},   {"DepthToSpace", ComputeDepthToSpace},
    {"ExtractImagePatches", ComputePatches}, {"ExtractVolumePatches", ComputePatches},
};

}  // namespace

std::span<const OpDefinition> SpaceOpDefs() { return kDefs; }
std::span<const KernelEntry> SpaceCpuKernels() { return kCpu; }

}  // namespace kiln::exec
