// Shape and data-movement ops: Shape, Size, Rank, Reshape, ExpandDims, Squeeze, Transpose,
// Pack, Unpack, ConcatV2, Fill, Range, Tile, BroadcastTo, StridedSlice, GatherV2.
// Moving elements needs no arithmetic, so these kernels are instantiated per element size
// (plus the non-POD element types), not per dtype. Index inputs that are constants at prepare
// time give static output shapes; compute always re-derives everything from its inputs.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "kernels/kernel_util.h"
#include "kernels/op_families.h"

namespace kiln::exec {
namespace {

// ---- element storage -------------------------------------------------------------------------

// N opaque bytes: copying one copies an element of any POD dtype of that size (char access
// keeps this clear of aliasing rules).
template <size_t N>
struct Bytes {
  unsigned char b[N];
};

// Calls f(std::type_identity<U>{}) with the storage type U of dtype `dt`.
template <typename F>
Status DispatchStorage(DType dt, F&& f) {
  switch (dt) {
    case DType::kString:
      return f(std::type_identity<std::string>{});
    case DType::kResource:
      return f(std::type_identity<std::shared_ptr<ResourceBase>>{});
    case DType::kVariant:
      return f(std::type_identity<std::shared_ptr<const VariantBase>>{});
    default:
      break;
  }
  switch (DTypeSize(dt)) {
    case 1:
      return f(std::type_identity<Bytes<1>>{});
    case 2:
      return f(std::type_identity<Bytes<2>>{});
    case 4:
      return f(std::type_identity<Bytes<4>>{});
    case 8:
      return f(std::type_identity<Bytes<8>>{});
    case 16:
      return f(std::type_identity<Bytes<16>>{});
    default:
      return Internal("no element storage for dtype ", DTypeShortName(dt));
  }
}

template <typename U>
U* Elems(const Tensor& t) {
  return static_cast<U*>(t.raw_data());
}

// ---- strided copy ----------------------------------------------------------------------------

// out (contiguous, row-major over `dims`) = in[offset + sum(idx[i] * strides[i])]. Strides may
// be 0 (broadcast) or negative (reversed slices). Tile uses twice kMaxRank dims.
constexpr int kMaxCopyRank = 2 * kMaxRank;
struct CopyPlan {
  int rank = 0;
  std::array<int64_t, kMaxCopyRank> dims{};
  std::array<int64_t, kMaxCopyRank> strides{};
  int64_t offset = 0;
  int64_t num_elements = 1;

  // Appends a dim (outermost first); size-1 dims vanish and a dim that continues the previous
  // one in memory merges with it.
  void Add(int64_t dim, int64_t stride) {
    num_elements *= dim;
    if (dim == 1) return;
    if (rank > 0 && strides[rank - 1] == stride * dim) {
      dims[rank - 1] *= dim;
      strides[rank - 1] = stride;
      return;
    }
    dims[rank] = dim;
    strides[rank] = stride;
    ++rank;
  }
};

namespace functor {

template <typename U>
struct StridedCopy {
  void operator()(const CopyPlan& p, const U* in, U* out) const {
    if (p.num_elements == 0) return;
    in += p.offset;
    if (p.rank == 0) {
      out[0] = in[0];
      return;
    }
    const int inner = p.rank - 1;
    const int64_t n = p.dims[inner], s = p.strides[inner];
    std::array<int64_t, kMaxCopyRank> idx{};
    int64_t pos = 0;
    for (int64_t o = 0; o < p.num_elements; o += n) {
      const U* src = in + pos;
      U* dst = out + o;
      if (s == 1) {
        std::copy(src, src + n, dst);
      } else if (s == 0) {
        std::fill(dst, dst + n, src[0]);
      } else {
        for (int64_t j = 0; j < n; ++j) dst[j] = src[j * s];
      }
      for (int i = inner - 1; i >= 0; --i) {
        pos += p.strides[i];
        if (++idx[i] < p.dims[i]) break;
        pos -= p.strides[i] * p.dims[i];
        idx[i] = 0;
      }
    }
  }
};

// Concatenation of rows: input k is [outer, chunk[k]], out is [outer, sum(chunk)].
template <typename U>
struct ConcatRows {
  void operator()(const std::vector<const U*>& ins, const std::vector<int64_t>& chunks,
                  int64_t outer, U* out) const {
    for (int64_t o = 0; o < outer; ++o) {
      for (size_t k = 0; k < ins.size(); ++k) {
        const U* src = ins[k] + o * chunks[k];
        out = std::copy(src, src + chunks[k], out);
      }
    }
  }
};

// out[o, j, :] = params[o, indices[j], :]; indices already checked.
template <typename U, typename Index>
struct GatherRows {
  void operator()(const U* params, const Index* indices, int64_t outer, int64_t gather_dim,
                  int64_t n, int64_t inner, U* out) const {
    for (int64_t o = 0; o < outer; ++o) {
      for (int64_t j = 0; j < n; ++j) {
        const U* src = params + (o * gather_dim + static_cast<int64_t>(indices[j])) * inner;
        out = std::copy(src, src + inner, out);
      }
    }
  }
};

}  // namespace functor

// Natural row-major strides of `s`.
std::array<int64_t, kMaxRank> RowMajorStrides(const Shape& s) {
  std::array<int64_t, kMaxRank> st{};
  int64_t acc = 1;
  for (int i = s.rank() - 1; i >= 0; --i) {
    st[i] = acc;
    acc *= s.dim(i);
  }
  return st;
}

// A new tensor of `dtype`/`shape` filled by the plan from `in`.
Result<Tensor> CopyWithPlan(const Tensor& in, const Shape& shape, const CopyPlan& plan) {
  Tensor out(in.dtype(), shape);
  KILN_RETURN_IF_ERROR(DispatchStorage(in.dtype(), [&](auto tag) {
    using U = typename decltype(tag)::type;
    functor::StridedCopy<U>()(plan, Elems<U>(in), Elems<U>(out));
    return OkStatus();
  }));
  return out;
}

// ---- prepare helpers ---------------------------------------------------------------------------

const Tensor* ConstantInput(const PrepareContext& ctx, int i) {
  return i < static_cast<int>(ctx.constant_inputs.size()) ? ctx.constant_inputs[i] : nullptr;
}

template <typename... Args>
Status PrepareUnimplemented(const PrepareContext& ctx, Args&&... args) {
  return Unimplemented("node '", ctx.node_name, "' (", ctx.op, "): ", std::forward<Args>(args)...);
}

// Reads type attr `attr` (default `dflt`), which must be int32 or int64, and checks input i.
Result<DType> IndexInputDType(const PrepareContext& ctx, int i, std::string_view name,
                              std::string_view attr, DType dflt = DType::kInt32) {
  KILN_PREPARE_ASSIGN(ctx, DType t, ctx.attrs.GetType(attr, dflt));
  KILN_RETURN_IF_ERROR(ExpectAttrDTypeIn(ctx, attr, t, {DType::kInt32, DType::kInt64}));
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, i, name, t));
  return t;
}

// The "T" attr (any dtype) and input i having it.
Result<DType> ValueDType(const PrepareContext& ctx, int i, std::string_view name,
                         std::string_view attr = "T") {
  KILN_PREPARE_ASSIGN(ctx, DType t, ctx.attrs.GetType(attr));
  if (t == DType::kInvalid) return ctx.Error("attr '", attr, "': invalid dtype");
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, i, name, t));
  return t;
}

// Known element count of input i when its shape says so (a vector of known length), else -1.
int64_t KnownLength(const PartialShape& s) {
  if (s.unknown_rank() || s.rank() != 1) return -1;
  return s.dim(0);
}

// An index tensor's values (int32 or int64) as int64.
std::vector<int64_t> IndexValues(const Tensor& t) {
  std::vector<int64_t> v(t.NumElements());
  if (t.dtype() == DType::kInt32) {
    const int32_t* p = t.data<int32_t>();
    for (size_t i = 0; i < v.size(); ++i) v[i] = p[i];
  } else {
    const int64_t* p = t.data<int64_t>();
    for (size_t i = 0; i < v.size(); ++i) v[i] = p[i];
  }
  return v;
}

