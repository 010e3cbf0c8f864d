// Batched matrices: MatrixBandPart, MatrixDeterminant, and the diagonal ops MatrixDiag,
// MatrixDiagPart and MatrixSetDiag (v1, v2, v3) with TF's band of diagonals k = [k0, k1] and
// its alignment of the packed diagonals; and the tensor diagonals Diag and DiagPart (rank k to
// rank 2k and back); Cross (3-vectors): definitions. The CPU kernels are in
// kernels/cpu/matrix_ops.cc.
//
// Packed diagonals: for a band k0 <= d <= k1 of an M x N matrix, row k1 - d of the packing
// holds diagonal d, whose length is min(M + min(0, d), N - max(0, d)), in a row of the longest
// length in the band; a shorter diagonal sits at the left or the right of its row as `align`
// says ("<superdiagonals>_<subdiagonals>", v3's default RIGHT_LEFT; v2 packs LEFT_LEFT).
#include "kernels/matrix_ops.h"

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "kernels/array_util.h"
#include "kernels/kernel_util.h"
#include "kernels/type_lists.h"

namespace kiln::exec {
namespace {

using matrix::BandFrom;
using matrix::CheckBandFits;
using matrix::DeterminantTypes;
using matrix::DiagBand;
using matrix::DiagState;
using matrix::MaxDiagLength;

// Element types the data-movement ops here take: every POD dtype and strings.
constexpr DType kMatrixDTypes[] = {
    DType::kFloat, DType::kDouble, DType::kHalf,      DType::kBFloat16,
    DType::kInt8,  DType::kInt16,  DType::kInt32,     DType::kInt64,
    DType::kUInt8, DType::kUInt16, DType::kUInt32,    DType::kUInt64,
    DType::kBool,  DType::kString, DType::kComplex64, DType::kComplex128};

Status ExpectMatrixInput(const PrepareContext& ctx, int i, std::string_view name) {
  const PartialShape& s = ctx.inputs[i].shape;
  if (!s.unknown_rank() && s.rank() < 2) {
    return ctx.Error("input '", name, "' must have rank >= 2, got shape ", s.ToPythonString());
  }
  return OkStatus();
}

// ---- MatrixBandPart --------------------------------------------------------------------------

Status PrepareBandPart(PrepareContext& ctx) {
  KILN_RETURN_IF_ERROR(ctx.ExpectInputs(3));
  KILN_PREPARE_ASSIGN(ctx, DType t, ctx.attrs.GetType("T"));
  KILN_RETURN_IF_ERROR(ExpectAttrDTypeIn(ctx, "T", t, kMatrixDTypes));
  KILN_PREPARE_ASSIGN(ctx, DType tindex, ctx.attrs.GetType("Tindex", DType::kInt64));
  KILN_RETURN_IF_ERROR(ExpectAttrDTypeIn(ctx, "Tindex", tindex, {DType::kInt32, DType::kInt64}));
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 0, "input", t));
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 1, "num_lower", tindex));
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 2, "num_upper", tindex));
  KILN_RETURN_IF_ERROR(ExpectMatrixInput(ctx, 0, "input"));
  KILN_RETURN_IF_ERROR(ExpectInputRank(ctx, 1, "num_lower", 0));
  KILN_RETURN_IF_ERROR(ExpectInputRank(ctx, 2, "num_upper", 0));
  ctx.outputs = {TensorSpec{t, ctx.inputs[0].shape}};
  return OkStatus();
}

// ---- MatrixDeterminant -----------------------------------------------------------------------

Status PrepareDeterminant(PrepareContext& ctx) {
  KILN_RETURN_IF_ERROR(ctx.ExpectInputs(1));
  KILN_PREPARE_ASSIGN(ctx, DType t, ctx.attrs.GetType("T"));
  KILN_RETURN_IF_ERROR(ExpectAttrDTypeIn(ctx, "T", t, DeterminantTypes::kDTypes));
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 0, "input", t));
  KILN_RETURN_IF_ERROR(ExpectMatrixInput(ctx, 0, "input"));
  const PartialShape& s = ctx.inputs[0].shape;
  PartialShape out = PartialShape::UnknownRank();
  if (!s.unknown_rank()) {
    const int64_t r = s.dim(s.rank() - 2), c = s.dim(s.rank() - 1);
    if (r >= 0 && c >= 0 && r != c) {
      return ctx.Error("input 'input' must hold square matrices, got shape ", s.ToPythonString());
    }
    KILN_PREPARE_ASSIGN(ctx, out, PartialShape::FromDims(s.dims().first(s.rank() - 2)));
  }
  ctx.outputs = {TensorSpec{t, out}};
  return OkStatus();
}

