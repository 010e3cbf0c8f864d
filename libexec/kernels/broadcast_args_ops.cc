// Shape arithmetic of broadcasting: BroadcastArgs (the broadcast shape of two shapes) and
// BroadcastGradientArgs (the dims each side's gradient is summed over). Both take shape
// vectors; when these are known at prepare time the outputs are constants, so gradient graphs
// of fixed-shape models fold away.
#include <algorithm>
#include <string>
#include <vector>

#include "kernels/array_util.h"

namespace kiln::exec {
namespace {

// "[2,3]" as TF's messages print shapes.
std::string Bracket(const std::vector<int64_t>& v) {
  std::string s = "[";
  for (size_t i = 0; i < v.size(); ++i) s += (i ? "," : "") + std::to_string(v[i]);
  return s + "]";
}

// The broadcast of two shape vectors and, per output dim, whether each side is 1 there
// (right-aligned, missing leading dims count as 1).
struct BroadcastResult {
  std::vector<int64_t> shape;
  std::vector<int64_t> reduce0, reduce1;
};

Result<BroadcastResult> Broadcast(const std::vector<int64_t>& a, const std::vector<int64_t>& b) {
  for (const auto* v : {&a, &b}) {
    for (int64_t d : *v) {
      if (d < 0) {
        return InvalidArgument("shape ", Bracket(*v), " has a negative dimension");
      }
    }
  }
  const size_t rank = std::max(a.size(), b.size());
  BroadcastResult r;
  for (size_t i = 0; i < rank; ++i) {
    const int64_t da = i + a.size() >= rank ? a[i + a.size() - rank] : 1;
    const int64_t db = i + b.size() >= rank ? b[i + b.size() - rank] : 1;
    if (da != db && da != 1 && db != 1) {
      return InvalidArgument("Incompatible shapes: ", Bracket(a), " vs. ", Bracket(b));
    }
    r.shape.push_back(da == 1 ? db : da);
    if (da == 1) r.reduce0.push_back(static_cast<int64_t>(i));
    if (db == 1) r.reduce1.push_back(static_cast<int64_t>(i));
  }
  return r;
}

Status WriteVector(const std::vector<int64_t>& v, Tensor* out) {
  if (out->dtype() == DType::kInt64) {
    std::copy(v.begin(), v.end(), out->data<int64_t>());
    return OkStatus();
  }
  for (size_t i = 0; i < v.size(); ++i) {
    if (v[i] > INT32_MAX) return InvalidArgument("dimension ", v[i], " does not fit int32");
    out->data<int32_t>()[i] = static_cast<int32_t>(v[i]);
  }
  return OkStatus();
}

// BroadcastArgs gives the shape; BroadcastGradientArgs the dims each side is 1 in.
std::vector<std::vector<int64_t>> Outputs(bool args, const BroadcastResult& r) {
  if (args) return {r.shape};
  return {r.reduce0, r.reduce1};
}

Status PrepareBroadcastArgs(PrepareContext& ctx) {
  KILN_RETURN_IF_ERROR(ctx.ExpectInputs(2));
  KILN_ASSIGN_OR_RETURN(DType t, IndexInputDType(ctx, 0, "s0", "T"));
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 1, "s1", t));
  KILN_RETURN_IF_ERROR(ExpectInputRank(ctx, 0, "s0", 1));
  KILN_RETURN_IF_ERROR(ExpectInputRank(ctx, 1, "s1", 1));
  const bool args = ctx.op == "BroadcastArgs";
  PartialShape out_shape{-1};
  const int64_t n0 = KnownLength(ctx.inputs[0].shape), n1 = KnownLength(ctx.inputs[1].shape);
  if (args && n0 >= 0 && n1 >= 0) out_shape = PartialShape{std::max(n0, n1)};
  ctx.outputs.assign(args ? 1 : 2, TensorSpec{t, out_shape});
  const Tensor* s0 = ConstantInput(ctx, 0);
  const Tensor* s1 = ConstantInput(ctx, 1);
  if (s0 != nullptr && s1 != nullptr) {
    auto r = Broadcast(IndexValues(*s0), IndexValues(*s1));
    if (!r.ok()) return ctx.Error(r.status().message());
    ctx.constant_outputs.clear();
    for (const std::vector<int64_t>& v : Outputs(args, *r)) {
      Tensor value(t, Shape{static_cast<int64_t>(v.size())});
      Status s = WriteVector(v, &value);
      if (!s.ok()) return ctx.Error(s.message());
      ctx.constant_outputs.push_back(std::move(value));
    }
  }
  return OkStatus();
}

Status ComputeBroadcastArgs(const KernelContext& ctx) {
  const Tensor& s0 = ctx.input(0);
  const Tensor& s1 = ctx.input(1);
  if (s0.rank() != 1 || s1.rank() != 1) {
    return ctx.Error("inputs 's0' and 's1' must be vectors, got shapes ", s0.shape().ToString(),
                     " and ", s1.shape().ToString());
  }
  auto r = Broadcast(IndexValues(s0), IndexValues(s1));
  if (!r.ok()) return Wrap(ctx, r.status());
  const std::vector<std::vector<int64_t>> values = Outputs(ctx.num_outputs() == 1, *r);
  for (int i = 0; i < ctx.num_outputs(); ++i) {
    KILN_ASSIGN_OR_RETURN(Tensor * out,
                          ctx.AllocateOutput(i, Shape{static_cast<int64_t>(values[i].size())}));
    Status s = WriteVector(values[i], out);
    if (!s.ok()) return Wrap(ctx, s);
  }
  return OkStatus();
}

// ---- tables ----------------------------------------------------------------------------------

constexpr OpDefinition kDefs[] = {
    {"BroadcastArgs", "r0", kOpFreshOutputs, PrepareBroadcastArgs},
    {"BroadcastGradientArgs", "r0,r1", kOpFreshOutputs, PrepareBroadcastArgs},
};

constexpr KernelEntry kCpu[] = {
    {"BroadcastArgs", ComputeBroadcastArgs},
    {"BroadcastGradientArgs", ComputeBroadcastArgs},
};

}  // namespace

std::span<const OpDefinition> BroadcastArgsOpDefs() { return kDefs; }
std::span<const KernelEntry> BroadcastArgsCpuKernels() { return kCpu; }

}  // namespace kiln::exec
