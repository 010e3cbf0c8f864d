// The CPU kernels of the ops in kernels/matmul_ops.cc.
// float32 runs on oneDNN. Constant weights of a product of more than one row are packed once
// into the layout oneDNN's kernel chooses (its GEMM given plain weights packs them on every
// call: at 64 rows that was 45 % of a Dense layer's time); where its kernel reads them plain
// (the GEMM, oneDNN 2.6's only one for AVX2), rows a multiple of 512 bytes apart are read from a
// copy with wider rows (onednn::PaddedWeightRow: the GEMM's packed blocks otherwise share cache
// sets). One-row products read the weights as given (RowTimesMatrix, a vector loop). Half and
// bfloat16 products are float32 products of widened copies, rounded once (TF's CPU MatMul
// accumulates them in float32; a half-precision sum of k terms loses ~log2(k) bits), as are
// BatchMatMulV3's bfloat16 x int8/uint8 forms; its int8/uint8 x int8/uint8 -> int32 forms are
// exact (BytesProduct). Other dtypes run an Eigen product per batch.
#include "kernels/matmul_ops.h"

#include <Eigen/Core>
#include <algorithm>
#include <cstdint>
#include <memory>
#include <mutex>
#include <new>
#include <optional>
#include <span>
#include <type_traits>
#include <utility>
#include <vector>

#include "kernels/cpu/cpu_state.h"
#include "kernels/cpu/onednn.h"
#include "kernels/cpu/primitive_cache.h"
#include "kernels/cpu/row_product.h"
#include "kernels/epilogue.h"
#include "kernels/kernel_util.h"
#include "kernels/type_lists.h"

