// The CPU kernels of the string joining and printing ops in kernels/string_ops.cc.
#include "kernels/string_ops.h"

#include <cstdint>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "core/tensor_summary.h"
#include "kernels/array_util.h"
#include "kernels/kernel_util.h"

namespace kiln::exec {
namespace {

using string_ops::JoinState;
using string_ops::PrintState;
using string_ops::StringFormatState;
using string_ops::TfPrintState;

// ---- StringFormat ----------------------------------------------------------------------------

Status ComputeStringFormat(const KernelContext& ctx) {
  const auto& st = ctx.state<StringFormatState>();
  std::string out = st.pieces[0];
  for (int i = 0; i < ctx.num_inputs(); ++i) {
    out += ctx.input(i).SummarizeValue(st.summarize);
    out += st.pieces[i + 1];
  }
  KILN_ASSIGN_OR_RETURN(Tensor * result, ctx.AllocateOutput(0, Shape()));
  result->scalar<std::string>() = std::move(out);
  return OkStatus();
}

// ---- PrintV2 ---------------------------------------------------------------------------------

Status ComputePrintV2(const KernelContext& ctx) {
  const auto& st = ctx.state<PrintState>();
  const Tensor& in = ctx.input(0);
  if (in.NumElements() != 1) {
    return ctx.Error("input must be a string scalar, got shape ", in.shape().ToString());
  }
  (*ctx.env().print)(st.stream, in.scalar<std::string>() + st.end);
  return OkStatus();
}

// ---- Print (TF1's tf.Print)
// ---------------------------------------------------------------------- Passes input 0 on and
// writes `message` and each data input's summary ("[1 2 3...]") to stderr, as TF's PrintOp does, at
// most first_n times per node when first_n >= 0.

Status ComputePrint(const KernelContext& ctx) {
  const auto& st = ctx.state<TfPrintState>();
  ctx.SetOutput(0, ctx.input(0));
  if (st.first_n >= 0 && st.calls.fetch_add(1) >= st.first_n) return OkStatus();
  std::string msg = st.message;
  for (int i = 1; i < ctx.num_inputs(); ++i) {
    msg += '[';
    msg += SummarizeValueV1(ctx.input(i), st.summarize);
    msg += ']';
  }
  (*ctx.env().print)("stderr", msg + "\n");
  return OkStatus();
}

// ---- StringJoin ------------------------------------------------------------------------------

Status ComputeStringJoin(const KernelContext& ctx) {
  const std::string& sep = ctx.state<TypedOpState<std::string>>().value;
  const Tensor* shaped = nullptr;
  for (int i = 0; i < ctx.num_inputs(); ++i) {
    const Tensor& t = ctx.input(i);
    if (t.rank() == 0) continue;
    if (shaped == nullptr) {
      shaped = &t;
    } else if (t.shape() != shaped->shape()) {
      return ctx.Error("inputs must be scalars or have the same shape, got ",
                       shaped->shape().ToString(), " and ", t.shape().ToString());
    }
  }
  KILN_ASSIGN_OR_RETURN(Tensor * out_ptr,
                        ctx.AllocateOutput(0, DType::kString, shaped ? shaped->shape() : Shape()));
  Tensor& out = *out_ptr;
  std::span<std::string> dst = out.flat<std::string>();
  for (size_t j = 0; j < dst.size(); ++j) {
    for (int i = 0; i < ctx.num_inputs(); ++i) {
      const Tensor& t = ctx.input(i);
      if (i > 0) dst[j] += sep;
      dst[j] += t.data<std::string>()[t.rank() == 0 ? 0 : j];
    }
  }
  return OkStatus();
}

// ---- ReduceJoin(inputs, reduction_indices) ---------------------------------------------------
// Joined in row-major order of the input, whatever the order of the axes (as TF).

Status ComputeReduceJoin(const KernelContext& ctx) {
  const auto& st = ctx.state<JoinState>();
  const Tensor& x = ctx.input(0);
  const int rank = x.rank();
  std::vector<bool> reduced(rank, false);
  for (int64_t a : IndexValues(ctx.input(1))) {
    if (a < -rank || a >= rank)
      return ctx.Error("Invalid reduction dimension ", a, " for input with ", rank,
                       " dimension(s)");
    const int axis = static_cast<int>(a < 0 ? a + rank : a);
    if (reduced[axis]) return ctx.Error("Duplicate reduction dimension ", a);
    reduced[axis] = true;
  }
  Shape out_shape, kept;  // kept: the output's dims without the reduced ones
  for (int i = 0; i < rank; ++i) {
    if (!reduced[i]) {
      out_shape.AddDim(x.dim(i));
      kept.AddDim(x.dim(i));
    } else if (st.keep_dims) {
      out_shape.AddDim(1);
    }
  }
  KILN_ASSIGN_OR_RETURN(Tensor * out, ctx.AllocateOutput(0, out_shape));
  std::string* o = out->data<std::string>();
  const std::string* in = x.data<std::string>();
  std::vector<bool> started(static_cast<size_t>(out->NumElements()), false);
  // Row-major over the input: each element goes to its output slot, in the reduced dims' order.
  std::vector<int64_t> idx(rank, 0);
  for (int64_t e = 0; e < x.NumElements(); ++e) {
    int64_t slot = 0;
    for (int i = 0, k = 0; i < rank; ++i)
      if (!reduced[i]) slot = slot * kept.dim(k++) + idx[i];
    if (started[slot]) o[slot] += st.separator;
    o[slot] += in[e];
    started[slot] = true;
    for (int i = rank - 1; i >= 0; --i) {
      if (++idx[i] < x.dim(i)) break;
      idx[i] = 0;
    }
  }
  return OkStatus();
}

// ---- UnsortedSegmentJoin(inputs, segment_ids, num_segments) ----------------------------------
// Joined in row-major order of the input; an id outside [0, num_segments) is TF's error. As TF's
// kernel, the separator goes before a string only where the slot joined so far is not empty:
// ["", "def"] joins to "def", ["a", "", "b"] to "a  b" (ragged reduce_join runs this op).

Status ComputeSegmentJoin(const KernelContext& ctx) {
  const auto& st = ctx.state<JoinState>();
  const Tensor& x = ctx.input(0);
  const Tensor& ids_t = ctx.input(1);
  if (ids_t.rank() > x.rank())
    return ctx.Error("segment_ids ", ids_t.shape().ToString(), " must be a prefix of inputs ",
                     x.shape().ToString());
  for (int i = 0; i < ids_t.rank(); ++i)
    if (ids_t.dim(i) != x.dim(i))
      return ctx.Error("segment_ids ", ids_t.shape().ToString(), " must be a prefix of inputs ",
                       x.shape().ToString());
  const int64_t segments = IndexValues(ctx.input(2))[0];
  if (segments < 0) return ctx.Error("num_segments must be non-negative, got ", segments);
  Shape shape;
  shape.AddDim(segments);
  int64_t inner = 1;
  for (int i = ids_t.rank(); i < x.rank(); ++i) {
    shape.AddDim(x.dim(i));
    inner *= x.dim(i);
  }
  KILN_ASSIGN_OR_RETURN(Tensor * out, ctx.AllocateOutput(0, shape));
  const std::vector<int64_t> ids = IndexValues(ids_t);
  std::string* o = out->data<std::string>();
  const std::string* in = x.data<std::string>();
  for (size_t r = 0; r < ids.size(); ++r) {
    const int64_t s = ids[r];
    if (s < 0 || s >= segments)
      return ctx.Error(
          "segment_ids are not allowed to exceed num_segments or to have negative "
          "values (segment_ids[",
          r, "] = ", s, ", num_segments ", segments, ")");
    for (int64_t k = 0; k < inner; ++k) {
      std::string& slot = o[s * inner + k];
      if (!slot.empty()) slot += st.separator;
      slot += in[static_cast<int64_t>(r) * inner + k];
    }
  }
  return OkStatus();
}

// ---- tables ----------------------------------------------------------------------------------

constexpr KernelEntry kCpu[] = {
    {"StringFormat", ComputeStringFormat},
    {"PrintV2", ComputePrintV2},
    {"Print", ComputePrint},
    {"StringJoin", ComputeStringJoin},
    {"ReduceJoin", ComputeReduceJoin},
    {"UnsortedSegmentJoin", ComputeSegmentJoin},
};

}  // namespace

std::span<const KernelEntry> StringCpuKernels() { return kCpu; }

}  // namespace kiln::exec
