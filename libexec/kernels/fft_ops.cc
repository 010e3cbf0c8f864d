// The FFT family over the innermost 1, 2 or 3 dims: FFT/FFT2D/FFT3D and their inverses
// (complex to complex), RFFT/RFFT2D/RFFT3D (real to the fft_length[-1] / 2 + 1 non-negative
// frequencies of the last dim) and IRFFT/IRFFT2D/IRFFT3D (those frequencies back to a real
// signal of fft_length points). As in TensorFlow's raw ops, an input dim longer than what the
// transform reads is cropped and a shorter one is an error (tf.signal pads in Python before
// calling the op); the inverses are normalised by 1/n, as TF's are.
//
// The transforms are Eigen's TensorFFT (unsupported/Eigen/CXX11, the CPU FFT TensorFlow itself
// used before it moved to DUCC): radix-2 for powers of two, Bluestein for other lengths, so
// every length is O(n log n). It is in Eigen, which the runtime already depends on; FFTW would
// have been a new GPL-2+ dependency for every program linking kiln::exec. Both precisions
// transform in double and round once at the end, which keeps complex64 results within float
// rounding of TensorFlow's.
#include <algorithm>
#include <array>
#include <complex>
#include <string>
#include <unsupported/Eigen/CXX11/Tensor>
#include <vector>

#include "kernels/array_util.h"
#include "kernels/kernel_util.h"
#include "kernels/op_families.h"
#include "kernels/type_lists.h"

namespace kiln::exec {
namespace {

using Cd = std::complex<double>;
using Block = Eigen::Tensor<Cd, 4, Eigen::RowMajor>;  // [outer, d0, d1, d2]

enum class FftKind { kComplex, kRealForward, kRealInverse };

struct FftState : OpState {
  int rank = 1;  // transformed innermost dims: 1, 2 or 3
  FftKind kind = FftKind::kComplex;
  bool inverse = false;  // complex kind only
  DType in = DType::kComplex64;
  DType out = DType::kComplex64;
};

// How many points of transformed dim i (of `rank`) the transform reads from the input: the
// whole dim for complex transforms, fft_length for RFFT, and fft_length[-1] / 2 + 1 for the
// last dim of IRFFT.
int64_t ReadLength(FftKind kind, int i, int rank, int64_t dim, int64_t len) {
  if (kind == FftKind::kComplex) return dim;
  if (kind == FftKind::kRealInverse && i == rank - 1) return len == 0 ? 0 : len / 2 + 1;
  return len;
}

// The length of transformed dim i in the output.
int64_t OutLength(FftKind kind, int i, int rank, int64_t dim, int64_t len) {
  if (kind == FftKind::kComplex) return dim;
  if (kind == FftKind::kRealForward && i == rank - 1) return len == 0 ? 0 : len / 2 + 1;
  return len;
}

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

template <typename T>
inline Cd AsComplex(T v) {
  if constexpr (std::is_same_v<T, std::complex<float>> || std::is_same_v<T, Cd>) {
    return Cd(v.real(), v.imag());
  } else {
    return Cd(static_cast<double>(v), 0.0);
  }
}

template <typename T>
inline T FromComplex(const Cd& v) {
  if constexpr (std::is_same_v<T, std::complex<float>> || std::is_same_v<T, Cd>) {
    using R = typename T::value_type;
    return T(static_cast<R>(v.real()), static_cast<R>(v.imag()));
  } else {
    return static_cast<T>(v.real());
  }
}

// Transforms `b` along axes [first, last] of its four, one axis at a time (the DFT is separable).
void TransformAxes(Block& b, int first, int last, bool inverse) {
  for (int a = first; a <= last; ++a) {
    if (b.dimension(a) <= 1) continue;  // a 1-point DFT is the identity
    const Eigen::array<int, 1> axis{a};
    Block t = inverse ? Block(b.template fft<Eigen::BothParts, Eigen::FFT_REVERSE>(axis))
                      : Block(b.template fft<Eigen::BothParts, Eigen::FFT_FORWARD>(axis));
    b = std::move(t);
  }
}

// Runs the transform on `outer` blocks. `in` holds blocks of in_dims (three dims, leading ones
// for lower ranks), of which the first read_dims points are read; the output holds blocks of
// out_dims.
template <typename In, typename Out>
void RunFft(const FftState& st, const In* in, int64_t outer, const std::array<int64_t, 3>& in_dims,
            const std::array<int64_t, 3>& read_dims, const std::array<int64_t, 3>& out_dims,
            Out* out) {
  Block buf(outer, read_dims[0], read_dims[1], read_dims[2]);
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t a = 0; a < read_dims[0]; ++a)
      for (int64_t b = 0; b < read_dims[1]; ++b)
        for (int64_t c = 0; c < read_dims[2]; ++c)
          buf(o, a, b, c) = AsComplex(in[((o * in_dims[0] + a) * in_dims[1] + b) * in_dims[2] + c]);
  const int first = 4 - st.rank;
  if (st.kind == FftKind::kRealInverse) {
    // The dims before the last are complex inverses; the last is the Hermitian half of a real
    // signal: extend it by X[n - k] = conj(X[k]) and take the real part of the inverse (the
    // imaginary parts of X[0] and X[n / 2] drop out, as in a c2r transform).
    TransformAxes(buf, first, 2, /*inverse=*/true);
    const int64_t n = out_dims[2], half = read_dims[2];
    Block full(outer, out_dims[0], out_dims[1], n);
    for (int64_t o = 0; o < outer; ++o)
      for (int64_t a = 0; a < out_dims[0]; ++a)
        for (int64_t b = 0; b < out_dims[1]; ++b)
          for (int64_t k = 0; k < n; ++k)
            full(o, a, b, k) = k < half ? buf(o, a, b, k) : std::conj(buf(o, a, b, n - k));
    TransformAxes(full, 3, 3, /*inverse=*/true);
    buf = std::move(full);
  } else {
    TransformAxes(buf, first, 3, st.inverse);
  }
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t a = 0; a < out_dims[0]; ++a)
      for (int64_t b = 0; b < out_dims[1]; ++b)
        for (int64_t c = 0; c < out_dims[2]; ++c)
          out[((o * out_dims[0] + a) * out_dims[1] + b) * out_dims[2] + c] =
              FromComplex<Out>(buf(o, a, b, c));
}

