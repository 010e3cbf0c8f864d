// The dtypes of DrawBoundingBoxes(V2), shared by their definitions (kernels/image_draw_ops.cc)
// and CPU kernels (kernels/cpu/image_draw_ops.cc).
#pragma once

#include "kernels/type_lists.h"

namespace kiln::exec::image_draw {

using DrawTypes = TypeList<float, Half>;

}  // namespace kiln::exec::image_draw
