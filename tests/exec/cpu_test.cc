// The CPU's description: the ISA cap (kiln/exec/cpu_isa.h) and the cgroup CPU quota that the
// default thread count follows (device/cpu_quota.h).
#include <doctest/doctest.h>
#include <sched.h>

#include <Eigen/Core>
#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <map>
#include <string>
#include <tuple>
#include <vector>

#include "device/cpu_quota.h"
#include "kernels/cpu/onednn.h"
#include "kernels/cpu/vector_math.h"
#include "kiln/exec/cpu_isa.h"
#include "kiln/exec/thread_pool.h"

namespace kiln::exec {
namespace {

using internal::CgroupCpuLimit;

// A fake file system for CgroupCpuLimit.
internal::ReadTextFn Files(std::map<std::string, std::string> files) {
  return [files = std::move(files)](const std::string& path) -> std::optional<std::string> {
    auto it = files.find(path);
    if (it == files.end()) return std::nullopt;
    return it->second;
  };
}

constexpr std::string_view kV2Mount =
    "30 23 0:26 / /sys/fs/cgroup rw,nosuid shared:4 - cgroup2 cgroup2 rw,nsdelegate\n";

TEST_CASE("cpu quota: cgroup v2 cpu.max, rounded up, the smallest on the way up") {
  CHECK(CgroupCpuLimit(
            "0::/app.slice/x.service\n", kV2Mount,
            Files({{"/sys/fs/cgroup/app.slice/x.service/cpu.max", "150000 100000\n"}})) == 2);
  CHECK(CgroupCpuLimit("0::/a/b\n", kV2Mount,
                       Files({{"/sys/fs/cgroup/a/b/cpu.max", "400000 100000\n"},
                              {"/sys/fs/cgroup/a/cpu.max", "100000 100000\n"}})) == 1);
  // "max": no quota; nothing readable: no quota.
  CHECK_FALSE(
      CgroupCpuLimit("0::/a\n", kV2Mount, Files({{"/sys/fs/cgroup/a/cpu.max", "max 100000\n"}}))
          .has_value());
  CHECK_FALSE(CgroupCpuLimit("0::/a\n", kV2Mount, Files({})).has_value());
  // A quota below one CPU still gives one thread.
  CHECK(CgroupCpuLimit("0::/\n", kV2Mount, Files({{"/sys/fs/cgroup/cpu.max", "20000 100000"}})) ==
        1);
}

TEST_CASE("cpu quota: cgroup v1 cfs quota, and a container that sees its cgroup as the root") {
  const std::string mountinfo =
      "35 25 0:30 / /sys/fs/cgroup/cpu,cpuacct rw,nosuid - cgroup cgroup rw,cpu,cpuacct\n"
      "36 25 0:31 / /sys/fs/cgroup/memory rw,nosuid - cgroup cgroup rw,memory\n";
  CHECK(CgroupCpuLimit(
            "5:memory:/x\n4:cpu,cpuacct:/docker/abc\n", mountinfo,
            Files({{"/sys/fs/cgroup/cpu,cpuacct/docker/abc/cpu.cfs_quota_us", "300000\n"},
                   {"/sys/fs/cgroup/cpu,cpuacct/docker/abc/cpu.cfs_period_us", "100000\n"}})) == 3);
  CHECK_FALSE(CgroupCpuLimit("4:cpu,cpuacct:/\n", mountinfo,
                             Files({{"/sys/fs/cgroup/cpu,cpuacct/cpu.cfs_quota_us", "-1\n"},
                                    {"/sys/fs/cgroup/cpu,cpuacct/cpu.cfs_period_us", "100000\n"}}))
                  .has_value());
  // Inside the container the mount's root is the container's cgroup.
  const std::string inside =
      "35 25 0:30 /docker/abc /sys/fs/cgroup/cpu rw - cgroup cgroup rw,cpu\n";
  CHECK(CgroupCpuLimit("4:cpu:/docker/abc\n", inside,
                       Files({{"/sys/fs/cgroup/cpu/cpu.cfs_quota_us", "250000"},
                              {"/sys/fs/cgroup/cpu/cpu.cfs_period_us", "100000"}})) == 3);
}

TEST_CASE("default thread count: at least 1, at most the CPUs this process may run on") {
  cpu_set_t set;
  REQUIRE(sched_getaffinity(0, sizeof(set), &set) == 0);
  CHECK(DefaultThreadCount() >= 1);
  CHECK(DefaultThreadCount() <= CPU_COUNT(&set));
  if (auto quota = internal::ProcessCpuQuota()) CHECK(DefaultThreadCount() <= *quota);
}

TEST_CASE("cpu isa: the environment's cap holds for our loops and for oneDNN") {
  CHECK(ActiveCpuIsa() <= DetectedCpuIsa());
  MESSAGE("cpu isa: ", CpuIsaSummary());
  const char* cap = std::getenv("KILN_MAX_CPU_ISA");
  if (cap == nullptr || std::string(cap) != "avx2") return;
  CHECK(ActiveCpuIsa() <= CpuIsa::kAvx2);
  (void)onednn::Engine();  // applies the cap before oneDNN first chooses
  const auto effective = static_cast<unsigned>(dnnl::get_effective_cpu_isa());
  CHECK_MESSAGE((effective & ~static_cast<unsigned>(dnnl::cpu_isa::avx2)) == 0, "oneDNN runs ISA ",
                effective, " above AVX2 under KILN_MAX_CPU_ISA=avx2");
}

}  // namespace
}  // namespace kiln::exec

