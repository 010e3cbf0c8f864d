// Half precision on the host: a Keras mixed-precision model (or any graph of float16/bfloat16
// nodes) computes in float32 regions. The host's kernels compute half precision in float32 per
// element anyway (Eigen's half arithmetic, or widening between casts); rounding after every op
// only adds two conversions per op and keeps the float32 fusions (convolution + batch norm +
// bias + activation) and vector loops from applying. So on a load whose only device is the
// host, each half-precision node whose op also takes float32 is rewritten to float32, reading
// the float32 value its input was cast from where there is one (Keras's AutoCast of a float32
// weight or input), and a Cast back to the half type is added where a value leaves the region
// (a half-precision output, a consumer kept in half precision). Results are as accurate as, or
// more accurate than, rounding per op, and agree with TensorFlow within half-precision tolerance.
// A GPU keeps the half types: its kernels compute them natively (tensor cores).
#pragma once

#include <vector>

#include "graph/flat_graph.h"
#include "graph/fusion.h"
#include "kiln/exec/thread_pool.h"

namespace kiln::exec {

// Rewrites `g` in place as above. `facts` is an analysis prepare of `g`; `accepts_float(v)` says
// whether node v prepares with its half types read as float32. Returns how many nodes now
// compute in float32; the caller prepares the graph again (new Cast nodes, new types).
int ComputeHalfInFloat(FlatGraph* g, const std::vector<NodeFacts>& facts,
                       const std::vector<char>& live, FunctionRef<bool(int)> accepts_float);

// Whether any live node of `g` has a float16 or bfloat16 type attr (the pass has work).
bool HasHalfTypeAttrs(const FlatGraph& g, const std::vector<char>& live);

}  // namespace kiln::exec
