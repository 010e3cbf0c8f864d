// Shapes and views: Shape, Size, Rank, Reshape (and QuantizedReshape, its range passed
// through), ExpandDims, Squeeze, Bitcast; the layout maps
// DataFormatDimMap and DataFormatVecPermute. Shape, Size and Rank of inputs whose shapes are
// known at prepare time are constants there. The CPU kernels are in kernels/cpu/shape_ops.cc.
#include "kernels/shape_ops.h"

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "kernels/array_util.h"

namespace kiln::exec {
namespace {

using shape::BitcastDims;
using shape::DataFormatState;
using shape::ExpandAxis;
using shape::ReshapeDims;
using shape::SqueezeMask;
using shape::WriteIndexValues;

// ---- Shape, Size, Rank -----------------------------------------------------------------------

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

// ---- ExpandDims ------------------------------------------------------------------------------

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

// ---- Squeeze ---------------------------------------------------------------------------------

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

// ---- Bitcast ---------------------------------------------------------------------------------

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

Status PrepareBitcastWithState(PrepareContext& ctx) {
  KILN_RETURN_IF_ERROR(PrepareBitcast(ctx));
  ctx.state = std::make_shared<TypedOpState<DType>>(ctx.outputs[0].dtype);
  return OkStatus();
}

// ---- DataFormatDimMap, DataFormatVecPermute ----------------------------------------------------

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

}  // namespace

std::span<const OpDefinition> ShapeOpDefs() { return kDefs; }

}  // namespace kiln::exec