PartialShape UnknownDims(int rank) {
  if (rank < 0) return PartialShape::UnknownRank();
  std::vector<int64_t> dims(rank, -1);
  return *PartialShape::FromDims(dims);
}

std::string DimsString(const std::vector<int64_t>& v) {
  std::string s = "[";
  for (size_t i = 0; i < v.size(); ++i) s += (i ? ", " : "") + std::to_string(v[i]);
  return s + "]";
}

// Axis `axis` of something with `rank` dims, accepted in [-rank, rank); canonical in [0, rank).
Result<int> CanonicalAxis(int64_t axis, int rank, std::string_view what) {
  if (axis < -rank || axis >= rank) {
    return InvalidArgument(what, " ", axis, " is out of range for rank ", rank, " (expected [",
                           -rank, ", ", rank, "))");
  }
  return static_cast<int>(axis < 0 ? axis + rank : axis);
}

// A runtime check failure in compute: "node 'n': <message of s>".
Status Wrap(const KernelContext& ctx, const Status& s) { return ctx.Error(s.message()); }

// ---- Shape, Size, Rank -----------------------------------------------------------------------

Status PrepareShape(PrepareContext& ctx) {
  KILN_RETURN_IF_ERROR(ctx.ExpectInputs(1));
  KILN_ASSIGN_OR_RETURN(DType t, ValueDType(ctx, 0, "input"));
  (void)t;
  KILN_PREPARE_ASSIGN(ctx, DType out, ctx.attrs.GetType("out_type", DType::kInt32));
  KILN_RETURN_IF_ERROR(ExpectAttrDTypeIn(ctx, "out_type", out, {DType::kInt32, DType::kInt64}));
  const PartialShape& s = ctx.inputs[0].shape;
  if (ctx.op == "Shape") {
    ctx.outputs = {TensorSpec{out, PartialShape{s.unknown_rank() ? -1 : s.rank()}}};
  } else {
    ctx.outputs = {TensorSpec{out, PartialShape::Scalar()}};
  }
  return OkStatus();
}

Status PrepareRank(PrepareContext& ctx) {
  KILN_RETURN_IF_ERROR(ctx.ExpectInputs(1));
  KILN_ASSIGN_OR_RETURN(DType t, ValueDType(ctx, 0, "input"));
  (void)t;
  ctx.outputs = {TensorSpec{DType::kInt32, PartialShape::Scalar()}};
  return OkStatus();
}

// Writes `values` as int32 or int64; int32 fails for values that do not fit.
Result<Tensor> IndexTensor(DType dt, const std::vector<int64_t>& values, const Shape& shape) {
  Tensor out(dt, shape);
  if (dt == DType::kInt64) {
    std::copy(values.begin(), values.end(), out.data<int64_t>());
    return out;
  }
  for (size_t i = 0; i < values.size(); ++i) {
    if (values[i] > INT32_MAX) {
      return InvalidArgument("value ", values[i], " does not fit out_type int32; use int64");
    }
    out.data<int32_t>()[i] = static_cast<int32_t>(values[i]);
  }
  return out;
}

Status ComputeShape(const KernelContext& ctx) {
  // The output dtype is the prepared one; the frame holds no spec, so read it from the state.
  const Tensor& x = ctx.input(0);
  auto out =
      IndexTensor(ctx.state<TypedOpState<DType>>().value, x.shape().ToVector(), Shape{x.rank()});
  if (!out.ok()) return Wrap(ctx, out.status());
  ctx.set_output(0, std::move(*out));
  return OkStatus();
}

Status ComputeSize(const KernelContext& ctx) {
  auto out =
      IndexTensor(ctx.state<TypedOpState<DType>>().value, {ctx.input(0).NumElements()}, Shape());
  if (!out.ok()) return Wrap(ctx, out.status());
  ctx.set_output(0, std::move(*out));
  return OkStatus();
}

Status ComputeRank(const KernelContext& ctx) {
  ctx.set_output(0, Tensor::Scalar<int32_t>(ctx.input(0).rank()));
  return OkStatus();
}

// Shape and Size keep out_type in their state.
Status PrepareShapeWithState(PrepareContext& ctx) {
  KILN_RETURN_IF_ERROR(PrepareShape(ctx));
  ctx.state = std::make_shared<TypedOpState<DType>>(ctx.outputs[0].dtype);
  return OkStatus();
}

// ---- Reshape -----------------------------------------------------------------------------------

// The output shape of reshaping `input` to `sizes` (at most one -1), as TF's Reshape kernel
// computes it: zero sizes are left out of the product so the -1 can still be inferred from the
// non-zero input dims. input null means unknown: a -1 then stays unknown.
Result<std::vector<int64_t>> ReshapeDims(const std::vector<int64_t>& sizes, const Shape* input) {
  std::vector<int64_t> dims = sizes;
  int unknown = -1;
  int64_t product = 1;
  bool sizes_have_zero = false;
  for (size_t d = 0; d < sizes.size(); ++d) {
    if (sizes[d] == -1) {
      if (unknown != -1) {
        return InvalidArgument("only one dimension of the requested shape ", DimsString(sizes),
                               " may be -1, not both ", unknown, " and ", d);
      }
      unknown = static_cast<int>(d);
    } else if (sizes[d] < 0) {
      return InvalidArgument("requested shape ", DimsString(sizes), ": size ", d,
                             " must be non-negative, not ", sizes[d]);
    } else if (sizes[d] == 0) {
      sizes_have_zero = true;
    } else {
      product *= sizes[d];
    }
  }
  if (dims.size() > static_cast<size_t>(kMaxRank)) {
    return InvalidArgument("requested shape ", DimsString(sizes), " has more than ", kMaxRank,
                           " dimensions");
  }
  if (input == nullptr) return dims;
  const int64_t num_elements = input->num_elements();
  if (unknown >= 0) {
    int64_t counted = 1;
    bool input_has_zero = false;
    for (int64_t d : input->dims()) {
      if (d > 0 || !sizes_have_zero) {
        counted *= d;
      } else {
        input_has_zero = true;
      }
    }
    const int64_t missing = counted / product;
    if (!input_has_zero && missing * product != counted) {
      return InvalidArgument("input to reshape is a tensor with ", num_elements,
                             " values, but the requested shape ", DimsString(sizes),
                             " requires a multiple of ", product);
    }
    dims[unknown] = missing;
  }
  int64_t want = 1;
  for (int64_t d : dims) want *= d;
  if (want != num_elements) {
    return InvalidArgument("input to reshape is a tensor with ", num_elements,
                           " values, but the requested shape ", DimsString(dims), " has ", want);
  }
  return dims;
}

Status PrepareReshape(PrepareContext& ctx) {
  KILN_RETURN_IF_ERROR(ctx.ExpectInputs(2));
  KILN_ASSIGN_OR_RETURN(DType t, ValueDType(ctx, 0, "tensor"));
  KILN_RETURN_IF_ERROR(IndexInputDType(ctx, 1, "shape", "Tshape").status());
  KILN_RETURN_IF_ERROR(ExpectInputRank(ctx, 1, "shape", 1));
  PartialShape out = UnknownDims(static_cast<int>(KnownLength(ctx.inputs[1].shape)));
  if (const Tensor* shape = ConstantInput(ctx, 1)) {
    std::vector<int64_t> sizes = IndexValues(*shape);
    Result<Shape> known = ctx.inputs[0].shape.ToShape();
    auto dims = ReshapeDims(sizes, known.ok() ? &*known : nullptr);
    if (!dims.ok()) return ctx.Error(dims.status().message());
    KILN_PREPARE_ASSIGN(ctx, out, PartialShape::FromDims(*dims));
  }
  ctx.outputs = {TensorSpec{t, out}};
  return OkStatus();
}

Status ComputeReshape(const KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  const Tensor& shape = ctx.input(1);
  if (shape.rank() != 1) {
    return ctx.Error("input 'shape' must be a vector, got shape ", shape.shape().ToString());
  }
  auto dims = ReshapeDims(IndexValues(shape), &x.shape());
  if (!dims.ok()) return Wrap(ctx, dims.status());
  auto s = Shape::FromDims(*dims);
  if (!s.ok()) return Wrap(ctx, s.status());
  ctx.set_output(0, x.Reshaped(*s));  // shares the buffer
  return OkStatus();
}

