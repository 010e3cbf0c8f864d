// Op families: CountSparse EditDistance SparseManip SparseMath
#include "kernels/sparse_util.h"

#include <string>

#include "kernels/kernel_util.h"
#include "kernels/nd_index.h"

namespace kiln::exec {

Result<SparseInput> ReadSparseInput(const KernelContext& ctx, int first, std::string_view what) {
  const Tensor& ind = ctx.input(first);
  const Tensor& val = ctx.input(first + 1);
  const Tensor& shp = ctx.input(first + 2);
  if (ind.rank() != 2 || val.rank() != 1 || shp.rank() != 1 || ind.dim(0) != val.dim(0) ||
      ind.dim(1) != shp.dim(0)) {
    return ctx.Error(what, ": expected indices [N, R], values [N] and shape [R], got ",
                     ind.shape().ToString(), ", ", val.shape().ToString(), " and ",
                     shp.shape().ToString());
  }
  SparseInput s;
  s.idx = ind.data<int64_t>();
  s.values = &val;
  s.shape = IndexValues(shp);
  s.n = ind.dim(0);
  s.rank = ind.dim(1);
  for (int64_t i = 0; i < s.n; ++i) {
    for (int64_t d = 0; d < s.rank; ++d) {
      if (s.row(i)[d] < 0 || s.row(i)[d] >= s.shape[d]) {
        return ctx.Error(what, ": indices[", i,
                         "] = ", ShapeBrackets({s.row(i), static_cast<size_t>(s.rank)}),
                         " is out of bounds for shape ", ShapeBrackets(s.shape));
      }
    }
  }
  return s;
}

Status ExpectSparseInputs(PrepareContext& ctx, int first, DType t, std::string_view prefix) {
  const std::string p(prefix);
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, first, p + "indices", DType::kInt64));
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, first + 1, p + "values", t));
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, first + 2, p + "shape", DType::kInt64));
  KILN_RETURN_IF_ERROR(ExpectInputRank(ctx, first, p + "indices", 2));
  KILN_RETURN_IF_ERROR(ExpectInputRank(ctx, first + 1, p + "values", 1));
  return ExpectInputRank(ctx, first + 2, p + "shape", 1);
}

}  // namespace kiln::exec
