// Random tensors as graph ops (tf.random's counterpart). Unlike a number drawn from a host
// engine while tracing (frozen into the graph as a constant), these ops draw fresh values on
// every call of the function.
//
//   - RandomNormal / RandomUniform: stateful ops (RandomStandardNormal, RandomUniform). With a
//     seed, a node's sequence of draws is reproducible: the graph's first call gives the same
//     numbers in every process, and so does a bundle's first run after loading. Attrs follow
//     TensorFlow with an op seed and no global seed: seed = 87654321, seed2 = the op seed.
//     Without a seed, each node starts from a fresh random seed.
//   - StatelessRandomNormal / StatelessRandomUniform: the values are a function of the shape and
//     a 2-element int64 `seed` tensor only (same seed, same values; new seed, new values).
//
// Outside a trace they run at once; an eager op is a new node each time, so an eager seeded
// draw repeats its first value.
#pragma once

#include <cstdint>
#include <optional>

#include "kiln/core/dtype.h"
#include "kiln/core/shape.h"
#include "kiln/trace/value.h"

namespace kiln::trace {

struct RandomOptions {
  std::optional<int64_t> seed;  // op seed; none = nondeterministic
  DType dtype = DType::kFloat;  // float32, float64 (and float16 where kernels allow)
};

// tf.random.normal: mean + stddev * N(0, 1).
Value RandomNormal(const Shape& shape, const RandomOptions& options = {}, double mean = 0.0,
                   double stddev = 1.0);
// tf.random.uniform (floating point): minval + (maxval - minval) * U[0, 1).
Value RandomUniform(const Shape& shape, const RandomOptions& options = {}, double minval = 0.0,
                    double maxval = 1.0);

// tf.random.stateless_normal / stateless_uniform; `seed` is an int64 (or int32) tensor of
// shape (2,).
Value StatelessRandomNormal(const Shape& shape, const Value& seed, DType dtype = DType::kFloat);
Value StatelessRandomUniform(const Shape& shape, const Value& seed, DType dtype = DType::kFloat);

}  // namespace kiln::trace