// ---- ExpandDims ------------------------------------------------------------------------------

Result<int> ExpandAxis(const Tensor& dim, int rank) {
  if (dim.NumElements() != 1) {
    return InvalidArgument("input 'dim' must hold exactly one value, got shape ",
                           dim.shape().ToString());
  }
  const int64_t d = IndexValues(dim)[0];
  if (d < -rank - 1 || d > rank) {
    return InvalidArgument("cannot expand dim index ", d, " for a tensor with ", rank,
                           " dimensions (expected [", -rank - 1, ", ", rank, "])");
  }
  return static_cast<int>(d < 0 ? d + rank + 1 : d);
}

Status PrepareExpandDims(PrepareContext& ctx) {
  KILN_RETURN_IF_ERROR(ctx.ExpectInputs(2));
  KILN_ASSIGN_OR_RETURN(DType t, ValueDType(ctx, 0, "input"));
  KILN_RETURN_IF_ERROR(IndexInputDType(ctx, 1, "dim", "Tdim").status());
  const PartialShape& in = ctx.inputs[0].shape;
  if (!in.unknown_rank() && in.rank() >= kMaxRank) {
    return ctx.Error("input 'input' already has rank ", in.rank(), "; at most ", kMaxRank,
                     " dims are supported");
  }
  PartialShape out = UnknownDims(in.unknown_rank() ? -1 : in.rank() + 1);
  const Tensor* dim = ConstantInput(ctx, 1);
  if (dim != nullptr && !in.unknown_rank()) {
    auto axis = ExpandAxis(*dim, in.rank());
    if (!axis.ok()) return ctx.Error(axis.status().message());
    std::vector<int64_t> dims(in.dims().begin(), in.dims().end());
    dims.insert(dims.begin() + *axis, 1);
    out = *PartialShape::FromDims(dims);
  }
  ctx.outputs = {TensorSpec{t, out}};
  return OkStatus();
}

Status ComputeExpandDims(const KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  if (x.rank() >= kMaxRank) return ctx.Error("input already has rank ", x.rank());
  auto axis = ExpandAxis(ctx.input(1), x.rank());
  if (!axis.ok()) return Wrap(ctx, axis.status());
  std::vector<int64_t> dims = x.shape().ToVector();
  dims.insert(dims.begin() + *axis, 1);
  ctx.set_output(0, x.Reshaped(*Shape::FromDims(dims)));
  return OkStatus();
}

// ---- Squeeze ---------------------------------------------------------------------------------

// Which dims of a shape (-1 = unknown) to drop. With no squeeze_dims every known 1 goes; an
// unknown dim then makes the result unknown (`unknown` set).
Result<std::vector<bool>> SqueezeMask(std::span<const int64_t> dims,
                                      const std::vector<int64_t>& squeeze, bool* unknown) {
  const int rank = static_cast<int>(dims.size());
  std::vector<bool> drop(rank, false);
  *unknown = false;
  if (squeeze.empty()) {
    for (int i = 0; i < rank; ++i) {
      if (dims[i] == -1) *unknown = true;
      drop[i] = dims[i] == 1;
    }
    return drop;
  }
  for (int64_t d : squeeze) {
    KILN_ASSIGN_OR_RETURN(int axis, CanonicalAxis(d, rank, "squeeze_dims entry"));
    if (dims[axis] != 1 && dims[axis] != -1) {
      return InvalidArgument("cannot squeeze dim[", axis, "]: expected a dimension of 1, got ",
                             dims[axis]);
    }
    drop[axis] = true;
  }
  return drop;
}

Status PrepareSqueeze(PrepareContext& ctx) {
  KILN_RETURN_IF_ERROR(ctx.ExpectInputs(1));
  KILN_ASSIGN_OR_RETURN(DType t, ValueDType(ctx, 0, "input"));
  KILN_PREPARE_ASSIGN(ctx, std::vector<int64_t> squeeze, ctx.attrs.GetIntList("squeeze_dims", {}));
  const PartialShape& in = ctx.inputs[0].shape;
  PartialShape out;
  if (!in.unknown_rank()) {
    bool unknown = false;
    auto drop = SqueezeMask(in.dims(), squeeze, &unknown);
    if (!drop.ok()) return ctx.Error(drop.status().message());
    if (!unknown) {
      std::vector<int64_t> dims;
      for (int i = 0; i < in.rank(); ++i) {
        if (!(*drop)[i]) dims.push_back(in.dim(i));
      }
      out = *PartialShape::FromDims(dims);
    }
  }
  ctx.outputs = {TensorSpec{t, out}};
  ctx.state = std::make_shared<TypedOpState<std::vector<int64_t>>>(std::move(squeeze));
  return OkStatus();
}

Status ComputeSqueeze(const KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  bool unknown = false;
  auto drop = SqueezeMask(x.shape().dims(), ctx.state<TypedOpState<std::vector<int64_t>>>().value,
                          &unknown);
  if (!drop.ok()) return Wrap(ctx, drop.status());
  Shape out;
  for (int i = 0; i < x.rank(); ++i) {
    if (!(*drop)[i]) out.AddDim(x.dim(i));
  }
  ctx.set_output(0, x.Reshaped(out));
  return OkStatus();
}

// ---- Transpose -------------------------------------------------------------------------------

// Checks that `perm` is a permutation of [0, rank).
Status CheckPerm(const std::vector<int64_t>& perm, int rank) {
  if (static_cast<int>(perm.size()) != rank) {
    return InvalidArgument("perm ", DimsString(perm), " has ", perm.size(),
                           " entries but the input has rank ", rank);
  }
  std::vector<bool> seen(rank, false);
  for (int64_t p : perm) {
    if (p < 0 || p >= rank) {
      return InvalidArgument("perm ", DimsString(perm), ": ", p, " is out of range [0, ", rank,
                             ")");
    }
    if (seen[p]) {
      return InvalidArgument("perm ", DimsString(perm), ": ", p, " appears more than once");
    }
    seen[p] = true;
  }
  return OkStatus();
}

Status PrepareTranspose(PrepareContext& ctx) {
  KILN_RETURN_IF_ERROR(ctx.ExpectInputs(2));
  KILN_ASSIGN_OR_RETURN(DType t, ValueDType(ctx, 0, "x"));
  KILN_RETURN_IF_ERROR(IndexInputDType(ctx, 1, "perm", "Tperm").status());
  KILN_RETURN_IF_ERROR(ExpectInputRank(ctx, 1, "perm", 1));
  const PartialShape& in = ctx.inputs[0].shape;
  int64_t n = KnownLength(ctx.inputs[1].shape);
  if (!in.unknown_rank() && n >= 0 && n != in.rank()) {
    return ctx.Error("input 'perm' has ", n, " entries but 'x' has shape ", in.ToPythonString());
  }
  PartialShape out = UnknownDims(in.unknown_rank() ? static_cast<int>(n) : in.rank());
  if (const Tensor* perm_t = ConstantInput(ctx, 1); perm_t != nullptr && !in.unknown_rank()) {
    std::vector<int64_t> perm = IndexValues(*perm_t);
    Status s = CheckPerm(perm, in.rank());
    if (!s.ok()) return ctx.Error(s.message());
    std::vector<int64_t> dims;
    for (int64_t p : perm) dims.push_back(in.dim(p));
    out = *PartialShape::FromDims(dims);
  }
  ctx.outputs = {TensorSpec{t, out}};
  return OkStatus();
}

Status ComputeTranspose(const KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  std::vector<int64_t> perm = IndexValues(ctx.input(1));
  Status s = CheckPerm(perm, x.rank());
  if (!s.ok()) return Wrap(ctx, s);
  const auto in_strides = RowMajorStrides(x.shape());
  Shape shape;
  CopyPlan plan;
  bool identity = true;
  for (int i = 0; i < x.rank(); ++i) {
    shape.AddDim(x.dim(perm[i]));
    plan.Add(x.dim(perm[i]), in_strides[perm[i]]);
    identity &= perm[i] == i;
  }
  if (identity) {
    ctx.set_output(0, x);
    return OkStatus();
  }
  auto out = CopyWithPlan(x, shape, plan);
  if (!out.ok()) return Wrap(ctx, out.status());
  ctx.set_output(0, std::move(*out));
  return OkStatus();
}