namespace kiln::exec {
namespace {

using matmul::BatchShape;
using matmul::BoolName;
using matmul::MatMulState;
using matmul::MatMulTypes;

// One oneDNN product for one problem shape.
struct DnnlMatMul {
  std::vector<int64_t> a_dims, b_dims;  // the key: operand shapes as multiplied (ProductRows)
  dnnl::memory::desc a_md, b_md, bias_md, c_md;
  dnnl::matmul primitive;
  dnnl::memory::desc scratch_md;
  int threads = 1;        // what the primitive was built for (onednn::ThreadsWorth)
  onednn::LeanTwin lean;  // for calls while other work holds the cores
  // oneDNN had only its reference kernel for these operands: Eigen's product is faster.
  bool reference = false;
  // Constant weights in the primitive's own layout (b_md describes it), or copied with wider
  // rows for a kernel that reads them plain; null: b as given.
  std::shared_ptr<const void> packed_b;
};

// The CPU kernel's state: the definition's, with its oneDNN products and packed weights.
struct MatMulCpuState : MatMulState {
  using Prepared = MatMulState;
  explicit MatMulCpuState(const MatMulState& prepared) : MatMulState(prepared) {}
  // float32 products through oneDNN, per shape (CreateMatMulCpuState makes the first).
  cpu::PrimitiveCache<DnnlMatMul> primitives;
  // The constant b (rank 2, float32: a layer's weights) that products of more than one row
  // read packed.
  std::optional<Tensor> packable_b;
};

// The weights copied with wider rows, one copy per constant: a function is prepared more than
// once (per signature, per inlined call), and each preparation finds the copy the others made.
// An entry holds the constant (sharing its buffer), so no other tensor can reuse its address
// while the entry lives; expired entries are dropped as new ones are made.
struct PaddedWeights {
  Tensor original;
  std::unique_ptr<float[]> rows;
};

std::shared_ptr<const float> PaddedCopy(const Tensor& weights, int64_t ld) {
  static std::mutex mu;
  static std::vector<std::weak_ptr<PaddedWeights>> copies;
  const std::lock_guard<std::mutex> lock(mu);
  std::erase_if(copies, [](const std::weak_ptr<PaddedWeights>& w) { return w.expired(); });
  for (const auto& w : copies) {
    std::shared_ptr<PaddedWeights> c = w.lock();
    if (c != nullptr && c->original.raw_data() == weights.raw_data() &&
        c->original.shape() == weights.shape())
      return {c, c->rows.get()};
  }
  const int64_t rows = weights.dim(0), cols = weights.dim(1);
  auto c = std::make_shared<PaddedWeights>();
  c->rows.reset(new (std::nothrow) float[static_cast<size_t>(rows * ld)]());
  if (c->rows == nullptr) return nullptr;
  for (int64_t r = 0; r < rows; ++r)
    std::copy_n(weights.data<float>() + r * cols, cols, c->rows.get() + r * ld);
  c->original = weights;
  copies.push_back(c);
  // The original is not read again by this kernel: a mapped bundle's pages go back, so the
  // weights are resident once.
  weights.buffer()->ReleasePages();
  return {c, c->rows.get()};
}

// Constant weights packed into a primitive's layout, one copy per constant and layout: the
// primitives of every preparation and every batch size whose kernels read the same layout share
// it. An entry holds the constant (sharing its buffer), so no other tensor can take its address
// while the entry lives; expired entries are dropped as new ones are made.
struct PackedWeights {
  Tensor original;
  dnnl::memory::desc layout;
  std::shared_ptr<void> data;
};

// `plain` describes the weights as given.
std::shared_ptr<const void> PackedCopy(const Tensor& weights, const dnnl::memory::desc& plain,
                                       const dnnl::memory::desc& layout) {
  static std::mutex mu;
  static std::vector<std::weak_ptr<PackedWeights>> copies;
  const std::lock_guard<std::mutex> lock(mu);
  std::erase_if(copies, [](const std::weak_ptr<PackedWeights>& w) { return w.expired(); });
  for (const auto& w : copies) {
    std::shared_ptr<PackedWeights> c = w.lock();
    if (c != nullptr && c->original.raw_data() == weights.raw_data() &&
        c->original.shape() == weights.shape() && c->layout == layout)
      return {c, c->data.get()};
  }
  auto c = std::make_shared<PackedWeights>();
  c->data = onednn::PackWeights(dnnl::reorder(dnnl::reorder::primitive_desc(
                                    onednn::Engine(), plain, onednn::Engine(), layout)),
                                plain, weights.raw_data(), layout);
  c->original = weights;
  c->layout = layout;
  copies.push_back(c);
  weights.buffer()->ReleasePages();  // read again only by one-row products, from the file
  return {c, c->data.get()};
}

dnnl::memory::desc RowMajorDesc(const dnnl::memory::dims& dims) {
  dnnl::memory::dims strides(dims.size());
  int64_t s = 1;
  for (size_t i = dims.size(); i-- > 0;) {
    strides[i] = s;
    s *= dims[i];
  }
  return dnnl::memory::desc(dims, dnnl::memory::data_type::f32, strides);
}

// Operand dims of rank `rank` with leading 1s, and the strides of its row-major layout when
// its last two dims are swapped (adjoint).
dnnl::memory::desc OperandDesc(std::span<const int64_t> dims, size_t rank, bool adjoint,
                               int64_t row_stride = 0) {
  dnnl::memory::dims d(rank, 1);
  std::copy(dims.begin(), dims.end(), d.end() - dims.size());
  // Physical layout: row-major over `dims`.
  dnnl::memory::dims strides(rank, 0);
  int64_t s = 1;
  for (size_t i = rank; i-- > 0;) {
    strides[i] = s;
    s *= i + 1 == rank && row_stride > 0 ? row_stride : d[i];
  }
  if (adjoint) {
    std::swap(d[rank - 1], d[rank - 2]);
    std::swap(strides[rank - 1], strides[rank - 2]);
  }
  // Size-1 batch dims keep their row-major stride: oneDNN broadcasts them by their size. A
  // stride of 0 would be the same numbers, but oneDNN 2.6 then leaves its GEMM for the
  // reference kernel (hundreds of times slower: a batch-1 transformer took minutes).
  return dnnl::memory::desc(d, dnnl::memory::data_type::f32, strides);
}

// The operand dims a product is made for: a batch of rows times one matrix (Keras's Dense on a
// sequence: [batch, steps, k] x [k, n]) is one product of all the rows, [batch * steps, k] x
// [k, n], the same bytes in and out; oneDNN 2.6 gives a batched product with broadcast weights
// its GEMM per batch (40 GFLOP/s on 8 x 49 x 128 x 128, where 392 rows at once reach 100).
std::vector<int64_t> ProductRows(const MatMulState& st, std::span<const int64_t> a,
                                 std::span<const int64_t> b) {
  if (st.adj_a || a.size() <= 2 || b.size() != 2) return {a.begin(), a.end()};
  int64_t rows = 1;
  for (size_t i = 0; i + 1 < a.size(); ++i) rows *= a[i];
  return {rows, a.back()};
}

Result<std::unique_ptr<DnnlMatMul>> MakeDnnlMatMul(const MatMulCpuState& st,
                                                   std::span<const int64_t> a,
                                                   std::span<const int64_t> b) {
  auto mm = std::make_unique<DnnlMatMul>();
  mm->a_dims.assign(a.begin(), a.end());
  mm->b_dims.assign(b.begin(), b.end());
  std::vector<int64_t> batch;
  if (!BatchShape(a, b, &batch)) return InvalidArgument("batch dims do not broadcast");
  const size_t rank = batch.size() + 2;
  const int64_t m = a[a.size() - (st.adj_a ? 1 : 2)];
  const int64_t n = b[b.size() - (st.adj_b ? 2 : 1)];
  mm->a_md = OperandDesc(a, rank, st.adj_a);
  const bool pack = st.packable_b.has_value() && m > 1;
  mm->b_md = OperandDesc(b, rank, st.adj_b);
  dnnl::memory::dims c(batch.begin(), batch.end());
  c.push_back(m);
  c.push_back(n);
  mm->c_md = RowMajorDesc(c);
  dnnl::memory::dims bias_dims(rank, 1);
  bias_dims[rank - 1] = n;
  if (st.epilogue.bias) mm->bias_md = RowMajorDesc(bias_dims);
  int64_t batch_size = 1;
  for (int64_t d : batch) batch_size *= d;
  const int64_t k = a[a.size() - (st.adj_a ? 2 : 1)];
  KILN_RETURN_IF_ERROR(onednn::DnnlCall("matmul setup", [&] {
    const double macs = static_cast<double>(batch_size) * static_cast<double>(m) *
                        static_cast<double>(n) * static_cast<double>(k);
    const onednn::BuildThreads build(onednn::ThreadsWorth(macs));
    mm->threads = build.threads();
    mm->lean.Plan(macs, mm->threads);
    dnnl::post_ops ops;
    if (st.epilogue.add) ops.append_sum(1.f);
    onednn::AppendActivation(st.epilogue, &ops);
    dnnl::primitive_attr attr;
    attr.set_post_ops(ops);
    attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
    const dnnl::memory::desc b_any =
        pack ? dnnl::memory::desc(mm->b_md.dims(), dnnl::memory::data_type::f32,
                                  dnnl::memory::format_tag::any)
             : mm->b_md;
    auto desc = st.epilogue.bias ? dnnl::matmul::desc(mm->a_md, b_any, mm->bias_md, mm->c_md)
                                 : dnnl::matmul::desc(mm->a_md, b_any, mm->c_md);
    dnnl::matmul::primitive_desc pd(desc, attr, onednn::Engine());
    mm->reference = onednn::IsReference(pd);
    if (mm->reference) return;
    const Tensor* w = st.packable_b.has_value() ? &*st.packable_b : nullptr;
    if (pack && pd.weights_desc() != mm->b_md) {
      mm->packed_b = PackedCopy(*w, mm->b_md, pd.weights_desc());
      mm->b_md = pd.weights_desc();
    } else if (w != nullptr && w->dim(0) > 1 && onednn::PaddedWeightRow(w->dim(1)) != w->dim(1)) {
      // A kernel that reads the weights plain (oneDNN's GEMM, the only one for AVX2 in 2.6):
      // from a copy with wider rows.
      const int64_t ld = onednn::PaddedWeightRow(w->dim(1));
      std::shared_ptr<const float> padded = PaddedCopy(*w, ld);
      if (padded != nullptr) {
        mm->b_md = OperandDesc(b, rank, st.adj_b, ld);
        auto padded_desc = st.epilogue.bias
                               ? dnnl::matmul::desc(mm->a_md, mm->b_md, mm->bias_md, mm->c_md)
                               : dnnl::matmul::desc(mm->a_md, mm->b_md, mm->c_md);
        pd = dnnl::matmul::primitive_desc(padded_desc, attr, onednn::Engine());
        mm->packed_b = std::move(padded);
      }
    }
    mm->scratch_md = pd.scratchpad_desc();
    mm->primitive = dnnl::matmul(pd);
  }));
  return mm;
}

// Whether the product runs in float32 over widened operands: half precision, and bfloat16 with
// byte operands.
bool WidensToFloat(const MatMulState& st) {
  return st.dtype == DType::kHalf || st.dtype == DType::kBFloat16;
}

// The CPU kernel's state: with known shapes, the oneDNN primitive now (empty products never
// reach oneDNN).
Status CreateMatMulCpuState(PrepareContext& ctx) {
  MatMulCpuState* st = cpu::ReplaceWithCpuState<MatMulCpuState>(ctx);
  const PartialShape& a = ctx.inputs[0].shape;
  const PartialShape& b = ctx.inputs[1].shape;
  const Tensor* weights = ctx.constant_inputs[1];
  if (st->dtype == DType::kFloat && weights != nullptr && weights->rank() == 2 &&
      weights->NumElements() > 0)
    st->packable_b = *weights;
  // The fused Add's addend is summed into the output (AllocateOutputWithAddend).
  if (st->epilogue.add && st->dtype == DType::kFloat && st->a_dtype == st->dtype &&
      st->b_dtype == st->dtype)
    ctx.in_place_input = st->epilogue.addend_input();
  if (st->dtype != DType::kFloat || !a.IsFullyDefined() || !b.IsFullyDefined() ||
      a.ToShape()->num_elements() == 0 || b.ToShape()->num_elements() == 0)
    return OkStatus();
  auto mm = MakeDnnlMatMul(*st, ProductRows(*st, a.dims(), b.dims()), b.dims());
  if (!mm.ok()) return ctx.Error(mm.status().message());
  st->primitives.SetPrepared(std::move(mm).value());
  return OkStatus();
}

// ---- compute ---------------------------------------------------------------------------------

Result<const DnnlMatMul*> FindDnnlMatMul(const MatMulCpuState& st, const Shape& a_shape,
                                         const Shape& b) {
  const std::vector<int64_t> a = ProductRows(st, a_shape.dims(), b.dims());
  auto matches = [&](const DnnlMatMul& mm) {
    return std::equal(mm.a_dims.begin(), mm.a_dims.end(), a.begin(), a.end()) &&
           std::equal(mm.b_dims.begin(), mm.b_dims.end(), b.dims().begin(), b.dims().end());
  };
  return st.primitives.Get(matches, [&] { return MakeDnnlMatMul(st, a, b.dims()); });
}

template <typename T>
void EigenProduct(const MatMulState& st, const Tensor& a, const Tensor& b, Tensor* out,
                  const std::vector<int64_t>& batch) {
  using C = ComputeType<T>;
  using Mat = Eigen::Matrix<C, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
  const int ra = a.rank(), rb = b.rank();
  const int64_t ar = a.dim(ra - 2), ac = a.dim(ra - 1), br = b.dim(rb - 2), bc = b.dim(rb - 1);
  const int64_t m = out->dim(out->rank() - 2), n = out->dim(out->rank() - 1);
  const int64_t k = st.adj_a ? ar : ac;
  int64_t batches = 1;
  for (int64_t d : batch) batches *= d;
  const C* ad = ComputeData<T>(a);
  const C* bd = ComputeData<T>(b);
  C* od = MutableComputeData<T>(out);
  const int nb = static_cast<int>(batch.size());
  // float and double multiply transposed operands in place (Eigen instantiates a product per
  // transposition); the rarer types copy a transposed operand (BatchMatMul's complex adjoint:
  // conjugated) and instantiate one product each, which halved this file's compile time.
  constexpr bool kEveryForm = std::is_same_v<C, float> || std::is_same_v<C, double>;
  Mat at, bt;
  for (int64_t i = 0; i < batches; ++i) {
    // Offsets of batch i in a and b under broadcasting.
    int64_t rem = i, ao = 0, bo = 0, astride = ar * ac, bstride = br * bc;
    for (int d = nb - 1; d >= 0; --d) {
      const int64_t idx = rem % batch[d];
      rem /= batch[d];
      const int ad_i = d - (nb - (ra - 2)), bd_i = d - (nb - (rb - 2));
      if (ad_i >= 0) {
        if (a.dim(ad_i) != 1) ao += idx * astride;
        astride *= a.dim(ad_i);
      }
      if (bd_i >= 0) {
        if (b.dim(bd_i) != 1) bo += idx * bstride;
        bstride *= b.dim(bd_i);
      }
    }
    Eigen::Map<const Mat> am(ad + ao, ar, ac), bm(bd + bo, br, bc);
    Eigen::Map<Mat> om(od + i * m * n, m, n);
    if (k == 0) {
      om.setZero();
    } else if constexpr (!kEveryForm) {
      // BatchMatMul's adj_x / adj_y are adjoints (MatMul's transpose_a / _b are transposes).
      const bool adjoint = kIsComplex<C> && st.batched;
      if (st.adj_a) at = adjoint ? Mat(am.adjoint()) : Mat(am.transpose());
      if (st.adj_b) bt = adjoint ? Mat(bm.adjoint()) : Mat(bm.transpose());
      using Ref = Eigen::Ref<const Mat>;
      om.noalias() = (st.adj_a ? Ref(at) : Ref(am)) * (st.adj_b ? Ref(bt) : Ref(bm));
    } else if (st.adj_a && st.adj_b) {
      om.noalias() = am.transpose() * bm.transpose();
    } else if (st.adj_a) {
      om.noalias() = am.transpose() * bm;
    } else if (st.adj_b) {
      om.noalias() = am * bm.transpose();
    } else {
      om.noalias() = am * bm;
    }
  }
}

// One row times one matrix (a Dense layer at batch 1): row_product.h, then the activation in
// TF's order (NaN kept). `out` holds the addend when the epilogue adds one.
Status RowTimesMatrix(const KernelContext& ctx, const MatMulCpuState& st, const float* x,
                      const Tensor& b, int64_t k, int64_t n, Tensor* out) {
  const Epilogue& e = st.epilogue;
  KILN_RETURN_IF_ERROR(RowTimesMatrix(ctx, x, b.data<float>(), k, n,
                                      e.bias ? ctx.input(2).data<float>() : nullptr, e.add,
                                      out->data<float>()));
  onednn::ApplyActivation(e, out->data<float>(), n, ctx.threads());
  return OkStatus();
}

// A float32 product and its epilogue into `out`, which holds the addend when the epilogue adds
// one.
Status FloatProduct(const KernelContext& ctx, const MatMulCpuState& st, const Tensor& a,
                    const Tensor& b, Tensor* out, const std::vector<int64_t>& batch) {
  const Epilogue& e = st.epilogue;
  const int64_t m = out->dim(out->rank() - 2), n = out->dim(out->rank() - 1);
  const int64_t ka = a.dim(a.rank() - (st.adj_a ? 2 : 1));
  if (ka == 0) {
    // An empty sum: zeros, plus what the epilogue adds.
    float* o = out->data<float>();
    const bool keep = e.add;
    for (int64_t i = 0; i < out->NumElements(); ++i)
      o[i] = (keep ? o[i] : 0.f) + (e.bias ? ctx.input(2).data<float>()[i % n] : 0.f);
    onednn::ApplyActivation(e, o, out->NumElements(), ctx.threads());
    return OkStatus();
  }
  if (m == 1 && !st.adj_a && !st.adj_b && a.NumElements() == ka && b.NumElements() == ka * n)
    return RowTimesMatrix(ctx, st, a.data<float>(), b, ka, n, out);
  const DnnlMatMul* mm = nullptr;
  if (!onednn::ActivationDropsNaN(e) || onednn::AllFinite(a.data<float>(), a.NumElements())) {
    KILN_ASSIGN_OR_RETURN(mm, FindDnnlMatMul(st, a.shape(), b.shape()));
  }
  if (mm == nullptr || mm->reference) {
    // NaN or Inf in: the product without oneDNN's max-based activation, then the epilogue in
    // TF's order (bias, add, activation) keeping NaN. Rare, so plain Eigen; also what runs
    // when oneDNN has only its reference kernel for the operands.
    std::vector<float> addend;
    if (e.add) addend.assign(out->data<float>(), out->data<float>() + out->NumElements());
    EigenProduct<float>(st, a, b, out, batch);
    float* o = out->data<float>();
    for (int64_t i = 0; i < out->NumElements(); ++i)
      o[i] += (e.add ? addend[i] : 0.f) + (e.bias ? ctx.input(2).data<float>()[i % n] : 0.f);
    onednn::ApplyActivation(e, o, out->NumElements(), ctx.threads());
    return OkStatus();
  }
  const onednn::MemArg am{DNNL_ARG_SRC, &mm->a_md, a.raw_data()};
  const onednn::MemArg bm{DNNL_ARG_WEIGHTS, &mm->b_md,
                          mm->packed_b != nullptr ? mm->packed_b.get() : b.raw_data()};
  const onednn::MemArg cm{DNNL_ARG_DST, &mm->c_md, out->raw_data()};
  if (e.bias)
    return onednn::ExecuteBound(
        ctx, mm->primitive, mm->scratch_md, mm->threads,
        {am, bm, {DNNL_ARG_BIAS, &mm->bias_md, ctx.input(2).raw_data()}, cm}, &mm->lean);
  return onednn::ExecuteBound(ctx, mm->primitive, mm->scratch_md, mm->threads, {am, bm, cm},
                              &mm->lean);
}

// `t` widened to W (float or int32): `t` itself when it is W, else a copy of its half,
// bfloat16 or byte elements in memory from ctx.AllocateTemp.
template <typename W>
Result<Tensor> Widened(const KernelContext& ctx, const Tensor& t) {
  if (t.dtype() == kDTypeOf<W>) return t;
  const int64_t n = t.NumElements();
  KILN_ASSIGN_OR_RETURN(void* mem, ctx.AllocateTemp(sizeof(W) * std::max<int64_t>(n, 1)));
  auto* w = static_cast<W*>(mem);
  using Narrow = TypeList<Half, BFloat16, int8_t, uint8_t>;
  const Status widened = Dispatch<Narrow>(t.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    const ComputeType<T>* v = ComputeData<T>(t);
    if constexpr (std::is_integral_v<T>) {
      std::copy_n(v, n, w);
    } else {
      for (int64_t i = 0; i < n; ++i) w[i] = static_cast<W>(v[i]);
    }
    return OkStatus();
  });
  KILN_RETURN_IF_ERROR(widened);
  return Tensor(kDTypeOf<W>, t.shape(),
                std::make_shared<TensorBuffer>(kDTypeOf<W>, n, w, nullptr, /*transient=*/true));
}

// The float32 product of `a` and `b` widened (a view of memory from ctx.AllocateTemp).
Result<Tensor> FloatProductOfWidened(const KernelContext& ctx, const MatMulCpuState& st,
                                     const Tensor& a, const Tensor& b, const Shape& shape,
                                     const std::vector<int64_t>& batch) {
  KILN_ASSIGN_OR_RETURN(Tensor fa, Widened<float>(ctx, a));
  KILN_ASSIGN_OR_RETURN(Tensor fb, Widened<float>(ctx, b));
  const int64_t n = shape.num_elements();
  KILN_ASSIGN_OR_RETURN(void* mem, ctx.AllocateTemp(sizeof(float) * static_cast<size_t>(n)));
  Tensor product(
      DType::kFloat, shape,
      std::make_shared<TensorBuffer>(DType::kFloat, n, mem, nullptr, /*transient=*/true));
  KILN_RETURN_IF_ERROR(FloatProduct(ctx, st, fa, fb, &product, batch));
  return product;
}

// Half and bfloat16 products: the float32 product of widened operands, rounded once.
Status WidenedProduct(const KernelContext& ctx, const MatMulCpuState& st, const Tensor& a,
                      const Tensor& b, Tensor* out, const std::vector<int64_t>& batch) {
  KILN_ASSIGN_OR_RETURN(Tensor product, FloatProductOfWidened(ctx, st, a, b, out->shape(), batch));
  const float* f = product.data<float>();
  const int64_t n = out->NumElements();
  return Dispatch<TypeList<Half, BFloat16>>(out->dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    ComputeType<T>* o = MutableComputeData<T>(out);
    for (int64_t i = 0; i < n; ++i) o[i] = static_cast<ComputeType<T>>(f[i]);
    return OkStatus();
  });
}

