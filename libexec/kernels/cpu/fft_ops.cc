// The CPU kernels of the ops in kernels/fft_ops.cc.
//
// The transforms are Eigen's TensorFFT (unsupported/Eigen/CXX11, the CPU FFT TensorFlow itself
// used before it moved to DUCC): radix-2 for powers of two, Bluestein for other lengths, so
// every length is O(n log n). It is in Eigen, which the runtime already depends on; FFTW would
// have been a new GPL-2+ dependency for every program linking kiln::exec. Both precisions
// transform in double and round once at the end, which keeps complex64 results within float
// rounding of TensorFlow's.
#include "kernels/fft_ops.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <complex>
#include <cstdint>
#include <type_traits>
#include <unsupported/Eigen/CXX11/Tensor>
#include <vector>

#include "kernels/kernel_util.h"

namespace kiln::exec {
namespace {

using fft::FftKind;
using fft::FftState;
using fft::MfccState;
using fft::OutLength;
using fft::ReadLength;
using fft::SpectrogramState;

using Cd = std::complex<double>;
using Block = Eigen::Tensor<Cd, 4, Eigen::RowMajor>;  // [outer, d0, d1, d2]

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

// ---- AudioSpectrogram --------------------------------------------------------------------------

// [channels, frames, fft / 2 + 1]: |DFT|^2 (or |DFT|) of each window of the channel's samples,
// weighted by a periodic Hann window; the transform in double, as TF's.
Status ComputeSpectrogram(const KernelContext& ctx) {
  const auto& st = ctx.state<SpectrogramState>();
  const Tensor& x = ctx.input(0);
  if (x.rank() != 2) return ctx.Error("input must be 2-dimensional, got ", x.shape().ToString());
  const int64_t samples = x.dim(0), channels = x.dim(1);
  int64_t fft = 1;
  while (fft < st.window) fft *= 2;
  const int64_t bins = fft / 2 + 1;
  const int64_t frames = samples < st.window ? 0 : 1 + (samples - st.window) / st.stride;
  KILN_ASSIGN_OR_RETURN(Tensor * out, ctx.AllocateOutput(0, Shape{channels, frames, bins}));
  if (out->NumElements() == 0) return OkStatus();
  const double pi = std::atan(1.0) * 4;
  std::vector<double> hann(st.window);
  for (int64_t i = 0; i < st.window; ++i)
    hann[i] =
        0.5 - 0.5 * std::cos(2 * pi * static_cast<double>(i) / static_cast<double>(st.window));
  Block buf(channels * frames, 1, 1, fft);
  buf.setZero();
  const float* in = x.data<float>();
  for (int64_t c = 0; c < channels; ++c)
    for (int64_t f = 0; f < frames; ++f)
      for (int64_t j = 0; j < st.window; ++j)
        buf(c * frames + f, 0, 0, j) = Cd(in[(f * st.stride + j) * channels + c] * hann[j], 0.0);
  TransformAxes(buf, 3, 3, /*inverse=*/false);
  float* o = out->data<float>();
  for (int64_t r = 0; r < channels * frames; ++r)
    for (int64_t k = 0; k < bins; ++k) {
      const Cd v = buf(r, 0, 0, k);
      const auto power = static_cast<float>(v.real() * v.real() + v.imag() * v.imag());
      o[r * bins + k] = st.magnitude_squared ? power : std::sqrt(power);
    }
  return OkStatus();
}

// ---- Mfcc ------------------------------------------------------------------------------------

double FreqToMel(double freq) { return 1127.0 * std::log1p(freq / 700.0); }

// TF's MfccMelFilterbank: each FFT bin between the limits (DC excluded) adds its magnitude to
// the falling side of one triangle and the rising side of the next.
struct MelFilterbank {
  int64_t channels = 0, start = 0, end = 0;
  std::vector<int64_t> band;  // per bin: the channel whose falling side it is on (-1, -2 unused)
  std::vector<double> weight;

  Status Init(int64_t bins, double rate, int64_t n, double lower, double upper) {
    if (n < 1) return InvalidArgument("filterbank_channel_count must be positive, got ", n);
    if (rate <= 0) return InvalidArgument("sample rate must be positive, got ", rate);
    if (bins < 2) return InvalidArgument("the spectrogram must have more than 1 bin, got ", bins);
    if (lower < 0) return InvalidArgument("lower_frequency_limit must be nonnegative");
    if (upper <= lower) {
      return InvalidArgument("upper_frequency_limit must be greater than lower_frequency_limit");
    }
    channels = n;
    std::vector<double> center(n + 1);
    const double mel_low = FreqToMel(lower), mel_hi = FreqToMel(upper);
    const double spacing = (mel_hi - mel_low) / static_cast<double>(n + 1);
    for (int64_t i = 0; i < n + 1; ++i) center[i] = mel_low + spacing * static_cast<double>(i + 1);
    const double hz_per_bin = 0.5 * rate / static_cast<double>(bins - 1);
    start = static_cast<int64_t>(1.5 + lower / hz_per_bin);
    end = static_cast<int64_t>(upper / hz_per_bin);
    band.assign(bins, -2);
    weight.assign(bins, 0.0);
    int64_t channel = 0;
    for (int64_t i = 0; i < bins; ++i) {
      if (i < start || i > end) continue;
      const double melf = FreqToMel(static_cast<double>(i) * hz_per_bin);
      while (channel < n && center[channel] < melf) ++channel;
      band[i] = channel - 1;
      weight[i] = band[i] >= 0
                      ? (center[band[i] + 1] - melf) / (center[band[i] + 1] - center[band[i]])
                      : (center[0] - melf) / (center[0] - mel_low);
    }
    return OkStatus();
  }

