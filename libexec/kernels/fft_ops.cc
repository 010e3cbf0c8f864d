// FFT (complex, innermost dim), RFFT (real, innermost dim, fft_length[0] points, the
// fft_length / 2 + 1 non-negative frequencies) and RFFT2D (the two innermost dims, fft_length
// [h, w], w / 2 + 1 columns out). As in TensorFlow's raw ops, an input dim longer than its
// fft_length is cropped and a shorter non-empty one is an error (tf.signal pads in Python
// before calling the op); empty inputs pass through.
//
// The transforms are Eigen's TensorFFT (unsupported/Eigen/CXX11, the CPU FFT TensorFlow itself
// used before it moved to DUCC): radix-2 for powers of two, Bluestein for other lengths, so
// every length is O(n log n). It is in Eigen, which the runtime already depends on; FFTW would
// have been a new GPL-2+ dependency for every program linking kiln::exec. Both precisions
// transform in double and round once at the end, which keeps complex64 results within float
// rounding of TensorFlow's.
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

struct FftState : OpState {
  int rank = 1;       // 1 or 2 transformed dims
  bool real = false;  // RFFT / RFFT2D
  DType in = DType::kComplex64;
  DType out = DType::kComplex64;
};

template <int kRank, bool kReal>
Status PrepareFft(PrepareContext& ctx) {
  KILN_RETURN_IF_ERROR(ctx.ExpectInputs(kReal ? 2 : 1));
  auto st = std::make_shared<FftState>();
  st->rank = kRank;
  st->real = kReal;
  if (kReal) {
    KILN_PREPARE_ASSIGN(ctx, st->in, ctx.attrs.GetType("Treal", DType::kFloat));
    KILN_RETURN_IF_ERROR(ExpectAttrDTypeIn(ctx, "Treal", st->in, {DType::kFloat, DType::kDouble}));
    KILN_PREPARE_ASSIGN(ctx, st->out, ctx.attrs.GetType("Tcomplex", DType::kComplex64));
    KILN_RETURN_IF_ERROR(
        ExpectAttrDTypeIn(ctx, "Tcomplex", st->out, {DType::kComplex64, DType::kComplex128}));
    const bool match = (st->in == DType::kFloat) == (st->out == DType::kComplex64);
    if (!match) {
      return ctx.Error("attrs 'Treal' ", DTypeShortName(st->in), " and 'Tcomplex' ",
                       DTypeShortName(st->out),
                       " do not match: expected float32 with complex64 or float64 with complex128");
    }
  } else {
    KILN_PREPARE_ASSIGN(ctx, st->in, ctx.attrs.GetType("Tcomplex", DType::kComplex64));
    KILN_RETURN_IF_ERROR(
        ExpectAttrDTypeIn(ctx, "Tcomplex", st->in, {DType::kComplex64, DType::kComplex128}));
    st->out = st->in;
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
        int64_t& d = dims[dims.size() - kRank + i];
        if (!len) {
          d = -1;
          continue;
        }
        const int64_t l = len->data<int32_t>()[i];
        if (l < 0) return ctx.Error("fft_length[", i, "] must be >= 0, got ", l);
        if (d > 0 && d < l) {
          return ctx.Error("input dimension ", dims.size() - kRank + i,
                           " must have length of at least ", l, " but got ", d);
        }
        d = (i == kRank - 1 && l != 0) ? l / 2 + 1 : l;
      }
      KILN_PREPARE_ASSIGN(ctx, out, PartialShape::FromDims(dims));
    }
  }
  ctx.outputs = {TensorSpec{st->out, out}};
  ctx.state = std::move(st);
  return OkStatus();
}

// Reads element i of a real or complex input as complex<double>.
template <typename In>
inline Cd AsComplex(In v) {
  if constexpr (std::is_same_v<In, std::complex<float>> || std::is_same_v<In, Cd>) {
    return Cd(v.real(), v.imag());
  } else {
    return Cd(static_cast<double>(v), 0.0);
  }
}

