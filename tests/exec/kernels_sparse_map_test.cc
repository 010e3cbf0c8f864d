// Sparse tensors maps (AddSparseToTensorsMap, AddManySparseToTensorsMap,
// TakeManySparseFromTensorsMap): which map a node uses (its shared_name, else an Add's node
// name; a TakeMany without one has its own), handles counted per map, tensors removed once
// taken (also those before a failing handle, as TF's), and TF's errors, in its words.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "kernel_test_util.h"

namespace kiln::testing {
namespace {

Tensor I64(const std::vector<int64_t>& v, const Shape& s) { return Make<int64_t>(v, s); }

// Shapes left unknown at prepare, so the kernels' own checks (TF's) see bad ranks.
TensorSpec Unknown(const Tensor& t) { return TensorSpec{t.dtype(), PartialShape::UnknownRank()}; }
Tensor Vec64(const std::vector<int64_t>& v) {
  return I64(v, Shape{static_cast<int64_t>(v.size())});
}

Result<Tensor> Add(ResourceManager* rm, const std::string& map, const Tensor& indices,
                   const Tensor& values, const Tensor& shape, const std::string& node = "add") {
  OpRunner r("AddSparseToTensorsMap", node);
  r.T(values.dtype())
      .Resources(rm)
      .Input(indices, Unknown(indices))
      .Input(values, Unknown(values))
      .Input(shape, Unknown(shape));
  if (!map.empty()) r.String("shared_name", map);
  return r.Run1();
}

Result<Tensor> AddMany(ResourceManager* rm, const std::string& map, const Tensor& indices,
                       const Tensor& values, const Tensor& shape) {
  return OpRunner("AddManySparseToTensorsMap")
      .T(values.dtype())
      .String("shared_name", map)
      .Resources(rm)
      .Input(indices)
      .Input(values)
      .Input(shape)
      .Run1();
}

Result<std::vector<Tensor>> Take(ResourceManager* rm, const std::string& map, const Tensor& handles,
                                 DType dtype = DType::kFloat, const std::string& node = "take") {
  OpRunner r("TakeManySparseFromTensorsMap", node);
  r.Type("dtype", dtype).Resources(rm).Input(handles, Unknown(handles));
  if (!map.empty()) r.String("shared_name", map);
  return r.Run();
}

std::string ErrorOf(const Status& s) { return s.ok() ? "ok" : std::string(s.message()); }

bool Has(const Status& s, const std::string& text) {
  return std::string(s.message()).find(text) != std::string::npos;
}

TEST_CASE("sparse tensors map: handles per map, shared by name, taken once") {
  ResourceManager rm;
  const Tensor idx = I64({0, 1}, Shape{1, 2}), val = Make<float>({5}, {1}), shape = Vec64({2, 2});
  // No shared_name: an Add uses its node's name, so two nodes of one name share a map.
  auto a = Add(&rm, "", idx, val, shape, "n");
  auto b = Add(&rm, "", idx, val, shape, "n");
  auto c = Add(&rm, "", idx, val, shape, "other");
  REQUIRE((a.ok() && b.ok() && c.ok()));
  CHECK(a->scalar<int64_t>() == 0);
  CHECK(b->scalar<int64_t>() == 1);
  CHECK(c->scalar<int64_t>() == 0);
  // Taken from the map "n"; a second take finds nothing.
  auto got = Take(&rm, "n", Vec64({1}));
  REQUIRE_MESSAGE(got.ok(), got.status().ToString());
  CheckClose<int64_t>((*got)[0], I64({0, 0, 1}, Shape{1, 3}));
  CheckClose<float>((*got)[1], Make<float>({5}, {1}));
  CheckClose<int64_t>((*got)[2], Vec64({1, 2, 2}));
  auto again = Take(&rm, "n", Vec64({1}));
  CHECK(ErrorOf(again.status()).find("Unable to find SparseTensor: 1 in map: n") !=
        std::string::npos);
  // A TakeMany without a shared_name has a map of its own (TF's ContainerInfo): never the Add's.
  auto own = Take(&rm, "", Vec64({0}), DType::kFloat, "n");
  CHECK(Has(own.status(), "Unable to find SparseTensor: 0 in map: n"));
}

TEST_CASE("AddSparseToTensorsMap: TF's errors") {
  ResourceManager rm;
  const Tensor shape = Vec64({4, 3});
  Status s = Add(&rm, "m", Vec64({1, 1}), Make<int32_t>({1}, {1}), shape).status();
  CHECK(Has(s, "Input indices should be a matrix but received shape (2,)"));
  s = Add(&rm, "m", I64({1, 1}, Shape{1, 2}), Make<int32_t>({1}, {1, 1}), shape).status();
  CHECK(Has(s, "Input values should be a vector but received shape (1, 1)"));
  s = Add(&rm, "m", I64({1, 1}, Shape{1, 2}), Make<int32_t>({1, 2}, {2}), shape).status();
  CHECK(Has(s,
            "indices and values rows (indexing dimension) must match. (indices = 1, "
            "values = 2)"));
  s = Add(&rm, "m", I64({1, 1}, Shape{1, 2}), Make<int32_t>({1}, {1}), Vec64({4, 3, 1})).status();
  CHECK(Has(s, "Order length must be SparseTensor rank."));
  s = Add(&rm, "m", I64({1, 1}, Shape{1, 2}), Make<int32_t>({1}, {1}), Vec64({4, -3})).status();
  CHECK(Has(s, "Dimension -3 must be >= 0"));
  s = Add(&rm, "m", I64({1, 1}, Shape{1, 2}), Make<int32_t>({1}, {1}),
          Vec64({int64_t{1} << 40, int64_t{1} << 40}))
          .status();
  CHECK(Has(s, "Shape [1099511627776,1099511627776] would have more than 2**63 - 1 elements"));
  // Neither bounds nor order are TF's concern here: stored as given.
  auto h = Add(&rm, "m", I64({1, 7, 0, 0}, Shape{2, 2}), Make<int32_t>({1, 2}, {2}), shape);
  REQUIRE_MESSAGE(h.ok(), h.status().ToString());
  CHECK(h->scalar<int64_t>() == 0);  // the failed adds stored nothing
}

TEST_CASE("AddManySparseToTensorsMap: TF's errors") {
  ResourceManager rm;
  auto err = [&](const std::vector<int64_t>& idx, const Shape& is, int64_t nvals,
                 const std::vector<int64_t>& shape) {
    return AddMany(&rm, "m", I64(idx, is), Tensor(DType::kFloat, Shape{nvals}), Vec64(shape))
        .status();
  };
  CHECK(Has(err({0, 1}, Shape{1, 2}, 2, {4, 3}),
            "Number of values must match first dimension of indices. Got 2 values, indices "
            "shape: (1, 2)"));
  CHECK(Has(err({0, 1}, Shape{1, 2}, 1, {4, 3, 2}),
            "Number of dimensions must match second dimension of indices. Got 3 dimensions, "
            "indices shape: (1, 2)"));
  CHECK(Has(err({0, 1}, Shape{2, 1}, 2, {4}),
            "Rank of input SparseTensor should be > 1, but saw rank: 1"));
  CHECK(Has(err({1, 1}, Shape{1, 2}, 1, {4, -3}),
            "Expected shape dimensions to be non-negative, got -3"));
  CHECK(Has(err({0, 1, 5, 1}, Shape{2, 2}, 2, {4, 3}),
            "indices[1] = [5,1] is out of bounds: need 0 <= index < [4,3]"));
  CHECK(Has(err({1, -1}, Shape{1, 2}, 1, {4, 3}),
            "indices[0] = [1,-1] is out of bounds: need 0 <= index < [4,3]"));
  CHECK(Has(err({1, 1, 0, 1}, Shape{2, 2}, 2, {4, 3}),
            "indices[1] = [0,1] is out of order. Many sparse ops require sorted indices."));
  CHECK(Has(err({1, 1, 1, 1}, Shape{2, 2}, 2, {4, 3}), "indices[1] = [1,1] is repeated"));
  // Nothing was stored by the failures: the next handle is 0.
  auto h = AddMany(&rm, "m", I64({1, 1}, Shape{1, 2}), Make<float>({1}, {1}), Vec64({2, 3}));
  REQUIRE(h.ok());
  CheckClose<int64_t>(*h, Vec64({1, 0}));
}

TEST_CASE("TakeManySparseFromTensorsMap: TF's errors, and handles before a failing one are gone") {
  ResourceManager rm;
  auto handle = [&](const Tensor& idx, const Tensor& val, const Tensor& shape) {
    auto h = Add(&rm, "t", idx, val, shape);
    REQUIRE_MESSAGE(h.ok(), h.status().ToString());
    return h->scalar<int64_t>();
  };
  CHECK(Has(Take(&rm, "t", Tensor::Scalar<int64_t>(0)).status(),
            "sparse_handles should be a vector but received shape ()"));
  CHECK(Has(Take(&rm, "t", Vec64({})).status(),
            "Must have at least 1 serialized SparseTensor, but input matrix has 0 rows"));
  const int64_t a = handle(I64({1, 1}, Shape{1, 2}), Make<int32_t>({1}, {1}), Vec64({4, 3}));
  const int64_t b = handle(I64({1}, Shape{1, 1}), Make<int32_t>({1}, {1}), Vec64({4}));
  Status s = Take(&rm, "t", Vec64({a, b}), DType::kInt32).status();
  CHECK(Has(s,
            "Inconsistent rank across SparseTensors: rank prior to SparseTensor[1] was: 3 but "
            "rank of SparseTensor[1] is: 2"));
  CHECK(Has(Take(&rm, "t", Vec64({b}), DType::kInt32).status(), "Unable to find SparseTensor: 1"));
  const int64_t c = handle(I64({1}, Shape{1, 1}), Make<float>({1}, {1}), Vec64({4}));
  CHECK(Has(Take(&rm, "t", Vec64({c}), DType::kInt32).status(),
            "Requested SparseTensor of type int32 but SparseTensor[0].values.dtype() == float32"));
  // A rank-0 tensor: the stack is a vector, its index only the position.
  const int64_t d = handle(Tensor(DType::kInt64, Shape{0, 0}), Tensor(DType::kInt32, Shape{0}),
                           Tensor(DType::kInt64, Shape{0}));
  auto got = Take(&rm, "t", Vec64({d}), DType::kInt32);
  REQUIRE_MESSAGE(got.ok(), got.status().ToString());
  CHECK((*got)[0].shape() == Shape{0, 1});
  CHECK((*got)[1].shape() == Shape{0});
  CheckClose<int64_t>((*got)[2], Vec64({1}));
  const int64_t e = handle(I64({0}, Shape{1, 1}), Make<int32_t>({1}, {1}), Vec64({4}));
  CHECK(Has(Take(&rm, "t", Vec64({e, 99, e}), DType::kInt32).status(),
            "Unable to find SparseTensor: 99 in map: t"));
  CHECK(Has(Take(&rm, "t", Vec64({e}), DType::kInt32).status(), "Unable to find SparseTensor"));
}

}  // namespace
}  // namespace kiln::testing
