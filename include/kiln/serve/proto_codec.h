// TensorFlow Serving's gRPC tensors (TensorProto in PredictRequest/Response) with the request
// limits applied before anything is allocated.
#pragma once

#include <string>
#include <vector>

#include "kiln/core/status.h"
#include "kiln/core/tensor.h"
#include "kiln/serve/limits.h"

namespace tensorflow {
class TensorProto;
namespace serving {
class Input;
}
}  // namespace tensorflow

namespace kiln::serve {

// Like kiln::TensorFromProto, but the shape must fit the limits and the values must fill it
// exactly (tensor_content of the right size, or one typed value per element): a proto that
// declares a large shape with one value is refused instead of expanded.
Result<Tensor> TensorFromRequestProto(const tensorflow::TensorProto& proto,
                                      const RequestLimits& limits, std::string_view what);

// The serialized tf.Examples of a Classify/Regress/MultiInference input: example_list as is,
// example_list_with_context with the context's features merged into each example (an
// example's own feature wins), as TF Serving does.
Result<std::vector<std::string>> SerializedExamples(const tensorflow::serving::Input& input);

}  // namespace kiln::serve
