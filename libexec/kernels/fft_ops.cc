// The FFT family over the innermost 1, 2 or 3 dims: FFT/FFT2D/FFT3D and their inverses
// (complex to complex), RFFT/RFFT2D/RFFT3D (real to the fft_length[-1] / 2 + 1 non-negative
// frequencies of the last dim) and IRFFT/IRFFT2D/IRFFT3D (those frequencies back to a real
// signal of fft_length points); and the speech front end of TF's audio ops, AudioSpectrogram
// (periodic-Hann windows, zero-padded to a power of two) and Mfcc (TF's mel filterbank, log and
// DCT, ported from its mfcc*.cc). As in TensorFlow's raw ops, an input dim longer than what the
// transform reads is cropped and a shorter one is an error (tf.signal pads in Python before
// calling the op); the inverses are normalised by 1/n, as TF's are.
// Definitions; the CPU kernels are in kernels/cpu/fft_ops.cc.
#include "kernels/fft_ops.h"

#include <cstddef>
#include <cstdint>
#include <memory>
#include <utility>
#include <vector>

#include "kernels/array_util.h"
#include "kernels/kernel_util.h"

namespace kiln::exec {
namespace {

using fft::FftKind;
using fft::FftState;
using fft::MfccState;
using fft::OutLength;
using fft::ReadLength;
using fft::SpectrogramState;

template <int kRank, FftKind kKind, bool kInverse>
Status PrepareFft(PrepareContext& ctx) {
  constexpr bool kReal = kKind != FftKind::kComplex;
  KILN_RETURN_IF_ERROR(ctx.ExpectInputs(kReal ? 2 : 1));
  auto st = std::make_shared<FftState>();
  st->rank = kRank;
  st->kind = kKind;
  st->inverse = kInverse;
  DType complex = DType::kComplex64;
  KILN_PREPARE_ASSIGN(ctx, complex, ctx.attrs.GetType("Tcomplex", DType::kComplex64));
  KILN_RETURN_IF_ERROR(
      ExpectAttrDTypeIn(ctx, "Tcomplex", complex, {DType::kComplex64, DType::kComplex128}));
  st->in = st->out = complex;
  if (kReal) {
    DType real = DType::kFloat;
    KILN_PREPARE_ASSIGN(ctx, real, ctx.attrs.GetType("Treal", DType::kFloat));
    KILN_RETURN_IF_ERROR(ExpectAttrDTypeIn(ctx, "Treal", real, {DType::kFloat, DType::kDouble}));
    if ((real == DType::kFloat) != (complex == DType::kComplex64)) {
      return ctx.Error("attrs 'Treal' ", DTypeShortName(real), " and 'Tcomplex' ",
                       DTypeShortName(complex),
                       " do not match: expected float32 with complex64 or float64 with complex128");
    }
    (kKind == FftKind::kRealForward ? st->in : st->out) = real;
  }
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 0, "input", st->in));
  const PartialShape& s = ctx.inputs[0].shape;
  if (!s.unknown_rank() && s.rank() < kRank) {
    return ctx.Error("input must have rank of at least ", kRank, " but got shape ",
                     s.ToPythonString());
  }
  PartialShape out = s;
  if (kReal) {
    KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 1, "fft_length", DType::kInt32));
    KILN_RETURN_IF_ERROR(ExpectInputRank(ctx, 1, "fft_length", 1));
    const int64_t n = KnownLength(ctx.inputs[1].shape);
    if (n >= 0 && n != kRank) {
      return ctx.Error("input 'fft_length' must have shape [", kRank, "], got ",
                       ctx.inputs[1].shape.ToPythonString());
    }
    if (!s.unknown_rank()) {
      std::vector<int64_t> dims(s.dims().begin(), s.dims().end());
      const Tensor* len = ConstantInput(ctx, 1);
      for (int i = 0; i < kRank; ++i) {
        const size_t axis = dims.size() - kRank + i;
        int64_t& d = dims[axis];
        if (!len) {
          d = -1;
          continue;
        }
        const int64_t l = len->data<int32_t>()[i];
        if (l < 0) return ctx.Error("fft_length[", i, "] must be >= 0, got ", l);
        const int64_t need = ReadLength(kKind, i, kRank, d, l);
        if (d > 0 && d < need) {
          return ctx.Error("input dimension ", axis, " must have length of at least ", need,
                           " but got ", d);
        }
        d = OutLength(kKind, i, kRank, d, l);
      }
      KILN_PREPARE_ASSIGN(ctx, out, PartialShape::FromDims(dims));
    }
  }
  ctx.outputs = {TensorSpec{st->out, out}};
  ctx.state = std::move(st);
  return OkStatus();
}

// ---- AudioSpectrogram --------------------------------------------------------------------------

