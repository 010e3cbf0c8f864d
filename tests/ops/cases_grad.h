// The gradient cases (cases_grad*.cc) in three files; GradCases() (cases_grad.cc) lists them all.
#pragma once

#include <vector>

#include "ops/op_tester.h"

namespace kiln::testing {

// cases_grad_image.cc: the resize and CropAndResize gradients, DrawBoundingBoxes[V2].
void AddImageGradCases(std::vector<OpCase>* c);
// cases_grad_window.cc: Dilation2D and its gradients, MirrorPadGrad, the max-pool gradients.
void AddWindowGradCases(std::vector<OpCase>* c);

}  // namespace kiln::testing