// BatchMatMulV3's int8/uint8 operands into int32 (Keras's int8 Dense and EinsumDense), exact.
// While every partial sum stays below 2^24 in magnitude the float32 product is exact in any
// order, so it runs on oneDNN's float GEMM (oneDNN's own integer GEMM saturates 16-bit pair
// sums on CPUs without VNNI); longer sums multiply int32 copies, wrapping as TF's int32 sums do.
Status BytesProduct(const KernelContext& ctx, const MatMulCpuState& st, const Tensor& a,
                    const Tensor& b, Tensor* out, const std::vector<int64_t>& batch) {
  auto largest = [](DType t) { return t == DType::kInt8 ? 128.0 : 255.0; };
  const double k = static_cast<double>(a.dim(a.rank() - (st.adj_a ? 2 : 1)));
  if (k * largest(st.a_dtype) * largest(st.b_dtype) <= 16777216.0) {
    KILN_ASSIGN_OR_RETURN(Tensor product,
                          FloatProductOfWidened(ctx, st, a, b, out->shape(), batch));
    const float* f = product.data<float>();
    int32_t* o = out->data<int32_t>();
    for (int64_t i = 0; i < out->NumElements(); ++i) o[i] = static_cast<int32_t>(f[i]);
    return OkStatus();
  }
  KILN_ASSIGN_OR_RETURN(Tensor wa, Widened<int32_t>(ctx, a));
  KILN_ASSIGN_OR_RETURN(Tensor wb, Widened<int32_t>(ctx, b));
  EigenProduct<int32_t>(st, wa, wb, out, batch);
  return OkStatus();
}