// ---- Pack, ConcatV2 ------------------------------------------------------------------------

// Copies inputs viewed as [outer, chunk[k]] side by side into a new tensor of `shape`.
Status ConcatInto(const KernelContext& ctx, int n, int64_t outer,
                  const std::vector<int64_t>& chunks, const Shape& shape) {
  const DType dt = ctx.input(0).dtype();
  Tensor out(dt, shape);
  KILN_RETURN_IF_ERROR(DispatchStorage(dt, [&](auto tag) {
    using U = typename decltype(tag)::type;
    std::vector<const U*> ins(n);
    for (int k = 0; k < n; ++k) ins[k] = Elems<U>(ctx.input(k));
    if (out.NumElements() > 0) functor::ConcatRows<U>()(ins, chunks, outer, Elems<U>(out));
    return OkStatus();
  }));
  ctx.set_output(0, std::move(out));
  return OkStatus();
}

// N attr and N value inputs of dtype T (for Pack and ConcatV2: `extra` more inputs follow).
Result<DType> PrepareValueList(PrepareContext& ctx, int extra, int min_n) {
  KILN_PREPARE_ASSIGN(ctx, int64_t n, ctx.attrs.GetInt("N"));
  if (n < min_n) return ctx.Error("attr 'N' must be at least ", min_n, ", got ", n);
  KILN_RETURN_IF_ERROR(ctx.ExpectInputs(static_cast<int>(n) + extra));
  KILN_PREPARE_ASSIGN(ctx, DType t, ctx.attrs.GetType("T"));
  for (int i = 0; i < n; ++i) {
    KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, i, internal::StrCat("values:", i), t));
  }
  return t;
}

Status PreparePack(PrepareContext& ctx) {
  KILN_ASSIGN_OR_RETURN(DType t, PrepareValueList(ctx, 0, 1));
  const int n = static_cast<int>(ctx.inputs.size());
  KILN_PREPARE_ASSIGN(ctx, int64_t axis, ctx.attrs.GetInt("axis", 0));
  PartialShape merged = ctx.inputs[0].shape;
  for (int i = 1; i < n; ++i) {
    auto m = merged.MergeWith(ctx.inputs[i].shape);
    if (!m.ok()) {
      return ctx.Error("shapes of all inputs must match: values:0 has shape ",
                       ctx.inputs[0].shape.ToPythonString(), " but values:", i, " has shape ",
                       ctx.inputs[i].shape.ToPythonString());
    }
    merged = *m;
  }
  PartialShape out;
  if (!merged.unknown_rank()) {
    const int rank = merged.rank();
    if (rank >= kMaxRank) return ctx.Error("values have rank ", rank, "; too many to stack");
    auto a = CanonicalAxis(axis, rank + 1, "attr 'axis'");
    if (!a.ok()) return ctx.Error(a.status().message());
    std::vector<int64_t> dims(merged.dims().begin(), merged.dims().end());
    dims.insert(dims.begin() + *a, n);
    out = *PartialShape::FromDims(dims);
  }
  ctx.outputs = {TensorSpec{t, out}};
  ctx.state = std::make_shared<TypedOpState<int64_t>>(axis);
  return OkStatus();
}

Status ComputePack(const KernelContext& ctx) {
  const int n = ctx.num_inputs();
  const Shape& s0 = ctx.input(0).shape();
  for (int i = 1; i < n; ++i) {
    if (ctx.input(i).shape() != s0) {
      return ctx.Error("shapes of all inputs must match: values:0 has shape ", s0.ToString(),
                       " but values:", i, " has shape ", ctx.input(i).shape().ToString());
    }
  }
  if (s0.rank() >= kMaxRank) return ctx.Error("values have rank ", s0.rank());
  auto axis = CanonicalAxis(ctx.state<TypedOpState<int64_t>>().value, s0.rank() + 1, "axis");
  if (!axis.ok()) return Wrap(ctx, axis.status());
  std::vector<int64_t> dims = s0.ToVector();
  dims.insert(dims.begin() + *axis, n);
  int64_t outer = 1;
  for (int i = 0; i < *axis; ++i) outer *= s0.dim(i);
  const int64_t chunk = outer == 0 ? 0 : s0.num_elements() / outer;
  return ConcatInto(ctx, n, outer, std::vector<int64_t>(n, chunk), *Shape::FromDims(dims));
}

Status PrepareConcat(PrepareContext& ctx) {
  KILN_ASSIGN_OR_RETURN(DType t, PrepareValueList(ctx, 1, 2));
  const int n = static_cast<int>(ctx.inputs.size()) - 1;
  KILN_RETURN_IF_ERROR(IndexInputDType(ctx, n, "axis", "Tidx").status());
  KILN_RETURN_IF_ERROR(ExpectInputRank(ctx, n, "axis", 0));
  int rank = -1;
  for (int i = 0; i < n; ++i) {
    const PartialShape& s = ctx.inputs[i].shape;
    if (s.unknown_rank()) continue;
    if (s.rank() == 0) return ctx.Error("cannot concatenate scalars (values:", i, "); use Pack");
    if (rank >= 0 && s.rank() != rank) {
      return ctx.Error("all values must have the same rank: values:0.. have rank ", rank,
                       " but values:", i, " has shape ", s.ToPythonString());
    }
    rank = s.rank();
  }
  PartialShape out = UnknownDims(rank);
  const Tensor* axis_t = ConstantInput(ctx, n);
  if (axis_t != nullptr && rank >= 0) {
    auto axis = CanonicalAxis(IndexValues(*axis_t)[0], rank, "axis");
    if (!axis.ok()) return ctx.Error(axis.status().message());
    std::vector<int64_t> dims(rank, -1);
    int64_t total = 0;
    for (int i = 0; i < n; ++i) {
      const PartialShape& s = ctx.inputs[i].shape;
      if (s.unknown_rank()) {
        total = -1;
        continue;
      }
      for (int d = 0; d < rank; ++d) {
        if (d == *axis) continue;
        if (dims[d] == -1) {
          dims[d] = s.dim(d);
        } else if (s.dim(d) != -1 && s.dim(d) != dims[d]) {
          return ctx.Error("dimension ", d, " of all values must be equal (axis ", *axis,
                           "): values:", i, " has shape ", s.ToPythonString(),
                           ", an earlier value has ", dims[d]);
        }
      }
      total = (total < 0 || s.dim(*axis) < 0) ? -1 : total + s.dim(*axis);
    }
    dims[*axis] = total;
    out = *PartialShape::FromDims(dims);
  }
  ctx.outputs = {TensorSpec{t, out}};
  return OkStatus();
}

Status ComputeConcat(const KernelContext& ctx) {
  const int n = ctx.num_inputs() - 1;
  const Tensor& axis_t = ctx.input(n);
  if (axis_t.NumElements() != 1) {
    return ctx.Error("input 'axis' must be a scalar, got shape ", axis_t.shape().ToString());
  }
  const Shape& s0 = ctx.input(0).shape();
  if (s0.rank() == 0) return ctx.Error("cannot concatenate scalars; use Pack");
  auto axis = CanonicalAxis(IndexValues(axis_t)[0], s0.rank(), "axis");
  if (!axis.ok()) return Wrap(ctx, axis.status());
  Shape out = s0;
  int64_t total = 0;
  int64_t outer = 1;
  for (int d = 0; d < *axis; ++d) outer *= s0.dim(d);
  std::vector<int64_t> chunks(n);
  for (int i = 0; i < n; ++i) {
    const Shape& s = ctx.input(i).shape();
    bool ok = s.rank() == s0.rank();
    for (int d = 0; ok && d < s.rank(); ++d) ok = d == *axis || s.dim(d) == s0.dim(d);
    if (!ok) {
      return ctx.Error("values must match in all dimensions but axis ", *axis,
                       ": values:0 has shape ", s0.ToString(), ", values:", i, " has shape ",
                       s.ToString());
    }
    total += s.dim(*axis);
    chunks[i] = outer == 0 ? 0 : s.num_elements() / outer;
  }
  out.set_dim(*axis, total);
  return ConcatInto(ctx, n, outer, chunks, out);
}

