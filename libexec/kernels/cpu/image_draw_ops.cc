// The CPU kernels of DrawBoundingBoxes and DrawBoundingBoxesV2 (kernels/image_draw_ops.cc): a
// copy of the images with each box's outline painted over it, images of the batch in parallel.
#include "kernels/image_draw_ops.h"

#include <algorithm>
#include <cstring>
#include <limits>
#include <vector>

#include "kernels/kernel_util.h"
#include "kernels/type_lists.h"

namespace kiln::exec {
namespace {

using image_draw::DrawTypes;

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

constexpr KernelEntry kCpu[] = {
    {"DrawBoundingBoxes", ComputeDrawBoxes},
    {"DrawBoundingBoxesV2", ComputeDrawBoxes},
};

}  // namespace

std::span<const KernelEntry> ImageDrawCpuKernels() { return kCpu; }

}  // namespace kiln::exec
