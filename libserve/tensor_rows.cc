#include "kiln/serve/tensor_rows.h"

#include <cstring>
#include <string>

namespace kiln::serve {
namespace {

// Copies `rows` rows of `row_elems` elements from src (starting at row src_row) to dst.
void CopyRows(const Tensor& src, int64_t src_row, Tensor* dst, int64_t dst_row, int64_t rows,
              int64_t row_elems) {
  if (rows <= 0 || row_elems == 0) return;
  if (src.dtype() == DType::kString) {
    const std::string* s = src.data<std::string>() + src_row * row_elems;
    std::string* d = dst->data<std::string>() + dst_row * row_elems;
    std::copy(s, s + rows * row_elems, d);
    return;
  }
  const size_t es = DTypeSize(src.dtype());
  std::memcpy(static_cast<char*>(dst->raw_data()) + dst_row * row_elems * es,
              static_cast<const char*>(src.raw_data()) + src_row * row_elems * es,
              static_cast<size_t>(rows * row_elems) * es);
}

int64_t RowElements(const Tensor& t) {
  int64_t n = 1;
  for (int i = 1; i < t.rank(); ++i) n *= t.dim(i);
  return n;
}

}  // namespace

Result<Tensor> ConcatRows(std::span<const Tensor> parts, int64_t pad_to) {
  if (parts.empty()) return InvalidArgument("ConcatRows: no tensors");
  const Tensor& first = parts[0];
  if (first.rank() < 1) return InvalidArgument("ConcatRows: a scalar has no rows");
  if (!DTypeIsPod(first.dtype()) && first.dtype() != DType::kString)
    return InvalidArgument("ConcatRows: cannot batch ", DTypeShortName(first.dtype()), " tensors");
  int64_t rows = 0;
  for (const Tensor& p : parts) {
    bool same = p.dtype() == first.dtype() && p.rank() == first.rank();
    for (int i = 1; same && i < p.rank(); ++i) same = p.dim(i) == first.dim(i);
    if (!same)
      return InvalidArgument("cannot batch ", p.DebugString(), " with ", first.DebugString(),
                             ": dtypes and dimensions after the first must match");
    rows += p.dim(0);
  }
  const int64_t total = std::max(rows, pad_to);
  Shape shape = first.shape();
  shape.set_dim(0, total);
  Tensor out(first.dtype(), shape);
  const int64_t row_elems = RowElements(first);
  int64_t at = 0;
  for (const Tensor& p : parts) {
    CopyRows(p, 0, &out, at, p.dim(0), row_elems);
    at += p.dim(0);
  }
  for (; at < total && rows > 0; ++at) CopyRows(out, 0, &out, at, 1, row_elems);
  return out;
}

Tensor SliceRows(const Tensor& t, int64_t begin, int64_t count) {
  Shape shape = t.shape();
  shape.set_dim(0, count);
  Tensor out(t.dtype(), shape);
  CopyRows(t, begin, &out, 0, count, RowElements(t));
  return out;
}

}  // namespace kiln::serve