// ---- the band of diagonals -------------------------------------------------------------------

// "RIGHT_LEFT" and friends; v2 ops (no attr) pack LEFT_LEFT.
Status ReadAlign(PrepareContext& ctx, bool has_attr, DiagState* st) {
  std::string align = "LEFT_LEFT";
  if (has_attr) {
    KILN_PREPARE_ASSIGN(ctx, align, ctx.attrs.GetString("align", "RIGHT_LEFT"));
  }
  if (align != "LEFT_LEFT" && align != "LEFT_RIGHT" && align != "RIGHT_LEFT" &&
      align != "RIGHT_RIGHT") {
    return ctx.Error("attr 'align' is '", align,
                     "', expected one of LEFT_RIGHT, RIGHT_LEFT, LEFT_LEFT, RIGHT_RIGHT");
  }
  st->left_super = align.starts_with("LEFT");
  st->left_sub = align.ends_with("LEFT");
  return OkStatus();
}

// The band when input `i` (k) is known at prepare time.
Result<DiagBand> ConstantBand(const PrepareContext& ctx, int i, const DiagState& st, bool* known) {
  *known = false;
  const Tensor* k = ConstantInput(ctx, i);
  if (k == nullptr) return DiagBand{};
  *known = true;
  return BandFrom(*k, st);
}

Status PrepareDiagCommon(PrepareContext& ctx, int n_inputs, DiagState* st, bool has_align,
                         DType* t) {
  KILN_RETURN_IF_ERROR(ctx.ExpectInputs(n_inputs));
  KILN_PREPARE_ASSIGN(ctx, *t, ctx.attrs.GetType("T"));
  KILN_RETURN_IF_ERROR(ExpectAttrDTypeIn(ctx, "T", *t, kMatrixDTypes));
  return ReadAlign(ctx, has_align, st);
}

// ---- MatrixDiagPart (v1: k = 0, zero padding; v2, v3) ----------------------------------------

template <int kVersion>
Status PrepareDiagPart(PrepareContext& ctx) {
  auto st = std::make_shared<DiagState>();
  DType t;
  KILN_RETURN_IF_ERROR(PrepareDiagCommon(ctx, kVersion == 1 ? 1 : 3, st.get(), kVersion == 3, &t));
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 0, "input", t));
  KILN_RETURN_IF_ERROR(ExpectMatrixInput(ctx, 0, "input"));
  DiagBand band;
  bool known = kVersion == 1;
  if (kVersion != 1) {
    KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 1, "k", DType::kInt32));
    KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 2, "padding_value", t));
    KILN_RETURN_IF_ERROR(ExpectInputRank(ctx, 2, "padding_value", 0));
    KILN_PREPARE_ASSIGN(ctx, band, ConstantBand(ctx, 1, *st, &known));
  }
  // The output's rank depends on the number of diagonals: unknown until k is.
  const PartialShape& s = ctx.inputs[0].shape;
  PartialShape out = PartialShape::UnknownRank();
  if (!s.unknown_rank() && known) {
    const int64_t rows = s.dim(s.rank() - 2), cols = s.dim(s.rank() - 1);
    std::vector<int64_t> dims(s.dims().begin(), s.dims().end() - 2);
    if (band.num_diags() > 1) dims.push_back(band.num_diags());
    if (rows >= 0 && cols >= 0) {
      KILN_PREPARE_CHECK(ctx, CheckBandFits(band, rows, cols));
      dims.push_back(MaxDiagLength(band, rows, cols));
    } else {
      dims.push_back(-1);
    }
    KILN_PREPARE_ASSIGN(ctx, out, PartialShape::FromDims(dims));
  }
  ctx.outputs = {TensorSpec{t, out}};
  ctx.state = std::move(st);
  return OkStatus();
}

