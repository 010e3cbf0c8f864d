// Op-tester cases of the variable ops: resource variables (VarHandleOp, ReadVariableOp, the
// Assign*VariableOp family, VarIsInitializedOp, VariableShape, DestroyResourceOp,
// DisableCopyOnRead), ResourceGather and the scatters, the optimizer updates, and TF1 reference
// variables (VariableV2, Assign, AssignAdd, AssignSub). Ops that only change a variable have no
// outputs for the tester to compare: their values are checked against plain loops in
// tests/exec/kernels_training_test.cc; here they run on every path.
#include "kiln/exec/resources.h"
#include "ops/op_cases.h"

namespace kiln::testing {
namespace {

using exec::VariableResource;

ResourceManager* Manager() {
  static ResourceManager rm;
  return &rm;
}

// A variable holding `value`, as a handle tensor.
Tensor VarHandle(const std::string& name, const Tensor& value) {
  auto var = std::make_shared<VariableResource>(name, value.dtype(), PartialShape(value.shape()));
  REQUIRE(var->Assign(value).ok());
  Tensor h(DType::kResource, Shape());
  h.scalar<std::shared_ptr<ResourceBase>>() = var;
  return h;
}

Tensor GatherRef(const Tensor& params, const Tensor& indices) {
  Shape out = indices.shape();
  int64_t inner = 1;
  for (int d = 1; d < params.rank(); ++d) {
    out.AddDim(params.dim(d));
    inner *= params.dim(d);
  }
  Tensor r(params.dtype(), out);
  for (int64_t i = 0; i < indices.NumElements(); ++i) {
    const int64_t row =
        indices.dtype() == DType::kInt32 ? indices.data<int32_t>()[i] : indices.data<int64_t>()[i];
    for (int64_t k = 0; k < inner; ++k) {
      if (params.dtype() == DType::kString) {
        r.data<std::string>()[i * inner + k] = params.data<std::string>()[row * inner + k];
      } else {
        r.data<float>()[i * inner + k] = params.data<float>()[row * inner + k];
      }
    }
  }
  return r;
}

void AddVariableOps(std::vector<OpCase>* c) {
  c->push_back(OpCaseBuilder("VarHandleOp")
                   .Type("dtype", DType::kFloat)
                   .ShapeAttr("shape", PartialShape(Shape{2}))
                   .String("shared_name", "cases_var")
                   .Resources(Manager())
                   .Build());
  const Tensor value = RandomOf(DType::kFloat, Shape{3, 4}, 1);
  const Tensor var = VarHandle("read_me", value);
  c->push_back(OpCaseBuilder("ReadVariableOp")
                   .Type("dtype", DType::kFloat)
                   .Input(var)
                   .Reference1([value](const auto&) { return value; })
                   .Build());
  for (DType out : {DType::kInt32, DType::kInt64}) {
    OpCaseBuilder b("VariableShape", "VariableShape " + DTypeShortName(out));
    if (out != DType::kInt32) b.Type("out_type", out);
    c->push_back(
        b.Input(var)
            .Reference1([out](const auto&) {
              return out == DType::kInt32 ? Make<int32_t>({3, 4}, {2}) : Make<int64_t>({3, 4}, {2});
            })
            .Build());
  }
  c->push_back(OpCaseBuilder("VarIsInitializedOp")
                   .Input(var)
                   .Reference1([](const auto&) { return Tensor::Scalar(true); })
                   .Build());
  auto fresh =
      std::make_shared<VariableResource>("never_set", DType::kInt32, PartialShape::Scalar());
  Tensor fresh_h(DType::kResource, Shape());
  fresh_h.scalar<std::shared_ptr<ResourceBase>>() = fresh;
  c->push_back(OpCaseBuilder("VarIsInitializedOp", "VarIsInitializedOp of a variable never set")
                   .Input(fresh_h)
                   .Reference1([](const auto&) { return Tensor::Scalar(false); })
                   .Build());
  c->push_back(OpCaseBuilder("AssignVariableOp")
                   .Type("dtype", DType::kFloat)
                   .Input(VarHandle("assign_me", value))
                   .Input(RandomOf(DType::kFloat, Shape{3, 4}, 2))
                   .Build());
  for (const char* op : {"AssignAddVariableOp", "AssignSubVariableOp"}) {
    c->push_back(OpCaseBuilder(op)
                     .Type("dtype", DType::kInt64)
                     .Input(VarHandle(op, Make<int64_t>({1, 2, 3}, {3})))
                     .Input(Make<int64_t>({10, 20, 30}, {3}))
                     .Build());
  }
  // Each run counts one up (its exact values and the limit: tests/exec/kernels_resource_test.cc).
  c->push_back(OpCaseBuilder("ResourceCountUpTo")
                   .Type("T", DType::kInt64)
                   .Int("limit", 1 << 30)
                   .Input(VarHandle("count_me", Tensor::Scalar<int64_t>(0)))
                   .NonDeterministic()
                   .Build());
  c->push_back(OpCaseBuilder("DestroyResourceOp").Input(VarHandle("destroy_me", value)).Build());
  c->push_back(OpCaseBuilder("DisableCopyOnRead").Input(var).Build());
}

void AddGatherScatter(std::vector<OpCase>* c) {
  const Tensor params = RandomOf(DType::kFloat, Shape{5, 3}, 4);
  const Tensor table = VarHandle("gather_me", params);
  c->push_back(
      OpCaseBuilder("ResourceGather", "ResourceGather float32 rows, int32 indices")
          .Type("dtype", DType::kFloat)
          .Type("Tindices", DType::kInt32)
          .Input(table)
          .Input(Make<int32_t>({4, 0, 0, 2, 1, 3}, {2, 3}))
          .Reference1([params](const std::vector<Tensor>& in) { return GatherRef(params, in[1]); })
          .Build());
  const Tensor words = Make<std::string>({"a", "b", "c"}, {3});
  c->push_back(OpCaseBuilder("ResourceGather", "ResourceGather string, int64 scalar index")
                   .Type("dtype", DType::kString)
                   .Type("Tindices", DType::kInt64)
                   .Input(VarHandle("gather_words", words))
                   .Input(Tensor::Scalar<int64_t>(2))
                   .Reference1([](const auto&) { return Tensor::StringScalar("c"); })
                   .Build());
  c->push_back(OpCaseBuilder("ResourceGather", "ResourceGather batch_dims 1")
                   .Type("dtype", DType::kInt32)
                   .Type("Tindices", DType::kInt32)
                   .Int("batch_dims", 1)
                   .Input(VarHandle("gather_batch", Make<int32_t>({1, 2, 3, 4, 5, 6}, {2, 3})))
                   .Input(Make<int32_t>({2, 0, 1, 1}, {2, 2}))
                   .Reference1([](const auto&) {
                     return Make<int32_t>({3, 1, 5, 5}, {2, 2});
                   })
                   .Build());
  for (const char* op :
       {"ResourceScatterUpdate", "ResourceScatterAdd", "ResourceScatterSub", "ResourceScatterMul",
        "ResourceScatterDiv", "ResourceScatterMin", "ResourceScatterMax"}) {
    c->push_back(OpCaseBuilder(op)
                     .Type("dtype", DType::kFloat)
                     .Type("Tindices", DType::kInt64)
                     .Input(VarHandle(op, params))
                     .Input(Make<int64_t>({1, 3}, {2}))
                     .Input(RandomOf(DType::kFloat, Shape{2, 3}, 5))
                     .Build());
  }
  // Integer division truncates; no update is zero (that is an error) or negative (the sweep
  // converts the case to unsigned types).
  c->push_back(
      OpCaseBuilder("ResourceScatterDiv", "ResourceScatterDiv int32")
          .Type("dtype", DType::kInt32)
          .Type("Tindices", DType::kInt64)
          .Input(VarHandle("scatter_div_int",
                           Make<int32_t>({1, 2, 3, 10, -11, 12, 4, 5, 6, 16, 17, -18}, {4, 3})))
          .Input(Make<int64_t>({1, 3}, {2}))
          .Input(Make<int32_t>({3, 2, 5, 4, 3, 7}, {2, 3}))
          .Build());
}

// The N-d forms and the strided-slice assignment (their values are checked against TF's in
// tests/tf/test_string_table_train_ops.py; here every path runs them).
void AddGatherScatterNd(std::vector<OpCase>* c) {
  const Tensor params = RandomOf(DType::kFloat, Shape{4, 3, 2}, 6);
  c->push_back(OpCaseBuilder("ResourceGatherNd", "ResourceGatherNd float32 [2, 2] indices")
                   .Type("dtype", DType::kFloat)
                   .Type("Tindices", DType::kInt32)
                   .Input(VarHandle("gather_nd_me", params))
                   .Input(Make<int32_t>({3, 1, 0, 2}, {2, 2}))
                   .Reference1([params](const auto&) {
                     const float* p = params.data<float>();
                     return Make<float>({p[(3 * 3 + 1) * 2], p[(3 * 3 + 1) * 2 + 1],
                                         p[(0 * 3 + 2) * 2], p[(0 * 3 + 2) * 2 + 1]},
                                        {2, 2});
                   })
                   .Build());
  c->push_back(
      OpCaseBuilder("ResourceGatherNd", "ResourceGatherNd string rows")
          .Type("dtype", DType::kString)
          .Type("Tindices", DType::kInt64)
          .Input(VarHandle("gather_nd_words", Make<std::string>({"a", "b", "c", "d"}, {2, 2})))
          .Input(Make<int64_t>({1, 0}, {2, 1}))
          .Reference1([](const auto&) {
            return Make<std::string>({"c", "d", "a", "b"}, {2, 2});
          })
          .Build());
  for (const char* op : {"ResourceScatterNdUpdate", "ResourceScatterNdAdd", "ResourceScatterNdSub",
                         "ResourceScatterNdMin", "ResourceScatterNdMax"}) {
    c->push_back(OpCaseBuilder(op)
                     .T(DType::kFloat)
                     .Type("Tindices", DType::kInt64)
                     .Input(VarHandle(op, params))
                     .Input(Make<int64_t>({1, 2, 3, 0}, {2, 2}))
                     .Input(RandomOf(DType::kFloat, Shape{2, 2}, 7))
                     .Build());
  }
  // StridedSliceAssign: TF 1's form on a reference variable (a handle here), passed on.
  for (const char* op : {"ResourceStridedSliceAssign", "StridedSliceAssign"}) {
    c->push_back(OpCaseBuilder(op)
                     .T(DType::kFloat)
                     .Type("Index", DType::kInt32)
                     .Input(VarHandle(std::string("slice_assign_me_") + op, params))
                     .Input(Make<int32_t>({1, 0}, {2}))
                     .Input(Make<int32_t>({3, 3}, {2}))
                     .Input(Make<int32_t>({1, 2}, {2}))
                     .Input(RandomOf(DType::kFloat, Shape{2}, 8))
                     .Build());
  }
}

void AddOptimizers(std::vector<OpCase>* c) {
  const Shape s{4, 5};
  auto var = [&](const std::string& name, uint32_t seed, double lo = -1, double hi = 1) {
    return VarHandle(name, RandomOf(DType::kFloat, s, seed, lo, hi));
  };
  const Tensor grad = RandomOf(DType::kFloat, s, 9);
  auto scalar = [](float v) { return Tensor::Scalar(v); };
  c->push_back(OpCaseBuilder("ResourceApplyGradientDescent")
                   .T(DType::kFloat)
                   .Input(var("gd", 1))
                   .Input(scalar(0.1f))
                   .Input(grad)
                   .Build());
  for (const char* op : {"ResourceApplyMomentum", "ResourceApplyKerasMomentum"}) {
    for (bool nesterov : {false, true}) {
      c->push_back(OpCaseBuilder(op, std::string(op) + (nesterov ? " nesterov" : ""))
                       .T(DType::kFloat)
                       .Bool("use_nesterov", nesterov)
                       .Input(var(std::string(op) + "_var", 1))
                       .Input(var(std::string(op) + "_accum", 2))
                       .Input(scalar(0.1f))
                       .Input(grad)
                       .Input(scalar(0.9f))
                       .Build());
    }
  }
  c->push_back(OpCaseBuilder("ResourceApplyAdagradV2")
                   .T(DType::kFloat)
                   .Input(var("adagrad_var", 1))
                   .Input(var("adagrad_accum", 2, 0.1, 1))
                   .Input(scalar(0.1f))
                   .Input(scalar(1e-7f))
                   .Input(grad)
                   .Build());
  c->push_back(OpCaseBuilder("ResourceApplyAdam")
                   .T(DType::kFloat)
                   .Bool("use_nesterov", true)
                   .Input(var("adam_var", 1))
                   .Input(var("adam_m", 2))
                   .Input(var("adam_v", 3, 0, 1))
                   .Input(scalar(0.9f))
                   .Input(scalar(0.999f))
                   .Input(scalar(0.001f))
                   .Input(scalar(0.9f))
                   .Input(scalar(0.999f))
                   .Input(scalar(1e-7f))
                   .Input(grad)
                   .Build());
  c->push_back(OpCaseBuilder("ResourceApplyRMSProp")
                   .T(DType::kFloat)
                   .Input(var("rms_var", 1))
                   .Input(var("rms_ms", 2, 0, 1))
                   .Input(var("rms_mom", 3))
                   .Input(scalar(0.01f))
                   .Input(scalar(0.9f))
                   .Input(scalar(0.0f))
                   .Input(scalar(1e-7f))
                   .Input(grad)
                   .Build());
}

void AddRefVariables(std::vector<OpCase>* c) {
  c->push_back(OpCaseBuilder("VariableV2")
                   .Type("dtype", DType::kFloat)
                   .ShapeAttr("shape", PartialShape(Shape{3}))
                   .String("shared_name", "cases_ref_var")
                   .Resources(Manager())
                   .Build());
  // Assign passes the ref (the handle) on.
  const Tensor ref = VarHandle("ref_assign", Make<float>({1, 2, 3}, {3}));
  c->push_back(OpCaseBuilder("Assign")
                   .T(DType::kFloat)
                   .Input(ref)
                   .Input(Make<float>({4, 5, 6}, {3}))
                   .Reference1([ref](const auto&) { return ref; })
                   .Build());
  for (const char* op : {"AssignAdd", "AssignSub"}) {
    const Tensor r = VarHandle(op, Make<int32_t>({1, 2}, {2}));
    c->push_back(OpCaseBuilder(op)
                     .T(DType::kInt32)
                     .Input(r)
                     .Input(Make<int32_t>({5, 5}, {2}))
                     .Reference1([r](const auto&) { return r; })
                     .Build());
  }
}

}  // namespace

std::vector<OpCase> ResourceCases() {
  std::vector<OpCase> c;
  AddVariableOps(&c);
  AddGatherScatter(&c);
  AddGatherScatterNd(&c);
  AddOptimizers(&c);
  AddRefVariables(&c);
  return c;
}

}  // namespace kiln::testing
