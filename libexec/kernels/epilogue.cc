// Reading TF's fused_ops attrs into an Epilogue.
#include "kernels/epilogue.h"

#include <string>
#include <vector>

namespace kiln::exec {

namespace {

Result<Epilogue::Act> ActivationByName(const PrepareContext& ctx, const std::string& name) {
  using Act = Epilogue::Act;
  if (name == "Relu") return Act::kRelu;
  if (name == "Relu6") return Act::kRelu6;
  if (name == "Elu") return Act::kElu;
  if (name == "LeakyRelu") return Act::kLeakyRelu;
  if (name == "Tanh") return Act::kTanh;
  if (name == "Sigmoid") return Act::kSigmoid;
  if (name == "GeluExact") return Act::kGeluExact;
  if (name == "GeluApproximate") return Act::kGeluApproximate;
  if (name == "_MklSwish" || name == "Swish") return Act::kSwish;
  if (name == "_KilnHardSwish") return Act::kHardSwish;
  return ctx.Error("attr 'fused_ops': '", name, "' is not a supported activation");
}

}  // namespace

Result<Epilogue> ReadEpilogue(const PrepareContext& ctx) {
  Epilogue e;
  if (!ctx.attrs.Has("fused_ops")) return e;
  KILN_PREPARE_ASSIGN(ctx, std::vector<std::string> ops, ctx.attrs.GetStringList("fused_ops"));
  KILN_PREPARE_ASSIGN(ctx, int64_t num_args, ctx.attrs.GetInt("num_args", 0));
  KILN_PREPARE_ASSIGN(ctx, e.epsilon, ctx.attrs.GetFloat("epsilon", 0.0001f));
  KILN_PREPARE_ASSIGN(ctx, e.leakyrelu_alpha, ctx.attrs.GetFloat("leakyrelu_alpha", 0.2f));
  const bool conv = ctx.op != "_FusedMatMul";
  size_t i = 0;
  if (i < ops.size() && ops[i] == "BiasAdd") {
    e.bias = true;
    ++i;
  } else if (conv && i < ops.size() && ops[i] == "FusedBatchNorm") {
    e.batch_norm = true;
    ++i;
  }
  if ((e.bias || e.batch_norm) && i < ops.size() && ops[i] == "Add") {
    e.add = true;
    ++i;
  }
  if ((e.bias || e.batch_norm) && i < ops.size()) {
    KILN_ASSIGN_OR_RETURN(e.act, ActivationByName(ctx, ops[i]));
    ++i;
  }
  if (e.act != Epilogue::Act::kNone && i < ops.size() &&
      (ops[i] == "_KilnScaleShift" || ops[i] == "_KilnShift")) {
    e.post_scale = ops[i] == "_KilnScaleShift";
    e.post_shift = true;
    ++i;
  }
  if (i != ops.size() || !(e.bias || e.batch_norm)) {
    std::string list;
    for (const std::string& op : ops) list += (list.empty() ? "" : ", ") + op;
    return ctx.Error("attr 'fused_ops' [", list, "] is not a supported fusion; expected ",
                     conv ? "BiasAdd or FusedBatchNorm" : "BiasAdd",
                     ", then optionally Add, then optionally one activation (and after it "
                     "_KilnScaleShift or _KilnShift)");
  }
  if (num_args != e.num_args() - (e.add ? 1 : 0) && num_args != e.num_args())
    return ctx.Error("attr 'num_args' is ", num_args, " but fused_ops need ", e.num_args(),
                     " extra inputs");
  return e;
}

}  // namespace kiln::exec