// ---- Unpack ----------------------------------------------------------------------------------

Status PrepareUnpack(PrepareContext& ctx) {
  KILN_RETURN_IF_ERROR(ctx.ExpectInputs(1));
  KILN_ASSIGN_OR_RETURN(DType t, ValueDType(ctx, 0, "value"));
  KILN_PREPARE_ASSIGN(ctx, int64_t num, ctx.attrs.GetInt("num"));
  KILN_PREPARE_ASSIGN(ctx, int64_t axis, ctx.attrs.GetInt("axis", 0));
  if (num < 0) return ctx.Error("attr 'num' must be non-negative, got ", num);
  const PartialShape& in = ctx.inputs[0].shape;
  PartialShape out;
  if (!in.unknown_rank()) {
    if (in.rank() == 0) return ctx.Error("input 'value' must have rank >= 1, got a scalar");
    auto a = CanonicalAxis(axis, in.rank(), "attr 'axis'");
    if (!a.ok()) return ctx.Error(a.status().message());
    if (in.dim(*a) != -1 && in.dim(*a) != num) {
      return ctx.Error("attr 'num' is ", num, " but dimension ", *a, " of 'value' ",
                       in.ToPythonString(), " is ", in.dim(*a));
    }
    std::vector<int64_t> dims(in.dims().begin(), in.dims().end());
    dims.erase(dims.begin() + *a);
    out = *PartialShape::FromDims(dims);
  }
  ctx.outputs.assign(num, TensorSpec{t, out});
  ctx.state = std::make_shared<TypedOpState<int64_t>>(axis);
  return OkStatus();
}

Status ComputeUnpack(const KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  if (x.rank() == 0) return ctx.Error("input 'value' must have rank >= 1, got a scalar");
  auto axis = CanonicalAxis(ctx.state<TypedOpState<int64_t>>().value, x.rank(), "axis");
  if (!axis.ok()) return Wrap(ctx, axis.status());
  const int num = ctx.num_outputs();
  if (x.dim(*axis) != num) {
    return ctx.Error("expected ", num, " values along axis ", *axis, " of 'value' ",
                     x.shape().ToString(), ", got ", x.dim(*axis));
  }
  Shape piece;
  for (int d = 0; d < x.rank(); ++d) {
    if (d != *axis) piece.AddDim(x.dim(d));
  }
  const auto strides = RowMajorStrides(x.shape());
  for (int k = 0; k < num; ++k) {
    CopyPlan plan;
    plan.offset = k * strides[*axis];
    for (int d = 0; d < x.rank(); ++d) {
      if (d != *axis) plan.Add(x.dim(d), strides[d]);
    }
    auto out = CopyWithPlan(x, piece, plan);
    if (!out.ok()) return Wrap(ctx, out.status());
    ctx.set_output(k, std::move(*out));
  }
  return OkStatus();
}

// ---- Fill --------------------------------------------------------------------------------------

Result<Shape> ShapeFromDimsTensor(const Tensor& t, std::string_view name) {
  if (t.rank() != 1) {
    return InvalidArgument("input '", name, "' must be a vector, got shape ", t.shape().ToString());
  }
  std::vector<int64_t> dims = IndexValues(t);
  for (int64_t d : dims) {
    if (d < 0) {
      return InvalidArgument("input '", name, "' ", DimsString(dims), " has a negative dimension");
    }
  }
  return Shape::FromDims(dims);
}

Status PrepareFill(PrepareContext& ctx) {
  KILN_RETURN_IF_ERROR(ctx.ExpectInputs(2));
  KILN_RETURN_IF_ERROR(IndexInputDType(ctx, 0, "dims", "index_type").status());
  KILN_ASSIGN_OR_RETURN(DType t, ValueDType(ctx, 1, "value"));
  KILN_RETURN_IF_ERROR(ExpectInputRank(ctx, 0, "dims", 1));
  KILN_RETURN_IF_ERROR(ExpectInputRank(ctx, 1, "value", 0));
  PartialShape out = UnknownDims(static_cast<int>(KnownLength(ctx.inputs[0].shape)));
  if (const Tensor* dims = ConstantInput(ctx, 0)) {
    auto s = ShapeFromDimsTensor(*dims, "dims");
    if (!s.ok()) return ctx.Error(s.status().message());
    out = *s;
  }
  ctx.outputs = {TensorSpec{t, out}};
  return OkStatus();
}

Status ComputeFill(const KernelContext& ctx) {
  auto shape = ShapeFromDimsTensor(ctx.input(0), "dims");
  if (!shape.ok()) return Wrap(ctx, shape.status());
  const Tensor& value = ctx.input(1);
  if (value.rank() != 0) {
    return ctx.Error("input 'value' must be a scalar, got shape ", value.shape().ToString());
  }
  Tensor out(value.dtype(), *shape);
  KILN_RETURN_IF_ERROR(DispatchStorage(value.dtype(), [&](auto tag) {
    using U = typename decltype(tag)::type;
    std::fill(Elems<U>(out), Elems<U>(out) + out.NumElements(), Elems<U>(value)[0]);
    return OkStatus();
  }));
  ctx.set_output(0, std::move(out));
  return OkStatus();
}

// ---- Range -------------------------------------------------------------------------------------

template <typename T>
Result<int64_t> RangeSize(T start, T limit, T delta) {
  if (delta == 0) return InvalidArgument("requires delta != 0");
  if (delta > 0 && start > limit) {
    return InvalidArgument("requires start <= limit when delta > 0: ", start, "/", limit);
  }
  if (delta < 0 && start < limit) {
    return InvalidArgument("requires start >= limit when delta < 0: ", start, "/", limit);
  }
  if constexpr (std::is_integral_v<T>) {
    const int64_t span = std::abs(static_cast<int64_t>(limit) - static_cast<int64_t>(start));
    const int64_t step = std::abs(static_cast<int64_t>(delta));
    return (span + step - 1) / step;
  } else {
    // In T's precision, as TF computes it: float ranges can differ from a double count.
    const T n = std::ceil(std::abs((limit - start) / delta));
    if (!std::isfinite(n) || n > static_cast<T>(INT64_MAX / 2)) {
      return InvalidArgument("range from ", start, " to ", limit, " by ", delta,
                             " has too many elements");
    }
    return static_cast<int64_t>(n);
  }
}

template <typename T>
Result<int64_t> RangeSizeOf(const Tensor& start, const Tensor& limit, const Tensor& delta) {
  return RangeSize<T>(start.data<T>()[0], limit.data<T>()[0], delta.data<T>()[0]);
}

namespace functor {
template <typename T>
struct RangeFill {
  void operator()(T start, T delta, int64_t n, T* out) const {
    // Accumulated, as TF's kernel does, so float values match it bit for bit.
    T value = start;
    for (int64_t i = 0; i < n; ++i, value += delta) out[i] = value;
  }
};
}  // namespace functor

Status PrepareRange(PrepareContext& ctx) {
  KILN_RETURN_IF_ERROR(ctx.ExpectInputs(3));
  KILN_PREPARE_ASSIGN(ctx, DType t, ctx.attrs.GetType("Tidx", DType::kInt32));
  KILN_RETURN_IF_ERROR(ExpectAttrDTypeIn(ctx, "Tidx", t, kRealDTypes));
  const char* names[] = {"start", "limit", "delta"};
  for (int i = 0; i < 3; ++i) {
    KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, i, names[i], t));
    KILN_RETURN_IF_ERROR(ExpectInputRank(ctx, i, names[i], 0));
  }
  PartialShape out{-1};
  const Tensor* s = ConstantInput(ctx, 0);
  const Tensor* l = ConstantInput(ctx, 1);
  const Tensor* d = ConstantInput(ctx, 2);
  if (s && l && d) {
    Result<int64_t> n = int64_t{0};
    KILN_RETURN_IF_ERROR(DispatchDType<KILN_REAL_TYPES>(t, [&](auto tag) {
      n = RangeSizeOf<typename decltype(tag)::type>(*s, *l, *d);
      return OkStatus();
    }));
    if (!n.ok()) return ctx.Error(n.status().message());
    out = PartialShape{*n};
  }
  ctx.outputs = {TensorSpec{t, out}};
  return OkStatus();
}

