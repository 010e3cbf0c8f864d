// Random op wrappers, node names as tf.random's Python wrappers give them.
#include "kiln/trace/random.h"

#include <vector>

#include "host_scalar.h"
#include "kiln/trace/op_builder.h"
#include "kiln/trace/ops.h"

namespace kiln::trace {
namespace {

using internal::HostScalar;

// TensorFlow's DEFAULT_GRAPH_SEED: the graph-level seed used when only an op seed is given.
constexpr int64_t kDefaultGraphSeed = 87654321;

Value ShapeConst(const Shape& shape) {
  std::vector<int32_t> dims(shape.dims().begin(), shape.dims().end());
  Result<Tensor> t = Tensor::FromVector<int32_t>(dims, Shape{static_cast<int64_t>(dims.size())});
  if (!t.ok()) return Value::Error(t.status());
  return OpBuilder("Const", "shape").Attr("dtype", DType::kInt32).Attr("value", *t).BuildOne();
}

Value StatefulDraw(std::string_view op, const Shape& shape, const RandomOptions& options) {
  OpBuilder b(op);
  b.Input(ShapeConst(shape)).Attr("dtype", options.dtype).Attr("T", DType::kInt32);
  if (options.seed) {
    b.Attr("seed", kDefaultGraphSeed).Attr("seed2", *options.seed);
  }
  return b.BuildOne();
}

Value Stateless(std::string_view op, const Shape& shape, const Value& seed, DType dtype) {
  OpBuilder b(op);
  b.Input(ShapeConst(shape)).Input(seed);
  if (dtype != DType::kFloat) b.Attr("dtype", dtype);
  if (seed.ok() && seed.dtype() != DType::kInt64) b.Attr("Tseed", seed.dtype());
  return b.BuildOne();
}

}  // namespace

Value RandomNormal(const Shape& shape, const RandomOptions& options, double mean, double stddev) {
  NameScope scope("random_normal");
  Value v = StatefulDraw("RandomStandardNormal", shape, options);
  if (stddev != 1.0) v = v * HostScalar(options.dtype, stddev);
  if (mean != 0.0) v = v + HostScalar(options.dtype, mean);
  return v;
}

Value RandomUniform(const Shape& shape, const RandomOptions& options, double minval,
                    double maxval) {
  NameScope scope("random_uniform");
  Value v = StatefulDraw("RandomUniform", shape, options);
  if (maxval - minval != 1.0) v = v * HostScalar(options.dtype, maxval - minval);
  if (minval != 0.0) v = v + HostScalar(options.dtype, minval);
  return v;
}

Value StatelessRandomNormal(const Shape& shape, const Value& seed, DType dtype) {
  NameScope scope("stateless_random_normal");
  return Stateless("StatelessRandomNormal", shape, seed, dtype);
}

Value StatelessRandomUniform(const Shape& shape, const Value& seed, DType dtype) {
  NameScope scope("stateless_random_uniform");
  return Stateless("StatelessRandomUniform", shape, seed, dtype);
}

}  // namespace kiln::trace