Status ComputeMatMul(const KernelContext& ctx) {
  const auto& st = ctx.state<MatMulState>();
  const Tensor& a = ctx.input(0);
  const Tensor& b = ctx.input(1);
  if (a.rank() < 2 || b.rank() < 2 || (!st.batched && (a.rank() != 2 || b.rank() != 2)))
    return ctx.Error("inputs must be ", st.batched ? "of rank >= 2" : "matrices", ", got ",
                     a.shape().ToString(), " and ", b.shape().ToString());
  const int64_t m = a.dim(a.rank() - (st.adj_a ? 1 : 2));
  const int64_t ka = a.dim(a.rank() - (st.adj_a ? 2 : 1));
  const int64_t kb = b.dim(b.rank() - (st.adj_b ? 1 : 2));
  const int64_t n = b.dim(b.rank() - (st.adj_b ? 2 : 1));
  if (ka != kb)
    return ctx.Error("inner dimensions do not match: ", a.shape().ToString(), " and ",
                     b.shape().ToString(), " (transposed: ", BoolName(st.adj_a), ", ",
                     BoolName(st.adj_b), ")");
  std::vector<int64_t> batch;
  if (!BatchShape(a.shape().dims(), b.shape().dims(), &batch))
    return ctx.Error("batch dimensions of ", a.shape().ToString(), " and ", b.shape().ToString(),
                     " do not broadcast");
  Shape out_shape;
  for (int64_t d : batch) out_shape.AddDim(d);
  out_shape.AddDim(m);
  out_shape.AddDim(n);
  const Epilogue& e = st.epilogue;
  if (e.bias && (ctx.input(2).rank() != 1 || ctx.input(2).dim(0) != n))
    return ctx.Error("the bias must be a vector of ", n, " elements, got shape ",
                     ctx.input(2).shape().ToString());
  for (int i = e.post_input(); i < e.post_input() + (e.post_scale ? 1 : 0) + (e.post_shift ? 1 : 0);
       ++i)
    if (ctx.input(i).rank() != 1 || ctx.input(i).dim(0) != n)
      return ctx.Error("args:", i - 2, " must be a vector of ", n, " elements, got shape ",
                       ctx.input(i).shape().ToString());
  KILN_ASSIGN_OR_RETURN(Tensor * out, onednn::AllocateOutputWithAddend(ctx, e, e.addend_input(),
                                                                       out_shape, "product"));
  if (out->NumElements() == 0) return OkStatus();
  if (st.dtype != DType::kFloat && !WidensToFloat(st) && st.a_dtype == st.dtype &&
      st.b_dtype == st.dtype) {
    return Dispatch<MatMulTypes>(st.dtype, [&](auto tag) {
      EigenProduct<typename decltype(tag)::type>(st, a, b, out, batch);
      return OkStatus();
    });
  }
  // The float32 paths' oneDNN objects: looked up only here, as small integer products (100 of
  // them in a call of samples/power) would pay for the lookup on every call.
  std::optional<MatMulCpuState> local;
  const MatMulCpuState& cs = cpu::CpuStateOf(ctx, &local);
  if (WidensToFloat(cs)) return WidenedProduct(ctx, cs, a, b, out, batch);
  if (cs.a_dtype != cs.dtype || cs.b_dtype != cs.dtype)
    return BytesProduct(ctx, cs, a, b, out, batch);
  KILN_RETURN_IF_ERROR(FloatProduct(ctx, cs, a, b, out, batch));
  onednn::ApplyPostScaleShift(ctx, e, out);  // one pass over the (row-sized) result
  return OkStatus();
}
// ---- SparseMatMul ----------------------------------------------------------------------------