Status ComputeRange(const KernelContext& ctx) {
  const Tensor& s = ctx.input(0);
  const Tensor& l = ctx.input(1);
  const Tensor& d = ctx.input(2);
  for (int i = 0; i < 3; ++i) {
    if (ctx.input(i).NumElements() != 1) {
      return ctx.Error("inputs start, limit and delta must be scalars, got input ", i, " of shape ",
                       ctx.input(i).shape().ToString());
    }
  }
  return DispatchDType<KILN_REAL_TYPES>(s.dtype(), [&](auto tag) -> Status {
    using T = typename decltype(tag)::type;
    auto n = RangeSizeOf<T>(s, l, d);
    if (!n.ok()) return Wrap(ctx, n.status());
    Tensor out(s.dtype(), Shape{*n});
    functor::RangeFill<T>()(s.data<T>()[0], d.data<T>()[0], *n, out.data<T>());
    ctx.set_output(0, std::move(out));
    return OkStatus();
  });
}

// ---- Tile, BroadcastTo -----------------------------------------------------------------------

Status PrepareTile(PrepareContext& ctx) {
  KILN_RETURN_IF_ERROR(ctx.ExpectInputs(2));
  KILN_ASSIGN_OR_RETURN(DType t, ValueDType(ctx, 0, "input"));
  KILN_RETURN_IF_ERROR(IndexInputDType(ctx, 1, "multiples", "Tmultiples").status());
  KILN_RETURN_IF_ERROR(ExpectInputRank(ctx, 1, "multiples", 1));
  const PartialShape& in = ctx.inputs[0].shape;
  const int64_t n = KnownLength(ctx.inputs[1].shape);
  if (!in.unknown_rank() && n >= 0 && n != in.rank()) {
    return ctx.Error("input 'multiples' has ", n, " entries but 'input' has shape ",
                     in.ToPythonString());
  }
  const int rank = in.unknown_rank() ? static_cast<int>(n) : in.rank();
  PartialShape out = UnknownDims(rank);
  if (const Tensor* m = ConstantInput(ctx, 1); m != nullptr && rank >= 0) {
    std::vector<int64_t> mult = IndexValues(*m);
    std::vector<int64_t> dims(rank, -1);
    for (int i = 0; i < rank; ++i) {
      if (mult[i] < 0) {
        return ctx.Error("input 'multiples' ", DimsString(mult), " has a negative entry");
      }
      const int64_t d = in.unknown_rank() ? -1 : in.dim(i);
      dims[i] = mult[i] == 0 ? 0 : d < 0 ? -1 : d * mult[i];
    }
    out = *PartialShape::FromDims(dims);
  }
  ctx.outputs = {TensorSpec{t, out}};
  return OkStatus();
}

Status ComputeTile(const KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  const Tensor& m = ctx.input(1);
  if (m.rank() != 1 || m.NumElements() != x.rank()) {
    return ctx.Error("input 'multiples' must be a vector of length ", x.rank(), ", got shape ",
                     m.shape().ToString());
  }
  std::vector<int64_t> mult = IndexValues(m);
  const auto strides = RowMajorStrides(x.shape());
  Shape shape;
  CopyPlan plan;  // output viewed as [m0, d0, m1, d1, ...]: the input repeats along each m
  for (int i = 0; i < x.rank(); ++i) {
    if (mult[i] < 0) {
      return ctx.Error("input 'multiples' ", DimsString(mult), " has a negative entry");
    }
    shape.AddDim(x.dim(i) * mult[i]);
    plan.Add(mult[i], 0);
    plan.Add(x.dim(i), strides[i]);
  }
  auto out = CopyWithPlan(x, shape, plan);
  if (!out.ok()) return Wrap(ctx, out.status());
  ctx.set_output(0, std::move(*out));
  return OkStatus();
}

Status PrepareBroadcastTo(PrepareContext& ctx) {
  KILN_RETURN_IF_ERROR(ctx.ExpectInputs(2));
  KILN_ASSIGN_OR_RETURN(DType t, ValueDType(ctx, 0, "input"));
  KILN_RETURN_IF_ERROR(IndexInputDType(ctx, 1, "shape", "Tidx").status());
  KILN_RETURN_IF_ERROR(ExpectInputRank(ctx, 1, "shape", 1));
  PartialShape out = UnknownDims(static_cast<int>(KnownLength(ctx.inputs[1].shape)));
  if (const Tensor* shape_t = ConstantInput(ctx, 1)) {
    auto target = ShapeFromDimsTensor(*shape_t, "shape");
    if (!target.ok()) return ctx.Error(target.status().message());
    const PartialShape& in = ctx.inputs[0].shape;
    if (!in.unknown_rank()) {
      bool ok = in.rank() <= target->rank();
      for (int i = 0; ok && i < in.rank(); ++i) {
        const int64_t d = in.dim(in.rank() - 1 - i);
        const int64_t want = target->dim(target->rank() - 1 - i);
        ok = d == -1 || d == 1 || d == want;
      }
      if (!ok) {
        return ctx.Error("cannot broadcast a tensor of shape ", in.ToPythonString(), " to shape ",
                         target->ToString());
      }
    }
    out = *target;
  }
  ctx.outputs = {TensorSpec{t, out}};
  return OkStatus();
}

Status ComputeBroadcastTo(const KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  auto target = ShapeFromDimsTensor(ctx.input(1), "shape");
  if (!target.ok()) return Wrap(ctx, target.status());
  const int rank = target->rank();
  const int offset = rank - x.rank();
  bool ok = offset >= 0;
  const auto strides = RowMajorStrides(x.shape());
  CopyPlan plan;
  for (int i = 0; ok && i < rank; ++i) {
    const int64_t want = target->dim(i);
    if (i < offset) {
      plan.Add(want, 0);
      continue;
    }
    const int64_t d = x.dim(i - offset);
    ok = d == want || d == 1;
    plan.Add(want, d == want ? strides[i - offset] : 0);
  }
  if (!ok) {
    return ctx.Error("cannot broadcast a tensor of shape ", x.shape().ToString(), " to shape ",
                     target->ToString());
  }
  if (*target == x.shape()) {
    ctx.set_output(0, x);
    return OkStatus();
  }
  auto out = CopyWithPlan(x, *target, plan);
  if (!out.ok()) return Wrap(ctx, out.status());
  ctx.set_output(0, std::move(*out));
  return OkStatus();
}

// ---- StridedSlice ------------------------------------------------------------------------------

struct SliceMasks {
  int64_t begin = 0, end = 0, ellipsis = 0, new_axis = 0, shrink = 0;
};

// TF's ValidateStridedSliceOp: the sparse spec (begin/end/strides with masks, ellipsis and
// new axes) made dense over the input dims, with canonical begin/end and the sizes.
struct DenseSlice {
  std::array<int64_t, kMaxRank> begin{}, stride{}, size{};  // size -1: unknown
  std::vector<int64_t> final_dims;                          // -1: unknown
};

constexpr int kNewAxis = -1;
constexpr int kShrinkAxis = -2;

bool Bit(int64_t mask, int i) { return i < 63 && ((mask >> i) & 1) != 0; }

