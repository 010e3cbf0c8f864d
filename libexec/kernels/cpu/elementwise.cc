// The broadcast output shape of a binary element-wise op at run time.
#include "kernels/cpu/elementwise.h"

namespace kiln::exec {

Result<Shape> BinaryOutputShape(const KernelContext& ctx) {
  Result<Shape> shape = BroadcastShapes(ctx.input(0).shape(), ctx.input(1).shape());
  if (!shape.ok()) return ctx.Error(shape.status().message());
  return shape;
}

}  // namespace kiln::exec