Status ComputeFft(const KernelContext& ctx) {
  const auto& st = ctx.state<FftState>();
  const Tensor& x = ctx.input(0);
  const int rank = st.rank;
  if (x.rank() < rank) {
    return ctx.Error("input must have rank of at least ", rank, " but got shape ",
                     x.shape().ToString());
  }
  std::vector<int64_t> dims(x.shape().dims().begin(), x.shape().dims().end());
  std::vector<int64_t> out_dims = dims;
  std::array<int64_t, 3> in3{1, 1, 1}, read3{1, 1, 1}, out3{1, 1, 1};
  for (int i = 0; i < rank; ++i) {
    const size_t axis = dims.size() - rank + i;
    const int64_t d = dims[axis];
    int64_t l = d;
    if (st.kind != FftKind::kComplex) {
      const Tensor& fl = ctx.input(1);
      if (fl.rank() != 1 || fl.NumElements() != rank) {
        return ctx.Error("input 'fft_length' must have shape [", rank, "], got ",
                         fl.shape().ToString());
      }
      l = fl.data<int32_t>()[i];
      if (l < 0) return ctx.Error("fft_length[", i, "] must be >= 0, got ", l);
    }
    const int64_t need = ReadLength(st.kind, i, rank, d, l);
    if (d != 0 && d < need) {
      return ctx.Error("input dimension ", axis, " must have length of at least ", need,
                       " but got ", d);
    }
    out_dims[axis] = OutLength(st.kind, i, rank, d, l);
    in3[3 - rank + i] = d;
    read3[3 - rank + i] = need;
    out3[3 - rank + i] = out_dims[axis];
  }
  KILN_ASSIGN_OR_RETURN(Shape out_shape, Shape::FromDims(out_dims));
  KILN_ASSIGN_OR_RETURN(Tensor * out, ctx.AllocateOutput(0, out_shape));
  if (out->NumElements() == 0) return OkStatus();
  if (x.NumElements() == 0) {  // an empty signal transforms to zeros
    std::fill_n(static_cast<char*>(out->raw_data()), out->NumElements() * DTypeSize(st.out), 0);
    return OkStatus();
  }
  const int64_t outer = x.NumElements() / (in3[0] * in3[1] * in3[2]);
  switch (st.in) {
    case DType::kFloat:
      RunFft(st, x.data<float>(), outer, in3, read3, out3, out->data<std::complex<float>>());
      break;
    case DType::kDouble:
      RunFft(st, x.data<double>(), outer, in3, read3, out3, out->data<Cd>());
      break;
    case DType::kComplex64:
      if (st.out == DType::kFloat) {
        RunFft(st, x.data<std::complex<float>>(), outer, in3, read3, out3, out->data<float>());
      } else {
        RunFft(st, x.data<std::complex<float>>(), outer, in3, read3, out3,
               out->data<std::complex<float>>());
      }
      break;
    case DType::kComplex128:
      if (st.out == DType::kDouble) {
        RunFft(st, x.data<Cd>(), outer, in3, read3, out3, out->data<double>());
      } else {
        RunFft(st, x.data<Cd>(), outer, in3, read3, out3, out->data<Cd>());
      }
      break;
    default:
      return Internal("FFT: no kernel for dtype ", DTypeShortName(st.in));
  }
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
};

constexpr KernelEntry kCpu[] = {
    {"FFT", ComputeFft},   {"FFT2D", ComputeFft},   {"FFT3D", ComputeFft},
    {"IFFT", ComputeFft},  {"IFFT2D", ComputeFft},  {"IFFT3D", ComputeFft},
    {"RFFT", ComputeFft},  {"RFFT2D", ComputeFft},  {"RFFT3D", ComputeFft},
    {"IRFFT", ComputeFft}, {"IRFFT2D", ComputeFft}, {"IRFFT3D", ComputeFft},
};

}  // namespace

std::span<const OpDefinition> FftOpDefs() { return kDefs; }
std::span<const KernelEntry> FftCpuKernels() { return kCpu; }

}  // namespace kiln::exec
