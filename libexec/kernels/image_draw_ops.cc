// DrawBoundingBoxes(images, boxes) and DrawBoundingBoxesV2(images, boxes, colors), as TF's CPU
// kernel: a copy of the NHWC images (1, 3 or 4 channels) with the outline of each box
// [y_min, x_min, y_max, x_max] (relative: 0 and 1 are the first and last pixel, truncated to
// whole pixels) drawn one pixel wide in colour box % num_colors. The colours are V2's `colors`
// rows (non-empty) or TF's table of ten; grayscale images draw in channel 0 = 1. Inverted
// boxes and boxes wholly outside the image are skipped; lines outside it are not drawn.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

#include "kernels/kernel_util.h"
#include "kernels/type_lists.h"

namespace kiln::exec {
namespace {

using DrawTypes = TypeList<float, Half>;

template <bool kV2>
Status PrepareDrawBoxes(PrepareContext& ctx) {
  KILN_RETURN_IF_ERROR(ctx.ExpectInputs(kV2 ? 3 : 2));
  KILN_PREPARE_ASSIGN(ctx, DType t, ctx.attrs.GetType("T", DType::kFloat));
  KILN_RETURN_IF_ERROR(ExpectAttrDTypeIn(ctx, "T", t, DrawTypes::kDTypes));
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 0, "images", t));
  KILN_RETURN_IF_ERROR(ExpectInputRank(ctx, 0, "images", 4));
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 1, "boxes", DType::kFloat));
  KILN_RETURN_IF_ERROR(ExpectInputRank(ctx, 1, "boxes", 3));
  if (kV2) {
    KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 2, "colors", DType::kFloat));
    KILN_RETURN_IF_ERROR(ExpectInputRank(ctx, 2, "colors", 2));
  }
  const PartialShape& images = ctx.inputs[0].shape;
  if (!images.unknown_rank()) {
    const int64_t depth = images.dim(3);
    if (depth >= 0 && depth != 1 && depth != 3 && depth != 4) {
      return ctx.Error("input 'images' must have 1 (gray), 3 (RGB) or 4 (RGBA) channels, got ",
                       depth);
    }
  }
  ctx.outputs = {TensorSpec{t, images}};
  return OkStatus();
}

// float -> int64 as TF's conversion does on x86: values out of range (and NaN) become the
// lowest int64, so their boxes count as outside the image.
int64_t ToPixel(float v) {
  if (!(v >= -9.2e18f && v <= 9.2e18f)) return std::numeric_limits<int64_t>::min();
  return static_cast<int64_t>(v);
}

std::vector<std::vector<float>> ColorTable(const KernelContext& ctx, int64_t depth) {
  std::vector<std::vector<float>> table;
  if (ctx.num_inputs() == 3 && ctx.input(2).NumElements() != 0) {
    const Tensor& colors = ctx.input(2);
    const float* c = colors.data<float>();
    for (int64_t i = 0; i < colors.dim(0); ++i)
      table.emplace_back(c + i * colors.dim(1), c + i * colors.dim(1) + depth);
    return table;
  }
  table = {{1, 1, 0, 1},     {0, 0, 1, 1},   {1, 0, 0, 1},   {0, 1, 0, 1}, {0.5, 0, 0.5, 1},
           {0.5, 0.5, 0, 1}, {0.5, 0, 0, 1}, {0, 0, 0.5, 1}, {0, 1, 1, 1}, {1, 0, 1, 1}};
  if (depth == 1) {
    for (auto& color : table) color[0] = 1;
  }
  return table;
}

