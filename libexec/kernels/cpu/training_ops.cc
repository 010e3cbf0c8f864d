// The CPU kernels of the optimizer updates in kernels/training_ops.cc, with TensorFlow's CPU
// formulas; the variable and its slots are updated together under their locks
// (VariableResource::UpdateMany). float32 Adam runs the vector loop.
#include "kernels/training_ops.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <span>
#include <type_traits>
#include <vector>

#include "kernels/cpu/vector_math.h"
#include "kernels/type_lists.h"
#include "kernels/variable_util.h"

namespace kiln::exec {
namespace {

using training::ApplySpec;
using training::ApplyState;
using training::ApplyTypes;
using training::ComplexApplyTypes;
using training::GradIndex;
using training::Optimizer;
using training::SpecOf;
using training::TakesComplex;

// One element's update, in A (float for the 16-bit types): x[0] is the variable, x[1..] its
// slots in input order, s the scalar inputs in input order.
template <Optimizer O, typename A>
void Update(A* x, A g, const A* s, const ApplyState& st) {
  using std::sqrt;
  if constexpr (O == Optimizer::kGradientDescent) {
    x[0] -= g * s[0];
  } else if constexpr (O == Optimizer::kMomentum) {  // s: lr, momentum
    x[1] = x[1] * s[1] + g;
    x[0] -= st.nesterov ? g * s[0] + x[1] * s[1] * s[0] : x[1] * s[0];
  } else if constexpr (O == Optimizer::kKerasMomentum) {  // s: lr, momentum
    x[1] = x[1] * s[1] - g * s[0];
    x[0] += st.nesterov ? x[1] * s[1] - g * s[0] : x[1];
  } else if constexpr (O == Optimizer::kAdagradV2) {  // s: lr, epsilon
    if (st.update_slots) x[1] += g * g;
    x[0] -= g * s[0] / (sqrt(x[1]) + s[1]);
  } else if constexpr (O == Optimizer::kAdam) {
    // s: beta1_power, beta2_power, lr, beta1, beta2, epsilon
    const A alpha = s[2] * sqrt(A(1) - s[1]) / (A(1) - s[0]);
    x[1] += (g - x[1]) * (A(1) - s[3]);
    x[2] += (g * g - x[2]) * (A(1) - s[4]);
    const A step = st.nesterov ? (g * (A(1) - s[3]) + s[3] * x[1]) * alpha : x[1] * alpha;
    x[0] -= step / (sqrt(x[2]) + s[5]);
  } else if constexpr (O == Optimizer::kAdagrad) {  // s: lr
    if (st.update_slots) x[1] += g * g;
    x[0] -= g * s[0] * (A(1) / sqrt(x[1]));
  } else if constexpr (O == Optimizer::kAdaMax) {
    // s: beta1_power, lr, beta1, beta2, epsilon
    x[1] += (g - x[1]) * (A(1) - s[2]);
    x[2] = std::max(s[3] * x[2], std::abs(g));
    x[0] -= s[1] / (A(1) - s[0]) * (x[1] / (x[2] + s[4]));
  } else if constexpr (O == Optimizer::kAdamWithAmsgrad) {
    // s: beta1_power, beta2_power, lr, beta1, beta2, epsilon
    const A alpha = s[2] * sqrt(A(1) - s[1]) / (A(1) - s[0]);
    x[1] += (g - x[1]) * (A(1) - s[3]);
    x[2] += (g * g - x[2]) * (A(1) - s[4]);
    x[3] = std::max(x[3], x[2]);
    x[0] -= (x[1] * alpha) / (sqrt(x[3]) + s[5]);
  } else {  // RMSProp; s: lr, rho, momentum, epsilon
    x[1] += (g * g - x[1]) * (A(1) - s[1]);
    x[2] = x[2] * s[2] + g * s[0] / sqrt(x[1] + s[3]);
    x[0] -= x[2];
  }
}

// What an element updates in: float for float32 and the 16-bit types, else the type itself.
template <typename T>
using Acc = std::conditional_t<std::is_same_v<T, double> || kIsComplex<T>, T, float>;

template <typename T>
Acc<T> Load(const T& v) {
  return static_cast<Acc<T>>(reinterpret_cast<const ComputeType<T>&>(v));
}
template <typename T>
void Store(T* p, Acc<T> v) {
  reinterpret_cast<ComputeType<T>&>(*p) = static_cast<ComputeType<T>>(v);
}

template <Optimizer O>
Status ComputeApply(const KernelContext& ctx) {
  const ApplySpec& spec = SpecOf(O);
  const auto& st = ctx.state<ApplyState>();
  const int n = ctx.num_inputs();
  const int grad_index = GradIndex(O);
  std::vector<VariableResource*> vars;
  for (int i = 0; i < spec.num_vars; ++i) {
    auto v = VariableFromHandle(ctx.input(i), spec.names[i]);
    if (!v.ok()) return Wrap(ctx, v.status());
    Status s = ExpectVariableDType(**v, st.dtype);
    if (!s.ok()) return Wrap(ctx, s);
    vars.push_back(*v);
  }
  std::vector<const Tensor*> scalars;
  for (int i = spec.num_vars; i < n; ++i) {
    if (i == grad_index) continue;
    const Tensor& t = ctx.input(i);
    if (t.rank() != 0)
      return ctx.Error("input '", spec.names[i], "' must be a scalar, got shape ",
                       t.shape().ToString());
    scalars.push_back(&t);
  }
  const Tensor& grad = ctx.input(grad_index);
  Status s = VariableResource::UpdateMany(
      vars, [&](std::span<const Tensor> cur, std::vector<Tensor>* next) -> Status {
        for (size_t k = 0; k < cur.size(); ++k) {
          if (cur[k].shape() != grad.shape())
            return InvalidArgument("variable '", vars[k]->name(), "' (input '", spec.names[k],
                                   "') has shape ", cur[k].shape().ToString(), " but input '",
                                   spec.names[grad_index], "' has shape ", grad.shape().ToString());
        }
        using Types = std::conditional_t<TakesComplex(O), ComplexApplyTypes, ApplyTypes>;
        return Dispatch<Types>(st.dtype, [&](auto tag) {
          using T = typename decltype(tag)::type;
          using A = Acc<T>;
          A sc[8];
          for (size_t k = 0; k < scalars.size(); ++k) sc[k] = Load<T>(scalars[k]->data<T>()[0]);
          const T* g = grad.data<T>();
          const int nv = static_cast<int>(cur.size());
          if constexpr (O == Optimizer::kAdam && std::is_same_v<T, float>) {
            // The vectorised loop; it works in place, so copy where `next` is a new buffer.
            for (int k = 0; k < nv; ++k) {
              if (!(*next)[k].SharesBufferWith(cur[k])) {
                std::memcpy((*next)[k].raw_data(), cur[k].raw_data(), cur[k].ByteSize());
              }
            }
            const float alpha = sc[2] * std::sqrt(1.0f - sc[1]) / (1.0f - sc[0]);
            ctx.threads().ParallelFor(grad.NumElements(), 16384, [&](int64_t b, int64_t e) {
              vmath::AdamStep((*next)[0].data<float>() + b, (*next)[1].data<float>() + b,
                              (*next)[2].data<float>() + b, g + b, e - b, alpha, sc[3], sc[4],
                              sc[5], st.nesterov);
            });
            return OkStatus();
          }
          ctx.threads().ParallelFor(grad.NumElements(), 8192, [&](int64_t b, int64_t e) {
            for (int64_t i = b; i < e; ++i) {
              A x[4];
              for (int k = 0; k < nv; ++k) x[k] = Load<T>(cur[k].data<T>()[i]);
              Update<O, A>(x, Load<T>(g[i]), sc, st);
              for (int k = 0; k < nv; ++k) Store<T>(&(*next)[k].data<T>()[i], x[k]);
            }
          });
          return OkStatus();
        });
      });
  if (!s.ok()) return Wrap(ctx, s);
  return OkStatus();
}

constexpr KernelEntry kCpu[] = {
    {"ResourceApplyGradientDescent", ComputeApply<Optimizer::kGradientDescent>},
    {"ResourceApplyMomentum", ComputeApply<Optimizer::kMomentum>},
    {"ResourceApplyKerasMomentum", ComputeApply<Optimizer::kKerasMomentum>},
    {"ResourceApplyAdagradV2", ComputeApply<Optimizer::kAdagradV2>},
    {"ResourceApplyAdam", ComputeApply<Optimizer::kAdam>},
    {"ResourceApplyRMSProp", ComputeApply<Optimizer::kRmsProp>},
    {"ResourceApplyAdagrad", ComputeApply<Optimizer::kAdagrad>},
    {"ResourceApplyAdaMax", ComputeApply<Optimizer::kAdaMax>},
    {"ResourceApplyAdamWithAmsgrad", ComputeApply<Optimizer::kAdamWithAmsgrad>},
};

}  // namespace

std::span<const KernelEntry> TrainingCpuKernels() { return kCpu; }

}  // namespace kiln::exec
