// The CPU kernels of the ops in kernels/random_ops.cc: the stateful random ops, the candidate
// samplers, ComputeAccidentalHits, NonDeterministicInts and the SampleDistortedBoundingBox ops.
//
// Checked against TensorFlow 2.21 (kernels_random_test.cc): stateless uniform and seeded
// stateful uniform / uniform-int values are identical; normal values agree to within float /
// double rounding (they go through log, sqrt, sin and cos, whose last bit may differ).
#include "kernels/random_ops.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <mutex>
#include <random>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include "kernels/array_util.h"
#include "kernels/cpu/random_util.h"
#include "kernels/kernel_util.h"
#include "kernels/philox.h"
#include "kernels/random_util.h"
#include "kernels/type_lists.h"

namespace kiln::exec {

using random::Philox;
using random_ops::SamplerKind;
using random_ops::SamplerState;
using random_ops::StatefulRandomState;

Result<Shape> ShapeFromInput(const KernelContext& ctx, const Tensor& t) {
  if (t.rank() != 1 || (t.dtype() != DType::kInt32 && t.dtype() != DType::kInt64)) {
    return ctx.Error("input 'shape' must be a 1-D int32 or int64 tensor, got ", t.DebugString());
  }
  std::vector<int64_t> dims(t.NumElements());
  for (int64_t k = 0; k < t.NumElements(); ++k) {
    dims[k] = t.dtype() == DType::kInt32 ? t.data<int32_t>()[k] : t.data<int64_t>()[k];
  }
  Result<Shape> shape = Shape::FromDims(dims);
  if (!shape.ok()) return ctx.Error("input 'shape': ", shape.status().message());
  return shape;
}

// ---- Multinomial (shared with StatelessMultinomial) ---------------------------------------

Status SampleMultinomial(const KernelContext& ctx, DType out_type,
                         FunctionRef<Philox(int64_t blocks)> generator) {
  const Tensor& logits = ctx.input(0);
  const Tensor& samples_t = ctx.input(1);
  if (logits.rank() != 2) {
    return ctx.Error("input 'logits' must be a matrix, got shape ", logits.shape().ToString());
  }
  if (samples_t.rank() != 0) {
    return ctx.Error("input 'num_samples' must be a scalar, got shape ",
                     samples_t.shape().ToString());
  }
  const int64_t samples = samples_t.scalar<int32_t>();
  if (samples < 0) return ctx.Error("input 'num_samples' must be non-negative, got ", samples);
  const int64_t batch = logits.dim(0), classes = logits.dim(1);
  if (classes <= 0) {
    return ctx.Error("input 'logits' must have at least one class, got shape ",
                     logits.shape().ToString());
  }
  KILN_ASSIGN_OR_RETURN(Tensor * out, ctx.AllocateOutput(0, out_type, Shape{batch, samples}));
  if (out->NumElements() == 0) return OkStatus();
  const int64_t ceil4 = (samples + 3) / 4 * 4 * 2;  // doubles: two outputs per sample
  Philox gen = generator(batch * ceil4);
  KILN_ASSIGN_OR_RETURN(void* mem, ctx.AllocateTemp(sizeof(double) * classes));
  double* cdf = static_cast<double*>(mem);
  // TF's SingleSampleAdapter: the four outputs of a block, one at a time.
  Philox::Result block{};
  int used = 4;
  auto next32 = [&]() {
    if (used == 4) {
      block = gen();
      used = 0;
    }
    return block[used++];
  };
  return Dispatch<TypeList<float, double, Half, BFloat16>>(logits.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    using C = ComputeType<T>;
    const C* l = ComputeData<T>(logits);
    return Dispatch<TypeList<int32_t, int64_t>>(out_type, [&](auto index_tag) {
      using Index = typename decltype(index_tag)::type;
      Index* o = out->data<Index>();
      for (int64_t b = 0; b < batch; ++b) {
        const C* row = l + b * classes;
        C max = std::numeric_limits<C>::lowest();
        for (int64_t j = 0; j < classes; ++j)
          if (Eigen::numext::isfinite(row[j]) && row[j] > max) max = row[j];
        const double max_logit = static_cast<double>(max);
        double total = 0;
        for (int64_t j = 0; j < classes; ++j) {
          if (Eigen::numext::isfinite(row[j]))
            total += std::exp(static_cast<double>(row[j]) - max_logit);
          cdf[j] = total;
        }
        for (int64_t k = 0; k < samples; ++k) {
          const uint32_t x0 = next32();
          const uint32_t x1 = next32();
          const double to_find = random::Uint64ToDouble(x0, x1) * total;
          o[b * samples + k] =
              static_cast<Index>(std::upper_bound(cdf, cdf + classes, to_find) - cdf);
        }
      }
      return OkStatus();
    });
  });
}

