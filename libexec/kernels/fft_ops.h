// Fft's op states and transform lengths, shared by its definitions and its CPU kernels.
#pragma once

#include <atomic>
#include <cstdint>

#include "kiln/core/dtype.h"
#include "kiln/exec/op_table.h"

namespace kiln::exec::fft {

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
inline int64_t ReadLength(FftKind kind, int i, int rank, int64_t dim, int64_t len) {
  if (kind == FftKind::kComplex) return dim;
  if (kind == FftKind::kRealInverse && i == rank - 1) return len == 0 ? 0 : len / 2 + 1;
  return len;
}

// The length of transformed dim i in the output.
inline int64_t OutLength(FftKind kind, int i, int rank, int64_t dim, int64_t len) {
  if (kind == FftKind::kComplex) return dim;
  if (kind == FftKind::kRealForward && i == rank - 1) return len == 0 ? 0 : len / 2 + 1;
  return len;
}

// ---- AudioSpectrogram --------------------------------------------------------------------------

struct SpectrogramState : OpState {
  int64_t window = 0, stride = 0;
  bool magnitude_squared = false;
};

// ---- Mfcc ------------------------------------------------------------------------------------

struct MfccState : OpState {
  double upper = 4000, lower = 20;
  int64_t filterbank_channels = 40, dct_coefficients = 13;
  // Said once per node: the upper limit lies past the spectrogram's last bin (zeros out).
  mutable std::atomic<bool> warned_short{false};
};

}  // namespace kiln::exec::fft
