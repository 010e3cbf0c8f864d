// The CPU kernels of the ops in kernels/fft_ops.cc.
//
// The 1-D transforms are planned once per call and length (Dft below), then run on every line
// of every transformed axis: mixed radix (4, 2, 3, 5, ... as kissfft does) for lengths whose
// prime factors are small, Bluestein's chirp-z transform through a 5-smooth one for the
// others, so every length is O(n log n). Eigen's TensorFFT, used before, planned every line
// again (twiddles, and for lengths that are not powers of two a whole Bluestein setup), which
// made an STFT with fft_length 257 or 300 some 30-80 times slower than TensorFlow. Both
// precisions transform in double and round once at the end, which keeps complex64 results
// within float rounding of TensorFlow's.
#include "kernels/fft_ops.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <complex>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <type_traits>
#include <unsupported/Eigen/CXX11/Tensor>
#include <vector>

#include "kernels/kernel_util.h"
#include "kiln/exec/thread_pool.h"

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

// a * b without std::complex's operator*, which calls the out-of-line __muldc3 (its inf/NaN
// recovery, C99 Annex G) for every product: the products here are of finite twiddles.
inline Cd Mul(const Cd& a, const Cd& b) {
  return Cd(a.real() * b.real() - a.imag() * b.imag(), a.real() * b.imag() + a.imag() * b.real());
}

// A complex DFT of one length n (forward: X[k] = sum_j x[j] exp(-2 pi i j k / n); the inverse
// is scaled by 1 / n, as TensorFlow's), planned once and shared by every line of a call.
class Dft {
 public:
  explicit Dft(int64_t n) : n_(n) {
    int64_t m = n;
    while (m % 4 == 0) radices_.push_back(4), m /= 4;
    while (m % 2 == 0) radices_.push_back(2), m /= 2;
    for (int64_t p = 3; p * p <= m; p += 2)
      while (m % p == 0) radices_.push_back(p), m /= p;
    if (m > 1) radices_.push_back(m);
    // A generic radix-p pass costs p operations per point: large prime factors go to Bluestein.
    if (!radices_.empty() && *std::max_element(radices_.begin(), radices_.end()) > kMaxRadix) {
      InitBluestein();
      return;
    }
    twiddles_.resize(n);
    const double pi = std::acos(-1.0);
    for (int64_t k = 0; k < n; ++k) {
      const double a = -2 * pi * static_cast<double>(k) / static_cast<double>(n);
      twiddles_[k] = Cd(std::cos(a), std::sin(a));
    }
  }

  // Transforms line[0, n) in place; `scratch` is resized as needed (one per thread).
  void Transform(Cd* line, bool inverse, std::vector<Cd>& scratch) const {
    if (n_ <= 1) return;
    // The inverse is conj(DFT(conj(x))) / n.
    if (inverse)
      for (int64_t k = 0; k < n_; ++k) line[k] = std::conj(line[k]);
    if (bluestein_ != nullptr) {
      RunBluestein(line, scratch);
    } else {
      scratch.resize(n_);
      Work(scratch.data(), line, 1, 0);
      std::copy_n(scratch.data(), n_, line);
    }
    if (inverse) {
      const double scale = 1.0 / static_cast<double>(n_);
      for (int64_t k = 0; k < n_; ++k) line[k] = std::conj(line[k]) * scale;
    }
  }

 private:
  static constexpr int64_t kMaxRadix = 31;