TEST_CASE("vector loops: GemvAccumulate adds x w to y, every column, in order") {
  // Widths that take full register blocks, single registers and scalar columns at every ISA
  // level (the test command runs this under the AVX2 and baseline caps too).
  for (const int64_t n : {1, 3, 16, 37, 128, 130, 192, 517}) {
    const int64_t k = 23;
    std::vector<float> x(k), w(k * n), y(n);
    for (int64_t j = 0; j < k; ++j) x[j] = 0.25f * static_cast<float>(j % 7) - 0.5f;
    for (int64_t i = 0; i < k * n; ++i) w[i] = static_cast<float>((i * 37) % 11) * 0.125f - 0.6f;
    for (int64_t c = 0; c < n; ++c) y[c] = static_cast<float>(c % 5);
    std::vector<float> want = y;
    for (int64_t c = 0; c < n; ++c)
      for (int64_t j = 0; j < k; ++j) want[c] += x[j] * w[j * n + c];
    kiln::exec::vmath::GemvAccumulate(x.data(), w.data(), n, k, n, y.data());
    for (int64_t c = 0; c < n; ++c) {
      INFO("n = " << n << ", column " << c);
      CHECK(y[c] == doctest::Approx(want[c]).epsilon(1e-6));
    }
  }
}

// The fused cells against the element-wise ops the graph runs (what the generic loop computes),
// bit for bit: whole vectors and a tail at every ISA level, a NaN kept.
TEST_CASE("vector loops: LstmCell and GruCell are the op-by-op cells, bit for bit") {
  namespace vm = kiln::exec::vmath;
  using vm::BinOp;
  for (const int64_t units : {1, 5, 16, 37, 64}) {
    INFO("units = " << units);
    auto values = [](int64_t n, int seed) {
      std::vector<float> v(n);
      for (int64_t i = 0; i < n; ++i)
        v[i] = static_cast<float>((i * 7 + seed * 13) % 29) * 0.37f - 5.1f;
      return v;
    };
    const std::vector<float> z = values(4 * units, 1), bias = values(4 * units, 2);
    std::vector<float> c = values(units, 3), h(units, 0.0f);
    c[units / 2] = std::numeric_limits<float>::quiet_NaN();
    // The LSTM op by op: z + b; i, f, o sigmoid, g tanh; c' = f c + i g; h = o tanh(c').
    std::vector<float> zb(4 * units), want_c(units), want_h(units), t(units), u(units);
    vm::Binary(BinOp::kAdd, z.data(), bias.data(), zb.data(), 4 * units);
    float* in = zb.data();
    float* forget = in + units;
    float* cand = in + 2 * units;
    float* out = in + 3 * units;
    vm::Sigmoid(in, in, units);
    vm::Sigmoid(forget, forget, units);
    vm::Tanh(cand, cand, units);
    vm::Sigmoid(out, out, units);
    vm::Binary(BinOp::kMul, forget, c.data(), t.data(), units);
    vm::Binary(BinOp::kMul, in, cand, u.data(), units);
    vm::Binary(BinOp::kAdd, t.data(), u.data(), want_c.data(), units);
    vm::Tanh(want_c.data(), t.data(), units);
    vm::Binary(BinOp::kMul, out, t.data(), want_h.data(), units);
    vm::LstmCell(z.data(), bias.data(), units, c.data(), h.data());
    CHECK(std::memcmp(c.data(), want_c.data(), sizeof(float) * units) == 0);
    CHECK(std::memcmp(h.data(), want_h.data(), sizeof(float) * units) == 0);

    // The GRU (reset_after) op by op.
    const std::vector<float> x = values(3 * units, 4), hu = values(3 * units, 5),
                             gb = values(6 * units, 6);
    std::vector<float> gh = values(units, 7), xb(3 * units), hb(3 * units), keep(units),
                       want(units);
    vm::Binary(BinOp::kAdd, x.data(), gb.data(), xb.data(), 3 * units);
    vm::Binary(BinOp::kAdd, hu.data(), gb.data() + 3 * units, hb.data(), 3 * units);
    float* zg = xb.data();
    float* rg = zg + units;
    float* hh = zg + 2 * units;
    vm::Binary(BinOp::kAdd, zg, hb.data(), zg, units);
    vm::Sigmoid(zg, zg, units);
    vm::Binary(BinOp::kAdd, rg, hb.data() + units, rg, units);
    vm::Sigmoid(rg, rg, units);
    vm::Binary(BinOp::kMul, rg, hb.data() + 2 * units, rg, units);
    vm::Binary(BinOp::kAdd, hh, rg, hh, units);
    vm::Tanh(hh, hh, units);
    vm::Binary(BinOp::kMul, zg, gh.data(), keep.data(), units);
    vm::BinaryScalarLeft(BinOp::kSub, 1.0f, zg, zg, units);
    vm::Binary(BinOp::kMul, zg, hh, zg, units);
    vm::Binary(BinOp::kAdd, keep.data(), zg, want.data(), units);
    vm::GruCell(x.data(), hu.data(), gb.data(), units, gh.data());
    CHECK(std::memcmp(gh.data(), want.data(), sizeof(float) * units) == 0);
  }
}