// ---- MatrixDiag (v1: k = 0, square, zero padding; v2, v3) ------------------------------------

template <int kVersion>
Status PrepareDiag(PrepareContext& ctx) {
  auto st = std::make_shared<DiagState>();
  DType t;
  KILN_RETURN_IF_ERROR(PrepareDiagCommon(ctx, kVersion == 1 ? 1 : 5, st.get(), kVersion == 3, &t));
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 0, "diagonal", t));
  const PartialShape& s = ctx.inputs[0].shape;
  if (s.rank() == 0) return ctx.Error("input 'diagonal' must have rank >= 1, got a scalar");
  if (kVersion != 1) {
    KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 1, "k", DType::kInt32));
    KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 2, "num_rows", DType::kInt32));
    KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 3, "num_cols", DType::kInt32));
    KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 4, "padding_value", t));
    for (int i = 2; i <= 4; ++i) {
      KILN_RETURN_IF_ERROR(ExpectInputRank(
          ctx, i, i == 2 ? "num_rows" : (i == 3 ? "num_cols" : "padding_value"), 0));
    }
  }
  PartialShape out = PartialShape::UnknownRank();
  if (kVersion == 1 && !s.unknown_rank()) {
    std::vector<int64_t> dims(s.dims().begin(), s.dims().end());
    dims.push_back(dims.back());
    KILN_PREPARE_ASSIGN(ctx, out, PartialShape::FromDims(dims));
  }
  ctx.outputs = {TensorSpec{t, out}};
  ctx.state = std::move(st);
  return OkStatus();
}

// ---- MatrixSetDiagV3 -------------------------------------------------------------------------

// MatrixSetDiag (v1: the main diagonal), V2 (k, diagonals aligned LEFT_LEFT) and V3 (k, align).
template <int kVersion>
Status PrepareSetDiag(PrepareContext& ctx) {
  auto st = std::make_shared<DiagState>();
  DType t;
  KILN_RETURN_IF_ERROR(PrepareDiagCommon(ctx, kVersion == 1 ? 2 : 3, st.get(), kVersion == 3, &t));
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 0, "input", t));
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 1, "diagonal", t));
  if (kVersion != 1) KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 2, "k", DType::kInt32));
  KILN_RETURN_IF_ERROR(ExpectMatrixInput(ctx, 0, "input"));
  ctx.outputs = {TensorSpec{t, ctx.inputs[0].shape}};
  ctx.state = std::move(st);
  return OkStatus();
}

// ---- Diag, DiagPart (tf.linalg.tensor_diag and tensor_diag_part) ---------------------------

// Diag: a rank-k input gives a rank-2k output, x at [i..., i...] and 0 elsewhere. DiagPart is
// its inverse: a rank-2k input with dims[i] == dims[i + k] gives x[i..., i...].
Status PrepareTensorDiag(PrepareContext& ctx) {
  KILN_RETURN_IF_ERROR(ctx.ExpectInputs(1));
  KILN_ASSIGN_OR_RETURN(DType t, ValueDType(ctx, 0, "diagonal"));
  if (!DTypeIsPod(t)) return ctx.Error("takes numbers, got ", DTypeShortName(t));
  const PartialShape& in = ctx.inputs[0].shape;
  if (in.unknown_rank()) {
    ctx.outputs = {TensorSpec{t, PartialShape::UnknownRank()}};
    return OkStatus();
  }
  if (in.rank() < 1 || in.rank() > kMaxRank / 2)
    return ctx.Error("input 'diagonal' must have rank 1 to ", kMaxRank / 2, ", got ",
                     in.ToPythonString());
  std::vector<int64_t> dims;
  for (int r = 0; r < 2; ++r)
    for (int i = 0; i < in.rank(); ++i) dims.push_back(in.dim(i));
  KILN_PREPARE_ASSIGN(ctx, PartialShape out, PartialShape::FromDims(dims));
  ctx.outputs = {TensorSpec{t, out}};
  return OkStatus();
}