  // out[0, n) = DFT(in[0], in[fstride], ...), the stage-th factor's pass over sub-transforms
  // of the later factors (decimation in time).
  void Work(Cd* out, const Cd* in, int64_t fstride, size_t stage) const {
    const int64_t p = radices_[stage];
    const int64_t m = n_ / fstride / p;
    if (m == 1) {
      for (int64_t j = 0; j < p; ++j) out[j] = in[j * fstride];
    } else {
      for (int64_t j = 0; j < p; ++j) Work(out + j * m, in + j * fstride, fstride * p, stage + 1);
    }
    const Cd* tw = twiddles_.data();
    if (p == 2) {
      for (int64_t k = 0; k < m; ++k) {
        const Cd t = Mul(out[k + m], tw[k * fstride]);
        out[k + m] = out[k] - t;
        out[k] += t;
      }
    } else if (p == 4) {
      for (int64_t k = 0; k < m; ++k) {
        const Cd s0 = Mul(out[k + m], tw[k * fstride]);
        const Cd s1 = Mul(out[k + 2 * m], tw[2 * k * fstride]);
        const Cd s2 = Mul(out[k + 3 * m], tw[3 * k * fstride]);
        const Cd s5 = out[k] - s1;
        const Cd a = out[k] + s1;
        const Cd s3 = s0 + s2, s4 = s0 - s2;
        out[k] = a + s3;
        out[k + 2 * m] = a - s3;
        out[k + m] = Cd(s5.real() + s4.imag(), s5.imag() - s4.real());      // s5 - i s4
        out[k + 3 * m] = Cd(s5.real() - s4.imag(), s5.imag() + s4.real());  // s5 + i s4
      }
    } else if (p == 3) {
      const double h = tw[fstride * m].imag();  // Im exp(-2 pi i / 3)
      for (int64_t k = 0; k < m; ++k) {
        const Cd s1 = Mul(out[k + m], tw[k * fstride]);
        const Cd s2 = Mul(out[k + 2 * m], tw[2 * k * fstride]);
        const Cd s3 = s1 + s2, s0 = (s1 - s2) * h;
        const Cd a = out[k] - s3 * 0.5;
        out[k] += s3;
        out[k + m] = Cd(a.real() - s0.imag(), a.imag() + s0.real());      // a + i s0
        out[k + 2 * m] = Cd(a.real() + s0.imag(), a.imag() - s0.real());  // a - i s0
      }
    } else if (p == 5) {
      const Cd ya = tw[fstride * m], yb = tw[2 * fstride * m];  // exp(-2 pi i / 5), its square
      for (int64_t k = 0; k < m; ++k) {
        const Cd s0 = out[k];
        const Cd s1 = Mul(out[k + m], tw[k * fstride]);
        const Cd s2 = Mul(out[k + 2 * m], tw[2 * k * fstride]);
        const Cd s3 = Mul(out[k + 3 * m], tw[3 * k * fstride]);
        const Cd s4 = Mul(out[k + 4 * m], tw[4 * k * fstride]);
        const Cd s7 = s1 + s4, s10 = s1 - s4, s8 = s2 + s3, s9 = s2 - s3;
        out[k] = s0 + s7 + s8;
        const Cd s5 = s0 + s7 * ya.real() + s8 * yb.real();
        const Cd s6(s10.imag() * ya.imag() + s9.imag() * yb.imag(),
                    -(s10.real() * ya.imag() + s9.real() * yb.imag()));
        out[k + m] = s5 - s6;
        out[k + 4 * m] = s5 + s6;
        const Cd s11 = s0 + s7 * yb.real() + s8 * ya.real();
        const Cd s12(-s10.imag() * yb.imag() + s9.imag() * ya.imag(),
                     s10.real() * yb.imag() - s9.real() * ya.imag());
        out[k + 2 * m] = s11 + s12;
        out[k + 3 * m] = s11 - s12;
      }
    } else {
      std::array<Cd, kMaxRadix> x;
      for (int64_t u = 0; u < m; ++u) {
        for (int64_t q = 0; q < p; ++q) x[q] = out[u + q * m];
        for (int64_t q1 = 0; q1 < p; ++q1) {
          const int64_t k = u + q1 * m;
          Cd acc = x[0];
          int64_t t = 0;
          for (int64_t q = 1; q < p; ++q) {
            t += fstride * k;  // fstride * k < n: one wrap at most
            if (t >= n_) t -= n_;
            acc += Mul(x[q], tw[t]);
          }
          out[k] = acc;
        }
      }
    }
  }

  // Bluestein: X[k] = c[k] sum_j (x[j] c[j]) conj(c[k - j]) with c[j] = exp(-i pi j^2 / n), the
  // convolution through a 5-smooth DFT of at least 2n - 1 points.
  void InitBluestein() {
    // the smallest length >= 2n - 1 with factors 2, 3 and 5 only (the fast butterflies)
    const auto smooth = [](int64_t v) {
      for (const int64_t p : {2, 3, 5})
        while (v % p == 0) v /= p;
      return v == 1;
    };
    int64_t m = 2 * n_ - 1;
    while (!smooth(m)) ++m;
    bluestein_ = std::make_unique<Dft>(m);
    const double pi = std::acos(-1.0);
    chirp_.resize(n_);
    // r = k^2 mod 2n, stepped as (k + 1)^2 = k^2 + 2k + 1: the angle stays exact for long
    // transforms
    for (int64_t k = 0, r = 0; k < n_; ++k) {
      const double a = -pi * static_cast<double>(r) / static_cast<double>(n_);
      chirp_[k] = Cd(std::cos(a), std::sin(a));
      r = (r + 2 * k + 1) % (2 * n_);
    }
    std::vector<Cd> b(m, Cd(0, 0)), scratch;
    b[0] = std::conj(chirp_[0]);
    for (int64_t k = 1; k < n_; ++k) b[k] = b[m - k] = std::conj(chirp_[k]);
    bluestein_->Transform(b.data(), /*inverse=*/false, scratch);
    kernel_ = std::move(b);
  }