Status ComputeDrawBoxes(const KernelContext& ctx) {
  const Tensor& images = ctx.input(0);
  const Tensor& boxes = ctx.input(1);
  if (images.rank() != 4) {
    return ctx.Error("input 'images' must be 4-dimensional, got shape ", images.shape().ToString());
  }
  if (boxes.rank() != 3 || boxes.dim(2) != 4) {
    return ctx.Error("input 'boxes' must have shape [batch, num_boxes, 4], got ",
                     boxes.shape().ToString());
  }
  if (boxes.dim(0) != images.dim(0)) {
    return ctx.Error("inputs 'images' ", images.shape().ToString(), " and 'boxes' ",
                     boxes.shape().ToString(), " must have the same batch size");
  }
  const int64_t batch = images.dim(0), height = images.dim(1), width = images.dim(2),
                depth = images.dim(3);
  if (depth != 1 && depth != 3 && depth != 4) {
    return ctx.Error("input 'images' must have 1 (gray), 3 (RGB) or 4 (RGBA) channels, got ",
                     depth);
  }
  if (ctx.num_inputs() == 3) {
    const Tensor& colors = ctx.input(2);
    if (colors.rank() != 2 || colors.dim(1) < depth) {
      return ctx.Error("input 'colors' must be a matrix with at least ", depth,
                       " columns (the image's channels), got shape ", colors.shape().ToString());
    }
  }
  const std::vector<std::vector<float>> table = ColorTable(ctx, depth);
  KILN_ASSIGN_OR_RETURN(Tensor * out, ctx.AllocateOutput(0, images.shape()));
  if (images.NumElements() > 0) {
    std::memcpy(out->raw_data(), images.raw_data(), images.ByteSize());
  }
  const int64_t num_boxes = boxes.dim(1);
  const float* bx = boxes.data<float>();
  return Dispatch<DrawTypes>(images.dtype(), [&](auto tag) -> Status {
    using T = typename decltype(tag)::type;
    using C = ComputeType<T>;
    C* canvas = MutableComputeData<T>(out);
    ctx.threads().ParallelFor(batch, 1, [&](int64_t b0, int64_t b1) {
      for (int64_t b = b0; b < b1; ++b) {
        C* img = canvas + b * height * width * depth;
        for (int64_t k = 0; k < num_boxes; ++k) {
          const std::vector<float>& color = table[k % static_cast<int64_t>(table.size())];
          const float* box = bx + (b * num_boxes + k) * 4;
          const int64_t top = ToPixel(box[0] * static_cast<float>(height - 1));
          const int64_t bottom = ToPixel(box[2] * static_cast<float>(height - 1));
          const int64_t left = ToPixel(box[1] * static_cast<float>(width - 1));
          const int64_t right = ToPixel(box[3] * static_cast<float>(width - 1));
          if (top > bottom || left > right) continue;                               // inverted
          if (top >= height || bottom < 0 || left >= width || right < 0) continue;  // outside
          const int64_t top_c = std::max<int64_t>(top, 0), bottom_c = std::min(bottom, height - 1);
          const int64_t left_c = std::max<int64_t>(left, 0), right_c = std::min(right, width - 1);
          auto paint = [&](int64_t y, int64_t x) {
            for (int64_t c = 0; c < depth; ++c) img[(y * width + x) * depth + c] = C(color[c]);
          };
          if (top >= 0)
            for (int64_t x = left_c; x <= right_c; ++x) paint(top, x);
          if (bottom < height)
            for (int64_t x = left_c; x <= right_c; ++x) paint(bottom, x);
          if (left >= 0)
            for (int64_t y = top_c; y <= bottom_c; ++y) paint(y, left);
          if (right < width)
            for (int64_t y = top_c; y <= bottom_c; ++y) paint(y, right);
        }
      }
    });
    return OkStatus();
  });
}

constexpr OpDefinition kDefs[] = {
    {"DrawBoundingBoxes", "output", kOpFreshOutputs, PrepareDrawBoxes<false>},
    {"DrawBoundingBoxesV2", "output", kOpFreshOutputs, PrepareDrawBoxes<true>},
};

constexpr KernelEntry kCpu[] = {
    {"DrawBoundingBoxes", ComputeDrawBoxes},
    {"DrawBoundingBoxesV2", ComputeDrawBoxes},
};

}  // namespace

std::span<const OpDefinition> ImageDrawOpDefs() { return kDefs; }
std::span<const KernelEntry> ImageDrawCpuKernels() { return kCpu; }

}  // namespace kiln::exec
