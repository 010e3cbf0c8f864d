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

namespace {

// The element dtypes TF's CPU tensor-array kernels take: the arrays move elements without
// looking at them, each case runs for every one of them (handles to distinct values too).
constexpr DType kElementTypes[] = {
    DType::kFloat,  DType::kDouble, DType::kHalf,      DType::kBFloat16,   DType::kInt8,
    DType::kInt16,  DType::kInt32,  DType::kInt64,     DType::kUInt8,      DType::kUInt16,
    DType::kUInt32, DType::kUInt64, DType::kComplex64, DType::kComplex128, DType::kBool,
    DType::kString, DType::kQInt8,  DType::kQUInt8,    DType::kQInt32,     DType::kResource,
    DType::kVariant};

// TensorArrayConcatV3, TensorArraySplitV3 and the gradient arrays.
void AddConcatSplitGrad(std::vector<OpCase>* c) {
  for (DType t : kElementTypes) {
    const std::string ts = " " + DTypeShortName(t);
    const Tensor p = Distinct(t, Shape{1, 2}, 3), q = Distinct(t, Shape{2, 2}, 20);
    const std::vector<Tensor> r = NewArray(t, 2, PartialShape::UnknownRank(), false);
    Write(r, 0, p);
    Write(r, 1, q);
    c->push_back(OpCaseBuilder("TensorArrayConcatV3", "TensorArrayConcatV3" + ts)
                     .Type("dtype", t)
                     .Input(r[0])
                     .Input(r[1])
                     .Reference([t, p, q](const auto&) {
                       Tensor out(t, Shape{3, 2});
                       for (int64_t e = 0; e < 2; ++e) CopyElement(p, e, &out, e);
                       for (int64_t e = 0; e < 4; ++e) CopyElement(q, e, &out, 2 + e);
                       return std::vector<Tensor>{out, Vec<int64_t>({1, 2})};
                     })
                     .Build());
    const std::vector<Tensor> e = NewArray(t, 0, PartialShape::UnknownRank());
    c->push_back(OpCaseBuilder("TensorArrayConcatV3", "TensorArrayConcatV3 empty" + ts)
                     .Type("dtype", t)
                     .ShapeAttr("element_shape_except0", PartialShape{3})
                     .Input(e[0])
                     .Input(e[1])
                     .Reference([t](const auto&) {
                       return std::vector<Tensor>{Tensor(t, Shape{0, 3}), Vec<int64_t>({})};
                     })
                     .Build());
    const std::vector<Tensor> s = NewArray(t, 3, PartialShape::UnknownRank());
    c->push_back(OpCaseBuilder("TensorArraySplitV3", "TensorArraySplitV3" + ts)
                     .T(t)
                     .Input(s[0])
                     .Input(Distinct(t, Shape{5, 2}))
                     .Input(Vec<int64_t>({2, 0, 3}))
                     .Input(s[1])
                     .Reference1([](const auto&) { return Tensor::Scalar<float>(0); })
                     .NonDeterministic()
                     .SingleOpOnly()
                     .Build());
  }
  const std::vector<Tensor> g = NewArray(DType::kFloat, 2, PartialShape{3});
  c->push_back(OpCaseBuilder("TensorArrayGradV3")
                   .String("source", "gradients")
                   .Input(g[0])
                   .Input(g[1])
                   .NonDeterministic()
                   .SingleOpOnly()
                   .Build());
  c->push_back(OpCaseBuilder("TensorArrayGradWithShape")
                   .String("source", "gradients")
                   .Input(g[0])
                   .Input(g[1])
                   .Input(Vec<int32_t>({4}))
                   .NonDeterministic()
                   .SingleOpOnly()
                   .Build());
}

}  // namespace

namespace {

// TF1 stacks: StackV2 (and Stack) make one, pushes pass the value on, pops give the last push.
// A stack is state behind a handle, so the push and pop cases run on the single-op path.
void AddStacks(std::vector<OpCase>* c) {
  for (bool v2 : {true, false}) {
    const std::string sfx = v2 ? "V2" : "";
    OpCaseBuilder make("Stack" + sfx);
    make.Type("elem_type", DType::kFloat).String("stack_name", "s");
    if (v2) make.Input(Tensor::Scalar<int32_t>(-1));
    c->push_back(make.NonDeterministic().Build());
    auto new_stack = [&]() {
      OpRunner r("Stack" + sfx);
      r.Type("elem_type", DType::kFloat).String("stack_name", "s");
      if (v2) r.Input(Tensor::Scalar<int32_t>(4));
      auto h = r.Run1();
      REQUIRE(h.ok());
      return *h;
    };
    const Tensor push_to = new_stack();
    const Tensor value = Make<float>({1, 2, 3}, {3});
    c->push_back(OpCaseBuilder("StackPush" + sfx)
                     .T(DType::kFloat)
                     .Input(push_to)
                     .Input(value)
                     .Reference1([value](const auto&) { return value; })
                     .NonDeterministic()
                     .SingleOpOnly()
                     .Build());
    const Tensor pop_from = new_stack();
    for (float v : {5.0f, 6.0f}) {
      REQUIRE(OpRunner("StackPush" + sfx)
                  .T(DType::kFloat)
                  .Input(pop_from)
                  .Input(Tensor::Scalar<float>(v))
                  .Run()
                  .ok());
    }
    c->push_back(OpCaseBuilder("StackPop" + sfx)
                     .Type("elem_type", DType::kFloat)
                     .Input(pop_from)
                     .Reference1([](const auto&) { return Tensor::Scalar<float>(6.0f); })
                     .NonDeterministic()
                     .SingleOpOnly()
                     .Build());
    c->push_back(OpCaseBuilder("StackClose" + sfx)
                     .Input(new_stack())
                     .Reference([](const auto&) { return std::vector<Tensor>{}; })
                     .SingleOpOnly()
                     .Build());
  }
}

}  // namespace

std::vector<OpCase> TensorArrayCases() {
  std::vector<OpCase> c;
  for (DType t : kElementTypes) {
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
  AddConcatSplitGrad(&c);
  AddStacks(&c);
  return c;
}

}  // namespace kiln::testing
