// Einsum: TensorFlow's Einstein summation (tf.einsum), the contraction at the heart of Keras'
// MultiHeadAttention and EinsumDense: definition. The CPU kernel is in kernels/cpu/einsum_ops.cc;
// a device whose kernel is one library product takes the plan of einsum_plan.h
// (PlanEinsumProduct, below; it leaves a label repeated within one operand, a diagonal, to the
// CPU).
#include "kernels/einsum_ops.h"

#include <algorithm>
#include <cstdint>
#include <initializer_list>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "kernels/einsum_plan.h"
#include "kernels/kernel_util.h"
#include "kernels/type_lists.h"

namespace kiln::exec {
namespace {

using einsum::EinsumState;
using einsum::EinsumTypes;
using einsum::Equation;
using einsum::Labels;
using einsum::OutputLabels;
using einsum::ParseEquation;

Status PrepareEinsum(PrepareContext& ctx) {
  KILN_PREPARE_ASSIGN(ctx, int64_t n, ctx.attrs.GetInt("N"));
  if (n != 1 && n != 2)
    return Unimplemented("node '", ctx.node_name, "' (Einsum): ", n,
                         " operands; only 1 or 2 are supported");
  KILN_RETURN_IF_ERROR(ctx.ExpectInputs(static_cast<int>(n)));
  auto st = std::make_shared<EinsumState>();
  KILN_PREPARE_ASSIGN(ctx, st->dtype, ctx.attrs.GetType("T"));
  KILN_RETURN_IF_ERROR(ExpectAttrDTypeIn(ctx, "T", st->dtype, EinsumTypes::kDTypes));
  KILN_PREPARE_ASSIGN(ctx, std::string equation, ctx.attrs.GetString("equation"));
  auto eq = ParseEquation(equation, static_cast<int>(n));
  if (!eq.ok()) return ctx.Error(eq.status().message());
  st->eq = *eq;
  for (int i = 0; i < n; ++i) {
    KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, i, internal::StrCat("inputs:", i), st->dtype));
    const std::string& sub = st->eq.inputs[i];
    for (size_t a = 0; a < sub.size(); ++a)
      st->diagonal[i] = st->diagonal[i] || (sub[a] != '.' && sub.find(sub[a], a + 1) != sub.npos);
  }
  // Output shape when the input shapes are known.
  PartialShape out;
  bool known = true;
  for (int i = 0; i < n; ++i) known &= !ctx.inputs[i].shape.unknown_rank();
  if (known) {
    int ell = 0;
    std::vector<std::vector<int>> labels(n);
    std::map<int, int64_t> sizes;
    for (int i = 0; i < n; ++i) {
      auto l = Labels(st->eq.inputs[i], ctx.inputs[i].shape.rank(), &ell);
      if (!l.ok()) return ctx.Error(l.status().message());
      labels[i] = *l;
      for (size_t d = 0; d < labels[i].size(); ++d) {
        const int64_t size = ctx.inputs[i].shape.dim(static_cast<int>(d));
        int64_t& s = sizes.try_emplace(labels[i][d], size).first->second;
        if (s == 1 || s < 0)
          s = size;
        else if (size >= 0 && size != 1 && size != s)
          return ctx.Error("label dimensions do not match: ", s, " vs ", size);
      }
    }
    std::vector<int64_t> dims;
    for (int l : OutputLabels(st->eq, labels, ell)) {
      auto it = sizes.find(l);
      if (it == sizes.end())
        return ctx.Error("output label '", std::string(1, static_cast<char>(l)),
                         "' appears in no input");
      dims.push_back(it->second);
    }
    KILN_PREPARE_ASSIGN(ctx, out, PartialShape::FromDims(dims));
  }
  ctx.outputs = {TensorSpec{st->dtype, out}};
  ctx.state = std::move(st);
  return OkStatus();
}

constexpr OpDefinition kDefs[] = {
    {"Einsum", "output", kOpFreshOutputs, PrepareEinsum},
};

}  // namespace

Result<EinsumProduct> PlanEinsumProduct(const std::string& equation, const Shape& a,
                                        const Shape& b) {
  KILN_ASSIGN_OR_RETURN(Equation eq, ParseEquation(equation, 2));
  int ell = 0;
  const Shape* shapes[2] = {&a, &b};
  std::vector<std::vector<int>> labels(2);
  std::map<int, int64_t> sizes;
  for (int i = 0; i < 2; ++i) {
    KILN_ASSIGN_OR_RETURN(labels[i], Labels(eq.inputs[i], shapes[i]->rank(), &ell));
    for (size_t d = 0; d < labels[i].size(); ++d) {
      if (std::count(labels[i].begin(), labels[i].end(), labels[i][d]) > 1)
        return Unimplemented("einsum '", equation, "': a repeated label");
      const int64_t size = shapes[i]->dim(static_cast<int>(d));
      auto [it, fresh] = sizes.try_emplace(labels[i][d], size);
      if (!fresh && it->second != size)
        return Unimplemented("einsum '", equation, "': label sizes ", it->second, " and ", size,
                             " (broadcasting) in one product");
    }
  }
  const std::vector<int> out_labels = OutputLabels(eq, labels, ell);
  auto has = [](const std::vector<int>& v, int l) {
    return std::find(v.begin(), v.end(), l) != v.end();
  };
  std::vector<int> batch, free_a, free_b, contract;
  for (int l : labels[0]) {
    if (has(labels[1], l)) {
      (has(out_labels, l) ? batch : contract).push_back(l);
    } else if (has(out_labels, l)) {
      free_a.push_back(l);
    } else {
      return Unimplemented("einsum '", equation, "': a label summed within one operand");
    }
  }
  for (int l : labels[1])
    if (!has(labels[0], l)) {
      if (!has(out_labels, l))
        return Unimplemented("einsum '", equation, "': a label summed within one operand");
      free_b.push_back(l);
    }
  EinsumProduct p;
  auto order = [&](const std::vector<int>& have, std::initializer_list<const std::vector<int>*> w) {
    std::vector<int> perm;
    for (const std::vector<int>* group : w)
      for (int l : *group)
        perm.push_back(static_cast<int>(std::find(have.begin(), have.end(), l) - have.begin()));
    return perm;
  };
  p.perm_a = order(labels[0], {&batch, &free_a, &contract});
  p.perm_b = order(labels[1], {&batch, &contract, &free_b});
  for (int l : batch) p.batch *= sizes.at(l);
  for (int l : free_a) p.m *= sizes.at(l);
  for (int l : contract) p.k *= sizes.at(l);
  for (int l : free_b) p.n *= sizes.at(l);
  std::vector<int> prod = batch;
  prod.insert(prod.end(), free_a.begin(), free_a.end());
  prod.insert(prod.end(), free_b.begin(), free_b.end());
  for (int l : prod) p.product_dims.push_back(sizes.at(l));
  for (int l : out_labels) {
    const auto it = std::find(prod.begin(), prod.end(), l);
    if (it == prod.end())
      return InvalidArgument("einsum '", equation, "': output label appears in no input");
    p.out_perm.push_back(static_cast<int>(it - prod.begin()));
    p.out_shape.AddDim(sizes.at(l));
  }
  return p;
}

std::span<const OpDefinition> EinsumOpDefs() { return kDefs; }

}  // namespace kiln::exec
