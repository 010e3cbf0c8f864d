// The x86-64 instruction sets that kiln's own vectorised loops and oneDNN may use. Detected once
// per process and capped by the environment, so an AVX-512 machine can run (and be tested) as an
// AVX2 one: KILN_MAX_CPU_ISA=baseline|avx2|avx512 caps both our dispatch and oneDNN; when it is
// unset, oneDNN's own ONEDNN_MAX_CPU_ISA (AVX2, AVX512_CORE, ...) caps our dispatch too.
#pragma once

#include <string>
#include <string_view>

namespace kiln::exec {

// The one list of ISA levels, lowest first: X(enumerator, name).
#define KILN_CPU_ISAS(X)                                             \
  X(kBaseline, "baseline") /* x86-64 (SSE2), or a non-x86 machine */ \
  X(kAvx2, "avx2")         /* x86-64-v3: AVX2, FMA, BMI2 */          \
  X(kAvx512, "avx512")     /* x86-64-v4: AVX-512 F, BW, CD, DQ and VL */

enum class CpuIsa {
#define KILN_X(e, name) e,
  KILN_CPU_ISAS(KILN_X)
#undef KILN_X
};

std::string_view CpuIsaName(CpuIsa isa);
// What the CPU and the operating system support.
CpuIsa DetectedCpuIsa();
// What kernels use: DetectedCpuIsa() capped by the environment, fixed at the first call.
CpuIsa ActiveCpuIsa();
// The environment's cap, as text for a message ("" when none): "KILN_MAX_CPU_ISA=avx2".
std::string CpuIsaCapSource();
// Whether KILN_MAX_CPU_ISA set the cap (kiln then applies it to oneDNN too; oneDNN reads its
// own ONEDNN_MAX_CPU_ISA itself).
bool CpuIsaCappedByKiln();
// For benchmark headers: "avx512" or "avx2 (capped by KILN_MAX_CPU_ISA=avx2; the CPU has avx512)".
std::string CpuIsaSummary();

}  // namespace kiln::exec
