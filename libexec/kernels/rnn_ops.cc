// LSTMBlockCell (tf.raw_ops.LSTMBlockCell, TF 1's LSTMBlockCell / LSTMBlockFusedCell step):
//   xh = [x, h_prev]; [i, ci, f, o] = xh * w + b (gates in that order along the last dim)
//   i = sigmoid(i + cs_prev * wci), f = sigmoid(f + forget_bias + cs_prev * wcf),
//   ci = tanh(ci), cs = clip(ci * i + cs_prev * f, cell_clip), co = tanh(cs),
//   o = sigmoid(o + cs * wco), h = co * o
// with the peephole terms only when use_peephole, and the clip only when cell_clip > 0.
// Half computes in float.
#include <Eigen/Core>
#include <cmath>

#include "kernels/kernel_util.h"
#include "kernels/op_families.h"
#include "kernels/type_lists.h"
#include "kernels/window_util.h"

namespace kiln::exec {
namespace {

struct LstmState : OpState {
  DType t = DType::kFloat;
  float forget_bias = 1, cell_clip = 3;
  bool peephole = false;
};

using LstmTypes = TypeList<float, Half>;

constexpr const char* kInputNames[] = {"x", "cs_prev", "h_prev", "w", "wci", "wcf", "wco", "b"};

Status PrepareLstmBlockCell(PrepareContext& ctx) {
  KILN_RETURN_IF_ERROR(ctx.ExpectInputs(8));
  auto st = std::make_shared<LstmState>();
  KILN_PREPARE_ASSIGN(ctx, st->t, ctx.attrs.GetType("T"));
  KILN_RETURN_IF_ERROR(ExpectAttrDTypeIn(ctx, "T", st->t, LstmTypes::kDTypes));
  KILN_PREPARE_ASSIGN(ctx, st->forget_bias, ctx.attrs.GetFloat("forget_bias", 1.0f));
  KILN_PREPARE_ASSIGN(ctx, st->cell_clip, ctx.attrs.GetFloat("cell_clip", 3.0f));
  KILN_PREPARE_ASSIGN(ctx, st->peephole, ctx.attrs.GetBool("use_peephole", false));
  static constexpr int kRanks[] = {2, 2, 2, 2, 1, 1, 1, 1};
  for (int i = 0; i < 8; ++i) {
    KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, i, kInputNames[i], st->t));
    KILN_RETURN_IF_ERROR(ExpectInputRank(ctx, i, kInputNames[i], kRanks[i]));
  }
  auto dim = [&](int i, int d) {
    const PartialShape& s = ctx.inputs[i].shape;
    return s.unknown_rank() ? int64_t{-1} : s.dim(d);
  };
  // batch from x, cs_prev, h_prev; cell from cs_prev, h_prev, the peepholes, w and b.
  int64_t batch = -1, cell = -1, input = dim(0, 1);
  auto merge = [&](int64_t* into, int64_t v, int i, const char* what) -> Status {
    if (v < 0) return OkStatus();
    if (*into >= 0 && *into != v) {
      return ctx.Error("input '", kInputNames[i], "' has shape ",
                       ctx.inputs[i].shape.ToPythonString(), ", which disagrees on the ", what,
                       " (", *into, ") with the other inputs");
    }
    *into = v;
    return OkStatus();
  };
  for (int i : {0, 1, 2}) KILN_RETURN_IF_ERROR(merge(&batch, dim(i, 0), i, "batch size"));
  for (int i : {1, 2}) KILN_RETURN_IF_ERROR(merge(&cell, dim(i, 1), i, "cell size"));
  for (int i : {4, 5, 6}) KILN_RETURN_IF_ERROR(merge(&cell, dim(i, 0), i, "cell size"));
  if (dim(3, 1) >= 0) {
    if (dim(3, 1) % 4 != 0) {
      return ctx.Error("input 'w' must have 4 * cell_size columns, got shape ",
                       ctx.inputs[3].shape.ToPythonString());
    }
    KILN_RETURN_IF_ERROR(merge(&cell, dim(3, 1) / 4, 3, "cell size"));
  }
  if (dim(7, 0) >= 0) {
    if (dim(7, 0) % 4 != 0) {
      return ctx.Error("input 'b' must have 4 * cell_size elements, got shape ",
                       ctx.inputs[7].shape.ToPythonString());
    }
    KILN_RETURN_IF_ERROR(merge(&cell, dim(7, 0) / 4, 7, "cell size"));
  }
  if (input >= 0 && cell >= 0 && dim(3, 0) >= 0 && dim(3, 0) != input + cell) {
    return ctx.Error("input 'w' must have input_size + cell_size = ", input + cell,
                     " rows, got shape ", ctx.inputs[3].shape.ToPythonString());
  }
  ctx.outputs.assign(7, TensorSpec{st->t, PartialShape{batch, cell}});
  ctx.state = std::move(st);
  return OkStatus();
}