// input_dims: -1 for unknown. begin/end null when their values are unknown.
Status AnalyzeStridedSlice(std::span<const int64_t> input_dims, const int64_t* begin,
                           const int64_t* end, const int64_t* strides, int n, const SliceMasks& m,
                           DenseSlice* out) {
  if (m.ellipsis & (m.ellipsis - 1)) {
    return InvalidArgument("multiple ellipses in slice spec are not allowed (ellipsis_mask ",
                           m.ellipsis, ")");
  }
  if (n > 32) return InvalidArgument("slice spec has ", n, " entries; at most 32 are supported");
  const int dims = static_cast<int>(input_dims.size());
  int sparse_dims = n;
  int64_t ellipsis = m.ellipsis;
  int new_after_ellipsis = 0;
  bool seen = false;
  for (int i = 0; i < n; ++i) {
    if (seen && Bit(m.new_axis, i)) ++new_after_ellipsis;
    if (Bit(ellipsis, i)) seen = true;
  }
  if (!seen) ellipsis |= int64_t{1} << sparse_dims++;  // an implicit trailing ellipsis

  std::array<int64_t, kMaxRank> b{}, e{};
  std::array<bool, kMaxRank> bm{}, em{}, shrink{};
  std::vector<int> gather;
  int full = 0;
  for (int i = 0; i < sparse_dims; ++i) {
    if (Bit(ellipsis, i)) {
      const int next = std::min(dims - (sparse_dims - i) + 1 + new_after_ellipsis, dims);
      for (; full < next; ++full) {
        b[full] = e[full] = 0;
        out->stride[full] = 1;
        bm[full] = em[full] = true;
        shrink[full] = false;
        gather.push_back(full);
      }
    } else if (Bit(m.new_axis, i)) {
      gather.push_back(kNewAxis);
    } else {
      if (full == dims) {
        return InvalidArgument("index out of range using input dim ", full, "; input has only ",
                               dims, " dims");
      }
      b[full] = begin ? begin[i] : 0;
      e[full] = end ? end[i] : 0;
      out->stride[full] = strides[i];
      bm[full] = Bit(m.begin, i);
      em[full] = Bit(m.end, i);
      shrink[full] = Bit(m.shrink, i);
      gather.push_back(shrink[full] ? kShrinkAxis : full);
      ++full;
    }
  }
  const bool known = begin != nullptr && end != nullptr;
  for (int i = 0; i < dims; ++i) {
    const int64_t stride = out->stride[i];
    const int64_t dim = input_dims[i];
    if (stride == 0) return InvalidArgument("strides[", i, "] must be non-zero");
    if (dim == -1) {
      out->size[i] = shrink[i] ? 1 : -1;
      continue;
    }
    if (shrink[i] && stride <= 0) {
      return InvalidArgument("only stride 1 is allowed on non-range indexing (dim ", i,
                             " has stride ", stride, ")");
    }
    int64_t len = 0;
    bool known_len = false;
    if (known) {
      if (shrink[i]) {
        const int64_t x = b[i] < 0 ? dim + b[i] : b[i];
        if (x < 0 || x >= dim) {
          return InvalidArgument("slice index ", b[i], " of dimension ", i, " out of bounds (size ",
                                 dim, ")");
        }
        b[i] = x;
        e[i] = x + 1;
      } else {
        const int64_t lo = stride > 0 ? 0 : -1, hi = stride > 0 ? dim : dim - 1;
        auto canonical = [&](int64_t x, bool masked, bool is_end) {
          if (masked) return (stride > 0) != is_end ? lo : hi;
          const int64_t fwd = x < 0 ? dim + x : x;
          return std::clamp(fwd, lo, hi);
        };
        b[i] = canonical(b[i], bm[i], false);
        e[i] = canonical(e[i], em[i], true);
      }
      len = e[i] - b[i];
      known_len = true;
    } else if (shrink[i]) {
      len = 1;
      known_len = true;
    } else if (bm[i] && em[i]) {
      len = stride < 0 ? -dim : dim;
      known_len = true;
    }
    if (!known_len) {
      out->size[i] = -1;
    } else if (len == 0 || (len < 0) != (stride < 0)) {
      out->size[i] = 0;
    } else {
      out->size[i] = len / stride + (len % stride != 0 ? 1 : 0);
    }
    out->begin[i] = b[i];
  }
  out->final_dims.clear();
  for (int g : gather) {
    if (g >= 0) {
      out->final_dims.push_back(out->size[g]);
    } else if (g == kNewAxis) {
      out->final_dims.push_back(1);
    }
  }
  if (out->final_dims.size() > static_cast<size_t>(kMaxRank)) {
    return InvalidArgument("slice result would have rank ", out->final_dims.size(), "; at most ",
                           kMaxRank, " is supported");
  }
  return OkStatus();
}

struct StridedSliceState : OpState {
  SliceMasks masks;
};

Status PrepareStridedSlice(PrepareContext& ctx) {
  KILN_RETURN_IF_ERROR(ctx.ExpectInputs(4));
  KILN_ASSIGN_OR_RETURN(DType t, ValueDType(ctx, 0, "input"));
  KILN_PREPARE_ASSIGN(ctx, DType index, ctx.attrs.GetType("Index"));
  KILN_RETURN_IF_ERROR(ExpectAttrDTypeIn(ctx, "Index", index, {DType::kInt32, DType::kInt64}));
  const char* names[] = {"begin", "end", "strides"};
  for (int i = 1; i < 4; ++i) {
    KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, i, names[i - 1], index));
    KILN_RETURN_IF_ERROR(ExpectInputRank(ctx, i, names[i - 1], 1));
  }
  auto state = std::make_shared<StridedSliceState>();
  SliceMasks& m = state->masks;
  KILN_PREPARE_ASSIGN(ctx, m.begin, ctx.attrs.GetInt("begin_mask", 0));
  KILN_PREPARE_ASSIGN(ctx, m.end, ctx.attrs.GetInt("end_mask", 0));
  KILN_PREPARE_ASSIGN(ctx, m.ellipsis, ctx.attrs.GetInt("ellipsis_mask", 0));
  KILN_PREPARE_ASSIGN(ctx, m.new_axis, ctx.attrs.GetInt("new_axis_mask", 0));
  KILN_PREPARE_ASSIGN(ctx, m.shrink, ctx.attrs.GetInt("shrink_axis_mask", 0));
  const int64_t lens[] = {KnownLength(ctx.inputs[1].shape), KnownLength(ctx.inputs[2].shape),
                          KnownLength(ctx.inputs[3].shape)};
  for (int i = 1; i < 3; ++i) {
    if (lens[i] >= 0 && lens[0] >= 0 && lens[i] != lens[0]) {
      return ctx.Error("expected begin, end and strides to be vectors of equal length, got ",
                       lens[0], ", ", lens[1], " and ", lens[2]);
    }
  }
  PartialShape out;
  const PartialShape& in = ctx.inputs[0].shape;
  const Tensor* strides_t = ConstantInput(ctx, 3);
  if (!in.unknown_rank() && strides_t != nullptr) {
    std::vector<int64_t> strides = IndexValues(*strides_t);
    const Tensor* begin_t = ConstantInput(ctx, 1);
    const Tensor* end_t = ConstantInput(ctx, 2);
    std::vector<int64_t> begin, end;
    if (begin_t) begin = IndexValues(*begin_t);
    if (end_t) end = IndexValues(*end_t);
    const bool both =
        begin_t && end_t && begin.size() == strides.size() && end.size() == strides.size();
    DenseSlice dense;
    Status s =
        AnalyzeStridedSlice(in.dims(), both ? begin.data() : nullptr, both ? end.data() : nullptr,
                            strides.data(), static_cast<int>(strides.size()), m, &dense);
    if (!s.ok()) return ctx.Error(s.message());
    out = *PartialShape::FromDims(dense.final_dims);
  }
  ctx.outputs = {TensorSpec{t, out}};
  ctx.state = std::move(state);
  return OkStatus();
}