  // Mel energies of one frame of squared magnitudes (bins past `end` must exist).
  void Compute(const float* frame, std::vector<double>* out) const {
    out->assign(channels, 0.0);
    for (int64_t i = start; i <= end; ++i) {
      const double v = std::sqrt(static_cast<double>(frame[i]));
      const double weighted = v * weight[i];
      int64_t c = band[i];
      if (c >= 0) (*out)[c] += weighted;
      ++c;
      if (c < channels) (*out)[c] += v - weighted;
    }
  }
};

// [channels, frames, dct_coefficient_count]: the DCT-II (orthonormal scale sqrt(2 / N)) of the
// log mel energies (floored at 1e-12) of each spectrogram frame.
Status ComputeMfcc(const KernelContext& ctx) {
  const auto& st = ctx.state<MfccState>();
  const Tensor& spec = ctx.input(0);
  if (spec.rank() != 3) {
    return ctx.Error("spectrogram must be 3-dimensional, got ", spec.shape().ToString());
  }
  if (ctx.input(1).rank() != 0) {
    return ctx.Error("Input sample_rate should be a scalar tensor, got ",
                     ctx.input(1).shape().ToString(), " instead.");
  }
  const int64_t bins = spec.dim(2), frames = spec.dim(1), channels = spec.dim(0);
  const int32_t rate = ctx.input(1).scalar<int32_t>();
  MelFilterbank bank;
  Status s = bank.Init(bins, rate, st.filterbank_channels, st.lower, st.upper);
  const int64_t n = st.filterbank_channels, k = st.dct_coefficients;
  if (s.ok() && (k < 1 || k > n)) {
    s = InvalidArgument("dct_coefficient_count must be in [1, ", n, "], got ", k);
  }
  if (s.ok() && bank.end >= bins) {
    s = InvalidArgument("the upper frequency limit needs bin ", bank.end, " of ", bins);
  }
  if (!s.ok()) {
    return ctx.Error("Mfcc initialization failed for channel count ", bins, " and sample rate ",
                     rate, ": ", s.message());
  }
  std::vector<double> cosines(k * n);
  const double pi = std::atan(1.0) * 4, norm = std::sqrt(2.0 / static_cast<double>(n));
  for (int64_t i = 0; i < k; ++i)
    for (int64_t j = 0; j < n; ++j)
      cosines[i * n + j] = norm * std::cos(static_cast<double>(i) * (pi / static_cast<double>(n)) *
                                           (static_cast<double>(j) + 0.5));
  KILN_ASSIGN_OR_RETURN(Tensor * out, ctx.AllocateOutput(0, Shape{channels, frames, k}));
  const float* in = spec.data<float>();
  float* o = out->data<float>();
  std::vector<double> mel;
  for (int64_t f = 0; f < channels * frames; ++f) {
    bank.Compute(in + f * bins, &mel);
    for (double& v : mel) v = std::log(std::max(v, 1e-12));
    for (int64_t i = 0; i < k; ++i) {
      double sum = 0;
      for (int64_t j = 0; j < n; ++j) sum += cosines[i * n + j] * mel[j];
      o[f * k + i] = static_cast<float>(sum);
    }
  }
  return OkStatus();
}

constexpr KernelEntry kCpu[] = {
    {"FFT", ComputeFft},
    {"FFT2D", ComputeFft},
    {"FFT3D", ComputeFft},
    {"IFFT", ComputeFft},
    {"IFFT2D", ComputeFft},
    {"IFFT3D", ComputeFft},
    {"RFFT", ComputeFft},
    {"RFFT2D", ComputeFft},
    {"RFFT3D", ComputeFft},
    {"IRFFT", ComputeFft},
    {"IRFFT2D", ComputeFft},
    {"IRFFT3D", ComputeFft},
    {"AudioSpectrogram", ComputeSpectrogram},
    {"Mfcc", ComputeMfcc},
};

}  // namespace

std::span<const KernelEntry> FftCpuKernels() { return kCpu; }

}  // namespace kiln::exec