Status ComputeLstmBlockCell(const KernelContext& ctx) {
  const auto& st = ctx.state<LstmState>();
  const Tensor& x = ctx.input(0);
  for (int i = 0; i < 8; ++i) {
    if (ctx.input(i).rank() != (i < 4 ? 2 : 1)) {
      return ctx.Error("input '", kInputNames[i], "' must have rank ", i < 4 ? 2 : 1,
                       ", got shape ", ctx.input(i).shape().ToString());
    }
  }
  const int64_t batch = x.dim(0), input = x.dim(1), cell = ctx.input(1).dim(1);
  const Shape state_shape{batch, cell};
  bool ok = ctx.input(1).shape() == state_shape && ctx.input(2).shape() == state_shape &&
            ctx.input(3).shape() == Shape{input + cell, 4 * cell} &&
            ctx.input(7).shape() == Shape{4 * cell};
  for (int i : {4, 5, 6}) ok = ok && ctx.input(i).shape() == Shape{cell};
  if (!ok) {
    std::string shapes;
    for (int i = 0; i < 8; ++i)
      shapes += std::string(i ? ", " : "") + kInputNames[i] + " " + ctx.input(i).shape().ToString();
    return ctx.Error("inconsistent shapes: expected x (batch, input_size), cs_prev and h_prev ",
                     "(batch, cell_size), w (input_size + cell_size, 4 * cell_size), wci/wcf/wco ",
                     "(cell_size,), b (4 * cell_size,); got ", shapes);
  }
  Tensor* outs[7];
  for (int i = 0; i < 7; ++i) {
    KILN_ASSIGN_OR_RETURN(outs[i], ctx.AllocateOutput(i, state_shape));
  }
  return Dispatch<LstmTypes>(st.t, [&](auto tag) -> Status {
    using T = typename decltype(tag)::type;
    using C = ComputeType<T>;
    using Mat = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
    auto acc = [&](int i) -> Result<const float*> {
      return AccCopy<C>(ctx, ComputeData<T>(ctx.input(i)), ctx.input(i).NumElements());
    };
    const float* in[8];
    for (int i = 0; i < 8; ++i) {
      KILN_ASSIGN_OR_RETURN(in[i], acc(i));
    }
    // xh = [x, h_prev]; icfo = xh * w + b.
    const int64_t k = input + cell;
    KILN_ASSIGN_OR_RETURN(void* mem,
                          ctx.AllocateTemp(sizeof(float) * (batch * k + batch * 4 * cell + 1)));
    float* xh = static_cast<float*>(mem);
    float* icfo = xh + batch * k;
    for (int64_t r = 0; r < batch; ++r) {
      std::copy(in[0] + r * input, in[0] + (r + 1) * input, xh + r * k);
      std::copy(in[2] + r * cell, in[2] + (r + 1) * cell, xh + r * k + input);
    }
    Eigen::Map<Mat> gates(icfo, batch, 4 * cell);
    if (k > 0) {
      gates.noalias() =
          Eigen::Map<const Mat>(xh, batch, k) * Eigen::Map<const Mat>(in[3], k, 4 * cell);
    } else {
      gates.setZero();
    }
    auto sigmoid = [](float v) { return 1.0f / (1.0f + std::exp(-v)); };
    const float* cs_prev = in[1];
    const float* b = in[7];
    const float *wci = in[4], *wcf = in[5], *wco = in[6];
    C* o_i = MutableComputeData<T>(outs[0]);
    C* o_cs = MutableComputeData<T>(outs[1]);
    C* o_f = MutableComputeData<T>(outs[2]);
    C* o_o = MutableComputeData<T>(outs[3]);
    C* o_ci = MutableComputeData<T>(outs[4]);
    C* o_co = MutableComputeData<T>(outs[5]);
    C* o_h = MutableComputeData<T>(outs[6]);
    for (int64_t r = 0; r < batch; ++r) {
      const float* g = icfo + r * 4 * cell;
      for (int64_t j = 0; j < cell; ++j) {
        const int64_t e = r * cell + j;
        const float cp = cs_prev[e];
        const float i = sigmoid(g[j] + b[j] + (st.peephole ? cp * wci[j] : 0.0f));
        const float ci = std::tanh(g[cell + j] + b[cell + j]);
        const float f = sigmoid(g[2 * cell + j] + b[2 * cell + j] + st.forget_bias +
                                (st.peephole ? cp * wcf[j] : 0.0f));
        float cs = ci * i + cp * f;
        if (st.cell_clip > 0) cs = std::min(std::max(cs, -st.cell_clip), st.cell_clip);
        const float co = std::tanh(cs);
        const float o =
            sigmoid(g[3 * cell + j] + b[3 * cell + j] + (st.peephole ? cs * wco[j] : 0.0f));
        o_i[e] = static_cast<C>(i);
        o_cs[e] = static_cast<C>(cs);
        o_f[e] = static_cast<C>(f);
        o_o[e] = static_cast<C>(o);
        o_ci[e] = static_cast<C>(ci);
        o_co[e] = static_cast<C>(co);
        o_h[e] = static_cast<C>(co * o);
      }
    }
    return OkStatus();
  });
}

constexpr OpDefinition kDefs[] = {
    {"LSTMBlockCell", "i,cs,f,o,ci,co,h", kOpFreshOutputs, PrepareLstmBlockCell},
};

constexpr KernelEntry kCpu[] = {
    {"LSTMBlockCell", ComputeLstmBlockCell},
};

}  // namespace

std::span<const OpDefinition> RnnOpDefs() { return kDefs; }
std::span<const KernelEntry> RnnCpuKernels() { return kCpu; }

}  // namespace kiln::exec
