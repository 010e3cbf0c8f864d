// Shapes and views: Shape, Size, Rank, Reshape (and QuantizedReshape, its range passed
// through), ExpandDims, Squeeze, Bitcast; the layout maps
// DataFormatDimMap and DataFormatVecPermute. Shape, Size and Rank of inputs whose shapes are
// known at prepare time are constants there; Reshape, ExpandDims and Squeeze return views of
// their input (no copy).
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "kernels/array_util.h"

namespace kiln::exec {
namespace {

// ---- Shape, Size, Rank -----------------------------------------------------------------------

// Writes `values` as int32 or int64 into `out`; int32 fails for values that do not fit.
Status WriteIndexValues(const std::vector<int64_t>& values, Tensor* out) {
  if (out->dtype() == DType::kInt64) {
    std::copy(values.begin(), values.end(), out->data<int64_t>());
    return OkStatus();
  }
  for (size_t i = 0; i < values.size(); ++i) {
    if (values[i] > INT32_MAX) {
      return InvalidArgument("value ", values[i], " does not fit out_type int32; use int64");
    }
    out->data<int32_t>()[i] = static_cast<int32_t>(values[i]);
  }
  return OkStatus();
}

Status ComputeShape(const KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  KILN_ASSIGN_OR_RETURN(Tensor * out, ctx.AllocateOutput(0, Shape{x.rank()}));
  Status s = WriteIndexValues(x.shape().ToVector(), out);
  return s.ok() ? s : Wrap(ctx, s);
}

Status ComputeSize(const KernelContext& ctx) {
  KILN_ASSIGN_OR_RETURN(Tensor * out, ctx.AllocateOutput(0, Shape()));
  Status s = WriteIndexValues({ctx.input(0).NumElements()}, out);
  return s.ok() ? s : Wrap(ctx, s);
}

Status ComputeRank(const KernelContext& ctx) {
  KILN_ASSIGN_OR_RETURN(Tensor * out, ctx.AllocateOutput(0, Shape()));
  out->scalar<int32_t>() = ctx.input(0).rank();
  return OkStatus();
}

Status PrepareShape(PrepareContext& ctx) {
  KILN_RETURN_IF_ERROR(ctx.ExpectInputs(1));
  KILN_ASSIGN_OR_RETURN(DType t, ValueDType(ctx, 0, "input"));
  (void)t;
  KILN_PREPARE_ASSIGN(ctx, DType out, ctx.attrs.GetType("out_type", DType::kInt32));
  KILN_RETURN_IF_ERROR(ExpectAttrDTypeIn(ctx, "out_type", out, {DType::kInt32, DType::kInt64}));
  const PartialShape& s = ctx.inputs[0].shape;
  const bool is_shape = ctx.op == "Shape";
  ctx.outputs = {TensorSpec{
      out, is_shape ? PartialShape{s.unknown_rank() ? -1 : s.rank()} : PartialShape::Scalar()}};
  if (s.IsFullyDefined()) {
    // Known now: later ops see a constant (shape arithmetic folds away at prepare time).
    std::vector<int64_t> values = is_shape ? std::vector<int64_t>(s.dims().begin(), s.dims().end())
                                           : std::vector<int64_t>{s.ToShape()->num_elements()};
    Tensor value(out, is_shape ? Shape{s.rank()} : Shape());
    Status w = WriteIndexValues(values, &value);
    if (!w.ok()) return ctx.Error(w.message());
    ctx.constant_outputs = {std::move(value)};
  }
  return OkStatus();
}

// ShapeN: Shape of each of its N inputs (the gradients of Conv2D take the shapes of both
// operands this way). Each output known at prepare time folds to a constant on its own.
Status PrepareShapeN(PrepareContext& ctx) {
  KILN_PREPARE_ASSIGN(ctx, int64_t n, ctx.attrs.GetInt("N"));
  if (n < 1 || n != static_cast<int64_t>(ctx.inputs.size())) {
    return ctx.Error("attr 'N' is ", n, " but the node has ", ctx.inputs.size(),
                     " inputs; expected N >= 1 inputs");
  }
  KILN_PREPARE_ASSIGN(ctx, DType out, ctx.attrs.GetType("out_type", DType::kInt32));
  KILN_RETURN_IF_ERROR(ExpectAttrDTypeIn(ctx, "out_type", out, {DType::kInt32, DType::kInt64}));
  bool any_known = false;
  std::vector<Tensor> constants(ctx.inputs.size());
  for (size_t i = 0; i < ctx.inputs.size(); ++i) {
    KILN_ASSIGN_OR_RETURN(DType t, ValueDType(ctx, static_cast<int>(i), "input"));
    (void)t;
    const PartialShape& s = ctx.inputs[i].shape;
    ctx.outputs.push_back(TensorSpec{out, PartialShape{s.unknown_rank() ? -1 : s.rank()}});
    if (!s.IsFullyDefined()) continue;
    Tensor value(out, Shape{s.rank()});
    Status w = WriteIndexValues(std::vector<int64_t>(s.dims().begin(), s.dims().end()), &value);
    if (!w.ok()) return ctx.Error(w.message());
    constants[i] = std::move(value);
    any_known = true;
  }
  if (any_known) ctx.constant_outputs = std::move(constants);
  return OkStatus();
}

Status ComputeShapeN(const KernelContext& ctx) {
  for (int i = 0; i < ctx.num_inputs(); ++i) {
    const Tensor& x = ctx.input(i);
    KILN_ASSIGN_OR_RETURN(Tensor * out, ctx.AllocateOutput(i, Shape{x.rank()}));
    Status s = WriteIndexValues(x.shape().ToVector(), out);
    if (!s.ok()) return Wrap(ctx, s);
  }
  return OkStatus();
}

Status PrepareRank(PrepareContext& ctx) {
  KILN_RETURN_IF_ERROR(ctx.ExpectInputs(1));
  KILN_ASSIGN_OR_RETURN(DType t, ValueDType(ctx, 0, "input"));
  (void)t;
  ctx.outputs = {TensorSpec{DType::kInt32, PartialShape::Scalar()}};
  if (!ctx.inputs[0].shape.unknown_rank())
    ctx.constant_outputs = {Tensor::Scalar<int32_t>(ctx.inputs[0].shape.rank())};
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

Status PrepareReshapeOf(PrepareContext& ctx) {
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

Status PrepareReshape(PrepareContext& ctx) {
  KILN_RETURN_IF_ERROR(ctx.ExpectInputs(2));
  return PrepareReshapeOf(ctx);
}

// QuantizedReshape: a Reshape whose float range (input_min, input_max) passes through.
Status PrepareQuantizedReshape(PrepareContext& ctx) {
  KILN_RETURN_IF_ERROR(ctx.ExpectInputs(4));
  KILN_RETURN_IF_ERROR(PrepareReshapeOf(ctx));
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 2, "input_min", DType::kFloat));
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 3, "input_max", DType::kFloat));
  ctx.outputs.push_back(TensorSpec{DType::kFloat, PartialShape{}});
  ctx.outputs.push_back(TensorSpec{DType::kFloat, PartialShape{}});
  return OkStatus();
}

