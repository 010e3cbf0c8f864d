// CPU feature detection and the environment's ISA cap (include/kiln/exec/cpu_isa.h).
#include "kiln/exec/cpu_isa.h"

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <cstdlib>

namespace kiln::exec {
namespace {

struct Cap {
  CpuIsa isa;
  std::string source;  // "" when uncapped
  bool kiln = false;   // set by KILN_MAX_CPU_ISA
};

std::string Upper(std::string_view s) {
  std::string u(s);
  for (char& c : u) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return u;
}

// Reads kiln's names and oneDNN's (SSE41, AVX, AVX2, AVX2_VNNI, AVX512_CORE..., ALL). False
// for a value that is neither.
bool ParseIsa(std::string_view text, CpuIsa* isa, bool* no_cap) {
  const std::string v = Upper(text);
  *no_cap = v == "ALL" || v == "NATIVE" || v == "DEFAULT";
  if (*no_cap) return true;
  if (v.rfind("AVX512", 0) == 0 || v.rfind("AVX10", 0) == 0 || v == "X86-64-V4") {
    *isa = CpuIsa::kAvx512;
  } else if (v.rfind("AVX2", 0) == 0 || v == "X86-64-V3") {
    *isa = CpuIsa::kAvx2;
  } else if (v == "BASELINE" || v == "SSE2" || v == "SSE41" || v == "SSE4_1" || v == "AVX" ||
             v == "X86-64" || v == "X86-64-V2") {
    *isa = CpuIsa::kBaseline;
  } else {
    return false;
  }
  return true;
}

Cap ReadCap() {
  for (const char* name : {"KILN_MAX_CPU_ISA", "ONEDNN_MAX_CPU_ISA", "DNNL_MAX_CPU_ISA"}) {
    const char* value = std::getenv(name);
    if (value == nullptr || *value == '\0') continue;
    CpuIsa isa = CpuIsa::kAvx512;
    bool no_cap = false;
    if (!ParseIsa(value, &isa, &no_cap)) {
      std::fprintf(stderr,
                   "kiln: ignoring %s=%s: expected baseline, avx2, avx512 or all (or one of "
                   "oneDNN's names: SSE41, AVX2, AVX512_CORE, ...)\n",
                   name, value);
      continue;
    }
    if (no_cap) return {CpuIsa::kAvx512, ""};
    return {isa, std::string(name) + "=" + value, std::string_view(name) == "KILN_MAX_CPU_ISA"};
  }
  return {CpuIsa::kAvx512, ""};
}

const Cap& TheCap() {
  static const Cap cap = ReadCap();
  return cap;
}

}  // namespace

std::string_view CpuIsaName(CpuIsa isa) {
  switch (isa) {
#define KILN_X(e, name) \
  case CpuIsa::e:       \
    return name;
    KILN_CPU_ISAS(KILN_X)
#undef KILN_X
  }
  return "unknown";
}

CpuIsa DetectedCpuIsa() {
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
  // libgcc's (and compiler-rt's) feature bits include the OS check (XCR0) for AVX state.
  static const CpuIsa isa = [] {
    __builtin_cpu_init();
    const bool v3 = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") &&
                    __builtin_cpu_supports("bmi2");
    const bool v4 = v3 && __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
                    __builtin_cpu_supports("avx512cd") && __builtin_cpu_supports("avx512dq") &&
                    __builtin_cpu_supports("avx512vl");
    return v4 ? CpuIsa::kAvx512 : v3 ? CpuIsa::kAvx2 : CpuIsa::kBaseline;
  }();
  return isa;
#else
  return CpuIsa::kBaseline;
#endif
}

CpuIsa ActiveCpuIsa() {
  static const CpuIsa isa = std::min(DetectedCpuIsa(), TheCap().isa);
  return isa;
}

std::string CpuIsaCapSource() { return TheCap().source; }

bool CpuIsaCappedByKiln() { return TheCap().kiln; }

std::string CpuIsaSummary() {
  std::string s(CpuIsaName(ActiveCpuIsa()));
  if (ActiveCpuIsa() != DetectedCpuIsa())
    s += " (capped by " + CpuIsaCapSource() + "; the CPU has " +
         std::string(CpuIsaName(DetectedCpuIsa())) + ")";
  return s;
}

}  // namespace kiln::exec