// A float32 operand as it is, a bfloat16 one widened into `copy`.
const float* FloatOperand(const Tensor& t, std::vector<float>* copy) {
  if (t.dtype() == DType::kFloat) return t.data<float>();
  copy->resize(static_cast<size_t>(t.NumElements()));
  for (int64_t i = 0; i < t.NumElements(); ++i)
    (*copy)[i] = static_cast<float>(ComputeData<BFloat16>(t)[i]);
  return copy->data();
}

Status ComputeSparseMatMul(const KernelContext& ctx) {
  const auto [ta, tb] = ctx.state<TypedOpState<std::pair<bool, bool>>>().value;
  const Tensor& a = ctx.input(0);
  const Tensor& b = ctx.input(1);
  if (a.rank() != 2 || b.rank() != 2)
    return ctx.Error("inputs must be matrices, got ", a.shape().ToString(), " and ",
                     b.shape().ToString());
  const int64_t m = a.dim(ta ? 1 : 0), k = a.dim(ta ? 0 : 1), n = b.dim(tb ? 0 : 1);
  if (b.dim(tb ? 1 : 0) != k)
    return ctx.Error("inputs 'a' ", a.shape().ToString(), " and 'b' ", b.shape().ToString(),
                     " do not multiply");
  KILN_ASSIGN_OR_RETURN(Tensor * out, ctx.AllocateOutput(0, Shape{m, n}));
  if (m == 0 || n == 0) return OkStatus();
  std::vector<float> a_copy, b_copy;
  const float* pa = FloatOperand(a, &a_copy);
  const float* pb = FloatOperand(b, &b_copy);
  if (k == 0) {
    std::fill_n(out->data<float>(), m * n, 0.0f);
    return OkStatus();
  }
  return onednn::Sgemm(ta, tb, m, n, k, pa, a.dim(1), pb, b.dim(1), 0.0f, out->data<float>(), n);
}

constexpr KernelEntry kCpu[] = {
    {"MatMul", ComputeMatMul, 0, 0, nullptr, CreateMatMulCpuState},
    {"_FusedMatMul", ComputeMatMul, 0, 0, nullptr, CreateMatMulCpuState},
    {"BatchMatMul", ComputeMatMul, 0, 0, nullptr, CreateMatMulCpuState},
    {"BatchMatMulV2", ComputeMatMul, 0, 0, nullptr, CreateMatMulCpuState},
    {"BatchMatMulV3", ComputeMatMul, 0, 0, nullptr, CreateMatMulCpuState},
    {"SparseMatMul", ComputeSparseMatMul},
};

}  // namespace

std::span<const KernelEntry> MatMulCpuKernels() { return kCpu; }

}  // namespace kiln::exec
