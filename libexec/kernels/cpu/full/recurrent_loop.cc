// The fused recurrent loop's kernel (recurrent_loop.h): the inputs of every step projected by one
// GEMM, then per step one product with the recurrent kernel and the cell's gates in a tight loop,
// in float32 (half and bfloat16 loops rounded where the graph's loop variables would be). The
// forms it runs are matched in kernels/full/recurrent_loop_match.cc.
#include "kernels/recurrent_loop.h"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "executor/half_precision.h"
#include "kernels/cpu/onednn.h"
#include "kernels/cpu/vector_math.h"
#include "kernels/recurrent_loop_form.h"
#include "kernels/tensor_list.h"
#include "kernels/type_lists.h"
#include "kernels/variable_util.h"
#include "kiln/exec/executor.h"

namespace kiln::exec {
namespace {

bool ScalarInt(const Tensor& t, int64_t* v) {
  if (t.rank() != 0) return false;
  if (t.dtype() == DType::kInt32) {
    *v = t.scalar<int32_t>();
    return true;
  }
  if (t.dtype() == DType::kInt64) {
    *v = t.scalar<int64_t>();
    return true;
  }
  return false;
}

// Weights `savedmodel-cli quantize` stored as int8 levels or half precision, as float32: made
// once per stored value (a frozen variable's never changes; a new value is a new buffer) and
// kept while that value lives, so a call pays only the lookup.
class DequantCache {
 public:
  Result<Tensor> Get(const Tensor& stored, const WeightDequant& dq) {
    std::lock_guard lock(mu_);
    std::erase_if(entries_, [](const Entry& e) { return e.source.expired(); });
    for (const Entry& e : entries_)
      if (e.source.lock() == stored.buffer() && e.shape == stored.shape() &&
          e.dq.stored == dq.stored && e.dq.scales == dq.scales)
        return e.value;
    KILN_ASSIGN_OR_RETURN(Tensor value, Dequantize(stored, dq));
    entries_.push_back(Entry{stored.buffer(), stored.shape(), dq, value});
    return value;
  }

 private:
  static Result<Tensor> Dequantize(const Tensor& stored, const WeightDequant& dq) {
    if (stored.dtype() != dq.stored) return InvalidArgument("a weight of another dtype");
    if (dq.stored != DType::kInt8) return CastNow(stored, DType::kFloat);
    const int64_t n = stored.NumElements(), k = static_cast<int64_t>(dq.scales.size());
    const int64_t cols = stored.rank() == 0 ? 1 : stored.dim(stored.rank() - 1);
    if (k != 1 && k != cols) return InvalidArgument("scales do not fit the weight");
    Tensor out(DType::kFloat, stored.shape());
    const int8_t* q = stored.data<int8_t>();
    float* f = out.data<float>();
    for (int64_t i = 0; i < n; ++i) f[i] = static_cast<float>(q[i]) * dq.scales[k == 1 ? 0 : i % k];
    return out;
  }

