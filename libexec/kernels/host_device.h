// KILN_HD marks a functor's call operator for both the host and, when nvcc compiles the file, a
// CUDA device: how one functor (elementwise_functors.h, math_functors.h) serves both tables.
#pragma once

#if defined(__CUDACC__)
#define KILN_HD __host__ __device__
#else
#define KILN_HD
#endif