Status ComputeStridedSlice(const KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  const Tensor& begin_t = ctx.input(1);
  const Tensor& end_t = ctx.input(2);
  const Tensor& strides_t = ctx.input(3);
  if (begin_t.rank() != 1 || end_t.rank() != 1 || strides_t.rank() != 1 ||
      begin_t.NumElements() != strides_t.NumElements() ||
      end_t.NumElements() != strides_t.NumElements()) {
    return ctx.Error("expected begin, end and strides to be vectors of equal length, got shapes ",
                     begin_t.shape().ToString(), ", ", end_t.shape().ToString(), " and ",
                     strides_t.shape().ToString());
  }
  std::vector<int64_t> begin = IndexValues(begin_t), end = IndexValues(end_t),
                       strides = IndexValues(strides_t);
  DenseSlice dense;
  Status s = AnalyzeStridedSlice(x.shape().dims(), begin.data(), end.data(), strides.data(),
                                 static_cast<int>(strides.size()),
                                 ctx.state<StridedSliceState>().masks, &dense);
  if (!s.ok()) return Wrap(ctx, s);
  const Shape shape = *Shape::FromDims(dense.final_dims);
  const auto in_strides = RowMajorStrides(x.shape());
  CopyPlan plan;
  for (int i = 0; i < x.rank(); ++i) {
    plan.Add(dense.size[i], in_strides[i] * dense.stride[i]);
    plan.offset += dense.begin[i] * in_strides[i];
  }
  if (plan.num_elements == x.NumElements() && plan.offset == 0 && plan.rank <= 1 &&
      (plan.rank == 0 || plan.strides[0] == 1)) {
    ctx.set_output(0, x.Reshaped(shape));  // the whole input, in order
    return OkStatus();
  }
  auto out = CopyWithPlan(x, shape, plan);
  if (!out.ok()) return Wrap(ctx, out.status());
  ctx.set_output(0, std::move(*out));
  return OkStatus();
}

// ---- GatherV2 --------------------------------------------------------------------------------

Status PrepareGather(PrepareContext& ctx) {
  KILN_RETURN_IF_ERROR(ctx.ExpectInputs(3));
  KILN_ASSIGN_OR_RETURN(DType t, ValueDType(ctx, 0, "params", "Tparams"));
  KILN_RETURN_IF_ERROR(IndexInputDType(ctx, 1, "indices", "Tindices").status());
  KILN_RETURN_IF_ERROR(IndexInputDType(ctx, 2, "axis", "Taxis").status());
  KILN_RETURN_IF_ERROR(ExpectInputRank(ctx, 2, "axis", 0));
  KILN_PREPARE_ASSIGN(ctx, int64_t batch_dims, ctx.attrs.GetInt("batch_dims", 0));
  if (batch_dims != 0) {
    return PrepareUnimplemented(ctx, "attr 'batch_dims' = ", batch_dims,
                                " is not supported (only 0)");
  }
  const PartialShape& params = ctx.inputs[0].shape;
  const PartialShape& indices = ctx.inputs[1].shape;
  PartialShape out;
  if (!params.unknown_rank() && params.rank() == 0) {
    return ctx.Error("input 'params' must have rank >= 1, got a scalar");
  }
  if (!params.unknown_rank() && !indices.unknown_rank()) {
    const int rank = params.rank() + indices.rank() - 1;
    if (rank > kMaxRank) return ctx.Error("result would have rank ", rank);
    out = UnknownDims(rank);
    if (const Tensor* axis_t = ConstantInput(ctx, 2)) {
      auto axis = CanonicalAxis(IndexValues(*axis_t)[0], params.rank(), "axis");
      if (!axis.ok()) return ctx.Error(axis.status().message());
      std::vector<int64_t> dims(params.dims().begin(), params.dims().begin() + *axis);
      dims.insert(dims.end(), indices.dims().begin(), indices.dims().end());
      dims.insert(dims.end(), params.dims().begin() + *axis + 1, params.dims().end());
      out = *PartialShape::FromDims(dims);
    }
  }
  ctx.outputs = {TensorSpec{t, out}};
  return OkStatus();
}

// "[1, 0]" for flat position i of `shape`.
std::string IndexString(int64_t i, const Shape& shape) {
  std::vector<int64_t> idx(shape.rank());
  for (int d = shape.rank() - 1; d >= 0; --d) {
    idx[d] = i % shape.dim(d);
    i /= shape.dim(d);
  }
  std::string s = "[";
  for (size_t d = 0; d < idx.size(); ++d) s += (d ? "," : "") + std::to_string(idx[d]);
  return s + "]";
}

Status ComputeGather(const KernelContext& ctx) {
  const Tensor& params = ctx.input(0);
  const Tensor& indices = ctx.input(1);
  const Tensor& axis_t = ctx.input(2);
  if (axis_t.NumElements() != 1) {
    return ctx.Error("input 'axis' must be a scalar, got shape ", axis_t.shape().ToString());
  }
  if (params.rank() == 0) return ctx.Error("input 'params' must have rank >= 1, got a scalar");
  auto axis = CanonicalAxis(IndexValues(axis_t)[0], params.rank(), "axis");
  if (!axis.ok()) return Wrap(ctx, axis.status());
  std::vector<int64_t> dims;
  int64_t outer = 1, inner = 1;
  for (int d = 0; d < *axis; ++d) {
    dims.push_back(params.dim(d));
    outer *= params.dim(d);
  }
  for (int64_t d : indices.shape().dims()) dims.push_back(d);
  for (int d = *axis + 1; d < params.rank(); ++d) {
    dims.push_back(params.dim(d));
    inner *= params.dim(d);
  }
  auto shape = Shape::FromDims(dims);
  if (!shape.ok()) return Wrap(ctx, shape.status());
  const int64_t limit = params.dim(*axis);
  const int64_t n = indices.NumElements();
  Tensor out(params.dtype(), *shape);
  auto run = [&](auto index_tag) -> Status {
    using Index = typename decltype(index_tag)::type;
    const Index* idx = indices.data<Index>();
    for (int64_t j = 0; j < n; ++j) {
      if (idx[j] < 0 || idx[j] >= limit) {
        return ctx.Error("indices", IndexString(j, indices.shape()), " = ",
                         static_cast<int64_t>(idx[j]), " is not in [0, ", limit, ")");
      }
    }
    return DispatchStorage(params.dtype(), [&](auto tag) {
      using U = typename decltype(tag)::type;
      if (out.NumElements() > 0) {
        functor::GatherRows<U, Index>()(Elems<U>(params), idx, outer, limit, n, inner,
                                        Elems<U>(out));
      }
      return OkStatus();
    });
  };
  KILN_RETURN_IF_ERROR(indices.dtype() == DType::kInt32 ? run(std::type_identity<int32_t>{})
                                                        : run(std::type_identity<int64_t>{}));
  ctx.set_output(0, std::move(out));
  return OkStatus();
}

// ---- tables ----------------------------------------------------------------------------------

constexpr OpDefinition kDefs[] = {
    {"Shape", "output", kOpNone, PrepareShapeWithState},
    {"Size", "output", kOpNone, PrepareShapeWithState},
    {"Rank", "output", kOpNone, PrepareRank},
    {"Reshape", "output", kOpNone, PrepareReshape},
    {"ExpandDims", "output", kOpNone, PrepareExpandDims},
    {"Squeeze", "output", kOpNone, PrepareSqueeze},
    {"Transpose", "y", kOpNone, PrepareTranspose},
    {"Pack", "output", kOpNone, PreparePack},
    {"Unpack", "output", kOpNone, PrepareUnpack},
    {"ConcatV2", "output", kOpNone, PrepareConcat},
    {"Fill", "output", kOpNone, PrepareFill},
    {"Range", "output", kOpNone, PrepareRange},
    {"Tile", "output", kOpNone, PrepareTile},
    {"BroadcastTo", "output", kOpNone, PrepareBroadcastTo},
    {"StridedSlice", "output", kOpNone, PrepareStridedSlice},
    {"GatherV2", "output", kOpNone, PrepareGather},
};

constexpr KernelEntry kCpu[] = {
    {"Shape", ComputeShape},
    {"Size", ComputeSize},
    {"Rank", ComputeRank},
    {"Reshape", ComputeReshape},
    {"ExpandDims", ComputeExpandDims},
    {"Squeeze", ComputeSqueeze},
    {"Transpose", ComputeTranspose},
    {"Pack", ComputePack},
    {"Unpack", ComputeUnpack},
    {"ConcatV2", ComputeConcat},
    {"Fill", ComputeFill},
    {"Range", ComputeRange},
    {"Tile", ComputeTile},
    {"BroadcastTo", ComputeBroadcastTo},
    {"StridedSlice", ComputeStridedSlice},
    {"GatherV2", ComputeGather},
};

}  // namespace

std::span<const OpDefinition> ArrayOpDefs() { return kDefs; }
std::span<const KernelEntry> ArrayCpuKernels() { return kCpu; }

}  // namespace kiln::exec
