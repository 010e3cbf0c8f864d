// Op-tester cases of the random ops. A seeded node's first call draws from the start of its
// Philox stream (kernels/philox.h, checked against Random123's known answers and TensorFlow in
// kernels_random_test.cc and tests/tf): the references here take the raw 32-bit outputs block
// by block and turn them into values as TF's distributions do. Stateful ops advance between
// calls, so only the first single-op call is compared (NonDeterministic).
#include <algorithm>
#include <cmath>
#include <functional>

#include "kernels/philox.h"
#include "ops/array_ref.h"
#include "ops/op_cases.h"

namespace kiln::testing {
namespace {

using exec::random::Philox;

// The first n raw outputs of a generator, four per block.
std::vector<uint32_t> Raw(Philox gen, int64_t n) {
  std::vector<uint32_t> out;
  while (static_cast<int64_t>(out.size()) < n) {
    const Philox::Result r = gen();
    out.insert(out.end(), r.begin(), r.end());
  }
  return out;
}

// Uniform [0, 1) values from raw outputs: one per output (float), one per pair (double).
Tensor Uniforms(const Philox& gen, DType t, const Shape& s) {
  const int64_t n = s.num_elements();
  Tensor out(t, s);
  if (t == DType::kFloat) {
    const std::vector<uint32_t> raw = Raw(gen, n);
    for (int64_t i = 0; i < n; ++i) out.data<float>()[i] = exec::random::Uint32ToFloat(raw[i]);
  } else {
    const std::vector<uint32_t> raw = Raw(gen, 2 * n);
    for (int64_t i = 0; i < n; ++i)
      out.data<double>()[i] = exec::random::Uint64ToDouble(raw[2 * i], raw[2 * i + 1]);
  }
  return out;
}

// Normals: Box-Muller on pairs of outputs (float) or on two pairs (double).
Tensor Normals(const Philox& gen, DType t, const Shape& s) {
  const int64_t n = s.num_elements();
  Tensor out(t, s);
  const std::vector<uint32_t> raw = Raw(gen, 2 * n + 4);
  for (int64_t i = 0; i < n; i += 2) {
    if (t == DType::kFloat) {
      float a, b;
      exec::random::BoxMullerFloat(raw[i], raw[i + 1], &a, &b);
      out.data<float>()[i] = a;
      if (i + 1 < n) out.data<float>()[i + 1] = b;
    } else {
      double a, b;
      exec::random::BoxMullerDouble(raw[2 * i], raw[2 * i + 1], raw[2 * i + 2], raw[2 * i + 3], &a,
                                    &b);
      out.data<double>()[i] = a;
      if (i + 1 < n) out.data<double>()[i + 1] = b;
    }
  }
  return out;
}

Tensor ShapeInput(const Shape& s) {
  std::vector<int32_t> dims(s.dims().begin(), s.dims().end());
  return Make<int32_t>(dims, Shape{static_cast<int64_t>(dims.size())});
}

// TF's truncated normals: group g (kCount values) starts kCount * 64 blocks into the stream and
// takes Box-Muller pairs (float) or quads (double) until kCount fall within (-2, 2).
Tensor TruncatedNormals(const Philox& base, DType t, const Shape& s) {
  const int64_t n = s.num_elements();
  const bool f32 = t == DType::kFloat;
  const int count = f32 ? 4 : 2;
  Tensor out(t, s);
  for (int64_t g = 0; g * count < n; ++g) {
    Philox gen = base;
    gen.Skip(static_cast<uint64_t>(g) * count * 64);
    const std::vector<uint32_t> raw = Raw(gen, 4096);
    size_t next = 0;
    for (int64_t k = g * count; k < std::min<int64_t>(n, (g + 1) * count);) {
      double v[2];
      if (f32) {
        float a, b;
        exec::random::BoxMullerFloat(raw[next], raw[next + 1], &a, &b);
        next += 2;
        v[0] = a;
        v[1] = b;
      } else {
        exec::random::BoxMullerDouble(raw[next], raw[next + 1], raw[next + 2], raw[next + 3], &v[0],
                                      &v[1]);
        next += 4;
      }
      for (double x : v) {
        if (std::abs(x) >= 2 || k >= std::min<int64_t>(n, (g + 1) * count)) continue;
        if (f32)
          out.data<float>()[k++] = static_cast<float>(x);
        else
          out.data<double>()[k++] = x;
      }
    }
  }
  return out;
}

// Integers from raw bits: lo + bits % range, or every bit pattern (full range).
Tensor Integers(const Philox& gen, DType t, const Shape& s, int64_t lo, int64_t hi, bool full) {
  const int64_t n = s.num_elements();
  const bool wide = t == DType::kInt64 || t == DType::kUInt64;
  const std::vector<uint32_t> raw = Raw(gen, 2 * n);
  Tensor out(t, s);
  for (int64_t i = 0; i < n; ++i) {
    const uint64_t bits = wide ? raw[2 * i] | (uint64_t{raw[2 * i + 1]} << 32) : raw[i];
    const uint64_t v =
        full ? bits : static_cast<uint64_t>(lo) + bits % static_cast<uint64_t>(hi - lo);
    if (t == DType::kInt32) out.data<int32_t>()[i] = static_cast<int32_t>(v);
    if (t == DType::kInt64) out.data<int64_t>()[i] = static_cast<int64_t>(v);
    if (t == DType::kUInt32) out.data<uint32_t>()[i] = static_cast<uint32_t>(v);
    if (t == DType::kUInt64) out.data<uint64_t>()[i] = v;
  }
  return out;
}

// The key and counter tensors of a generator, as StatelessRandomGetKeyCounter writes them.
std::vector<Tensor> KeyCounter(const Philox& gen) {
  auto join = [](uint32_t lo, uint32_t hi) { return lo | (uint64_t{hi} << 32); };
  return {Make<uint64_t>({join(gen.key()[0], gen.key()[1])}, {1}),
          Make<uint64_t>(
              {join(gen.counter()[0], gen.counter()[1]), join(gen.counter()[2], gen.counter()[3])},
              {2})};
}

// Stateless cases: V1 ops take the seed; V2 ops the key, counter and algorithm it gives.
void AddStatelessCases(std::vector<OpCase>& c) {
  const Tensor seed = Make<int64_t>({17, -4}, {2});
  const Philox gen = exec::random::StatelessGenerator(17, static_cast<uint64_t>(-4));
  const std::vector<Tensor> kc = KeyCounter(gen);
  for (bool alg : {false, true}) {
    OpCaseBuilder b(alg ? "StatelessRandomGetKeyCounterAlg" : "StatelessRandomGetKeyCounter");
    b.Type("Tseed", DType::kInt64).Input(seed).Reference([kc, alg](const std::vector<Tensor>&) {
      std::vector<Tensor> out = kc;
      if (alg) out.push_back(Tensor::Scalar<int32_t>(1));
      return out;
    });
    c.push_back(b.Build());
  }
  auto add = [&](const std::string& op, bool v2, DType t, const Shape& s,
                 std::function<Tensor()> ref, double tol, std::vector<Tensor> extra = {}) {
    OpCaseBuilder b(op);
    b.Type("dtype", t).Type(v2 ? "Tshape" : "T", DType::kInt32).ConstInput(ShapeInput(s));
    if (v2) {
      b.Input(kc[0]).Input(kc[1]).Input(Tensor::Scalar<int32_t>(1));
    } else {
      b.Type("Tseed", DType::kInt64).Input(seed);
    }
    for (const Tensor& e : extra) b.Input(e);
    c.push_back(
        b.Reference1([ref](const std::vector<Tensor>&) { return ref(); }).Tolerance(tol).Build());
  };
  for (const Shape& s : {Shape{7}, Shape{3, 5}, Shape{0}, Shape{33, 10}}) {
    for (DType t : {DType::kFloat, DType::kDouble}) {
      add(
          "StatelessRandomUniformV2", true, t, s, [=] { return Uniforms(gen, t, s); }, 0);
      add(
          "StatelessRandomNormalV2", true, t, s, [=] { return Normals(gen, t, s); }, 1e-6);
      for (bool v2 : {false, true})
        add(
            v2 ? "StatelessTruncatedNormalV2" : "StatelessTruncatedNormal", v2, t, s,
            [=] { return TruncatedNormals(gen, t, s); }, 1e-6);
    }
    for (DType t : {DType::kInt32, DType::kInt64}) {
      const bool wide = t == DType::kInt64;
      const std::vector<Tensor> bounds = {
          wide ? Tensor::Scalar<int64_t>(-5) : Tensor::Scalar<int32_t>(-5),
          wide ? Tensor::Scalar<int64_t>(1000) : Tensor::Scalar<int32_t>(1000)};
      for (bool v2 : {false, true}) {
        add(
            v2 ? "StatelessRandomUniformIntV2" : "StatelessRandomUniformInt", v2, t, s,
            [=] { return Integers(gen, t, s, -5, 1000, false); }, 0, bounds);
        add(
            v2 ? "StatelessRandomUniformFullIntV2" : "StatelessRandomUniformFullInt", v2, t, s,
            [=] { return Integers(gen, t, s, 0, 0, true); }, 0);
      }
    }
    add(
        "StatelessRandomUniformFullIntV2", true, DType::kUInt64, s,
        [=] { return Integers(gen, DType::kUInt64, s, 0, 0, true); }, 0);
  }
  c.push_back(OpCaseBuilder("StatelessRandomGetAlg")
                  .Reference1([](const std::vector<Tensor>&) { return Tensor::Scalar<int32_t>(1); })
                  .Build());
}

}  // namespace

namespace {

// TruncatedNormal (stateful, seeded: TF's stream from the node's first call) and RandomShuffle
// (TF's swaps: size - 1 32-bit samples, row i swapped with i + sample % (size - i)).
void AddTruncatedAndShuffle(std::vector<OpCase>* c) {
  for (DType t : {DType::kFloat, DType::kDouble}) {
    for (const Shape& s : {Shape{7}, Shape{3, 5}, Shape{0}}) {
      c->push_back(OpCaseBuilder("TruncatedNormal",
                                 "TruncatedNormal " + DTypeShortName(t) + " " + s.ToString())
                       .Type("dtype", t)
                       .Type("T", DType::kInt32)
                       .Int("seed", 3)
                       .Int("seed2", 5)
                       .ConstInput(ShapeInput(s))
                       .Reference1([t, s](const std::vector<Tensor>&) {
                         return TruncatedNormals(Philox(3, 5), t, s);
                       })
                       .Tolerance(1e-6)
                       .NonDeterministic()
                       .Build());
    }
  }
  for (const Shape& s : {Shape{6}, Shape{4, 3}, Shape{1, 2}, Shape{}}) {
    for (DType t : {DType::kFloat, DType::kString}) {
      const Tensor x = Distinct(t, s);
      c->push_back(
          OpCaseBuilder("RandomShuffle", "RandomShuffle " + DTypeShortName(t) + " " + s.ToString())
              .T(t)
              .Int("seed", 9)
              .Int("seed2", 4)
              .Input(x)
              .Reference1([s](const std::vector<Tensor>& in) {
                if (s.rank() == 0 || s.dim(0) <= 1) return in[0];
                const int64_t n = s.dim(0), row = s.num_elements() / n;
                const std::vector<uint32_t> raw = Raw(Philox(9, 4), n - 1);
                std::vector<int64_t> perm(n);
                for (int64_t i = 0; i < n; ++i) perm[i] = i;
                for (int64_t i = 0; i + 1 < n; ++i)
                  std::swap(perm[i], perm[i + raw[i] % static_cast<uint32_t>(n - i)]);
                return RefMove(in[0], s, [&](const Index& o) {
                  return perm[o[0]] * row + (FlatOf(o, s) % row);
                });
              })
              .NonDeterministic()
              .Build());
    }
  }
}

// SampleDistortedBoundingBox, V2 and StatelessSampleDistortedBoundingBox: begin, size and
// bboxes as TensorFlow 2.21 gives them (tf.raw_ops, the same seeds; the stateful ops' first
// call). The crop depends on every draw and its float rounding, so TF's answer is the reference.
void AddDistortedBoxCases(std::vector<OpCase>* c) {
  const Tensor box = Make<float>({0.1f, 0.1f, 0.9f, 0.8f}, Shape{1, 1, 4});
  auto ints = [](DType t, const std::vector<int64_t>& v) {
    auto as = [&](auto zero) {
      using T = decltype(zero);
      std::vector<T> out;
      for (int64_t x : v) out.push_back(static_cast<T>(x));  // -1 wraps for uint8, as TF's T(-1)
      return Make<T>(out, Shape{3});
    };
    return t == DType::kUInt8 ? as(uint8_t{}) : t == DType::kInt64 ? as(int64_t{}) : as(int32_t{});
  };
  auto outputs = [ints](DType t, std::vector<int64_t> begin, std::vector<int64_t> size,
                        std::vector<float> bbox) {
    return [=](const std::vector<Tensor>&) {
      return std::vector<Tensor>{ints(t, begin), ints(t, size), Make<float>(bbox, Shape{1, 1, 4})};
    };
  };
  c->push_back(OpCaseBuilder("StatelessSampleDistortedBoundingBox",
                             "StatelessSampleDistortedBoundingBox box, seed [11, 22]")
                   .T(DType::kInt32)
                   .Type("Tseed", DType::kInt32)
                   .FloatList("aspect_ratio_range", {0.5f, 2.0f})
                   .FloatList("area_range", {0.1f, 1.0f})
                   .Input(Make<int32_t>({40, 30, 3}, Shape{3}))
                   .Input(box)
                   .Input(Make<float>({0.3f}, Shape{}))
                   .Input(Make<int32_t>({11, 22}, Shape{2}))
                   .Reference(outputs(DType::kInt32, {1, 7, 0}, {28, 21, -1},
                                      {0.025f, 7.0f / 30, 0.725f, 28.0f / 30}))
                   .Build());
  c->push_back(OpCaseBuilder("StatelessSampleDistortedBoundingBox",
                             "StatelessSampleDistortedBoundingBox no boxes, defaults")
                   .T(DType::kInt64)
                   .Type("Tseed", DType::kInt64)
                   .Bool("use_image_if_no_bounding_boxes", true)
                   .Input(Make<int64_t>({129, 257, 3}, Shape{3}))
                   .Input(Make<float>({}, Shape{1, 0, 4}))
                   .Input(Make<float>({0.1f}, Shape{}))
                   .Input(Make<int64_t>({1, 2}, Shape{2}))
                   .Reference(outputs(DType::kInt64, {54, 154, 0}, {66, 82, -1},
                                      {54.0f / 129, 154.0f / 257, 120.0f / 129, 236.0f / 257}))
                   .Build());
  c->push_back(
      OpCaseBuilder("SampleDistortedBoundingBoxV2", "SampleDistortedBoundingBoxV2 seed 3/5")
          .T(DType::kInt32)
          .Int("seed", 3)
          .Int("seed2", 5)
          .FloatList("aspect_ratio_range", {0.5f, 2.0f})
          .FloatList("area_range", {0.1f, 1.0f})
          .Input(Make<int32_t>({40, 30, 3}, Shape{3}))
          .Input(box)
          .Input(Make<float>({0.3f}, Shape{}))
          .Reference(
              outputs(DType::kInt32, {16, 5, 0}, {20, 22, -1}, {0.4f, 5.0f / 30, 0.9f, 27.0f / 30}))
          .NonDeterministic()
          .Build());
  c->push_back(OpCaseBuilder("SampleDistortedBoundingBox", "SampleDistortedBoundingBox uint8")
                   .T(DType::kUInt8)
                   .Int("seed", 7)
                   .Int("seed2", 9)
                   .Float("min_object_covered", 0.5f)
                   .Input(Make<uint8_t>({64, 48, 1}, Shape{3}))
                   .Input(box)
                   .Reference(outputs(DType::kUInt8, {0, 0, 0}, {45, 40, -1},
                                      {0.0f, 0.0f, 45.0f / 64, 40.0f / 48}))
                   .NonDeterministic()
                   .Build());
}

}  // namespace

std::vector<OpCase> RandomCases() {
  std::vector<OpCase> c;
  AddStatelessCases(c);
  for (const Shape& s : {Shape{7}, Shape{3, 5}, Shape{}, Shape{0, 2}, Shape{64, 1000}}) {
    for (DType t : {DType::kFloat, DType::kDouble}) {
      for (bool normal : {false, true}) {
        const std::string op = normal ? "RandomStandardNormal" : "RandomUniform";
        c.push_back(OpCaseBuilder(op)
                        .Type("dtype", t)
                        .Type("T", DType::kInt32)
                        .Int("seed", 3)
                        .Int("seed2", 5)
                        .ConstInput(ShapeInput(s))
                        .Reference1([t, normal, s](const std::vector<Tensor>&) {
                          const Philox gen(3, 5);
                          return normal ? Normals(gen, t, s) : Uniforms(gen, t, s);
                        })
                        .Tolerance(normal ? 1e-6 : 0)
                        .NonDeterministic()
                        .Build());
        const std::string sop = normal ? "StatelessRandomNormal" : "StatelessRandomUniform";
        c.push_back(OpCaseBuilder(sop)
                        .Type("dtype", t)
                        .Type("T", DType::kInt32)
                        .Type("Tseed", DType::kInt64)
                        .ConstInput(ShapeInput(s))
                        .Input(Make<int64_t>({17, -4}, {2}))
                        .Reference1([t, normal, s](const std::vector<Tensor>&) {
                          const Philox gen =
                              exec::random::StatelessGenerator(17, static_cast<uint64_t>(-4));
                          return normal ? Normals(gen, t, s) : Uniforms(gen, t, s);
                        })
                        .Tolerance(normal ? 1e-6 : 0)
                        .Build());
      }
    }
    // Integers in [lo, hi): a modulo of 32 (int32) or 64 (int64) raw bits.
    for (DType t : {DType::kInt32, DType::kInt64}) {
      const bool wide = t == DType::kInt64;
      c.push_back(OpCaseBuilder("RandomUniformInt")
                      .Type("Tout", t)
                      .Type("T", DType::kInt32)
                      .Int("seed", 11)
                      .Int("seed2", 2)
                      .ConstInput(ShapeInput(s))
                      .Input(wide ? Tensor::Scalar<int64_t>(-5) : Tensor::Scalar<int32_t>(-5))
                      .Input(wide ? Tensor::Scalar<int64_t>(1000) : Tensor::Scalar<int32_t>(1000))
                      .Reference1([wide, t, s](const std::vector<Tensor>&) {
                        const int64_t n = s.num_elements();
                        const std::vector<uint32_t> raw = Raw(Philox(11, 2), 2 * n);
                        Tensor out(t, s);
                        for (int64_t i = 0; i < n; ++i) {
                          if (wide) {
                            const uint64_t bits = raw[2 * i] | (uint64_t{raw[2 * i + 1]} << 32);
                            out.data<int64_t>()[i] = -5 + static_cast<int64_t>(bits % 1005);
                          } else {
                            out.data<int32_t>()[i] = -5 + static_cast<int32_t>(raw[i] % 1005);
                          }
                        }
                        return out;
                      })
                      .NonDeterministic()
                      .Build());
    }
  }
  // Multinomial: per row, the CDF of exp(logit - max) over the finite logits, searched with a
  // uniform double (two raw outputs) per sample, rows drawing one after another.
  struct M {
    Shape logits;
    int32_t samples;
    DType t;
  };
  for (const M& m : std::vector<M>{{Shape{2, 3}, 6, DType::kFloat},
                                   {Shape{1, 5}, 10, DType::kDouble},
                                   {Shape{4, 50}, 33, DType::kFloat},
                                   {Shape{3, 4}, 0, DType::kFloat},
                                   {Shape{3, 6}, 5, DType::kHalf}}) {
    for (DType out : {DType::kInt64, DType::kInt32}) {
      for (bool stateless : {false, true}) {
        OpCaseBuilder b(stateless ? "StatelessMultinomial" : "Multinomial");
        if (out != DType::kInt64) b.Type("output_dtype", out);
        Tensor logits = RandomOf(m.t, m.logits, 7, -3, 3);
        if (m.t == DType::kFloat && m.logits.dim(1) == 3) {
          logits.data<float>()[1] = -std::numeric_limits<float>::infinity();  // never drawn
        }
        const Philox gen = stateless
                               ? exec::random::StatelessGenerator(17, static_cast<uint64_t>(-4))
                               : Philox(5, 7);
        b.T(m.t).Input(logits).ConstInput(Tensor::Scalar<int32_t>(m.samples));
        if (stateless) {
          b.Type("Tseed", DType::kInt64).Input(Make<int64_t>({17, -4}, {2}));
        } else {
          b.Int("seed", 5).Int("seed2", 7).NonDeterministic();
        }
        c.push_back(b.Reference1([out, gen](const std::vector<Tensor>& in) {
                       const Tensor l = RefUnaryDouble(
                           in[0], [](double v) { return v; }, DType::kDouble);
                       const int64_t batch = l.dim(0), classes = l.dim(1);
                       const int64_t samples = in[1].scalar<int32_t>();
                       const std::vector<uint32_t> raw = Raw(gen, 2 * batch * samples);
                       Tensor want(DType::kDouble, Shape{batch, samples});
                       int64_t next = 0;
                       for (int64_t r = 0; r < batch; ++r) {
                         const double* x = l.data<double>() + r * classes;
                         double max = -1e300;
                         for (int64_t j = 0; j < classes; ++j)
                           if (std::isfinite(x[j])) max = std::max(max, x[j]);
                         std::vector<double> cdf(classes);
                         double total = 0;
                         for (int64_t j = 0; j < classes; ++j) {
                           if (std::isfinite(x[j])) total += std::exp(x[j] - max);
                           cdf[j] = total;
                         }
                         for (int64_t k = 0; k < samples; ++k, next += 2) {
                           const double u = exec::random::Uint64ToDouble(raw[next], raw[next + 1]);
                           int64_t pick = 0;
                           while (pick < classes && cdf[pick] <= u * total) ++pick;
                           want.data<double>()[r * samples + k] = static_cast<double>(pick);
                         }
                       }
                       return RefUnaryDouble(
                           want, [](double v) { return v; }, out);
                     }).Build());
      }
    }
  }
  AddTruncatedAndShuffle(&c);
  AddDistortedBoxCases(&c);
  // NonDeterministicInts: new entropy every call, so only its shape and dtype are checked (the
  // tester's output specs).
  for (DType t : {DType::kInt64, DType::kUInt32}) {
    c.push_back(OpCaseBuilder("NonDeterministicInts",
                              std::string("NonDeterministicInts ") + DTypeShortName(t))
                    .Type("dtype", t)
                    .Type("shape_dtype", DType::kInt32)
                    .ConstInput(Make<int32_t>({2, 3}, {2}))
                    .NonDeterministic()
                    .Build());
  }
  return c;
}

}  // namespace kiln::testing
