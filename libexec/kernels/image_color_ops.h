// The dtypes of the colour ops, shared by their definitions (kernels/image_color_ops.cc) and CPU
// kernels (kernels/cpu/image_color_ops.cc).
#pragma once

#include "kernels/type_lists.h"

namespace kiln::exec::image_color {

using ColorspaceTypes = TypeList<float, double, Half, BFloat16>;
using AdjustTypes = TypeList<float, Half>;

}  // namespace kiln::exec::image_color
