// The CPU kernel of Einsum (kernels/einsum_ops.cc). Two operands are permuted into a batched
// product [batch, M, K] x [batch, K, N] (batch dims broadcast; labels only one operand has and
// the output lacks are summed first), multiplied with oneDNN (float32) or Eigen, and the product
// is permuted into the output's label order. Permutations that are already in order cost
// nothing. One operand: a permutation plus sums. A label repeated within one operand takes
// that operand's diagonal first.
#include "kernels/einsum_ops.h"

#include <Eigen/Core>
#include <algorithm>
#include <array>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <type_traits>
#include <vector>

#include "kernels/array_util.h"
#include "kernels/cpu/cpu_state.h"
#include "kernels/cpu/onednn.h"
#include "kernels/cpu/primitive_cache.h"
#include "kernels/kernel_util.h"
#include "kernels/strided_walk.h"
#include "kernels/type_lists.h"

namespace kiln::exec {
namespace {

using einsum::EinsumState;
using einsum::EinsumTypes;
using einsum::Labels;
using einsum::OutputLabels;

// The CPU kernel's state: the definition's, with its oneDNN products.
struct EinsumCpuState : EinsumState {
  using Prepared = EinsumState;
  explicit EinsumCpuState(const EinsumState& prepared) : EinsumState(prepared) {}
  // One oneDNN product, and the threads it was built for (onednn::ThreadsWorth).
  struct Product {
    std::array<int64_t, 4> key;  // (batch, m, k, n)
    dnnl::matmul primitive;
    dnnl::memory::desc scratch;
    int threads = 1;
  };
  // oneDNN products per (batch, m, k, n), made on first use.
  cpu::PrimitiveCache<Product> products;
};

// The CPU kernel's state, whose oneDNN products are made on first use.
Status CreateEinsumCpuState(PrepareContext& ctx) {
  cpu::ReplaceWithCpuState<EinsumCpuState>(ctx);
  return OkStatus();
}

// Runs a plan that permutes/broadcasts `src` into contiguous `dst`.
template <typename T>
void Permute(const KernelContext& ctx, const T* src, T* dst, CopyPlan plan) {
  FinishCopyPlan(&plan);
  ParallelWalk(plan, ctx.threads(), 65536, [&](const auto& off, int64_t n, const auto& s) {
    const T* from = src + off[1];
    T* to = dst + off[0];
    if (s[1] == 1) {
      std::copy(from, from + n, to);
    } else {
      for (int64_t j = 0; j < n; ++j) to[j] = from[j * s[1]];
    }
  });
}

// The operand `t` (labels `have`) as a contiguous tensor with dims in `want` order; labels of
// `want` the operand lacks are broadcast (size from `sizes`). Returns `t`'s data when it is
// already laid out so.
template <typename T>
Result<const T*> Arrange(const KernelContext& ctx, const Tensor& t, const std::vector<int>& have,
                         const std::vector<int>& want, const std::map<int, int64_t>& sizes) {
  std::vector<int64_t> strides(have.size());
  int64_t s = 1;
  for (int i = static_cast<int>(have.size()) - 1; i >= 0; --i) {
    strides[i] = s;
    s *= t.dim(i);
  }
  CopyPlan plan;
  bool in_order = true;
  int pos = 0;
  for (int l : want) {
    auto it = std::find(have.begin(), have.end(), l);
    const int64_t size = sizes.at(l);
    if (it == have.end() || t.dim(static_cast<int>(it - have.begin())) != size) {
      AddCopyDim(&plan, size, 0);  // broadcast
      in_order &= size == 1;
      continue;
    }
    const int i = static_cast<int>(it - have.begin());
    in_order &= i == pos++;
    AddCopyDim(&plan, size, strides[i]);
  }
  if (in_order && pos == static_cast<int>(have.size())) return t.data<T>();
  KILN_ASSIGN_OR_RETURN(void* buf,
                        ctx.AllocateTemp(static_cast<size_t>(plan.num_elements) * sizeof(T)));
  Permute<T>(ctx, t.data<T>(), static_cast<T*>(buf), plan);
  return static_cast<const T*>(buf);
}

// An operand whose subscript repeats a label ("ii", "bii"): its diagonal, one dim per
// distinct label (first occurrences' order), read with the repeated dims' strides summed.
// Replaces `*labels` with the distinct ones.
template <typename T>
Result<Tensor> Diagonal(const KernelContext& ctx, const Tensor& t, std::vector<int>* labels) {
  std::vector<int64_t> strides(labels->size());
  int64_t s = 1;
  for (int i = static_cast<int>(labels->size()) - 1; i >= 0; --i) {
    strides[i] = s;
    s *= t.dim(i);
  }
  std::vector<int> distinct;
  Shape shape;
  CopyPlan plan;
  for (size_t i = 0; i < labels->size(); ++i) {
    const int l = (*labels)[i];
    if (std::find(distinct.begin(), distinct.end(), l) != distinct.end()) continue;
    int64_t stride = 0;
    for (size_t j = i; j < labels->size(); ++j) {
      if ((*labels)[j] != l) continue;
      if (t.dim(static_cast<int>(j)) != t.dim(static_cast<int>(i)))
        return ctx.Error("label '", std::string(1, static_cast<char>(l)),
                         "' repeats within one operand over dims of sizes ",
                         t.dim(static_cast<int>(i)), " and ", t.dim(static_cast<int>(j)),
                         "; a diagonal needs equal sizes");
      stride += strides[j];
    }
    distinct.push_back(l);
    shape.AddDim(t.dim(static_cast<int>(i)));
    AddCopyDim(&plan, t.dim(static_cast<int>(i)), stride);
  }
  Tensor diag(t.dtype(), shape);
  if (diag.NumElements() > 0) Permute<T>(ctx, t.data<T>(), diag.data<T>(), plan);
  *labels = std::move(distinct);
  return diag;
}

template <typename T>
Status Contract(const KernelContext& ctx, const EinsumCpuState& st) {
  const int n = ctx.num_inputs();
  int ell = 0;
  std::vector<std::vector<int>> labels(n);
  std::map<int, int64_t> sizes;
  // The operands, an operand with a repeated label replaced by its diagonal.
  std::array<std::optional<Tensor>, 2> diagonals;
  std::array<const Tensor*, 2> operand{};
  // The labels as the equation writes them, where a diagonal replaces an operand's.
  const bool any_diagonal = st.diagonal[0] || st.diagonal[1];
  std::vector<std::vector<int>> written(any_diagonal ? n : 0);
  for (int i = 0; i < n; ++i) {
    operand[i] = &ctx.input(i);
    auto l = Labels(st.eq.inputs[i], ctx.input(i).rank(), &ell);
    if (!l.ok()) return ctx.Error(l.status().message());
    labels[i] = *l;
    if (any_diagonal) written[i] = *l;
    if (st.diagonal[i]) {
      KILN_ASSIGN_OR_RETURN(diagonals[i], Diagonal<T>(ctx, ctx.input(i), &labels[i]));
      operand[i] = &*diagonals[i];
    }
    for (size_t d = 0; d < labels[i].size(); ++d) {
      const int64_t size = operand[i]->dim(static_cast<int>(d));
      int64_t& s = sizes.try_emplace(labels[i][d], size).first->second;
      if (s == 1)
        s = size;
      else if (size != 1 && size != s)
        return ctx.Error("label dimensions do not match: ", s, " vs ", size, " in equation");
    }
  }
  const std::vector<int> out_labels = OutputLabels(st.eq, any_diagonal ? written : labels, ell);
  Shape out_shape;
  for (int l : out_labels) {
    if (!sizes.count(l))
      return ctx.Error("output label '", std::string(1, static_cast<char>(l)),
                       "' appears in no input");
    out_shape.AddDim(sizes.at(l));
  }
  auto in_out = [&](int l) {
    return std::find(out_labels.begin(), out_labels.end(), l) != out_labels.end();
  };
  auto in_op = [&](int i, int l) {
    return std::find(labels[i].begin(), labels[i].end(), l) != labels[i].end();
  };
  // Classify labels.
  std::vector<int> batch, free_a, free_b, contract, sum_a, sum_b;
  for (int l : labels[0]) {
    if (n == 2 && in_op(1, l)) {
      (in_out(l) ? batch : contract).push_back(l);
    } else {
      (in_out(l) ? free_a : sum_a).push_back(l);
    }
  }
  if (n == 2)
    for (int l : labels[1])
      if (!in_op(0, l)) (in_out(l) ? free_b : sum_b).push_back(l);
  int64_t nb = 1, m = 1, k = 1, nn = 1;
  for (int l : batch) nb *= sizes.at(l);
  for (int l : free_a) m *= sizes.at(l);
  for (int l : free_b) nn *= sizes.at(l);
  for (int l : contract) k *= sizes.at(l);
  int64_t ka = 1, kb = 1;
  for (int l : sum_a) ka *= sizes.at(l);
  for (int l : sum_b) kb *= sizes.at(l);

  // The product's label order, and whether it is the output's.
  std::vector<int> prod = batch;
  prod.insert(prod.end(), free_a.begin(), free_a.end());
  prod.insert(prod.end(), free_b.begin(), free_b.end());
  KILN_ASSIGN_OR_RETURN(Tensor * out, ctx.AllocateOutput(0, out_shape));
  if (out->NumElements() == 0) return OkStatus();
  T* result = out->data<T>();
  const bool direct = prod == out_labels;
  if (!direct) {
    KILN_ASSIGN_OR_RETURN(void* buf,
                          ctx.AllocateTemp(static_cast<size_t>(out->NumElements()) * sizeof(T)));
    result = static_cast<T*>(buf);
  }
  // A: [batch, free_a, sum_a, contract] summed over sum_a -> [batch, m, k].
  std::vector<int> a_order = batch;
  a_order.insert(a_order.end(), free_a.begin(), free_a.end());
  a_order.insert(a_order.end(), sum_a.begin(), sum_a.end());
  a_order.insert(a_order.end(), contract.begin(), contract.end());
  KILN_ASSIGN_OR_RETURN(const T* a, Arrange<T>(ctx, *operand[0], labels[0], a_order, sizes));
  const int64_t a_rows = nb * m;
  if (ka > 1) {
    KILN_ASSIGN_OR_RETURN(void* buf, ctx.AllocateTemp(static_cast<size_t>(a_rows * k) * sizeof(T)));
    T* reduced = static_cast<T*>(buf);
    for (int64_t r = 0; r < a_rows; ++r)
      for (int64_t j = 0; j < k; ++j) {
        T sum = 0;
        for (int64_t s = 0; s < ka; ++s) sum += a[(r * ka + s) * k + j];
        reduced[r * k + j] = sum;
      }
    a = reduced;
  }
  if (n == 1) {
    std::copy(a, a + a_rows * k, result);  // k == 1: nothing is contracted
  } else {
    std::vector<int> b_order = batch;
    b_order.insert(b_order.end(), sum_b.begin(), sum_b.end());
    b_order.insert(b_order.end(), contract.begin(), contract.end());
    b_order.insert(b_order.end(), free_b.begin(), free_b.end());
    KILN_ASSIGN_OR_RETURN(const T* b, Arrange<T>(ctx, *operand[1], labels[1], b_order, sizes));
    if (kb > 1) {
      KILN_ASSIGN_OR_RETURN(void* buf,
                            ctx.AllocateTemp(static_cast<size_t>(nb * k * nn) * sizeof(T)));
      T* reduced = static_cast<T*>(buf);
      for (int64_t bi = 0; bi < nb; ++bi)
        for (int64_t j = 0; j < k * nn; ++j) {
          T sum = 0;
          for (int64_t s = 0; s < kb; ++s) sum += b[(bi * kb + s) * k * nn + j];
          reduced[bi * k * nn + j] = sum;
        }
      b = reduced;
    }
    if (k == 0) {
      std::fill(result, result + nb * m * nn, T(0));
    } else if constexpr (std::is_same_v<T, float>) {
      const std::array<int64_t, 4> key = {nb, m, k, nn};
      auto make = [&]() -> Result<std::unique_ptr<EinsumCpuState::Product>> {
        auto made = std::make_unique<EinsumCpuState::Product>();
        KILN_RETURN_IF_ERROR(onednn::DnnlCall("einsum product setup", [&] {
          const onednn::BuildThreads build(
              onednn::ThreadsWorth(static_cast<double>(nb) * static_cast<double>(m) *
                                   static_cast<double>(k) * static_cast<double>(nn)));
          using tag = dnnl::memory::format_tag;
          dnnl::memory::desc am({nb, m, k}, dnnl::memory::data_type::f32, tag::abc);
          dnnl::memory::desc bm({nb, k, nn}, dnnl::memory::data_type::f32, tag::abc);
          dnnl::memory::desc cm({nb, m, nn}, dnnl::memory::data_type::f32, tag::abc);
          dnnl::primitive_attr attr;
          attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
          dnnl::matmul::primitive_desc pd(dnnl::matmul::desc(am, bm, cm), attr, onednn::Engine());
          (void)onednn::IsReference(pd);  // counted for the tests; plain layouts never are
          *made = {key, dnnl::matmul(pd), pd.scratchpad_desc(), build.threads()};
        }));
        return made;
      };
      KILN_ASSIGN_OR_RETURN(
          const EinsumCpuState::Product* prim,
          st.products.Get([&](const EinsumCpuState::Product& p) { return p.key == key; }, make));
      dnnl::memory am, bm, cm;
      KILN_RETURN_IF_ERROR(onednn::DnnlCall("einsum memory", [&] {
        using tag = dnnl::memory::format_tag;
        const dnnl::engine& eng = onednn::Engine();
        am = dnnl::memory({{nb, m, k}, dnnl::memory::data_type::f32, tag::abc}, eng,
                          const_cast<T*>(a));
        bm = dnnl::memory({{nb, k, nn}, dnnl::memory::data_type::f32, tag::abc}, eng,
                          const_cast<T*>(b));
        cm = dnnl::memory({{nb, m, nn}, dnnl::memory::data_type::f32, tag::abc}, eng, result);
      }));
      KILN_RETURN_IF_ERROR(
          onednn::Execute(ctx, prim->primitive, prim->scratch, prim->threads,
                          {{DNNL_ARG_SRC, &am}, {DNNL_ARG_WEIGHTS, &bm}, {DNNL_ARG_DST, &cm}}));
    } else {
      using Mat = Eigen::Matrix<T, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
      for (int64_t bi = 0; bi < nb; ++bi)
        Eigen::Map<Mat>(result + bi * m * nn, m, nn).noalias() =
            Eigen::Map<const Mat>(a + bi * m * k, m, k) *
            Eigen::Map<const Mat>(b + bi * k * nn, k, nn);
    }
  }
  if (!direct) {
    // The product [batch, free_a, free_b] into the output's order.
    std::vector<int64_t> strides(prod.size());
    int64_t s = 1;
    for (int i = static_cast<int>(prod.size()) - 1; i >= 0; --i) {
      strides[i] = s;
      s *= sizes.at(prod[i]);
    }
    CopyPlan plan;
    for (int l : out_labels) {
      const int i = static_cast<int>(std::find(prod.begin(), prod.end(), l) - prod.begin());
      AddCopyDim(&plan, sizes.at(l), strides[i]);
    }
    Permute<T>(ctx, result, out->data<T>(), plan);
  }
  return OkStatus();
}

Status ComputeEinsum(const KernelContext& ctx) {
  std::optional<EinsumCpuState> local;
  const EinsumCpuState& st = cpu::CpuStateOf(ctx, &local);
  return Dispatch<EinsumTypes>(
      st.dtype, [&](auto tag) { return Contract<typename decltype(tag)::type>(ctx, st); });
}

constexpr KernelEntry kCpu[] = {
    {"Einsum", ComputeEinsum, 0, 0, nullptr, CreateEinsumCpuState},
};

}  // namespace

std::span<const KernelEntry> EinsumCpuKernels() { return kCpu; }

}  // namespace kiln::exec
