// Runs every op family's cases through the op tester, and checks that every op with a CPU
// kernel has cases (or a written exemption).
#include <doctest/doctest.h>

#include <set>
#include <span>
#include <string>

#include "device/test_device.h"
#ifdef KILN_HAVE_CUDA
#include "kernels/cuda/cuda_kernels.h"
#endif
#include "kiln/exec/op_table.h"
#include "ops/non_finite.h"
#include "ops/op_cases.h"

namespace kiln::testing {
namespace {

TEST_CASE("op tester: every op with a CPU kernel has cases or a written exemption") {
  std::set<std::string, std::less<>> covered;
  for (const OpCaseFamily& f : AllOpCaseFamilies())
    for (const OpCase& c : f.cases()) covered.insert(c.op);
  for (const OpTesterExemption& e : OpTesterExemptions()) covered.insert(std::string(e.op));
  for (std::string_view op : OpsAwaitingCases()) {
    CHECK_MESSAGE(!covered.count(op), "'", op, "' has cases now: take it off OpsAwaitingCases");
    CHECK_MESSAGE(exec::FindOp(op) != nullptr, "'", op, "' is not an op any more");
    covered.insert(std::string(op));
  }
  std::string missing;
  for (const exec::OpDefinition& def : exec::AllOps())
    if (exec::FindCpuKernel(def.name) != nullptr && !covered.count(def.name))
      missing += (missing.empty() ? "" : ", ") + std::string(def.name);
  CHECK_MESSAGE(missing.empty(), "ops without op-tester cases: ", missing);
}

TEST_CASE("op tester: every op of the test device has cases that ran on it") {
  // The tester runs each case on every device with a kernel for the op: here the test device
  // (tests/device), whose kernels count their calls and check where each input lives.
  TestDevice* device = GetTestDevice();
  std::vector<OpCase> all;
  for (const OpCaseFamily& f : AllOpCaseFamilies())
    for (OpCase& c : f.cases()) all.push_back(std::move(c));
  for (const exec::KernelEntry& k : device->kernels()) {
    const int64_t before = device->kernel_calls();
    bool any = false;
    for (const OpCase& c : all)
      if (c.op == k.op) {
        any = true;
        RunOpCase(c);
      }
    CHECK_MESSAGE(any, "test device op '", k.op, "' has no op-tester cases");
    CHECK_MESSAGE(device->kernel_calls() > before, "no case of '", k.op,
                  "' ran on the test device (its dtypes?)");
  }
}

#ifdef KILN_HAVE_CUDA
// Whether a GPU kernel row takes case `c` as the op tester's device run prepares it (every
// input a constant, as RunSingleOp gives them): the case is then compared on a GPU.
bool GpuTakes(const exec::KernelEntry& k, const OpCase& c) {
  const exec::OpDefinition* def = exec::FindOp(c.op);
  if (def == nullptr) return false;
  exec::PrepareContext ctx;
  ctx.node_name = "node";
  ctx.op = def->name;
  ctx.attrs = exec::AttrReader(&c.attrs);
  for (const Tensor& t : c.inputs) {
    ctx.inputs.push_back(exec::TensorSpec{t.dtype(), PartialShape(t.shape())});
    ctx.constant_inputs.push_back(&t);
  }
  ctx.resources = c.resources;
  if (!def->prepare(ctx).ok()) return false;  // a case of a refused input
  return k.supports == nullptr || k.supports(ctx);
}
#endif

TEST_CASE("op tester: every GPU kernel has cases a GPU run compares against the CPU") {
  // Checked without a GPU: kernels added while none was lent are compared on the next one.
#ifndef KILN_HAVE_CUDA
  MESSAGE("this build has no GPU kernels (no nvcc, or a sanitizer build)");
#else
  const std::span<const exec::KernelEntry> table = exec::cuda::CudaKernelTable();
  // Products and convolutions take a node only where cuBLASLt and cuDNN load.
  if (!exec::cuda::BlasLtStatus().ok() || !exec::cuda::DnnStatus().ok()) {
    MESSAGE("cuBLASLt or cuDNN does not load here; skipped");
    return;
  }
  std::vector<OpCase> all;
  for (const OpCaseFamily& f : AllOpCaseFamilies())
    for (OpCase& c : f.cases()) all.push_back(std::move(c));
  std::set<std::string, std::less<>> exempt;
  for (const OpTesterExemption& e : OpTesterExemptions()) exempt.insert(std::string(e.op));
  for (const exec::KernelEntry& k : table) {
    if (exempt.count(k.op)) continue;
    bool any = false, taken = false;
    for (const OpCase& c : all) {
      if (c.op != k.op) continue;
      any = true;
      if (GpuTakes(k, c)) {
        taken = true;
        break;
      }
    }
    CHECK_MESSAGE(any, "GPU op '", k.op, "' has no op-tester cases");
    CHECK_MESSAGE(taken, "no case of GPU op '", k.op, "' is one its GPU kernel takes (dtypes?)");
  }
#endif
}

TEST_CASE("op tester: NaN, +-Inf and -0 through every float op") {
  std::set<std::string_view> exempt;
  for (const OpTesterExemption& e : NonFiniteExemptFamilies()) exempt.insert(e.op);
  size_t variants = 0;
  std::set<std::string> ops;
  for (const OpCaseFamily& f : AllOpCaseFamilies()) {
    if (exempt.count(f.name)) continue;
    CAPTURE(f.name);
    const std::vector<OpCase> cases = NonFiniteVariants(f.cases());
    for (const OpCase& c : cases) ops.insert(c.op);
    variants += cases.size();
    RunOpCases(cases);
  }
  MESSAGE("non-finite variants: ", variants, " cases of ", ops.size(), " ops");
  CHECK(ops.size() >= 150);  // the sweep must not go quietly empty
}

TEST_CASE("op tester: elementwise") { RunOpCases(ElementwiseCases()); }
TEST_CASE("op tester: matmul") { RunOpCases(MatMulCases()); }
TEST_CASE("op tester: conv") { RunOpCases(ConvFusedCases()); }
TEST_CASE("op tester: einsum") { RunOpCases(EinsumCases()); }
TEST_CASE("op tester: math") { RunOpCases(MathCases()); }
TEST_CASE("op tester: reduction") { RunOpCases(ReductionCases()); }
TEST_CASE("op tester: scan") { RunOpCases(ScanCases()); }
TEST_CASE("op tester: count") { RunOpCases(CountCases()); }
TEST_CASE("op tester: count sparse") { RunOpCases(CountSparseCases()); }
TEST_CASE("op tester: edit distance") { RunOpCases(EditDistanceCases()); }
TEST_CASE("op tester: clustering") { RunOpCases(ClusteringCases()); }
TEST_CASE("op tester: matrix") { RunOpCases(MatrixCases()); }
TEST_CASE("op tester: linalg") { RunOpCases(LinalgCases()); }
TEST_CASE("op tester: parse") { RunOpCases(ParseCases()); }
TEST_CASE("op tester: segment") { RunOpCases(SegmentCases()); }
TEST_CASE("op tester: loss") { RunOpCases(LossCases()); }
TEST_CASE("op tester: random") { RunOpCases(RandomCases()); }
TEST_CASE("op tester: random_dist") { RunOpCases(RandomDistCases()); }
TEST_CASE("op tester: stateful_random") { RunOpCases(RngStateCases()); }
TEST_CASE("op tester: quantize") { RunOpCases(QuantizeCases()); }
TEST_CASE("op tester: quantized") { RunOpCases(QuantizedCases()); }
TEST_CASE("op tester: tf_recorded") { RunOpCases(TfRecordedCases()); }
TEST_CASE("op tester: shape") { RunOpCases(ShapeCases()); }
TEST_CASE("op tester: concat") { RunOpCases(ConcatCases()); }
TEST_CASE("op tester: slice") { RunOpCases(SliceCases()); }
TEST_CASE("op tester: fill") { RunOpCases(FillCases()); }
TEST_CASE("op tester: scatter") { RunOpCases(ScatterCases()); }
TEST_CASE("op tester: index") { RunOpCases(IndexCases()); }
TEST_CASE("op tester: space") { RunOpCases(SpaceCases()); }
TEST_CASE("op tester: sparse") { RunOpCases(SparseCases()); }
TEST_CASE("op tester: ragged") { RunOpCases(RaggedCases()); }
TEST_CASE("op tester: tensor_list") { RunOpCases(TensorListCases()); }
TEST_CASE("op tester: tensor_array") { RunOpCases(TensorArrayCases()); }
TEST_CASE("op tester: control_flow") { RunOpCases(ControlFlowCases()); }

TEST_CASE("op tester: conv_nd") { RunOpCases(ConvNdCases()); }

TEST_CASE("op tester: pool") { RunOpCases(PoolCases()); }

TEST_CASE("op tester: norm") { RunOpCases(NormCases()); }
TEST_CASE("op tester: rnn_fused") { RunOpCases(RnnFusedCases()); }
TEST_CASE("op tester: rnn_grad") { RunOpCases(RnnGradCases()); }
TEST_CASE("op tester: ctc_loss") { RunOpCases(CtcLossCases()); }

TEST_CASE("op tester: image") { RunOpCases(ImageCases()); }

TEST_CASE("op tester: strings") { RunOpCases(StringCases()); }

TEST_CASE("op tester: lookup") { RunOpCases(LookupCases()); }
TEST_CASE("op tester: lookup_tensors") { RunOpCases(LookupTensorCases()); }

TEST_CASE("op tester: resources") { RunOpCases(ResourceCases()); }

TEST_CASE("op tester: io") { RunOpCases(IoCases()); }

TEST_CASE("op tester: serialize") { RunOpCases(SerializeCases()); }

TEST_CASE("op tester: grad") { RunOpCases(GradCases()); }

TEST_CASE("op tester: special") { RunOpCases(SpecialCases()); }

TEST_CASE("op tester: tensor_map") { RunOpCases(TensorMapCases()); }

TEST_CASE("op tester: proto_codec") { RunOpCases(ProtoCodecCases()); }

TEST_CASE("op tester: conv_generic") { RunOpCases(ConvGenericCases()); }

TEST_CASE("op tester: glimpse") { RunOpCases(GlimpseCases()); }

TEST_CASE("op tester: mutex") { RunOpCases(MutexCases()); }

TEST_CASE("op tester: sparse_tensors_map") { RunOpCases(SparseMapCases()); }

TEST_CASE("op tester: composite_tensor") { RunOpCases(CompositeCases()); }

TEST_CASE("op tester: optional") { RunOpCases(OptionalCases()); }

}  // namespace
}  // namespace kiln::testing