TEST_CASE("vector loops: AllFinite finds one NaN or infinity anywhere, in any block") {
  // Lengths around the vector widths and the 4096-value blocks; the bad value in the vector
  // part, in a partial vector's tail and in a later block.
  for (const int64_t n : {1, 7, 16, 33, 4096, 4100, 9001}) {
    std::vector<float> x(n);
    for (int64_t i = 0; i < n; ++i) x[i] = static_cast<float>(i % 13) * 1e30f - 6e30f;
    CHECK(kiln::exec::vmath::AllFinite(x.data(), n));
    for (const float bad :
         {std::numeric_limits<float>::quiet_NaN(), std::numeric_limits<float>::infinity(),
          -std::numeric_limits<float>::infinity()}) {
      for (const int64_t at : {int64_t{0}, n / 2, n - 1}) {
        std::vector<float> y = x;
        y[at] = bad;
        INFO("n = " << n << ", at " << at << ", value " << bad);
        CHECK_FALSE(kiln::exec::vmath::AllFinite(y.data(), n));
      }
    }
  }
  CHECK(kiln::exec::vmath::AllFinite(nullptr, 0));
}

// TF's FakeQuant rounding, vectorised: bit-identical to the scalar statements (quantize_ops.cc
// before vectorising; TF's kernel) for signed and unsigned ranges, both level formulas, values
// across and beyond the range, ties, infinities and NaN, in an array with a partial vector.
TEST_CASE("vector loops: FakeQuant levels and their bytes are the scalar form's, bit for bit") {
  std::vector<float> x;
  for (float v = -3.1f; v <= 3.1f; v += 0.0013f) x.push_back(v);
  for (float v : {0.0f, -0.0f, 1e-30f, std::numeric_limits<float>::infinity(),
                  -std::numeric_limits<float>::infinity(), std::numeric_limits<float>::quiet_NaN()})
    x.push_back(v);
  const auto n = static_cast<int64_t>(x.size());
  // (nudged min, max, levels): a symmetric narrow int8 range, an unsigned one, 4 bits.
  for (const auto& range : {std::tuple{-2.0f, 2.0f, 254.0f}, std::tuple{0.0f, 1.5f, 255.0f},
                            std::tuple{-0.75f, 1.25f, 15.0f}}) {
    // Plain variables: Clang 14's lambdas cannot capture structured bindings.
    const float lo = std::get<0>(range), hi = std::get<1>(range), levels = std::get<2>(range);
    const float scale = (hi - lo) / levels, inv = levels / (hi - lo);
    const float zero = std::floor(-lo * inv + 0.5f);
    for (const bool divide : {false, true}) {
      std::vector<float> got(x.size());
      kiln::exec::vmath::FakeQuant(x.data(), got.data(), n, lo, hi, scale, inv, zero, divide);
      // The integer kernels' bytes: the same levels (two's complement when signed), NaN 0.
      std::vector<uint8_t> bytes(x.size());
      if (!divide && levels >= 254)
        kiln::exec::vmath::QuantizeLevels(x.data(), bytes.data(), n, lo, hi, inv, zero);
      const auto level_of = [&](float v) {
        const float c = std::max(std::min(v, hi), lo) - lo;
        const float l = c * inv;
        return l - zero + 0.5f;
      };
      for (int64_t i = 0; i < n; ++i) {
        const float clamped = std::max(std::min(x[i], hi), lo) - lo;
        const float level = divide ? clamped / scale : clamped * inv;
        const float want = std::floor(level - zero + 0.5f) * scale;
        INFO("x = " << x[i] << ", range " << lo << ".." << hi << ", divide " << divide);
        if (std::isnan(want))
          CHECK(std::isnan(got[i]));
        else
          CHECK(std::bit_cast<uint32_t>(got[i]) == std::bit_cast<uint32_t>(want));
        if (!divide && levels >= 254) {
          const auto level = std::isnan(x[i]) ? 0 : static_cast<int>(std::floor(level_of(x[i])));
          CHECK(static_cast<int>(static_cast<int8_t>(bytes[i])) ==
                static_cast<int>(static_cast<int8_t>(static_cast<uint8_t>(level & 0xff))));
        }
      }
    }
  }
}

