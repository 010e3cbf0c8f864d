// Losses (Keras's, reduced to the mean over the batch): each checks its inputs' dtypes and
// shapes while tracing and returns an error value naming the mismatch.
#pragma once

#include "kiln/trace/value.h"

namespace kiln::modules {

// Integer labels [batch] against scores [batch, classes]: logits when from_logits, else
// probabilities (clipped to [1e-7, 1 - 1e-7] as Keras does).
trace::Value SparseCategoricalCrossentropy(const trace::Value& labels, const trace::Value& scores,
                                           bool from_logits = false);
// One-hot (or soft) labels [batch, classes] against scores of the same shape.
trace::Value CategoricalCrossentropy(const trace::Value& labels, const trace::Value& scores,
                                     bool from_logits = false);
// Labels in {0, 1} (or [0, 1]) against scores of the same shape.
trace::Value BinaryCrossentropy(const trace::Value& labels, const trace::Value& scores,
                                bool from_logits = false);
trace::Value MeanSquaredError(const trace::Value& labels, const trace::Value& predictions);

}  // namespace kiln::modules