namespace {

// ---- stateful --------------------------------------------------------------------------------

// Half and bfloat16 draw as TF's distributions for them do (cpu/random_util.h's FillFloatDraw);
// the stream skips the same blocks whatever the dtype.
template <RandomDraw kDraw>
Status ComputeRandomFloat(const KernelContext& ctx) {
  KILN_ASSIGN_OR_RETURN(Shape shape, ShapeFromInput(ctx, ctx.input(0)));
  const auto& st = ctx.state<StatefulRandomState>();
  KILN_ASSIGN_OR_RETURN(Tensor * out, ctx.AllocateOutput(0, st.dtype, shape));
  const Philox gen = st.Reserve(out->NumElements());
  return Dispatch<FloatTypes>(st.dtype, [&](auto tag) {
    FillFloatDraw<typename decltype(tag)::type>(kDraw, gen, out);
    return OkStatus();
  });
}

Status ComputeRandomUniformInt(const KernelContext& ctx) {
  KILN_ASSIGN_OR_RETURN(Shape shape, ShapeFromInput(ctx, ctx.input(0)));
  const Tensor& lo_t = ctx.input(1);
  const Tensor& hi_t = ctx.input(2);
  if (lo_t.rank() != 0 || hi_t.rank() != 0) {
    return ctx.Error("inputs 'minval' and 'maxval' must be scalars, got shapes ",
                     lo_t.shape().ToString(), " and ", hi_t.shape().ToString());
  }
  const auto& st = ctx.state<StatefulRandomState>();
  KILN_ASSIGN_OR_RETURN(Tensor * out_ptr, ctx.AllocateOutput(0, st.dtype, shape));
  Tensor& out = *out_ptr;
  return Dispatch<TypeList<int32_t, int64_t>>(st.dtype, [&](auto tag) -> Status {
    using T = typename decltype(tag)::type;
    const T lo = lo_t.scalar<T>(), hi = hi_t.scalar<T>();
    if (out.NumElements() > 0 && !(lo < hi)) {
      return ctx.Error("need minval < maxval, got ", lo, " >= ", hi);
    }
    if (out.NumElements() > 0) {
      const Philox gen = st.Reserve(out.NumElements());
      random::FillPhilox(gen, random::UniformIntDist<T>(lo, hi), out.data<T>(), out.NumElements());
    }
    return OkStatus();
  });
}

// ---- TruncatedNormal -------------------------------------------------------------------------

// TruncatedNormal: normals redrawn until inside two standard deviations; TF's stream (its
// PhiloxRandomOp with TruncatedNormalDistribution: groups of a variable number of samples, each
// group 256 / 4 * kCount blocks after the previous one), ComputeRandomFloat's kTruncatedNormal.

// ---- RandomShuffle ---------------------------------------------------------------------------

// The rows (dim 0) in a random order, as TF's kernel draws it: size - 1 32-bit samples, swap
// i with i + sample % (size - i) for i = 0 .. size - 2.
Status ComputeRandomShuffle(const KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  KILN_ASSIGN_OR_RETURN(Tensor * out, ctx.AllocateOutput(0, x.shape()));
  if (x.rank() == 0 || x.dim(0) <= 1 || x.NumElements() <= 1) {
    CopyElementRange(x, 0, out, 0, x.NumElements());
    return OkStatus();
  }
  const int64_t size = x.dim(0), row = x.NumElements() / size, samples = size - 1;
  Philox gen = ctx.state<StatefulRandomState>().ReserveBlocks((samples + 3) / 4);
  random::SingleSamples single(&gen);
  std::vector<int64_t> perm(size);
  for (int64_t i = 0; i < size; ++i) perm[i] = i;
  for (int64_t i = 0; i + 1 < size; ++i) {
    const int64_t j = i + single() % static_cast<uint32_t>(size - i);
    std::swap(perm[i], perm[j]);
  }
  for (int64_t i = 0; i < size; ++i) CopyElementRange(x, perm[i] * row, out, i * row, row);
  return OkStatus();
}

// ---- Multinomial -----------------------------------------------------------------------------

// Multinomial(logits [batch, classes], num_samples) -> [batch, num_samples] class ids, as TF's
// CPU kernel draws them: each row's unnormalised CDF of exp(logit - max) over the finite
// logits, searched with one uniform double per sample (two 32-bit outputs of the generator).
// The call reserves batch * ceil4(num_samples) * 2 outputs of the node's generator; the rows
// then draw one after another from its start, which is TF's sequence when TF runs the batch as
// one shard (its split of larger batches depends on its thread pool).
Status ComputeMultinomial(const KernelContext& ctx) {
  const auto& st = ctx.state<StatefulRandomState>();
  return SampleMultinomial(ctx, st.dtype, [&](int64_t blocks) { return st.Reserve(blocks); });
}

// ---- Candidate samplers, ComputeAccidentalHits -----------------------------------------------

// (1 - (1 - p)^tries), or p * batch when every try was kept; in float as TF.
float ExpectedCount(float p, int64_t batch, int64_t tries) {
  if (tries == batch) return p * static_cast<float>(batch);
  return -std::expm1(static_cast<float>(tries) * std::log1p(-p));
}

Status ComputeSampler(const KernelContext& ctx) {
  const auto& st = ctx.state<SamplerState>();
  const Tensor& truth = ctx.input(0);
  if (truth.rank() != 2) return ctx.Error("true_classes must be a matrix");
  if (truth.dim(1) != st.num_true)
    return ctx.Error("true_classes must have num_true columns, expected: ", truth.dim(1),
                     " was: ", st.num_true);
  if (st.unique && st.num_sampled > st.range) return ctx.Error("Sampler's range is too small.");
  for (int64_t i = 0; i < truth.NumElements(); ++i) {
    const int64_t v = truth.data<int64_t>()[i];
    if (v < 0 || v >= st.range)
      return ctx.Error("`true_candidate` out of range [0, ", st.range, "), received ", v);
  }
  const int64_t n = st.num_sampled;
  KILN_ASSIGN_OR_RETURN(Tensor * sampled, ctx.AllocateOutput(0, Shape{n}));
  KILN_ASSIGN_OR_RETURN(Tensor * true_count, ctx.AllocateOutput(1, truth.shape()));
  KILN_ASSIGN_OR_RETURN(Tensor * sampled_count, ctx.AllocateOutput(2, Shape{n}));
  int64_t* out = sampled->data<int64_t>();
  std::unique_lock<std::mutex> learned_lock(st.learned_mu, std::defer_lock);
  if (st.kind == SamplerKind::kLearnedUnigram) learned_lock.lock();
  Philox gen = st.ReserveBlocks(static_cast<uint64_t>(512 * n));
  random::SimplePhilox rng(&gen);
  int64_t tries = n;
  if (st.kind == SamplerKind::kAll) {
    for (int64_t i = 0; i < n; ++i) out[i] = i;
  } else if (st.unique) {
    std::unordered_set<int64_t> used;
    tries = 0;
    // TF CHECK-fails after 2^31 tries (a fixed unigram with fewer nonzero counts than
    // num_sampled never finishes); an error here, after far fewer.
    const int64_t max_tries = std::max<int64_t>(int64_t{1} << 22, 1000 * n);
    for (int64_t picked = 0; picked < n;) {
      if (++tries > max_tries)
        return ctx.Error("drew ", max_tries, " candidates without finding ", n,
                         " distinct ones: fewer than num_sampled have a nonzero probability");
      const int64_t v = st.Sample(&rng);
      if (used.insert(v).second) out[picked++] = v;
    }
  } else {
    for (int64_t i = 0; i < n; ++i) out[i] = st.Sample(&rng);
  }
  const bool all = st.kind == SamplerKind::kAll;
  for (int64_t i = 0; i < n; ++i)
    sampled_count->data<float>()[i] = all ? 1.0f : ExpectedCount(st.Probability(out[i]), n, tries);
  for (int64_t i = 0; i < truth.NumElements(); ++i)
    true_count->data<float>()[i] =
        all ? 1.0f : ExpectedCount(st.Probability(truth.data<int64_t>()[i]), n, tries);
  if (st.kind == SamplerKind::kLearnedUnigram) {  // TF's Update: the true classes count up
    const int64_t room = std::numeric_limits<int32_t>::max() - st.learned->total();
    for (int64_t i = 0; i < std::min(truth.NumElements(), room); ++i)
      st.learned->Increment(truth.data<int64_t>()[i]);
  }
  return OkStatus();
}

Status ComputeAccidentalHits(const KernelContext& ctx) {
  const int64_t num_true = ctx.state<TypedOpState<int64_t>>().value;
  const Tensor& truth = ctx.input(0);
  const Tensor& cand = ctx.input(1);
  if (truth.rank() != 2 || truth.dim(1) != num_true)
    return ctx.Error("true_candidates must be a batch_size * num_true matrix");
  if (cand.rank() != 1)
    return ctx.Error(
        "sampled_candidates must be a vector, which is typically an output from "
        "CandidateSampler");
  std::unordered_map<int64_t, int64_t> pos;
  for (int64_t i = 0; i < cand.NumElements(); ++i) pos[cand.data<int64_t>()[i]] = i;
  std::vector<int32_t> rows;
  std::vector<int64_t> ids;
  for (int64_t i = 0; i < truth.dim(0); ++i)
    for (int64_t j = 0; j < num_true; ++j) {
      const auto it = pos.find(truth.data<int64_t>()[i * num_true + j]);
      if (it == pos.end()) continue;
      rows.push_back(static_cast<int32_t>(i));
      ids.push_back(it->second);
    }
  const auto hits = static_cast<int64_t>(rows.size());
  KILN_ASSIGN_OR_RETURN(Tensor * o_rows, ctx.AllocateOutput(0, Shape{hits}));
  KILN_ASSIGN_OR_RETURN(Tensor * o_ids, ctx.AllocateOutput(1, Shape{hits}));
  KILN_ASSIGN_OR_RETURN(Tensor * o_w, ctx.AllocateOutput(2, Shape{hits}));
  std::copy(rows.begin(), rows.end(), o_rows->data<int32_t>());
  std::copy(ids.begin(), ids.end(), o_ids->data<int64_t>());
  std::fill_n(o_w->data<float>(), hits, -std::numeric_limits<float>::max());
  return OkStatus();
}

// ---- NonDeterministicInts --------------------------------------------------------------------

Status ComputeNonDeterministicInts(const KernelContext& ctx) {
  KILN_ASSIGN_OR_RETURN(Shape shape, ShapeFromInput(ctx, ctx.input(0)));
  KILN_ASSIGN_OR_RETURN(Tensor * out,
                        ctx.AllocateOutput(0, ctx.state<TypedOpState<DType>>().value, shape));
  std::random_device rd;
  Philox gen((uint64_t{rd()} << 32) | rd(), (uint64_t{rd()} << 32) | rd());
  random::SingleSamples single(&gen);
  auto* bytes = static_cast<uint32_t*>(out->raw_data());
  for (size_t i = 0; i < out->ByteSize() / sizeof(uint32_t); ++i) bytes[i] = single();
  return OkStatus();
}

// ---- tables ----------------------------------------------------------------------------------

// ---- SampleDistortedBoundingBox, V2, Stateless --------------------------------------------------
// TF's sample_distorted_bounding_box_op.cc step for step (its float and int arithmetic, its
// order of draws), so a seed gives TF's crop.

struct CropRect {
  int min_x = 0, min_y = 0, max_x = 0, max_y = 0;
  float Area() const { return static_cast<float>((max_x - min_x) * (max_y - min_y)); }
  CropRect Intersect(const CropRect& r) const {
    const CropRect p{std::max(min_x, r.min_x), std::max(min_y, r.min_y), std::min(max_x, r.max_x),
                     std::min(max_y, r.max_y)};
    return p.min_x > p.max_x || p.min_y > p.max_y ? CropRect{} : p;
  }
};

// Whether `crop` (at least one pixel) covers min_covered of one of the boxes.
bool CoversAnObject(const CropRect& crop, float min_covered, const std::vector<CropRect>& boxes) {
  if (crop.Area() < 1.0f) return false;
  for (const CropRect& box : boxes) {
    const float area = box.Area();
    if (area < 1.0f) continue;
    if (crop.Intersect(box).Area() / area >= min_covered) return true;
  }
  return false;
}

// TF's GenerateRandomCrop: a crop of the given aspect ratio whose area lies in the relative
// range, its height uniform between the extremes and its corner uniform in the image.
bool RandomCrop(int width, int height, float min_rel_area, float max_rel_area, float aspect,
                random::SimplePhilox* rng, CropRect* crop) {
  if (max_rel_area <= 0.0f || aspect <= 0.0f || width <= 0 || height <= 0 ||
      min_rel_area > max_rel_area) {
    return false;
  }
  const float min_area = min_rel_area * width * height;
  const float max_area = max_rel_area * width * height;
  int h = static_cast<int>(lrintf(std::sqrt(min_area / aspect)));
  int max_h = static_cast<int>(lrintf(std::sqrt(max_area / aspect)));
  if (lrintf(max_h * aspect) > width) {
    // The largest max_h with round(max_h * aspect) <= width (TF's double arithmetic).
    const float kEps = 0.0000001f;
    max_h = static_cast<int>((width + 0.5 - kEps) / aspect);
    if (lrintf(max_h * aspect) > width) max_h -= 1;
  }
  max_h = std::min(max_h, height);
  if (h >= max_h) h = max_h;
  if (h < max_h) h += static_cast<int>(rng->Uniform(static_cast<uint32_t>(max_h - h + 1)));
  int w = static_cast<int>(lrintf(h * aspect));
  float area = static_cast<float>(w * h);
  if (area < min_area) {  // rounding: try one row more, then one less
    h += 1;
    w = static_cast<int>(lrintf(h * aspect));
    area = static_cast<float>(w * h);
  }
  if (area > max_area) {
    h -= 1;
    w = static_cast<int>(lrintf(h * aspect));
    area = static_cast<float>(w * h);
  }
  if (area < min_area || area > max_area || w > width || h > height || w <= 0 || h <= 0) {
    return false;
  }
  const int y = h < height ? static_cast<int>(rng->Uniform(static_cast<uint32_t>(height - h))) : 0;
  const int x = w < width ? static_cast<int>(rng->Uniform(static_cast<uint32_t>(width - w))) : 0;
  *crop = CropRect{x, y, x + w, y + h};
  return true;
}

// TF's T for these ops.
using DistortedBoxTypes = TypeList<uint8_t, int8_t, int16_t, int32_t, int64_t>;

template <int kInputs>
Status ComputeDistortedBox(const KernelContext& ctx) {
  const auto& st = ctx.state<random_ops::DistortedBoxState>();
  const Tensor& size_t_ = ctx.input(0);
  if (size_t_.shape() != Shape{3}) {
    return ctx.Error("input 'image_size' must have shape (3,) [height, width, channels], got ",
                     size_t_.shape().ToString());
  }
  uint64_t dims[2] = {0, 0};
  KILN_RETURN_IF_ERROR(Dispatch<DistortedBoxTypes>(size_t_.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    // As TF: the value as uint64, so a negative size fails the range check.
    for (int i = 0; i < 2; ++i)
      dims[i] = static_cast<uint64_t>(static_cast<int64_t>(size_t_.data<T>()[i]));
    return OkStatus();
  }));
  const auto kMax = static_cast<uint64_t>(std::numeric_limits<int32_t>::max());
  if (dims[0] >= kMax || dims[1] >= kMax) {
    return ctx.Error("input 'image_size': height and width must lie in [0, 2^31 - 1), got ",
                     static_cast<int64_t>(dims[0]), " x ", static_cast<int64_t>(dims[1]));
  }
  const int height = static_cast<int>(dims[0]), width = static_cast<int>(dims[1]);
  const Tensor& boxes_t = ctx.input(1);
  if (boxes_t.rank() != 3 || boxes_t.dim(2) != 4) {
    return ctx.Error("input 'bounding_boxes' must have shape [batch, num_boxes, 4], got ",
                     boxes_t.shape().ToString());
  }
  float min_covered = st.min_object_covered;
  if constexpr (kInputs >= 3) {
    const Tensor& m = ctx.input(2);
    if (m.rank() != 0) {
      return ctx.Error("input 'min_object_covered' must be a scalar, got shape ",
                       m.shape().ToString());
    }
    min_covered = m.scalar<float>();
    if (!(min_covered >= 0)) {
      return ctx.Error("input 'min_object_covered' must be non-negative, got ", min_covered);
    }
  }
  std::vector<CropRect> boxes;
  const float* b = boxes_t.data<float>();
  for (int64_t i = 0; i < boxes_t.NumElements() / 4; ++i, b += 4) {
    for (int k = 0; k < 4; ++k) {
      if (!(b[k] >= 0.0f && b[k] <= 1.0f)) {
        return ctx.Error("input 'bounding_boxes': all coordinates must lie in [0, 1], box ", i,
                         " has ", b[k]);
      }
    }
    boxes.push_back(CropRect{static_cast<int>(b[1] * width), static_cast<int>(b[0] * height),
                             static_cast<int>(b[3] * width), static_cast<int>(b[2] * height)});
  }
  const CropRect image{0, 0, width, height};
  if (boxes.empty()) {
    if (!st.use_image_if_no_bounding_boxes) {
      return ctx.Error(
          "no bounding boxes given: set use_image_if_no_bounding_boxes to crop "
          "from the whole image");
    }
    boxes.push_back(image);
  }
  Philox gen(0, 0);
  if constexpr (kInputs == 4) {
    KILN_ASSIGN_OR_RETURN(gen, GeneratorFromSeed(ctx, ctx.input(3)));
  } else {
    gen = st.ReserveBlocks(static_cast<uint64_t>(st.max_attempts));
  }
  random::SimplePhilox rng(&gen);
  CropRect crop;
  bool found = false;
  const float min_ar = st.aspect_ratio_range[0], max_ar = st.aspect_ratio_range[1];
  for (int32_t i = 0; i < st.max_attempts && !found; ++i) {
    const float aspect = rng.RandFloat() * (max_ar - min_ar) + min_ar;
    found = RandomCrop(width, height, st.area_range[0], st.area_range[1], aspect, &rng, &crop) &&
            CoversAnObject(crop, min_covered, boxes);
  }
  if (!found) crop = image;
  KILN_ASSIGN_OR_RETURN(Tensor * begin, ctx.AllocateOutput(0, Shape{3}));
  KILN_ASSIGN_OR_RETURN(Tensor * size, ctx.AllocateOutput(1, Shape{3}));
  KILN_ASSIGN_OR_RETURN(Tensor * bboxes, ctx.AllocateOutput(2, Shape{1, 1, 4}));
  const int64_t b_vals[3] = {crop.min_y, crop.min_x, 0};
  const int64_t s_vals[3] = {crop.max_y - crop.min_y, crop.max_x - crop.min_x, -1};
  KILN_RETURN_IF_ERROR(Dispatch<DistortedBoxTypes>(st.dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    for (int i = 0; i < 3; ++i) {
      begin->data<T>()[i] = static_cast<T>(b_vals[i]);
      size->data<T>()[i] = static_cast<T>(s_vals[i]);
    }
    return OkStatus();
  }));
  float* o = bboxes->data<float>();
  o[0] = static_cast<float>(crop.min_y) / static_cast<float>(height);
  o[1] = static_cast<float>(crop.min_x) / static_cast<float>(width);
  o[2] = static_cast<float>(crop.max_y) / static_cast<float>(height);
  o[3] = static_cast<float>(crop.max_x) / static_cast<float>(width);
  return OkStatus();
}