Status ComputeReshape(const KernelContext& ctx);

Status ComputeQuantizedReshape(const KernelContext& ctx) {
  KILN_RETURN_IF_ERROR(ComputeReshape(ctx));
  for (int i : {2, 3}) {
    const Tensor& bound = ctx.input(i);
    if (bound.NumElements() != 1)
      return ctx.Error(i == 2 ? "input_min" : "input_max",
                       " must be a scalar or a vector of 1 element, got shape ",
                       bound.shape().ToString());
    KILN_ASSIGN_OR_RETURN(Tensor * out, ctx.AllocateOutput(i - 1, Shape{}));
    out->data<float>()[0] = bound.data<float>()[0];
  }
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
  ctx.SetOutput(0, x.Reshaped(*s));  // shares the buffer
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
  ctx.SetOutput(0, x.Reshaped(*Shape::FromDims(dims)));
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
  ctx.SetOutput(0, x.Reshaped(out));
  return OkStatus();
}

// ---- tables ----------------------------------------------------------------------------------

// ---- Bitcast ---------------------------------------------------------------------------------

// The bytes of T read as `type`: a wider T gains an innermost dim of sizeof(T) / sizeof(type);
// a narrower T loses its innermost dim, which must be sizeof(type) / sizeof(T).
Result<std::vector<int64_t>> BitcastDims(std::span<const int64_t> in, size_t from, size_t to) {
  std::vector<int64_t> dims(in.begin(), in.end());
  if (from > to) {
    dims.push_back(static_cast<int64_t>(from / to));
  } else if (from < to) {
    const int64_t k = static_cast<int64_t>(to / from);
    if (dims.empty() || (dims.back() >= 0 && dims.back() != k)) {
      return InvalidArgument("cannot bitcast: the innermost dim of shape ",
                             DimsString(std::vector<int64_t>(in.begin(), in.end())), " must be ", k,
                             " (", to, " / ", from, " bytes)");
    }
    dims.pop_back();
  }
  return dims;
}