  void RunBluestein(Cd* line, std::vector<Cd>& scratch) const {
    const int64_t m = bluestein_->n_;
    scratch.resize(2 * m);
    Cd* a = scratch.data();
    Cd* f = a + m;
    for (int64_t k = 0; k < n_; ++k) a[k] = Mul(line[k], chirp_[k]);
    std::fill(a + n_, a + m, Cd(0, 0));
    bluestein_->Work(f, a, 1, 0);
    // the inverse of the product, as conj(DFT(conj(.))) / m
    for (int64_t k = 0; k < m; ++k) f[k] = std::conj(Mul(f[k], kernel_[k]));
    bluestein_->Work(a, f, 1, 0);
    const double scale = 1.0 / static_cast<double>(m);
    for (int64_t k = 0; k < n_; ++k) line[k] = Mul(chirp_[k], std::conj(a[k])) * scale;
  }

  int64_t n_;
  std::vector<int64_t> radices_;
  std::vector<Cd> twiddles_;
  std::unique_ptr<Dft> bluestein_;  // the transform of the convolution
  std::vector<Cd> chirp_, kernel_;  // c[k], and the DFT of conj(c) wrapped around
};

// Transforms `b` along axes [first, last] of its four, one axis at a time (the DFT is separable),
// the lines of an axis split over the threads.
void TransformAxes(const ThreadPool& threads, Block& b, int first, int last, bool inverse) {
  const int64_t total = b.size();
  for (int a = first; a <= last; ++a) {
    const int64_t len = b.dimension(a);
    if (len <= 1) continue;  // a 1-point DFT is the identity
    int64_t stride = 1;
    for (int d = a + 1; d < 4; ++d) stride *= b.dimension(d);
    const Dft dft(len);
    Cd* data = b.data();
    const int64_t lines = total / len;
    threads.ParallelFor(lines, std::max<int64_t>(1, 16384 / len), [&](int64_t begin, int64_t end) {
      std::vector<Cd> line(stride == 1 ? 0 : len), scratch;
      for (int64_t l = begin; l < end; ++l) {
        Cd* base = data + (l / stride) * len * stride + l % stride;
        if (stride == 1) {
          dft.Transform(base, inverse, scratch);
          continue;
        }
        for (int64_t k = 0; k < len; ++k) line[k] = base[k * stride];
        dft.Transform(line.data(), inverse, scratch);
        for (int64_t k = 0; k < len; ++k) base[k * stride] = line[k];
      }
    });
  }
}

// The last axis of `b` when its lines are real (forward) or Hermitian with real inverses
// (inverse; only the real parts of the results are kept): two lines ride in one complex
// transform, z = x1 + i x2, which halves the work. Forward: X1[k] = (Z[k] + conj(Z[n - k])) / 2,
// X2[k] = (Z[k] - conj(Z[n - k])) / 2i; inverse: x1 = Re(z), x2 = Im(z).
void TransformRealLines(const ThreadPool& threads, Block& b, bool inverse) {
  const int64_t len = b.dimension(3);
  if (len <= 1) return;
  const int64_t lines = b.size() / len, pairs = (lines + 1) / 2;
  const Dft dft(len);
  Cd* data = b.data();
  threads.ParallelFor(pairs, std::max<int64_t>(1, 8192 / len), [&](int64_t begin, int64_t end) {
    std::vector<Cd> z(len), scratch;
    for (int64_t p = begin; p < end; ++p) {
      Cd* l1 = data + 2 * p * len;
      Cd* l2 = 2 * p + 1 < lines ? l1 + len : nullptr;
      for (int64_t k = 0; k < len; ++k) {
        const Cd v2 = l2 != nullptr ? l2[k] : Cd(0, 0);
        z[k] = inverse ? Cd(l1[k].real() - v2.imag(), l1[k].imag() + v2.real())  // x1 + i x2
                       : Cd(l1[k].real(), v2.real());
      }
      dft.Transform(z.data(), inverse, scratch);
      if (inverse) {
        for (int64_t k = 0; k < len; ++k) l1[k] = Cd(z[k].real(), 0);
        if (l2 != nullptr)
          for (int64_t k = 0; k < len; ++k) l2[k] = Cd(z[k].imag(), 0);
        continue;
      }
      // in plain doubles: a Cd temporary here compiled to a stack round trip per point
      const double* zd = reinterpret_cast<const double*>(z.data());
      for (int64_t k = 0; k < len; ++k) {
        const int64_t r = k == 0 ? 0 : len - k;
        const double ur = zd[2 * k], ui = zd[2 * k + 1], wr = zd[2 * r], wi = -zd[2 * r + 1];
        l1[k] = Cd(0.5 * (ur + wr), 0.5 * (ui + wi));
        if (l2 != nullptr) l2[k] = Cd(0.5 * (ui - wi), -0.5 * (ur - wr));
      }
    }
  });
}