  struct Entry {
    std::weak_ptr<TensorBuffer> source;
    Shape shape;
    WeightDequant dq;  // by value: a loop may go while the stored weight lives on
    Tensor value;
  };
  std::mutex mu_;
  std::vector<Entry> entries_;
};

DequantCache& Dequantized() {
  static DequantCache* cache = new DequantCache;  // never destroyed: used at exit by pools
  return *cache;
}

Tensor IntLike(const Tensor& like, int64_t v) {
  return like.dtype() == DType::kInt32 ? Tensor::Scalar<int32_t>(static_cast<int32_t>(v))
                                       : Tensor::Scalar<int64_t>(v);
}

// Multiply-adds of the recurrent product worth a thread of their own, and the rows of one
// block of it.
constexpr int64_t kMacsPerThread = 1 << 17;
constexpr int64_t kRowBlock = 16;
// The input projection runs for chunks of steps of about this many rows (steps x batch): one
// product is efficient from a few hundred rows on, and a chunk's projection (rows x 4 units for
// an LSTM) stays in cache instead of a buffer of every step (26 MB for 200 steps of 64 rows).
constexpr int64_t kChunkRows = 512;

// A tensor of the loop's element type as float32 values (half and bfloat16 converted).
void ToFloat(const Tensor& t, float* out) {
  const int64_t n = t.NumElements();
  if (t.dtype() == DType::kFloat) {
    std::memcpy(out, t.data<float>(), sizeof(float) * n);
  } else if (t.dtype() == DType::kHalf) {
    const auto* p = ComputeData<Half>(t);
    for (int64_t i = 0; i < n; ++i) out[i] = static_cast<float>(p[i]);
  } else {
    const auto* p = ComputeData<BFloat16>(t);
    for (int64_t i = 0; i < n; ++i) out[i] = static_cast<float>(p[i]);
  }
}

// float32 values into a tensor of the loop's element type (rounded to nearest).
void FromFloat(const float* in, Tensor* t) {
  const int64_t n = t->NumElements();
  if (t->dtype() == DType::kFloat) {
    std::memcpy(t->data<float>(), in, sizeof(float) * n);
  } else if (t->dtype() == DType::kHalf) {
    auto* p = MutableComputeData<Half>(t);
    for (int64_t i = 0; i < n; ++i) p[i] = static_cast<Eigen::half>(in[i]);
  } else {
    auto* p = MutableComputeData<BFloat16>(t);
    for (int64_t i = 0; i < n; ++i) p[i] = static_cast<Eigen::bfloat16>(in[i]);
  }
}

// What a loop variable of type `dt` keeps of float32 values between steps.
void RoundTo(DType dt, float* x, int64_t n) {
  if (dt == DType::kHalf)
    for (int64_t i = 0; i < n; ++i) x[i] = static_cast<float>(static_cast<Eigen::half>(x[i]));
  if (dt == DType::kBFloat16)
    for (int64_t i = 0; i < n; ++i) x[i] = static_cast<float>(static_cast<Eigen::bfloat16>(x[i]));
}

// Whether t is a [rows, cols] matrix of dtype `dt`.
bool IsMatrix(const Tensor& t, DType dt, int64_t rows, int64_t cols) {
  return t.dtype() == dt && t.rank() == 2 && t.dim(0) == rows && t.dim(1) == cols;
}

// A loop's input-projection weights packed for oneDNN, and the tensor they were packed from.
struct PackedProjection {
  PackedProjection(Tensor k, int64_t depth, int64_t gates)
      : kernel(std::move(k)), product(kernel.data<float>(), depth, gates, gates) {}
  Tensor kernel;
  onednn::ConstantBProduct product;
};

// The cached projection of `kernel` (a float32 depth x gates matrix), made anew when the
// kernel's buffer is not the one the cache holds.
std::shared_ptr<const PackedProjection> KeptProjection(RecurrentLoopCache& cache,
                                                       const Tensor& kernel, int64_t depth,
                                                       int64_t gates) {
  const std::lock_guard lock(cache.mu);
  auto kept = std::static_pointer_cast<const PackedProjection>(cache.packed);
  if (kept == nullptr || kept->kernel.buffer() != kernel.buffer() ||
      kept->kernel.shape() != kernel.shape()) {
    kept = std::make_shared<const PackedProjection>(kernel, depth, gates);
    cache.packed = kept;
  }
  return kept;
}

// Why a call runs the generic loop: said on stderr in log mode (tests check the fused kernel
// really ran), silent otherwise.
Status Fallback(const KernelContext& ctx, const char* why) {
  if (RecurrentFusionMode() == FusionMode::kLog)
    std::fprintf(stderr, "kiln: node '%.*s' runs the generic loop for this call: %s\n",
                 static_cast<int>(ctx.node_name().size()), ctx.node_name().data(), why);
  return OkStatus();
}

}  // namespace

Status RunRecurrentLoop(const RecurrentLoop& loop, RecurrentLoopCache& cache,
                        const KernelContext& ctx, bool* ran) {
  *ran = false;
  int64_t counter = 0, limit = 0, time = 0;
  if (!ScalarInt(ctx.input(loop.counter), &counter) || !ScalarInt(ctx.input(loop.time), &time) ||
      (loop.limit >= 0 && !ScalarInt(ctx.input(loop.limit), &limit)))
    return Fallback(ctx, "a counter is not an integer scalar");
  const bool lstm = loop.cell == RecurrentLoop::Cell::kLstm;
  const bool simple = loop.cell == RecurrentLoop::Cell::kSimple;
  const DType dt = loop.dtype;
  const bool wide = dt == DType::kFloat;  // float32 tensors: read and written in place
  const Tensor& h0 = ctx.input(loop.h);
  if (h0.dtype() != dt || h0.rank() != 2)
    return Fallback(ctx, "the state is not a matrix of the loop's type");
  const Tensor& c0 = lstm ? ctx.input(loop.c) : h0;
  if (c0.shape() != h0.shape() || c0.dtype() != dt)
    return Fallback(ctx, "the cell state differs from h");
  const int64_t batch = h0.dim(0), units = h0.dim(1), gates = (lstm ? 4 : simple ? 1 : 3) * units;
  if (batch == 0 || units == 0) return Fallback(ctx, "an empty state");
  auto read = [&](int i, const WeightDequant& dq, Tensor* out) {
    if (ctx.input(i).dtype() != DType::kResource) {  // a tensor (tf.keras 2's loops)
      *out = ctx.input(i);
      return out->dtype() == dt;
    }
    auto var = VariableFromHandle(ctx.input(i), "");
    if (!var.ok()) return false;
    auto value = (*var)->Read();
    if (!value.ok()) return false;
    *out = *value;
    if (dq.stored != DType::kInvalid) {
      auto f = Dequantized().Get(*out, dq);
      if (!f.ok()) return false;
      *out = *std::move(f);
    }
    // float32 variables (cast to the loop's type in the graph), or of the loop's type.
    return out->dtype() == DType::kFloat || out->dtype() == dt;
  };
  Tensor kernel, recurrent, bias;
  if (!read(loop.kernel, loop.kernel_dq, &kernel) ||
      !read(loop.recurrent, loop.recurrent_dq, &recurrent) || !read(loop.bias, loop.bias_dq, &bias))
    return Fallback(ctx, "a weight cannot be read");
  if (loop.bias_recurrent >= 0) {
    // tf.keras 2's GRU biases, input's and recurrent's, as one [2, gates] bias (Keras 3's form).
    Tensor second;
    if (!read(loop.bias_recurrent, loop.bias_recurrent_dq, &second) ||
        second.dtype() != bias.dtype() || bias.rank() != 1 || bias.dim(0) != gates ||
        second.shape() != bias.shape())
      return Fallback(ctx, "the GRU's biases do not fit the state");
    Tensor joined(bias.dtype(), Shape{2, gates});
    const size_t bytes = DTypeSize(bias.dtype()) * gates;
    std::memcpy(joined.raw_data(), bias.raw_data(), bytes);
    std::memcpy(static_cast<char*>(joined.raw_data()) + bytes, second.raw_data(), bytes);
    bias = std::move(joined);
  }
  if (kernel.rank() != 2 || kernel.dim(1) != gates || recurrent.rank() != 2 ||
      recurrent.dim(0) != units || recurrent.dim(1) != gates ||
      !(lstm || simple ? bias.rank() == 1 && bias.dim(0) == gates
                       : bias.rank() == 2 && bias.dim(0) == 2 && bias.dim(1) == gates))
    return Fallback(ctx, "the weights' shapes do not fit the state");
  if (loop.cell == RecurrentLoop::Cell::kGru && !loop.gru_split)
    for (int k = 0; k < 3; ++k)
      if (!loop.gru_slices[k].Is(k * units, (k + 1) * units, gates))
        return Fallback(ctx, "the GRU's column slices are not its gates");
  const int64_t depth = kernel.dim(0);
  auto xs = TensorList::From(ctx.input(loop.xs), "");
  auto out = TensorList::From(ctx.input(loop.out), "");
  if (!xs.ok() || !out.ok() || (*out)->element_dtype() != dt)
    return Fallback(ctx, "a TensorList input is not one");
  int64_t max_time = loop.max_time;
  if (loop.max_time_arg >= 0 && !ScalarInt(ctx.input(loop.max_time_arg), &max_time))
    return Fallback(ctx, "the sequence length is not an integer scalar");
  int64_t steps = std::max<int64_t>(0, max_time - time);
  if (loop.limit >= 0) steps = std::min(steps, std::max<int64_t>(0, limit - counter));
  const TensorList* masks = nullptr;
  const bool masked = loop.mask >= 0;
  if (masked) {
    auto m = TensorList::From(ctx.input(loop.mask), "");
    for (int i : {loop.prev_out, loop.masked_output})
      if (ctx.input(i).shape() != h0.shape() || ctx.input(i).dtype() != dt)
        return Fallback(ctx, "the masked output is not shaped like h");
    // Tile(mask_t, [1, w]) with w the units, or 1 (SelectV2 broadcasts the column): a row's
    // mask either way.
    if (!m.ok() || (loop.mask_tile != units && loop.mask_tile != 1))
      return Fallback(ctx, "the mask is not a list tiled along the units");
    masks = *m;
  }
  if (steps > 0) {
    if (time < 0 || time + steps > (*xs)->size())
      return Fallback(ctx, "the steps run past the input list");
    for (int64_t s = 0; s < steps; ++s)
      if (!IsMatrix((*xs)->tensors()[time + s], dt, batch, depth))
        return Fallback(ctx, "an input step is not a [batch, depth] matrix of the loop's type");
    if (masks != nullptr) {
      if (time + steps > masks->size()) return Fallback(ctx, "the steps run past the mask list");
      for (int64_t s = 0; s < steps; ++s) {
        const Tensor& m = masks->tensors()[time + s];
        if (m.dtype() != DType::kBool || m.rank() != 2 || m.dim(0) != batch || m.dim(1) != 1)
          return Fallback(ctx, "a mask step is not [batch, 1] bool");
      }
    }
    const int64_t last_write = loop.write_at_time ? time + steps - 1 : loop.write_index;
    const int64_t first_write = loop.write_at_time ? time : loop.write_index;
    if (first_write < 0 || last_write >= (*out)->size())
      return Fallback(ctx, "a write falls outside the output list");
  }

  // Scratch: X (every step's input), P = X kernel, the gates, per-row work, masked rows' kept
  // states; float32 copies of weights that are not float32 (or that the graph rounds to half
  // precision), and of the states of a half-precision loop.
  const int64_t state = batch * units;
  const bool weights_as_is = wide && kernel.dtype() == DType::kFloat &&
                             recurrent.dtype() == DType::kFloat && bias.dtype() == DType::kFloat;
  const int64_t weight_floats =
      weights_as_is ? 0 : kernel.NumElements() + recurrent.NumElements() + bias.NumElements();
  // One sequence (batch 1, the latency case) projects through a product whose weights are
  // packed (ConstantBProduct): the sgemm's first call in a process makes all of its kernels (22
  // ms of a recurrent model's first call). Batches keep the sgemm, faster on their products here
  // (lstm_text_b64 took 8% longer packed), and its first call.
  const bool packed_projection = batch == 1 && onednn::ConstantBProduct::Packs();
  // Products of more than one row read the weights from copies with wider rows where oneDNN's
  // sgemm is slow on their width (onednn::PaddedWeightRow; copying costs one pass over them).
  const int64_t ld = onednn::PaddedWeightRow(gates);
  const bool pad_kernel = ld != gates && steps * batch > 1 && !packed_projection;
  const bool pad_recurrent = ld != gates && batch > 1;
  const int64_t padded_floats = (pad_kernel ? depth * ld : 0) + (pad_recurrent ? units * ld : 0);
  const int64_t chunk =
      std::max<int64_t>(1, std::min<int64_t>(steps, kChunkRows / std::max<int64_t>(batch, 1)));
  const int64_t floats = chunk * batch * (depth + gates) + 2 * batch * gates +
                         (masked ? 2 * state : 0) + weight_floats + padded_floats +
                         (wide ? 0 : 4 * state);
  KILN_ASSIGN_OR_RETURN(void* buf, ctx.AllocateTemp(sizeof(float) * floats));
  float* x = static_cast<float*>(buf);
  float* proj = x + chunk * batch * depth;
  float* z = proj + chunk * batch * gates;
  float* work = z + batch * gates;     // per row: h recurrent (GRU)
  float* kept = work + batch * gates;  // masked rows' h and c, restored after the cell
  float* next = kept + (masked ? 2 * state : 0);
  // The weights as float32, rounded to the loop's type as the graph's casts round them.
  const float* w_kernel = nullptr;
  const float* w_recurrent = nullptr;
  const float* b = nullptr;
  if (weights_as_is) {
    w_kernel = kernel.data<float>();
    w_recurrent = recurrent.data<float>();
    b = bias.data<float>();
  } else {
    const float* starts[3] = {};
    const Tensor* parts[3] = {&kernel, &recurrent, &bias};
    for (int k = 0; k < 3; ++k) {
      ToFloat(*parts[k], next);
      RoundTo(dt, next, parts[k]->NumElements());
      starts[k] = next;
      next += parts[k]->NumElements();
    }
    w_kernel = starts[0];
    w_recurrent = starts[1];
    b = starts[2];
  }
  auto padded = [&](const float* w, int64_t rows) {
    float* copy = std::exchange(next, next + rows * ld);
    for (int64_t r = 0; r < rows; ++r) std::copy_n(w + r * gates, gates, copy + r * ld);
    return copy;
  };
  const float* kernel_rows = pad_kernel ? padded(w_kernel, depth) : w_kernel;
  const int64_t kernel_ld = pad_kernel ? ld : gates;
  const float* recurrent_rows = pad_recurrent ? padded(w_recurrent, units) : w_recurrent;
  const int64_t recurrent_ld = pad_recurrent ? ld : gates;
  // A float32 kernel used as it is keeps its packed form between calls (RecurrentLoopCache).
  std::shared_ptr<const PackedProjection> packed;
  if (packed_projection && weights_as_is) packed = KeptProjection(cache, kernel, depth, gates);
  const onednn::ConstantBProduct fresh_product(kernel_rows, depth, gates, kernel_ld);
  const onednn::ConstantBProduct& kernel_product = packed ? packed->product : fresh_product;
  // P = X kernel for the steps [first, first + n) of a chunk.
  auto project = [&](int64_t first, int64_t n) {
    for (int64_t s = 0; s < n; ++s)
      ToFloat((*xs)->tensors()[time + first + s], x + s * batch * depth);
    if (n * batch == 1) {  // one row: the vector loop (oneDNN's call costs more than it)
      std::fill_n(proj, gates, 0.0f);
      vmath::GemvAccumulate(x, kernel_rows, kernel_ld, depth, gates, proj);
      return OkStatus();
    }
    if (packed_projection) return kernel_product.Run(n, x, depth, false, proj, gates);
    return onednn::Sgemm(false, false, n * batch, gates, depth, x, depth, kernel_rows, kernel_ld,
                         0.0f, proj, gates);
  };

  // The states: float32 outputs are worked on in place; others in float32 scratch, written out
  // at the end.
  KILN_ASSIGN_OR_RETURN(Tensor * h_out, ctx.AllocateOutput(loop.h, dt, h0.shape()));
  Tensor* c_out = nullptr;
  Tensor* p_out = nullptr;
  if (lstm) {
    KILN_ASSIGN_OR_RETURN(c_out, ctx.AllocateOutput(loop.c, dt, c0.shape()));
  }
  if (masked) {
    KILN_ASSIGN_OR_RETURN(p_out, ctx.AllocateOutput(loop.prev_out, dt, h0.shape()));
  }
  auto working = [&](Tensor* t, const Tensor& init) {
    float* w = wide ? t->data<float>() : std::exchange(next, next + state);
    ToFloat(init, w);
    return w;
  };
  float* h = working(h_out, h0);
  float* c = lstm ? working(c_out, c0) : nullptr;
  float* prev = masked ? working(p_out, ctx.input(loop.prev_out)) : nullptr;
  // A masked row's output: the previous one (nothing to do), or this variable's row.
  const float* masked_out = nullptr;
  if (masked && loop.masked_output != loop.prev_out) {
    const Tensor& m = ctx.input(loop.masked_output);
    if (wide) {
      masked_out = m.data<float>();
    } else {
      ToFloat(m, next);
      masked_out = next;
    }
  }
  // dst (rows x gates) = h_rows recurrent (+ dst when accumulating). One row (batch 1, the
  // latency case) is a plain vector loop: oneDNN's call overhead is most of such a product.
  auto recurrent_product = [&](const float* h_rows, int64_t rows, bool accumulate, float* dst) {
    if (rows == 1) {
      if (!accumulate) std::fill_n(dst, gates, 0.0f);
      vmath::GemvAccumulate(h_rows, recurrent_rows, recurrent_ld, units, gates, dst);
      return OkStatus();
    }
    // One thread: the steps' parallelism is the row blocks' ParallelFor below (which backs off
    // when the machine is contended); oneDNN's own region per step spun at libgomp's barrier
    // (a batch-32 BiGRU beside busy processes: 296 ms on the default threads, 34 ms on one).
    const onednn::BuildThreads one_thread(1);
    return onednn::Sgemm(false, false, rows, gates, units, h_rows, units, recurrent_rows,
                         recurrent_ld, accumulate ? 1.0f : 0.0f, dst, gates);
  };
  std::vector<Tensor> items = (*out)->tensors();
  // The steps' items share one block (tensor_list::AllocateItems): an allocation and
  // zero-fill per step was ~4 % of a batch-1 LSTM tagger's call.
  std::vector<Tensor> fresh;
  if (loop.write_at_time && steps > 1) {
    KILN_ASSIGN_OR_RETURN(fresh,
                          tensor_list::AllocateItems(dt, h0.shape(), steps, "the loop's outputs"));
  }
  for (int64_t s = 0; s < steps; ++s) {
    if (s % chunk == 0) KILN_RETURN_IF_ERROR(project(s, std::min(chunk, steps - s)));
    float* p = proj + (s % chunk) * batch * gates;  // this step's rows of P
    // Rows are independent: blocks of kRowBlock rows each do their product and their gates on
    // one thread (one parallel region per step; one block runs inline). The blocks do not
    // depend on the thread count, so neither do the results.
    std::mutex mu;
    Status failed;
    // The LSTM adds h recurrent to this step's rows of P in place (nothing reads them again).
    float* zs = lstm ? p : z;
    auto blocks = [&](int64_t first_block, int64_t last_block) {
      for (int64_t blk = first_block; blk < last_block; ++blk) {
        const int64_t first = blk * kRowBlock;
        const int64_t n = std::min(kRowBlock, batch - first);
        float* zr = zs + first * gates;
        const float* xr = p + first * gates;
        Status st;
        if (lstm) {
          // z = x_t kernel + h recurrent, then + bias, as the graph adds them.
          st = recurrent_product(h + first * units, n, true, zr);
        } else if (simple) {
          // z = (x_t kernel + bias) + h recurrent, as the graph adds them.
          for (int64_t r = 0; r < n; ++r)
            vmath::Binary(vmath::BinOp::kAdd, xr + r * gates, b, zr + r * gates, gates);
          st = recurrent_product(h + first * units, n, true, zr);
        } else {
          // The GRU keeps x_t kernel and h recurrent apart (the reset gate scales one part).
          st = recurrent_product(h + first * units, n, false, work + first * gates);
        }
        if (!st.ok()) {
          std::lock_guard lock(mu);
          failed = st;
          return;
        }
        const bool* mask = masked ? masks->tensors()[time + s].data<bool>() : nullptr;
        for (int64_t r = first; r < first + n; ++r) {
          const bool keep = mask != nullptr && !mask[r];
          float* hr = h + r * units;
          float* cr = lstm ? c + r * units : nullptr;
          if (keep) {
            std::memcpy(kept + 2 * r * units, hr, sizeof(float) * units);
            if (lstm) std::memcpy(kept + (2 * r + 1) * units, cr, sizeof(float) * units);
          }
          if (lstm)
            vmath::LstmCell(zs + r * gates, b, units, cr, hr);
          else if (simple && loop.simple_relu)
            vmath::Relu(z + r * gates, hr, units);
          else if (simple)
            vmath::Tanh(z + r * gates, hr, units);
          else
            vmath::GruCell(xr + (r - first) * gates, work + r * gates, b, units, hr);
          if (keep) {  // SelectV2(mask, new, old): the old state stays
            std::memcpy(hr, kept + 2 * r * units, sizeof(float) * units);
            if (lstm) std::memcpy(cr, kept + (2 * r + 1) * units, sizeof(float) * units);
            if (masked_out != nullptr)
              std::memcpy(prev + r * units, masked_out + r * units, sizeof(float) * units);
          } else if (masked) {
            std::memcpy(prev + r * units, hr, sizeof(float) * units);
          }
        }
      }
    };
    const int64_t num_blocks = (batch + kRowBlock - 1) / kRowBlock;
    ctx.threads().ParallelFor(
        num_blocks, std::max<int64_t>(1, kMacsPerThread / (kRowBlock * units * gates)), blocks);
    KILN_RETURN_IF_ERROR(failed);
    // The loop variables keep their type between steps.
    for (float* v : {h, c, prev})
      if (v != nullptr) RoundTo(dt, v, state);
    if (loop.write_at_time || s + 1 == steps) {
      Tensor item = fresh.empty() ? Tensor(dt, h0.shape()) : std::move(fresh[s]);
      FromFloat(masked ? prev : h, &item);
      items[loop.write_at_time ? time + s : loop.write_index] = std::move(item);
    }
  }
  if (!wide) {
    FromFloat(h, h_out);
    if (lstm) FromFloat(c, c_out);
    if (masked) FromFloat(prev, p_out);
  }
  *ran = true;
  for (int i = 0; i < ctx.num_outputs(); ++i)
    if (i != loop.h && (!lstm || i != loop.c) && (!masked || i != loop.prev_out))
      ctx.SetOutput(i, ctx.input(i));
  ctx.SetOutput(loop.counter, IntLike(ctx.input(loop.counter), counter + steps));
  ctx.SetOutput(loop.time, IntLike(ctx.input(loop.time), time + steps));
  if (steps > 0)
    ctx.SetOutput(loop.out, TensorList::Wrap(std::make_shared<TensorList>(
                                (*out)->element_dtype(), (*out)->element_shape(), std::move(items),
                                (*out)->max_num_elements())));
  return OkStatus();
}

}  // namespace kiln::exec