Status PrepareTensorDiagPart(PrepareContext& ctx) {
  KILN_RETURN_IF_ERROR(ctx.ExpectInputs(1));
  KILN_ASSIGN_OR_RETURN(DType t, ValueDType(ctx, 0, "input"));
  if (!DTypeIsPod(t)) return ctx.Error("takes numbers, got ", DTypeShortName(t));
  const PartialShape& in = ctx.inputs[0].shape;
  if (in.unknown_rank()) {
    ctx.outputs = {TensorSpec{t, PartialShape::UnknownRank()}};
    return OkStatus();
  }
  if (in.rank() < 2 || in.rank() % 2 != 0)
    return ctx.Error("input 'input' must have an even rank of at least 2, got ",
                     in.ToPythonString());
  const int k = in.rank() / 2;
  std::vector<int64_t> dims;
  for (int i = 0; i < k; ++i) {
    const int64_t a = in.dim(i), b = in.dim(i + k);
    if (a >= 0 && b >= 0 && a != b)
      return ctx.Error("input 'input' dims ", i, " and ", i + k, " must be equal, got ",
                       in.ToPythonString());
    dims.push_back(a >= 0 ? a : b);
  }
  KILN_PREPARE_ASSIGN(ctx, PartialShape out, PartialShape::FromDims(dims));
  ctx.outputs = {TensorSpec{t, out}};
  return OkStatus();
}

// ---- tables ----------------------------------------------------------------------------------

// ---- Cross -----------------------------------------------------------------------------------

// The cross product of 3-vectors along the innermost dim (a and b of one shape [..., 3]).
Status PrepareCross(PrepareContext& ctx) {
  KILN_RETURN_IF_ERROR(ctx.ExpectInputs(2));
  KILN_PREPARE_ASSIGN(ctx, DType t, ctx.attrs.GetType("T"));
  KILN_RETURN_IF_ERROR(ExpectAttrDTypeIn(ctx, "T", t, RealTypes::kDTypes));
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 0, "a", t));
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 1, "b", t));
  const PartialShape& a = ctx.inputs[0].shape;
  const PartialShape& b = ctx.inputs[1].shape;
  for (const PartialShape* s : {&a, &b}) {
    if (!s->unknown_rank() &&
        (s->rank() < 1 || (s->dim(s->rank() - 1) >= 0 && s->dim(s->rank() - 1) != 3))) {
      return ctx.Error("inputs must be [..., 3] vectors, got shape ", s->ToPythonString());
    }
  }
  PartialShape out = a.unknown_rank() ? b : a;
  if (!a.unknown_rank() && !b.unknown_rank()) {
    if (a.rank() != b.rank()) {
      return ctx.Error("a and b must be the same shape, got ", a.ToPythonString(), " and ",
                       b.ToPythonString());
    }
    KILN_PREPARE_ASSIGN(ctx, out, a.MergeWith(b));
  }
  ctx.outputs = {TensorSpec{t, out}};
  return OkStatus();
}

constexpr OpDefinition kDefs[] = {
    {"MatrixBandPart", "band", kOpFreshOutputs, PrepareBandPart},
    {"MatrixDeterminant", "output", kOpFreshOutputs, PrepareDeterminant},
    {"MatrixDiag", "output", kOpFreshOutputs, PrepareDiag<1>},
    {"MatrixDiagV2", "output", kOpFreshOutputs, PrepareDiag<2>},
    {"MatrixDiagV3", "output", kOpFreshOutputs, PrepareDiag<3>},
    {"MatrixDiagPart", "diagonal", kOpFreshOutputs, PrepareDiagPart<1>},
    {"MatrixDiagPartV2", "diagonal", kOpFreshOutputs, PrepareDiagPart<2>},
    {"MatrixDiagPartV3", "diagonal", kOpFreshOutputs, PrepareDiagPart<3>},
    {"MatrixSetDiag", "output", kOpFreshOutputs, PrepareSetDiag<1>},
    {"MatrixSetDiagV2", "output", kOpFreshOutputs, PrepareSetDiag<2>},
    {"MatrixSetDiagV3", "output", kOpFreshOutputs, PrepareSetDiag<3>},
    {"Diag", "output", kOpFreshOutputs, PrepareTensorDiag},
    {"Cross", "product", kOpFreshOutputs, PrepareCross},
    {"DiagPart", "diagonal", kOpFreshOutputs, PrepareTensorDiagPart},
};

}  // namespace

std::span<const OpDefinition> MatrixOpDefs() { return kDefs; }

}  // namespace kiln::exec