// Runs the transform on `outer` blocks. `in` holds blocks of in_dims (three dims, leading ones
// for lower ranks), of which the first read_dims points are read; the output holds blocks of
// out_dims.
template <typename In, typename Out>
void RunFft(const ThreadPool& threads, const FftState& st, const In* in, int64_t outer,
            const std::array<int64_t, 3>& in_dims, const std::array<int64_t, 3>& read_dims,
            const std::array<int64_t, 3>& out_dims, Out* out) {
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
    // imaginary parts of X[0] and X[n / 2] drop out, as in a c2r transform: zeroed here).
    TransformAxes(threads, buf, first, 2, /*inverse=*/true);
    const int64_t n = out_dims[2], half = read_dims[2];
    Block full(outer, out_dims[0], out_dims[1], n);
    for (int64_t o = 0; o < outer; ++o)
      for (int64_t a = 0; a < out_dims[0]; ++a)
        for (int64_t b = 0; b < out_dims[1]; ++b)
          for (int64_t k = 0; k < n; ++k) {
            const Cd v = k < half ? buf(o, a, b, k) : std::conj(buf(o, a, b, n - k));
            // Im X[0] and Im X[n / 2] would leak into the paired line (TransformRealLines)
            full(o, a, b, k) = k == 0 || 2 * k == n ? Cd(v.real(), 0) : v;
          }
    TransformRealLines(threads, full, /*inverse=*/true);
    buf = std::move(full);
  } else if (st.kind == FftKind::kRealForward) {
    TransformRealLines(threads, buf, /*inverse=*/false);  // the real axis first
    TransformAxes(threads, buf, first, 2, /*inverse=*/false);
  } else {
    TransformAxes(threads, buf, first, 3, st.inverse);
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
      RunFft(ctx.threads(), st, x.data<float>(), outer, in3, read3, out3,
             out->data<std::complex<float>>());
      break;
    case DType::kDouble:
      RunFft(ctx.threads(), st, x.data<double>(), outer, in3, read3, out3, out->data<Cd>());
      break;
    case DType::kComplex64:
      if (st.out == DType::kFloat) {
        RunFft(ctx.threads(), st, x.data<std::complex<float>>(), outer, in3, read3, out3,
               out->data<float>());
      } else {
        RunFft(ctx.threads(), st, x.data<std::complex<float>>(), outer, in3, read3, out3,
               out->data<std::complex<float>>());
      }
      break;
    case DType::kComplex128:
      if (st.out == DType::kDouble) {
        RunFft(ctx.threads(), st, x.data<Cd>(), outer, in3, read3, out3, out->data<double>());
      } else {
        RunFft(ctx.threads(), st, x.data<Cd>(), outer, in3, read3, out3, out->data<Cd>());
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
  TransformRealLines(ctx.threads(), buf, /*inverse=*/false);
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
  if (!s.ok()) {
    return ctx.Error("Mfcc initialization failed for channel count ", bins, " and sample rate ",
                     rate, ": ", s.message());
  }
  if (bank.end >= bins) {
    // An upper limit past the last bin (above the Nyquist frequency): TF's filterbank logs
    // "Input too short to compute filterbank" for each frame and leaves its mel energies
    // empty, so the DCT gives zeros. The same zeros here, and one warning per node.
    if (!st.warned_short.exchange(true))
      std::fprintf(stderr,
                   "kiln: warning: node '%.*s' (Mfcc): upper_frequency_limit %g needs spectrogram "
                   "bin %lld of %lld at sample rate %d; its output is zeros, as TensorFlow's\n",
                   static_cast<int>(ctx.node_name().size()), ctx.node_name().data(), st.upper,
                   static_cast<long long>(bank.end), static_cast<long long>(bins), rate);
    KILN_ASSIGN_OR_RETURN(Tensor * zeros, ctx.AllocateOutput(0, Shape{channels, frames, k}));
    std::fill_n(zeros->data<float>(), zeros->NumElements(), 0.0f);
    return OkStatus();
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