Status PrepareSpectrogram(PrepareContext& ctx) {
  KILN_RETURN_IF_ERROR(ctx.ExpectInputs(1));
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 0, "input", DType::kFloat));
  KILN_RETURN_IF_ERROR(ExpectInputRank(ctx, 0, "input", 2));
  auto st = std::make_shared<SpectrogramState>();
  KILN_PREPARE_ASSIGN(ctx, st->window, ctx.attrs.GetInt("window_size"));
  KILN_PREPARE_ASSIGN(ctx, st->stride, ctx.attrs.GetInt("stride"));
  KILN_PREPARE_ASSIGN(ctx, st->magnitude_squared, ctx.attrs.GetBool("magnitude_squared", false));
  if (st->window < 2) return ctx.Error("window_size must be at least 2, got ", st->window);
  if (st->stride < 1) return ctx.Error("stride must be positive, got ", st->stride);
  int64_t fft = 1;
  while (fft < st->window) fft *= 2;
  const PartialShape& in = ctx.inputs[0].shape;
  int64_t frames = -1;
  if (!in.unknown_rank() && in.dim(0) >= 0) {
    frames = in.dim(0) < st->window ? 0 : 1 + (in.dim(0) - st->window) / st->stride;
  }
  ctx.outputs = {TensorSpec{DType::kFloat,
                            PartialShape{in.unknown_rank() ? -1 : in.dim(1), frames, fft / 2 + 1}}};
  ctx.state = std::move(st);
  return OkStatus();
}

// ---- Mfcc ------------------------------------------------------------------------------------

Status PrepareMfcc(PrepareContext& ctx) {
  KILN_RETURN_IF_ERROR(ctx.ExpectInputs(2));
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 0, "spectrogram", DType::kFloat));
  KILN_RETURN_IF_ERROR(ExpectInputRank(ctx, 0, "spectrogram", 3));
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 1, "sample_rate", DType::kInt32));
  KILN_RETURN_IF_ERROR(ExpectInputRank(ctx, 1, "sample_rate", 0));
  auto st = std::make_shared<MfccState>();
  KILN_PREPARE_ASSIGN(ctx, float upper, ctx.attrs.GetFloat("upper_frequency_limit", 4000));
  KILN_PREPARE_ASSIGN(ctx, float lower, ctx.attrs.GetFloat("lower_frequency_limit", 20));
  st->upper = upper;
  st->lower = lower;
  KILN_PREPARE_ASSIGN(ctx, st->filterbank_channels,
                      ctx.attrs.GetInt("filterbank_channel_count", 40));
  KILN_PREPARE_ASSIGN(ctx, st->dct_coefficients, ctx.attrs.GetInt("dct_coefficient_count", 13));
  const PartialShape& s = ctx.inputs[0].shape;
  ctx.outputs = {TensorSpec{DType::kFloat,
                            PartialShape{s.unknown_rank() ? -1 : s.dim(0),
                                         s.unknown_rank() ? -1 : s.dim(1), st->dct_coefficients}}};
  ctx.state = std::move(st);
  return OkStatus();
}

using K = FftKind;
constexpr OpDefinition kDefs[] = {
    {"FFT", "output", kOpFreshOutputs, PrepareFft<1, K::kComplex, false>},
    {"FFT2D", "output", kOpFreshOutputs, PrepareFft<2, K::kComplex, false>},
    {"FFT3D", "output", kOpFreshOutputs, PrepareFft<3, K::kComplex, false>},
    {"IFFT", "output", kOpFreshOutputs, PrepareFft<1, K::kComplex, true>},
    {"IFFT2D", "output", kOpFreshOutputs, PrepareFft<2, K::kComplex, true>},
    {"IFFT3D", "output", kOpFreshOutputs, PrepareFft<3, K::kComplex, true>},
    {"RFFT", "output", kOpFreshOutputs, PrepareFft<1, K::kRealForward, false>},
    {"RFFT2D", "output", kOpFreshOutputs, PrepareFft<2, K::kRealForward, false>},
    {"RFFT3D", "output", kOpFreshOutputs, PrepareFft<3, K::kRealForward, false>},
    {"IRFFT", "output", kOpFreshOutputs, PrepareFft<1, K::kRealInverse, true>},
    {"IRFFT2D", "output", kOpFreshOutputs, PrepareFft<2, K::kRealInverse, true>},
    {"IRFFT3D", "output", kOpFreshOutputs, PrepareFft<3, K::kRealInverse, true>},
    {"AudioSpectrogram", "spectrogram", kOpFreshOutputs, PrepareSpectrogram},
    {"Mfcc", "output", kOpFreshOutputs, PrepareMfcc},
};

}  // namespace

std::span<const OpDefinition> FftOpDefs() { return kDefs; }

}  // namespace kiln::exec