bool Bitcastable(DType t) { return DTypeIsPod(t) && t != DType::kBool; }

Status PrepareBitcast(PrepareContext& ctx) {
  KILN_RETURN_IF_ERROR(ctx.ExpectInputs(1));
  KILN_PREPARE_ASSIGN(ctx, DType from, ctx.attrs.GetType("T"));
  KILN_PREPARE_ASSIGN(ctx, DType to, ctx.attrs.GetType("type"));
  for (DType t : {from, to}) {
    if (!Bitcastable(t)) return ctx.Error(DTypeShortName(t), " cannot be bitcast");
  }
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 0, "input", from));
  const PartialShape& in = ctx.inputs[0].shape;
  PartialShape out = PartialShape::UnknownRank();
  if (!in.unknown_rank()) {
    auto dims = BitcastDims(in.dims(), DTypeSize(from), DTypeSize(to));
    if (!dims.ok()) return ctx.Error(dims.status().message());
    KILN_PREPARE_ASSIGN(ctx, out, PartialShape::FromDims(*dims));
  }
  ctx.outputs = {TensorSpec{to, out}};
  return OkStatus();
}

Status ComputeBitcast(const KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  const DType to = ctx.state<TypedOpState<DType>>().value;
  auto dims = BitcastDims(x.shape().dims(), DTypeSize(x.dtype()), DTypeSize(to));
  if (!dims.ok()) return Wrap(ctx, dims.status());
  KILN_ASSIGN_OR_RETURN(Shape shape, Shape::FromDims(*dims));
  KILN_ASSIGN_OR_RETURN(Tensor * out, ctx.AllocateOutput(0, shape));
  if (x.NumElements() > 0) {
    std::memcpy(out->raw_data(), x.raw_data(), x.NumElements() * DTypeSize(x.dtype()));
  }
  return OkStatus();
}

Status PrepareBitcastWithState(PrepareContext& ctx) {
  KILN_RETURN_IF_ERROR(PrepareBitcast(ctx));
  ctx.state = std::make_shared<TypedOpState<DType>>(ctx.outputs[0].dtype);
  return OkStatus();
}

// ---- DataFormatDimMap, DataFormatVecPermute ----------------------------------------------------

// The two layouts of TF's layout optimiser: permutations of the same letters ("NHWC", "NCHW",
// 5-D forms, or any other order).
struct DataFormatState : OpState {
  std::string src, dst;
};

Result<std::shared_ptr<DataFormatState>> ReadFormats(PrepareContext& ctx) {
  auto st = std::make_shared<DataFormatState>();
  KILN_PREPARE_ASSIGN(ctx, st->src, ctx.attrs.GetString("src_format", "NHWC"));
  KILN_PREPARE_ASSIGN(ctx, st->dst, ctx.attrs.GetString("dst_format", "NCHW"));
  std::string a = st->src, b = st->dst;
  std::sort(a.begin(), a.end());
  std::sort(b.begin(), b.end());
  if (a != b || std::adjacent_find(a.begin(), a.end()) != a.end() ||
      (a.size() != 4 && a.size() != 5)) {
    return ctx.Error("attrs 'src_format' \"", st->src, "\" and 'dst_format' \"", st->dst,
                     "\" must be permutations of the same 4 or 5 distinct letters");
  }
  return st;
}

Status PrepareDataFormat(PrepareContext& ctx) {
  KILN_RETURN_IF_ERROR(ctx.ExpectInputs(1));
  KILN_PREPARE_ASSIGN(ctx, DType t, ctx.attrs.GetType("T", DType::kInt32));
  KILN_RETURN_IF_ERROR(ExpectAttrDTypeIn(ctx, "T", t, {DType::kInt32, DType::kInt64}));
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 0, "x", t));
  KILN_ASSIGN_OR_RETURN(auto st, ReadFormats(ctx));
  ctx.outputs = {ctx.inputs[0]};
  ctx.state = std::move(st);
  return OkStatus();
}

template <typename I>
void WriteIndex(Tensor* t, int64_t i, int64_t v) {
  t->data<I>()[i] = static_cast<I>(v);
}

