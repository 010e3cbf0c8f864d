// Op-tester cases of TF1 tensor arrays: TensorArrayV3, TensorArrayWriteV3,
// TensorArrayScatterV3, TensorArrayReadV3, TensorArrayGatherV3, TensorArraySizeV3,
// TensorArrayCloseV3. An array is state behind a resource handle, so the cases make their
// arrays with the ops themselves; ops that change an array run once, on the single-op path
// (their effects are checked through reads in tests/exec/kernels_tensor_array_test.cc).
#include "exec/kernel_test_util.h"
#include "ops/array_ref.h"
#include "ops/op_cases.h"

namespace kiln::testing {
namespace {

// A new array (its handle and flow) from TensorArrayV3.
std::vector<Tensor> NewArray(DType dtype, int32_t size, const PartialShape& element_shape,
                             bool clear_after_read = true, bool dynamic = false) {
  auto outs = OpRunner("TensorArrayV3")
                  .Type("dtype", dtype)
                  .ShapeAttr("element_shape", element_shape)
                  .Bool("clear_after_read", clear_after_read)
                  .Bool("dynamic_size", dynamic)
                  .Input(Tensor::Scalar<int32_t>(size))
                  .Run();
  REQUIRE_MESSAGE(outs.ok(), outs.status().ToString());
  return *outs;
}

void Write(const std::vector<Tensor>& ta, int32_t index, const Tensor& value) {
  auto r = OpRunner("TensorArrayWriteV3")
               .T(value.dtype())
               .Input(ta[0])
               .Input(Tensor::Scalar<int32_t>(index))
               .Input(value)
               .Input(ta[1])
               .Run();
  REQUIRE_MESSAGE(r.ok(), r.status().ToString());
}

}  // namespace

std::vector<OpCase> TensorArrayCases() {
  std::vector<OpCase> c;
  for (DType t : {DType::kFloat, DType::kString, DType::kInt64, DType::kHalf}) {
    const std::string ts = " " + DTypeShortName(t);
    const Tensor a = Distinct(t, Shape{2}, 1), b = Distinct(t, Shape{2}, 5);
    // TensorArrayV3 makes a new array each run: its handle differs between runs.
    c.push_back(OpCaseBuilder("TensorArrayV3", "TensorArrayV3" + ts)
                    .Type("dtype", t)
                    .ShapeAttr("element_shape", PartialShape{2})
                    .Bool("dynamic_size", true)
                    .String("tensor_array_name", "ta")
                    .Input(Tensor::Scalar<int32_t>(3))
                    .NonDeterministic()
                    .Build());
    // Writes: the flow passes through.
    const std::vector<Tensor> w = NewArray(t, 3, PartialShape{2});
    c.push_back(OpCaseBuilder("TensorArrayWriteV3", "TensorArrayWriteV3" + ts)
                    .T(t)
                    .Input(w[0])
                    .Input(Tensor::Scalar<int32_t>(1))
                    .Input(a)
                    .Input(Tensor::Scalar<float>(0.5f))
                    .Reference1([](const auto&) { return Tensor::Scalar<float>(0.5f); })
                    .NonDeterministic()
                    .SingleOpOnly()
                    .Build());
    const std::vector<Tensor> s = NewArray(t, 2, PartialShape::UnknownRank(), true, true);
    c.push_back(OpCaseBuilder("TensorArrayScatterV3", "TensorArrayScatterV3" + ts)
                    .T(t)
                    .Input(s[0])
                    .Input(Vec<int32_t>({3, 0}))  // 3 grows the dynamic array
                    .Input(Distinct(t, Shape{2, 2}))
                    .Input(s[1])
                    .Reference1([](const auto&) { return Tensor::Scalar<float>(0); })
                    .NonDeterministic()
                    .SingleOpOnly()
                    .Build());
    // Reads of an array that keeps its elements after reading: repeatable, on every path.
    const std::vector<Tensor> r = NewArray(t, 3, PartialShape{2}, /*clear_after_read=*/false);
    Write(r, 0, a);
    Write(r, 2, b);
    for (int32_t i : {0, 1, 2}) {
      c.push_back(OpCaseBuilder("TensorArrayReadV3", "TensorArrayReadV3 " + std::to_string(i) + ts)
                      .Type("dtype", t)
                      .Input(r[0])
                      .Input(Tensor::Scalar<int32_t>(i))
                      .Input(r[1])
                      .Reference1([a, b, t, i](const auto&) {
                        return i == 0 ? a : i == 2 ? b : Tensor(t, Shape{2});  // unwritten: zeros
                      })
                      .Build());
    }
    c.push_back(OpCaseBuilder("TensorArrayGatherV3", "TensorArrayGatherV3" + ts)
                    .Type("dtype", t)
                    .ShapeAttr("element_shape", PartialShape{2})
                    .Input(r[0])
                    .Input(Vec<int32_t>({2, 1, 0, 2}))
                    .Input(r[1])
                    .Reference1([a, b, t](const auto&) {
                      Tensor out(t, Shape{4, 2});
                      for (int64_t e = 0; e < 2; ++e) {
                        CopyElement(b, e, &out, e);
                        CopyElement(a, e, &out, 4 + e);
                        CopyElement(b, e, &out, 6 + e);
                      }
                      return out;
                    })
                    .Build());
    c.push_back(OpCaseBuilder("TensorArrayGatherV3", "TensorArrayGatherV3 nothing" + ts)
                    .Type("dtype", t)
                    .ShapeAttr("element_shape", PartialShape{2})
                    .Input(r[0])
                    .Input(Vec<int32_t>({}))
                    .Input(r[1])
                    .Reference1([t](const auto&) {
                      return Tensor(t, Shape{0, 2});
                    })
                    .Build());
    c.push_back(OpCaseBuilder("TensorArraySizeV3", "TensorArraySizeV3" + ts)
                    .Input(r[0])
                    .Input(r[1])
                    .Reference1([](const auto&) { return Tensor::Scalar<int32_t>(3); })
                    .Build());
    c.push_back(OpCaseBuilder("TensorArrayCloseV3", "TensorArrayCloseV3" + ts)
                    .Input(r[0])
                    .Reference([](const auto&) { return std::vector<Tensor>{}; })
                    .Build());
  }
  return c;
}

}  // namespace kiln::testing