// Every float16 value widens as Eigen's float16 does, and narrowing agrees with Eigen's
// round-to-nearest-even on values across the whole range: normals, halfway cases, subnormals,
// overflow to infinity, NaN (any NaN: F16C keeps payload bits Eigen drops). bfloat16 likewise.
TEST_CASE("vector loops: float16 and bfloat16 conversions are Eigen's, at this ISA level") {
  std::vector<uint16_t> bits(1 << 16);
  for (size_t i = 0; i < bits.size(); ++i) bits[i] = static_cast<uint16_t>(i);
  std::vector<float> wide(bits.size());
  kiln::exec::vmath::HalfToFloat(bits.data(), wide.data(), static_cast<int64_t>(bits.size()));
  for (size_t i = 0; i < bits.size(); ++i) {
    const float want = static_cast<float>(Eigen::numext::bit_cast<Eigen::half>(bits[i]));
    if (std::isnan(want)) {
      CHECK(std::isnan(wide[i]));
    } else {
      CHECK_MESSAGE(std::bit_cast<uint32_t>(wide[i]) == std::bit_cast<uint32_t>(want), i);
    }
  }
  kiln::exec::vmath::BFloat16ToFloat(bits.data(), wide.data(), static_cast<int64_t>(bits.size()));
  for (size_t i = 0; i < bits.size(); ++i)
    CHECK(std::bit_cast<uint32_t>(wide[i]) == static_cast<uint32_t>(bits[i]) << 16);

  // Floats: every 4099th bit pattern (all exponents, both signs), each half value and the
  // midpoints next to it, the edges.
  std::vector<float> x;
  for (uint64_t b = 0; b <= 0xffffffffu; b += 4099) x.push_back(std::bit_cast<float>(uint32_t(b)));
  for (uint32_t h = 0; h < 0x7c00; ++h) {
    const auto f = std::bit_cast<uint32_t>(
        static_cast<float>(Eigen::numext::bit_cast<Eigen::half>(uint16_t(h))));
    for (uint32_t d : {0u, 1u, 0xfffu, 0x1000u, 0x1001u, 0x2000u}) {
      x.push_back(std::bit_cast<float>(f + d));
      x.push_back(-std::bit_cast<float>(f + d));
    }
  }
  for (float f : {65504.0f, 65519.99f, 65520.0f, 1e-8f, 2.98e-8f, 2.99e-8f,
                  std::numeric_limits<float>::infinity(), std::numeric_limits<float>::quiet_NaN(),
                  std::numeric_limits<float>::denorm_min()})
    x.push_back(f);
  std::vector<uint16_t> narrow(x.size());
  kiln::exec::vmath::FloatToHalf(x.data(), narrow.data(), static_cast<int64_t>(x.size()));
  for (size_t i = 0; i < x.size(); ++i) {
    const uint16_t want = Eigen::numext::bit_cast<uint16_t>(Eigen::half(x[i]));
    if (std::isnan(x[i])) {
      CHECK((narrow[i] & 0x7c00) == 0x7c00);
      CHECK((narrow[i] & 0x3ff) != 0);
    } else {
      CHECK_MESSAGE(narrow[i] == want, x[i]);
    }
  }
  kiln::exec::vmath::FloatToBFloat16(x.data(), narrow.data(), static_cast<int64_t>(x.size()));
  for (size_t i = 0; i < x.size(); ++i)
    CHECK_MESSAGE(narrow[i] == Eigen::numext::bit_cast<uint16_t>(Eigen::bfloat16(x[i])), x[i]);
}