// y[i] = the position in dst_format of the letter at position x[i] (mod rank) of src_format.
Status ComputeDataFormatDimMap(const KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  const auto& st = ctx.state<DataFormatState>();
  const int64_t n = static_cast<int64_t>(st.src.size());
  KILN_ASSIGN_OR_RETURN(Tensor * out, ctx.AllocateOutput(0, x.shape()));
  const std::vector<int64_t> v = IndexValues(x);
  for (size_t i = 0; i < v.size(); ++i) {
    if (v[i] < -n || v[i] >= n) {
      return ctx.Error("x[", i, "] = ", v[i], " is out of range [", -n, ", ", n, ")");
    }
    const int64_t pos = static_cast<int64_t>(st.dst.find(st.src[(v[i] + n) % n]));
    if (x.dtype() == DType::kInt64) {
      WriteIndex<int64_t>(out, static_cast<int64_t>(i), pos);
    } else {
      WriteIndex<int32_t>(out, static_cast<int64_t>(i), pos);
    }
  }
  return OkStatus();
}

// x holds one entry (or row of 2) per dim in src_format's order, or per spatial dim only (the
// letters other than N and C); y holds them in dst_format's order.
Status ComputeDataFormatVecPermute(const KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  const auto& st = ctx.state<DataFormatState>();
  const int64_t n = static_cast<int64_t>(st.src.size());
  const bool rows = x.rank() == 2;
  if (!(x.rank() == 1 || (rows && x.dim(1) == 2)) || (x.dim(0) != n && x.dim(0) != n - 2)) {
    return ctx.Error("input must be a vector of size ", n, " or ", n - 2, " or a [", n, ", 2] or [",
                     n - 2, ", 2] tensor, got shape ", x.shape().ToString());
  }
  std::string src = st.src, dst = st.dst;
  if (x.dim(0) == n - 2) {  // spatial dims only
    auto spatial = [](std::string s) {
      s.erase(std::remove_if(s.begin(), s.end(), [](char c) { return c == 'N' || c == 'C'; }),
              s.end());
      return s;
    };
    src = spatial(src);
    dst = spatial(dst);
  }
  KILN_ASSIGN_OR_RETURN(Tensor * out, ctx.AllocateOutput(0, x.shape()));
  const std::vector<int64_t> v = IndexValues(x);
  const int64_t width = rows ? 2 : 1;
  for (size_t i = 0; i < dst.size(); ++i) {
    const size_t from = src.find(dst[i]);
    for (int64_t w = 0; w < width; ++w) {
      const int64_t val = v[from * width + w];
      const int64_t at = static_cast<int64_t>(i) * width + w;
      if (x.dtype() == DType::kInt64) {
        WriteIndex<int64_t>(out, at, val);
      } else {
        WriteIndex<int32_t>(out, at, val);
      }
    }
  }
  return OkStatus();
}

constexpr OpDefinition kDefs[] = {
    {"Shape", "output", kOpFreshOutputs, PrepareShape},
    {"ShapeN", "output", kOpFreshOutputs, PrepareShapeN},
    {"Size", "output", kOpFreshOutputs, PrepareShape},
    {"Rank", "output", kOpFreshOutputs, PrepareRank},
    {"Reshape", "output", kOpNone, PrepareReshape},
    {"QuantizedReshape", "output,output_min,output_max", kOpNone, PrepareQuantizedReshape},
    {"ExpandDims", "output", kOpNone, PrepareExpandDims},
    {"Squeeze", "output", kOpNone, PrepareSqueeze},
    {"Bitcast", "output", kOpFreshOutputs, PrepareBitcastWithState},
    {"DataFormatDimMap", "y", kOpFreshOutputs, PrepareDataFormat},
    {"DataFormatVecPermute", "y", kOpFreshOutputs, PrepareDataFormat},
};

constexpr KernelEntry kCpu[] = {
    {"Shape", ComputeShape},
    {"ShapeN", ComputeShapeN},
    {"Size", ComputeSize},
    {"Rank", ComputeRank},
    {"Reshape", ComputeReshape},
    {"QuantizedReshape", ComputeQuantizedReshape},
    {"ExpandDims", ComputeExpandDims},
    {"Squeeze", ComputeSqueeze},
    {"Bitcast", ComputeBitcast},
    {"DataFormatDimMap", ComputeDataFormatDimMap},
    {"DataFormatVecPermute", ComputeDataFormatVecPermute},
};

}  // namespace

std::span<const OpDefinition> ShapeOpDefs() { return kDefs; }
std::span<const KernelEntry> ShapeCpuKernels() { return kCpu; }

}  // namespace kiln::exec
