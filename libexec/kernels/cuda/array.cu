// Ops that move bytes on the GPU: Transpose (a strided gather), ConcatV2 and Pack (one 2-D
// copy per input), Cast; and the views (Reshape, ExpandDims, Squeeze, Identity, Shape), whose
// CPU kernels only relabel a buffer and so serve the GPU as they are.
#include <vector>

#include "kernels/cuda/launch.cuh"

namespace kiln::exec::cuda {
namespace {

// ---- Transpose ------------------------------------------------------------------------------

// Element bytes as an unsigned word of that size.
template <size_t kBytes>
using Word = std::conditional_t<
    kBytes == 1, uint8_t,
    std::conditional_t<kBytes == 2, uint16_t, std::conditional_t<kBytes == 4, uint32_t, uint64_t>>>;

template <typename W>
__global__ void Gather(const W* x, W* y, int64_t n, IndexMap<1> map) {
  KILN_GRID_LOOP(i, n) {
    int64_t off[1];
    map.Offsets(i, off);
    y[i] = x[off[0]];
  }
}

Status ComputeTranspose(const KernelContext& ctx) {
  CudaDevice& dev = DeviceOf(ctx);
  KILN_RETURN_IF_ERROR(dev.Activate());
  const Tensor& x = ctx.input(0);
  const Tensor& perm = ctx.input(1);
  const int rank = x.rank();
  if (perm.NumElements() != rank)
    return ctx.Error("perm has ", perm.NumElements(), " entries for a tensor of rank ", rank);
  int64_t in_strides[kMaxRank];
  DenseStrides(x.shape().dims().data(), rank, in_strides);
  Shape out;
  IndexMap<1> map;
  bool seen[kMaxRank] = {};
  for (int d = 0; d < rank; ++d) {
    const int64_t p = perm.dtype() == DType::kInt64 ? perm.data<int64_t>()[d]
                                                    : static_cast<int64_t>(perm.data<int32_t>()[d]);
    if (p < 0 || p >= rank || seen[p])
      return ctx.Error("perm is not a permutation of 0..", rank - 1);
    seen[p] = true;
    out.AddDim(x.dim(static_cast<int>(p)));
    const int64_t n = x.dim(static_cast<int>(p)), s = in_strides[p];
    if (n == 1) continue;
    const int r = map.rank;
    if (r > 0 && map.strides[0][r - 1] == s * n) {  // consecutive in the input too: merge
      map.dims[r - 1] *= n;
      map.strides[0][r - 1] = s;
    } else {
      map.dims[r] = n;
      map.strides[0][r] = s;
      map.rank = r + 1;
    }
  }
  KILN_ASSIGN_OR_RETURN(Tensor * y, ctx.AllocateOutput(0, out));
  const int64_t n = x.NumElements();
  if (n == 0) return OkStatus();
  if (map.rank <= 1) {  // the order of elements is unchanged
    return Check(cudaMemcpyAsync(y->raw_data(), x.raw_data(), x.ByteSize(),
                                 cudaMemcpyDeviceToDevice, dev.stream()),
                 "Transpose copy");
  }
  switch (DTypeSize(x.dtype())) {
#define KILN_CASE(b)                                                                              \
  case b:                                                                                         \
    Gather<Word<b>><<<Blocks(n), kThreads, 0, dev.stream()>>>(                                    \
        static_cast<const Word<b>*>(x.raw_data()), static_cast<Word<b>*>(y->raw_data()), n, map); \
    break;
    KILN_CASE(1)
    KILN_CASE(2)
    KILN_CASE(4)
    KILN_CASE(8)
#undef KILN_CASE
    default:
      return ctx.Error("no GPU transpose for ", DTypeShortName(x.dtype()));
  }
  return LaunchStatus(ctx, "Transpose");
}

bool SupportsWords(const PrepareContext& ctx) {
  if (!SupportsPod(ctx)) return false;
  for (const TensorSpec& s : ctx.outputs) {
    const size_t b = DTypeSize(s.dtype);
    if (b != 1 && b != 2 && b != 4 && b != 8) return false;
  }
  return true;
}

// ---- ConcatV2 and Pack ----------------------------------------------------------------------

// The axis, known at prepare time: ConcatV2's constant axis input, Pack's attr.
struct AxisState final : OpState {
  int64_t axis = 0;
};

Status CreateConcatState(PrepareContext& ctx) {
  const size_t n = ctx.inputs.size() - 1;
  const Tensor* axis = ctx.constant_inputs.size() > n ? ctx.constant_inputs[n] : nullptr;
  if (axis == nullptr) return ctx.Error("the GPU concat needs a constant axis");
  auto state = std::make_shared<AxisState>();
  state->axis = axis->dtype() == DType::kInt64 ? axis->data<int64_t>()[0]
                                               : static_cast<int64_t>(axis->data<int32_t>()[0]);
  ctx.state = state;
  return OkStatus();
}
bool SupportsConcat(const PrepareContext& ctx) {
  const size_t n = ctx.inputs.size() - 1;
  return ctx.constant_inputs.size() > n && ctx.constant_inputs[n] != nullptr && SupportsPod(ctx);
}
Status CreatePackState(PrepareContext& ctx) {
  auto state = std::make_shared<AxisState>();
  KILN_ASSIGN_OR_RETURN(state->axis, ctx.attrs.GetInt("axis", 0));
  ctx.state = state;
  return OkStatus();
}

// Copies `n` values laid side by side along `axis` of `out` (Pack: a new axis, each value one
// slice of it).
Status ConcatInto(const KernelContext& ctx, int n, int64_t axis, bool pack) {
  CudaDevice& dev = DeviceOf(ctx);
  KILN_RETURN_IF_ERROR(dev.Activate());
  const Tensor& first = ctx.input(0);
  const int rank = first.rank() + (pack ? 1 : 0);
  if (axis < 0) axis += rank;
  if (axis < 0 || axis >= rank) return ctx.Error("axis ", axis, " is out of range");
  Shape out;
  int64_t outer = 1;
  for (int d = 0; d < static_cast<int>(axis); ++d) outer *= first.dim(d);
  std::vector<size_t> row_bytes(n);
  const size_t elem = DTypeSize(first.dtype());
  for (int d = 0; d < rank; ++d) {
    if (pack) {
      out.AddDim(d == axis ? n : first.dim(d < axis ? d : d - 1));
      continue;
    }
    int64_t dim = first.dim(d);
    if (d == axis)
      for (int i = 1; i < n; ++i) dim += ctx.input(i).dim(d);
    out.AddDim(dim);
  }
  size_t total = 0;
  for (int i = 0; i < n; ++i) {
    const Tensor& v = ctx.input(i);
    if (!pack && v.rank() != first.rank())
      return ctx.Error("values:", i, " has rank ", v.rank(), ", values:0 ", first.rank());
    row_bytes[i] = outer == 0 ? 0 : v.ByteSize() / static_cast<size_t>(outer);
    if (pack && v.shape() != first.shape())
      return ctx.Error("values:", i, " has shape ", v.shape().ToString(), ", values:0 ",
                       first.shape().ToString());
    total += row_bytes[i];
  }
  (void)elem;
  KILN_ASSIGN_OR_RETURN(Tensor * y, ctx.AllocateOutput(0, out));
  if (y->ByteSize() == 0) return OkStatus();
  char* dst = static_cast<char*>(y->raw_data());
  for (int i = 0; i < n; ++i) {
    if (row_bytes[i] == 0) continue;
    KILN_RETURN_IF_ERROR(
        Check(cudaMemcpy2DAsync(dst, total, ctx.input(i).raw_data(), row_bytes[i], row_bytes[i],
                                static_cast<size_t>(outer), cudaMemcpyDeviceToDevice, dev.stream()),
              "concat copy"));
    dst += row_bytes[i];
  }
  return OkStatus();
}

Status ComputeConcat(const KernelContext& ctx) {
  return ConcatInto(ctx, ctx.num_inputs() - 1, ctx.state<AxisState>().axis, false);
}
Status ComputePack(const KernelContext& ctx) {
  return ConcatInto(ctx, ctx.num_inputs(), ctx.state<AxisState>().axis, true);
}

// ---- Cast -----------------------------------------------------------------------------------

template <typename From, typename To>
__global__ void CastKernel(const From* x, To* y, int64_t n) {
  KILN_GRID_LOOP(i, n) {
    if constexpr (std::is_same_v<To, bool>) {
      y[i] = static_cast<float>(x[i]) != 0.0f;
    } else if constexpr (kIsFloating<From> || kIsFloating<To>) {
      y[i] = static_cast<To>(static_cast<float>(x[i]));
    } else {
      y[i] = static_cast<To>(x[i]);
    }
  }
}

using CastTypes = TypeList<float, Half, BFloat16, int32_t, int64_t, bool>;

Status ComputeCast(const KernelContext& ctx) {
  CudaDevice& dev = DeviceOf(ctx);
  KILN_RETURN_IF_ERROR(dev.Activate());
  const Tensor& x = ctx.input(0);
  KILN_ASSIGN_OR_RETURN(Tensor * y, ctx.AllocateOutput(0, x.shape()));
  const int64_t n = x.NumElements();
  if (n == 0) return OkStatus();
  return Dispatch<CastTypes>(x.dtype(), [&](auto from_tag) {
    using From = ComputeType<typename decltype(from_tag)::type>;
    return Dispatch<CastTypes>(y->dtype(), [&](auto to_tag) {
      using To = ComputeType<typename decltype(to_tag)::type>;
      CastKernel<From, To><<<Blocks(n), kThreads, 0, dev.stream()>>>(
          static_cast<const From*>(x.raw_data()), static_cast<To*>(y->raw_data()), n);
      return LaunchStatus(ctx, "Cast");
    });
  });
}

bool SupportsCast(const PrepareContext& ctx) {
  auto ok = [](DType t) {
    return t == DType::kFloat || t == DType::kHalf || t == DType::kBFloat16 || t == DType::kInt32 ||
           t == DType::kInt64 || t == DType::kBool;
  };
  return ctx.inputs.size() == 1 && ok(ctx.inputs[0].dtype) && ok(ctx.outputs[0].dtype);
}

// ---- the table ------------------------------------------------------------------------------

constexpr uint32_t kSecond = 1u << 1;  // a shape, a dim or a permutation: read on the host

std::vector<KernelEntry> Rows() {
  std::vector<KernelEntry> rows = {
      {"Cast", &ComputeCast, 0, 0, &SupportsCast, nullptr},
      {"ConcatV2", &ComputeConcat, 0, 0, &SupportsConcat, &CreateConcatState},
      {"Pack", &ComputePack, 0, 0, &SupportsPod, &CreatePackState},
      {"Transpose", &ComputeTranspose, kSecond, 0, &SupportsWords, nullptr},
  };
  // Views: the CPU kernel relabels the buffer and reads no element.
  const struct {
    std::string_view op;
    uint32_t host_inputs, host_outputs;
  } views[] = {{"ExpandDims", kSecond, 0}, {"Identity", 0, 0}, {"Reshape", kSecond, 0},
               {"Shape", 0, 1u << 0},      {"Squeeze", 0, 0},  {"StopGradient", 0, 0}};
  for (const auto& v : views)
    if (ComputeFn f = FindCpuKernel(v.op))
      rows.push_back({v.op, f, v.host_inputs, v.host_outputs, &SupportsPod, nullptr});
  return rows;
}

}  // namespace

std::span<const KernelEntry> ArrayKernels() {
  static const std::vector<KernelEntry> rows = Rows();
  return rows;
}

}  // namespace kiln::exec::cuda