// Transforms `outer` blocks of [len0 x len1] points (len0 = 1 for 1-D) gathered from the input
// (whose block is [in0 x in1], cropped) and writes [len0 x keep1] of each into the output.
template <typename In, typename Out>
void RunFft(const In* in, int64_t outer, int64_t in0, int64_t in1, int64_t len0, int64_t len1,
            int64_t keep1, Out* out, int rank) {
  Eigen::Tensor<Cd, 3, Eigen::RowMajor> buf(outer, len0, len1);
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t r = 0; r < len0; ++r)
      for (int64_t c = 0; c < len1; ++c) buf(o, r, c) = AsComplex(in[(o * in0 + r) * in1 + c]);
  Eigen::Tensor<Cd, 3, Eigen::RowMajor> res;
  if (rank == 1) {
    res = buf.template fft<Eigen::BothParts, Eigen::FFT_FORWARD>(Eigen::array<int, 1>{2});
  } else {
    res = buf.template fft<Eigen::BothParts, Eigen::FFT_FORWARD>(Eigen::array<int, 2>{1, 2});
  }
  using R = typename Out::value_type;
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t r = 0; r < len0; ++r)
      for (int64_t c = 0; c < keep1; ++c) {
        const Cd v = res(o, r, c);
        out[(o * len0 + r) * keep1 + c] = Out(static_cast<R>(v.real()), static_cast<R>(v.imag()));
      }
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
  std::vector<int64_t> len(rank);
  for (int i = 0; i < rank; ++i) len[i] = dims[dims.size() - rank + i];
  if (st.real) {
    const Tensor& fl = ctx.input(1);
    if (fl.rank() != 1 || fl.NumElements() != rank) {
      return ctx.Error("input 'fft_length' must have shape [", rank, "], got ",
                       fl.shape().ToString());
    }
    for (int i = 0; i < rank; ++i) {
      const int64_t l = fl.data<int32_t>()[i];
      const int64_t d = dims[dims.size() - rank + i];
      if (l < 0) return ctx.Error("fft_length[", i, "] must be >= 0, got ", l);
      if (d != 0 && d < l) {
        return ctx.Error("input dimension ", dims.size() - rank + i,
                         " must have length of at least ", l, " but got ", d);
      }
      len[i] = l;
    }
  }
  std::vector<int64_t> out_dims = dims;
  for (int i = 0; i < rank; ++i) {
    const bool last = i == rank - 1;
    out_dims[dims.size() - rank + i] = st.real && last && len[i] != 0 ? len[i] / 2 + 1 : len[i];
  }
  KILN_ASSIGN_OR_RETURN(Shape out_shape, Shape::FromDims(out_dims));
  KILN_ASSIGN_OR_RETURN(Tensor * out, ctx.AllocateOutput(0, out_shape));
  if (x.NumElements() == 0 || out->NumElements() == 0) return OkStatus();
  const int64_t in1 = dims.back(), in0 = rank == 2 ? dims[dims.size() - 2] : 1;
  const int64_t outer = x.NumElements() / (in0 * in1);
  const int64_t len1 = len.back(), len0 = rank == 2 ? len[0] : 1;
  const int64_t keep1 = out_dims.back();
  switch (st.in) {
    case DType::kFloat:
      RunFft(x.data<float>(), outer, in0, in1, len0, len1, keep1, out->data<std::complex<float>>(),
             rank);
      break;
    case DType::kDouble:
      RunFft(x.data<double>(), outer, in0, in1, len0, len1, keep1, out->data<Cd>(), rank);
      break;
    case DType::kComplex64:
      RunFft(x.data<std::complex<float>>(), outer, in0, in1, len0, len1, keep1,
             out->data<std::complex<float>>(), rank);
      break;
    case DType::kComplex128:
      RunFft(x.data<Cd>(), outer, in0, in1, len0, len1, keep1, out->data<Cd>(), rank);
      break;
    default:
      return Internal("FFT: no kernel for dtype ", DTypeShortName(st.in));
  }
  return OkStatus();
}

constexpr OpDefinition kDefs[] = {
    {"FFT", "output", kOpFreshOutputs, PrepareFft<1, false>},
    {"RFFT", "output", kOpFreshOutputs, PrepareFft<1, true>},
    {"RFFT2D", "output", kOpFreshOutputs, PrepareFft<2, true>},
};

constexpr KernelEntry kCpu[] = {
    {"FFT", ComputeFft},
    {"RFFT", ComputeFft},
    {"RFFT2D", ComputeFft},
};

}  // namespace

std::span<const OpDefinition> FftOpDefs() { return kDefs; }
std::span<const KernelEntry> FftCpuKernels() { return kCpu; }

}  // namespace kiln::exec
