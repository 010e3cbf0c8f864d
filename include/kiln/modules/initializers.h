// Weight initializers. Random draws come from std::mt19937 engines and a portable mapping to
// floats, so the same seed gives the same weights with any standard library.
#pragma once

#include <cstdint>
#include <random>

#include "kiln/core/shape.h"
#include "kiln/core/tensor.h"

namespace kiln::modules {

// Seeds the engine layers draw from when they have no seed of their own (torch::manual_seed's
// counterpart). The engine starts seeded with 0.
void ManualSeed(uint32_t seed);
// The shared engine. Not thread-safe: build layers from one thread.
std::mt19937& DefaultEngine();

// Uniform in [0, 1) from 24 random bits (exact in float, the same on every platform).
float UniformFloat(std::mt19937& engine);

// Glorot (Xavier) uniform for a float32 [fan_in, fan_out] kernel: U(-l, l), l =
// sqrt(6 / (fan_in + fan_out)), as Keras's GlorotUniform.
Tensor GlorotUniform(int64_t fan_in, int64_t fan_out, std::mt19937& engine);
// The same for any kernel shape, with Keras's fans: receptive field = the product of all but
// the last two dimensions, fan_in = shape[-2] * field, fan_out = shape[-1] * field (a Conv2D
// kernel [kh, kw, in, out]: fan_in = kh * kw * in).
Tensor GlorotUniform(const Shape& shape, std::mt19937& engine);
// Float32 U(minval, maxval) (Keras's RandomUniform; Embedding's default is +-0.05).
Tensor RandomUniform(const Shape& shape, float minval, float maxval, std::mt19937& engine);
// Keras's Orthogonal (recurrent kernels): a [rows, cols] matrix (rows = the product of all but
// the last dimension) with orthonormal columns (rows >= cols) or rows (rows < cols), from the QR
// decomposition of a standard-normal matrix with the signs of R's diagonal folded in. Normal
// draws use Box-Muller on UniformFloat, so they too are the same with any standard library.
Tensor Orthogonal(const Shape& shape, std::mt19937& engine);
Tensor Zeros(DType dtype, const Shape& shape);
Tensor Ones(const Shape& shape);  // float32

}  // namespace kiln::modules