constexpr KernelEntry kCpu[] = {
    {"RandomStandardNormal", ComputeRandomFloat<RandomDraw::kNormal>},
    {"RandomUniform", ComputeRandomFloat<RandomDraw::kUniform>},
    {"RandomUniformInt", ComputeRandomUniformInt},
    {"Multinomial", ComputeMultinomial},
    {"TruncatedNormal", ComputeRandomFloat<RandomDraw::kTruncatedNormal>},
    {"RandomShuffle", ComputeRandomShuffle},
    {"UniformCandidateSampler", ComputeSampler},
    {"LogUniformCandidateSampler", ComputeSampler},
    {"AllCandidateSampler", ComputeSampler},
    {"FixedUnigramCandidateSampler", ComputeSampler},
    {"LearnedUnigramCandidateSampler", ComputeSampler},
    {"ThreadUnsafeUnigramCandidateSampler", ComputeSampler},
    {"ComputeAccidentalHits", ComputeAccidentalHits},
    {"NonDeterministicInts", ComputeNonDeterministicInts},
    {"SampleDistortedBoundingBox", ComputeDistortedBox<2>},
    {"SampleDistortedBoundingBoxV2", ComputeDistortedBox<3>},
    {"StatelessSampleDistortedBoundingBox", ComputeDistortedBox<4>},
};

}  // namespace

std::span<const KernelEntry> RandomCpuKernels() { return kCpu; }

}  // namespace kiln::exec