TEST_CASE("vector loops: Erf and Erfc within a few ulp of the double functions, edges kept") {
  // Every region of the approximation (|x| < 1, 1..2, 2..10, the underflow) on both signs, in
  // an array whose length leaves a partial vector at every ISA level.
  std::vector<float> x;
  for (float v = -10.5f; v <= 10.5f; v += 0.00390625f * 3.0f) x.push_back(v);
  const float inf = std::numeric_limits<float>::infinity();
  x.insert(x.end(), {0.0f, -0.0f, 1e-30f, -1e-30f, 1.0f, -1.0f, 2.0f, inf, -inf});
  std::vector<float> erf(x.size()), erfc(x.size());
  kiln::exec::vmath::Erf(x.data(), erf.data(), static_cast<int64_t>(x.size()));
  kiln::exec::vmath::Erfc(x.data(), erfc.data(), static_cast<int64_t>(x.size()));
  for (size_t i = 0; i < x.size(); ++i) {
    INFO("x = " << x[i]);
    const double want_erf = std::erf(static_cast<double>(x[i]));
    const double want_erfc = std::erfc(static_cast<double>(x[i]));
    CHECK(std::abs(erf[i] - want_erf) <= 3e-7 * std::max(1e-30, std::abs(want_erf)) + 1e-45);
    // Relative in the tail, down to FLT_MIN (below it erfc may flush to 0).
    if (want_erfc >= 1.2e-38) {
      CHECK(std::abs(erfc[i] - want_erfc) <= 1e-6 * want_erfc);
    } else {
      CHECK(erfc[i] <= 1.2e-38f);
    }
  }
  const float nan = std::numeric_limits<float>::quiet_NaN();
  float n2[2] = {nan, nan};
  kiln::exec::vmath::Erf(n2, n2, 1);
  kiln::exec::vmath::Erfc(n2 + 1, n2 + 1, 1);
  CHECK(std::isnan(n2[0]));
  CHECK(std::isnan(n2[1]));
}
