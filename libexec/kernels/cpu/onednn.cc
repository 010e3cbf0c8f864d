#include "kernels/cpu/onednn.h"

#include <algorithm>
#include <array>
#include <atomic>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <string_view>
#include <tuple>
#include <vector>

#include "kernels/cpu/vector_math.h"
#include "kiln/exec/cpu_isa.h"

// libgomp's ICV calls (see libexec/device/thread_pool.cc for why not <omp.h>).
extern "C" {
int omp_get_max_threads(void);
void omp_set_num_threads(int n);
}

namespace kiln::exec::onednn {

BuildThreads::BuildThreads(int max_threads)
    : saved_(omp_get_max_threads()), threads_(std::clamp(max_threads, 1, saved_)) {
  omp_set_num_threads(threads_);
}
BuildThreads::~BuildThreads() { omp_set_num_threads(saved_); }

int ThreadsWorth(double macs) {
  // Clamped before the cast: a huge product's count would not fit an int.
  return static_cast<int>(std::clamp(macs / kMacsPerThread, 1.0, 65536.0));
}

void LeanTwin::Plan(double macs, int threads) {
  const int lean = static_cast<int>(std::clamp(macs / kContendedMacsPerThread, 1.0, 65536.0));
  threads_ = lean < threads ? lean : 0;
}

namespace {

// Operands of at most this many bytes in all are made to compare a twin with its primitive.
constexpr size_t kTwinCheckBytes = size_t{64} << 20;

// Runs `p` on pseudo-random float32 operands laid out as `args` describe (the destination
// starts from the same numbers for a sum post-op) on `threads` threads, and returns the
// destination's bytes.
std::vector<unsigned char> RunOnNoise(const ThreadPool& pool, const dnnl::primitive& p,
                                      const dnnl::memory::desc& scratch, int threads,
                                      std::initializer_list<MemArg> args) {
  std::vector<std::vector<float>> buffers;
  std::vector<dnnl::memory> mems;
  std::vector<dnnl_exec_arg_t> list;
  size_t dst = 0;
  uint32_t state = 0x9E3779B9u;
  for (const MemArg& a : args) {
    std::vector<float>& b = buffers.emplace_back((a.md->get_size() + 3) / 4);
    for (float& v : b) {
      state = state * 1664525u + 1013904223u;  // LCG: fixed numbers, no library state
      v = static_cast<float>(state >> 8) * (2.0f / 16777216.0f) - 1.0f;
    }
    if (a.arg == DNNL_ARG_DST) dst = buffers.size() - 1;
  }
  for (size_t i = 0; i < buffers.size(); ++i) {
    const MemArg& a = args.begin()[i];
    mems.emplace_back(*a.md, Engine(), buffers[i].data());
    list.push_back({a.arg, mems.back().get()});
  }
  std::vector<unsigned char> scratch_buf(scratch.get_size());
  if (!scratch_buf.empty()) {
    mems.emplace_back(scratch, Engine(), scratch_buf.data());
    list.push_back({DNNL_ARG_SCRATCHPAD, mems.back().get()});
  }
  pool.ApplyToCallingThread(threads);
  const dnnl_status_t status = dnnl_primitive_execute(p.get(), ThreadStream().get(),
                                                      static_cast<int>(list.size()), list.data());
  pool.ApplyToCallingThread();
  dnnl::error::wrap_c_api(status, "could not execute a primitive");
  ThreadStream().wait();
  const auto* bytes = reinterpret_cast<const unsigned char*>(buffers[dst].data());
  return {bytes, bytes + args.begin()[dst].md->get_size()};
}

}  // namespace

const dnnl::primitive* LeanTwin::Get(const ThreadPool& pool, const dnnl::primitive& p,
                                     int p_threads, std::initializer_list<MemArg> args) const {
  std::call_once(made_, [&] {
    size_t bytes = 0;
    bool f32_dst = false;
    for (const MemArg& a : args) {
      if (a.md->data_type() != dnnl::memory::data_type::f32) return;
      bytes += a.md->get_size() * (a.arg == DNNL_ARG_DST ? 2 : 1);
      f32_dst = f32_dst || a.arg == DNNL_ARG_DST;
    }
    if (!f32_dst || bytes > kTwinCheckBytes) return;
    try {
      // The primitive's own operation and attributes, made again for fewer threads.
      const_dnnl_primitive_desc_t made = nullptr;
      const_dnnl_op_desc_t op = nullptr;
      const_dnnl_primitive_attr_t attr = nullptr;
      dnnl::error::wrap_c_api(dnnl_primitive_get_primitive_desc(p.get(), &made), "twin: pd");
      dnnl::error::wrap_c_api(dnnl_primitive_desc_query(made, dnnl_query_op_d, 0, &op), "twin: op");
      dnnl::error::wrap_c_api(dnnl_primitive_desc_get_attr(made, &attr), "twin: attr");
      // Made (descriptor and kernel) while oneDNN sees the twin's thread count.
      const BuildThreads build(threads_);
      dnnl_primitive_desc_t pd = nullptr;
      dnnl::error::wrap_c_api(dnnl_primitive_desc_create(&pd, op, attr, Engine().get(), nullptr),
                              "twin: create");
      const dnnl::primitive_desc_base twin_pd(pd);
      for (const MemArg& a : args) {
        const dnnl_memory_desc_t* md =
            dnnl_primitive_desc_query_md(pd, dnnl_query_exec_arg_md, a.arg);
        if (md == nullptr || dnnl_memory_desc_equal(md, &a.md->data) == 0) return;
      }
      const dnnl::primitive twin(pd);
      const dnnl::memory::desc twin_scratch = twin_pd.scratchpad_desc();
      const dnnl_memory_desc_t* p_scratch =
          dnnl_primitive_desc_query_md(made, dnnl_query_scratchpad_md, 0);
      const dnnl::memory::desc main_scratch =
          p_scratch != nullptr ? dnnl::memory::desc(*p_scratch) : dnnl::memory::desc();
      if (RunOnNoise(pool, p, main_scratch, p_threads, args) !=
          RunOnNoise(pool, twin, twin_scratch, threads_, args))
        return;
      primitive_ = twin;
      scratch_ = twin_scratch;
    } catch (const dnnl::error&) {  // no twin: the primitive runs as made
    } catch (const std::bad_alloc&) {
    }
  });
  return primitive_ ? &primitive_ : nullptr;
}

namespace {

// KILN_MAX_CPU_ISA caps oneDNN as it caps our own loops (ONEDNN_MAX_CPU_ISA, when that is the
// cap, oneDNN reads itself). Must run before oneDNN first asks which ISA it may use.
void ApplyCpuIsaCap() {
  static const bool done = [] {
    if (!CpuIsaCappedByKiln()) return true;
    dnnl::cpu_isa isa = dnnl::cpu_isa::all;
    switch (ActiveCpuIsa()) {
      case CpuIsa::kBaseline:
        isa = dnnl::cpu_isa::sse41;
        break;
      case CpuIsa::kAvx2:
        isa = dnnl::cpu_isa::avx2;
        break;
      case CpuIsa::kAvx512:
        return true;
    }
    try {
      dnnl::set_max_cpu_isa(isa);
    } catch (const dnnl::error&) {  // too late: oneDNN already chose
    }
    return true;
  }();
  (void)done;
}

}  // namespace

const dnnl::engine& Engine() {
  static const dnnl::engine engine = [] {
    ApplyCpuIsaCap();
    return dnnl::engine(dnnl::engine::kind::cpu, 0);
  }();
  return engine;
}

dnnl::stream& ThreadStream() {
  thread_local dnnl::stream stream(Engine());
  return stream;
}

void AppendActivation(const Epilogue& e, dnnl::post_ops* ops) {
  using Act = Epilogue::Act;
  using A = dnnl::algorithm;
  switch (e.act) {
    case Act::kNone:
      return;
    case Act::kRelu:
      ops->append_eltwise(1.f, A::eltwise_relu, 0.f, 0.f);
      return;
    case Act::kLeakyRelu:
      ops->append_eltwise(1.f, A::eltwise_relu, e.leakyrelu_alpha, 0.f);
      return;
    case Act::kRelu6:
      ops->append_eltwise(1.f, A::eltwise_clip, 0.f, 6.f);
      return;
    case Act::kElu:
      ops->append_eltwise(1.f, A::eltwise_elu, 1.f, 0.f);
      return;
    case Act::kTanh:
      ops->append_eltwise(1.f, A::eltwise_tanh, 0.f, 0.f);
      return;
    case Act::kSigmoid:
      ops->append_eltwise(1.f, A::eltwise_logistic, 0.f, 0.f);
      return;
    case Act::kGeluExact:
      ops->append_eltwise(1.f, A::eltwise_gelu_erf, 0.f, 0.f);
      return;
    case Act::kGeluApproximate:
      ops->append_eltwise(1.f, A::eltwise_gelu_tanh, 0.f, 0.f);
      return;
    case Act::kSwish:
      ops->append_eltwise(1.f, A::eltwise_swish, 1.f, 0.f);
      return;
    case Act::kHardSwish:
      ops->append_eltwise(1.f, A::eltwise_hardswish, 0.f, 0.f);
      return;
  }
}

bool ActivationDropsNaN(const Epilogue& e) {
  return e.act == Epilogue::Act::kRelu || e.act == Epilogue::Act::kRelu6;
}

bool AllFinite(const float* p, int64_t n) { return vmath::AllFinite(p, n); }

void ApplyActivation(const Epilogue& e, float* data, int64_t n, const ThreadPool& threads) {
  using Act = Epilogue::Act;
  if (e.act == Act::kNone) return;
  threads.ParallelFor(n, 16384, [&](int64_t begin, int64_t end) {
    // The common ones through vmath's vector loops (NaN kept, as below).
    float* part = data + begin;
    switch (e.act) {
      case Act::kRelu:
        vmath::Relu(part, part, end - begin);
        return;
      case Act::kTanh:
        vmath::Tanh(part, part, end - begin);
        return;
      case Act::kSigmoid:
        vmath::Sigmoid(part, part, end - begin);
        return;
      default:
        break;
    }
    for (int64_t i = begin; i < end; ++i) {
      const float x = data[i];
      float y = x;
      switch (e.act) {
        case Act::kNone:
          break;
        case Act::kRelu:
          y = x < 0 ? 0 : x;
          break;
        case Act::kLeakyRelu:
          y = x < 0 ? x * e.leakyrelu_alpha : x;
          break;
        case Act::kRelu6:
          y = x < 0 ? 0 : (x > 6 ? 6 : x);
          break;
        case Act::kElu:
          y = x < 0 ? std::exp(x) - 1 : x;
          break;
        case Act::kTanh:
          y = std::tanh(x);
          break;
        case Act::kSigmoid:
          y = 1 / (1 + std::exp(-x));
          break;
        case Act::kGeluExact:
          y = 0.5f * x * (1 + std::erf(x * 0.70710678118654752f));
          break;
        case Act::kGeluApproximate:
          y = 0.5f * x * (1 + std::tanh(0.7978845608028654f * (x + 0.044715f * x * x * x)));
          break;
        case Act::kSwish:
          y = x / (1 + std::exp(-x));
          break;
        case Act::kHardSwish:  // TF's x * (relu6(x + 3) * (1 / 6)), its division strength-reduced
          y = x * (std::min(std::max(x + 3.f, 0.f), 6.f) * (1.f / 6.f));
          break;
      }
      data[i] = y;
    }
  });
}

void ApplyPostScaleShift(const KernelContext& ctx, const Epilogue& e, Tensor* out) {
  if (!e.has_post() || out->NumElements() == 0) return;
  const int64_t c = out->dim(out->rank() - 1);
  const float* scale = e.post_scale ? ctx.input(e.post_input()).data<float>() : nullptr;
  const float* shift = ctx.input(e.post_input() + (e.post_scale ? 1 : 0)).data<float>();
  float* o = out->data<float>();
  for (int64_t row = 0; row < out->NumElements(); row += c) {
    if (scale != nullptr)
      for (int64_t k = 0; k < c; ++k) o[row + k] *= scale[k];
    for (int64_t k = 0; k < c; ++k) o[row + k] += shift[k];
  }
}

dnnl::memory::desc PlainDesc(const dnnl::memory::dims& dims, dnnl::memory::format_tag tag) {
  return dnnl::memory::desc(dims, dnnl::memory::data_type::f32, tag);
}

Result<Tensor*> AllocateOutputWithAddend(const KernelContext& ctx, const Epilogue& e, int add_index,
                                         const Shape& shape, std::string_view what) {
  if (e.add && ctx.input(add_index).shape() != shape)
    return ctx.Error("the fused Add input has shape ", ctx.input(add_index).shape().ToString(),
                     ", expected the ", what, "'s ", shape.ToString());
  // The addend's own buffer where nothing reads it after this step and no other input is it
  // (the memory plan's in-place input, or an exclusive heap buffer): the sum post-op then adds
  // to it in place, without a copy.
  bool forward = e.add;
  for (int i = 0; forward && i < ctx.num_inputs(); ++i)
    forward = i == add_index || !ctx.input(i).SharesBufferWith(ctx.input(add_index));
  KILN_ASSIGN_OR_RETURN(Tensor * out, forward
                                          ? ctx.ForwardInputOrAllocateOutput(add_index, 0, shape)
                                          : ctx.AllocateOutput(0, shape));
  if (e.add && out->raw_data() != ctx.input(add_index).raw_data()) {
    const Tensor& addend = ctx.input(add_index);
    std::copy_n(addend.data<float>(), addend.NumElements(), out->data<float>());
  }
  return out;
}

Status Execute(const KernelContext& ctx, const dnnl::primitive& p,
               const dnnl::memory::desc& scratch, int max_threads,
               std::initializer_list<std::pair<int, const dnnl::memory*>> args) {
  dnnl_exec_arg_t list[16];
  int n = 0;
  for (const auto& [arg, mem] : args) list[n++] = {arg, mem->get()};
  dnnl::memory scratch_mem;
  const size_t scratch_bytes = scratch.get_size();
  Status s = DnnlCall("execute", [&] {
    if (scratch_bytes > 0) {
      Result<void*> buf = ctx.AllocateTemp(scratch_bytes);
      if (!buf.ok()) throw std::bad_alloc();
      scratch_mem = dnnl::memory(scratch, Engine(), *buf);
      list[n++] = {DNNL_ARG_SCRATCHPAD, scratch_mem.get()};
    }
    ctx.threads().ApplyToCallingThread(max_threads);
    const dnnl_status_t status = dnnl_primitive_execute(p.get(), ThreadStream().get(), n, list);
    ctx.threads().ApplyToCallingThread();  // primitives made later see the pool's count
    dnnl::error::wrap_c_api(status, "could not execute a primitive");
  });
  if (!s.ok()) return ctx.Error(s.message());
  return OkStatus();
}

namespace {

// Memory objects by descriptor, per thread. A slot is found by the descriptor's address (a
// primitive's, stable while it lives) and checked against the descriptor's contents (another
// descriptor may take the address later); two arguments of one call meeting in a slot get a
// memory object of their own for that call. The table is 4-way set-associative with the
// least recently bound way replaced: a model's few hundred descriptors stay bound from call to
// call (a direct-mapped table of 128 slots kept evicting them: a new memory object costs ~0.7
// us, re-pointing one 25 ns).
struct BoundMemory {
  const void* key = nullptr;
  dnnl_memory_desc_t desc{};
  dnnl::memory mem;
  uint64_t call = 0;
};
constexpr int kBoundWays = 4;
constexpr int kBoundSetBits = 7;  // 128 sets, 512 memory objects per thread at most
using BoundSet = std::array<BoundMemory, kBoundWays>;
thread_local std::unique_ptr<std::array<BoundSet, size_t{1} << kBoundSetBits>> bound_memory;
thread_local uint64_t bound_calls = 0;

dnnl_memory_t Bind(const dnnl::memory::desc& md, const void* data, uint64_t call,
                   dnnl::memory* fresh) {
  void* handle = const_cast<void*>(data);
  if (bound_memory == nullptr)
    bound_memory = std::make_unique<std::array<BoundSet, size_t{1} << kBoundSetBits>>();
  // Fibonacci hashing of the address: descriptors at a common stride spread over the sets.
  const uint64_t h = static_cast<uint64_t>(reinterpret_cast<uintptr_t>(&md)) * 0x9E3779B97F4A7C15u;
  BoundSet& set = (*bound_memory)[h >> (64 - kBoundSetBits)];
  BoundMemory* victim = nullptr;
  bool twice = false;  // a second argument with this descriptor in one call
  for (BoundMemory& s : set) {
    if (s.key == &md && dnnl_memory_desc_equal(&s.desc, &md.data) != 0) {
      twice = s.call == call;
      if (twice) break;
      s.mem.set_data_handle(handle);
      s.call = call;
      return s.mem.get();
    }
    if (s.call != call && (victim == nullptr || s.call < victim->call)) victim = &s;
  }
  if (twice || victim == nullptr) {
    *fresh = dnnl::memory(md, Engine(), handle);
    return fresh->get();
  }
  victim->mem = dnnl::memory(md, Engine(), handle);
  victim->key = &md;
  victim->desc = md.data;
  victim->call = call;
  return victim->mem.get();
}

}  // namespace

Status ExecuteBound(const KernelContext& ctx, const dnnl::primitive& p,
                    const dnnl::memory::desc& scratch, int max_threads,
                    std::initializer_list<MemArg> args, const LeanTwin* twin) {
  if (twin != nullptr && twin->threads() > 0 && CallingThreadContended()) {
    if (const dnnl::primitive* lean = twin->Get(ctx.threads(), p, max_threads, args))
      return ExecuteBound(ctx, *lean, twin->scratch(), twin->threads(), args);
  }
  dnnl_exec_arg_t list[16];
  std::array<dnnl::memory, 16> fresh;
  const size_t scratch_bytes = scratch.get_size();
  Status s = DnnlCall("execute", [&] {
    const uint64_t call = ++bound_calls;
    int n = 0;
    for (const MemArg& a : args) {
      list[n] = {a.arg, Bind(*a.md, a.data, call, &fresh[n])};
      ++n;
    }
    if (scratch_bytes > 0) {
      Result<void*> buf = ctx.AllocateTemp(scratch_bytes);
      if (!buf.ok()) throw std::bad_alloc();
      list[n] = {DNNL_ARG_SCRATCHPAD, Bind(scratch, *buf, call, &fresh[n])};
      ++n;
    }
    ctx.threads().ApplyToCallingThread(max_threads);
    const dnnl_status_t status = dnnl_primitive_execute(p.get(), ThreadStream().get(), n, list);
    ctx.threads().ApplyToCallingThread();
    dnnl::error::wrap_c_api(status, "could not execute a primitive");
  });
  if (!s.ok()) return ctx.Error(s.message());
  return OkStatus();
}

Status ExecuteOnThread(const dnnl::primitive& p, const dnnl::memory::desc& scratch,
                       void* scratch_data,
                       std::initializer_list<std::pair<int, const dnnl::memory*>> args) {
  dnnl_exec_arg_t list[16];
  int n = 0;
  for (const auto& [arg, mem] : args) list[n++] = {arg, mem->get()};
  dnnl::memory scratch_mem;
  return DnnlCall("execute", [&] {
    if (scratch.get_size() > 0) {
      scratch_mem = dnnl::memory(scratch, Engine(), scratch_data);
      list[n++] = {DNNL_ARG_SCRATCHPAD, scratch_mem.get()};
    }
    dnnl::error::wrap_c_api(dnnl_primitive_execute(p.get(), ThreadStream().get(), n, list),
                            "could not execute a primitive");
  });
}

namespace {
std::atomic<int64_t> reference_primitives{0};
}  // namespace

dnnl::memory::desc FilterDesc(bool depthwise, int64_t groups, std::span<const int64_t> f,
                              dnnl::memory::data_type dt) {
  const int64_t kh = f[0], kw = f[1], in = f[2], out = f[3];
  if (depthwise) {
    // Groups = channels, each with `out` (the multiplier) outputs and 1 input: strides over
    // [kh, kw, c, m].
    return dnnl::memory::desc({in, out, 1, kh, kw}, dt, {out, 1, 1, kw * in * out, in * out});
  }
  if (groups == 1) return dnnl::memory::desc({out, in, kh, kw}, dt, dnnl::memory::format_tag::hwio);
  // [groups, out / groups, in, kh, kw] over HWIO: group j's outputs are columns
  // j * out/groups .. (j+1) * out/groups - 1.
  const int64_t ocg = out / groups;
  return dnnl::memory::desc({groups, ocg, in, kh, kw}, dt, {ocg, 1, out, kw * in * out, in * out});
}

dnnl::convolution_forward::desc ConvInferenceDesc(const dnnl::memory::desc& src,
                                                  const dnnl::memory::desc& weights,
                                                  const dnnl::memory::desc* bias,
                                                  const dnnl::memory::desc& dst, const WindowDim& h,
                                                  const WindowDim& w) {
  const dnnl::memory::dims strides = {h.stride, w.stride};
  const dnnl::memory::dims dilation = {h.dilation - 1, w.dilation - 1};  // oneDNN: 0 is dense
  const dnnl::memory::dims pad_l = {h.pad_before, w.pad_before};
  const dnnl::memory::dims pad_r = {h.pad_after, w.pad_after};
  const auto kind = dnnl::prop_kind::forward_inference;
  const auto algo = dnnl::algorithm::convolution_direct;
  return bias != nullptr ? dnnl::convolution_forward::desc(kind, algo, src, weights, *bias, dst,
                                                           strides, dilation, pad_l, pad_r)
                         : dnnl::convolution_forward::desc(kind, algo, src, weights, dst, strides,
                                                           dilation, pad_l, pad_r);
}

std::shared_ptr<void> PackWeights(const dnnl::reorder& reorder, const dnnl::memory::desc& user,
                                  const void* data, const dnnl::memory::desc& packed) {
  const size_t bytes = packed.get_size();
  Allocator* allocator = CpuAllocator();
  void* buffer = allocator->Allocate(bytes);
  if (buffer == nullptr) throw std::bad_alloc();
  std::shared_ptr<void> result(buffer,
                               [allocator, bytes](void* b) { allocator->Deallocate(b, bytes); });
  dnnl::memory from(user, Engine(), const_cast<void*>(data));
  dnnl::memory to(packed, Engine(), buffer);
  reorder.execute(ThreadStream(), from, to);
  ThreadStream().wait();
  return result;
}

bool HasInt8Dot() {
  static const bool has = [] {
    const dnnl::cpu_isa isa = dnnl::get_effective_cpu_isa();
    return isa == dnnl::cpu_isa::avx2_vnni || isa == dnnl::cpu_isa::avx512_core_vnni ||
           isa == dnnl::cpu_isa::avx512_core_bf16 || isa == dnnl::cpu_isa::avx512_core_amx;
  }();
  return has;
}

bool IsReference(const dnnl::primitive_desc_base& pd) {
  const bool reference = std::string_view(pd.impl_info_str()).starts_with("ref");
  if (reference) reference_primitives.fetch_add(1, std::memory_order_relaxed);
  return reference;
}

int64_t ReferencePrimitivesMade() { return reference_primitives.load(std::memory_order_relaxed); }

namespace {

// A ConstantBProduct's matmul per shape: m, k, n, lda, ldc, whether it accumulates.
using PackedKey = std::tuple<int64_t, int64_t, int64_t, int64_t, int64_t, bool>;
struct PackedPrimitive {
  dnnl::memory::desc a, weights, c, scratch;
  dnnl::matmul primitive;
};
// The shapes of a process's recurrent layers are few; past this many, products go to Sgemm
// rather than hold primitives without bound.
constexpr size_t kMaxPackedPrimitives = 256;

// The brgemm matmul for `key`, built for one thread, made on first use and kept for the process
// (null: oneDNN offers another kernel, or the table is full).
const PackedPrimitive* FindPackedPrimitive(const PackedKey& key) {
  static std::mutex mu;
  static auto* made = new std::map<PackedKey, std::unique_ptr<const PackedPrimitive>>();  // exit
  thread_local std::map<PackedKey, const PackedPrimitive*> seen;  // no lock on the steady path
  if (auto it = seen.find(key); it != seen.end()) return it->second;
  const std::lock_guard lock(mu);
  auto it = made->find(key);
  if (it == made->end()) {
    if (made->size() >= kMaxPackedPrimitives) return nullptr;
    // Named copies: Clang before 16 cannot capture structured bindings in a lambda.
    const int64_t m = std::get<0>(key), k = std::get<1>(key), n = std::get<2>(key);
    const int64_t lda = std::get<3>(key), ldc = std::get<4>(key);
    const bool accumulate = std::get<5>(key);
    auto p = std::make_unique<PackedPrimitive>();
    using dt = dnnl::memory::data_type;
    p->a = dnnl::memory::desc({m, k}, dt::f32, dnnl::memory::dims{lda, 1});
    p->c = dnnl::memory::desc({m, n}, dt::f32, dnnl::memory::dims{ldc, 1});
    bool brgemm = false;
    const Status s = DnnlCall("matrix product setup", [&] {
      const BuildThreads build(1);
      dnnl::primitive_attr attr;
      attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
      if (accumulate) {
        dnnl::post_ops ops;
        ops.append_sum(1.f);
        attr.set_post_ops(ops);
      }
      const dnnl::memory::desc any({k, n}, dt::f32, dnnl::memory::format_tag::any);
      const dnnl::matmul::primitive_desc pd(dnnl::matmul::desc(p->a, any, p->c), attr, Engine());
      brgemm = std::string_view(pd.impl_info_str()).starts_with("brg");
      if (brgemm) {
        p->weights = pd.weights_desc();
        p->scratch = pd.scratchpad_desc();
        p->primitive = dnnl::matmul(pd);
      }
    });
    if (!s.ok() || !brgemm) p.reset();
    it = made->emplace(key, std::move(p)).first;
  }
  seen.emplace(key, it->second.get());
  return it->second.get();
}

}  // namespace

bool ConstantBProduct::Packs() {
  ApplyCpuIsaCap();
  static const bool packs =
      FindPackedPrimitive(PackedKey{16, 128, 512, 128, 512, false}) != nullptr;
  return packs;
}

Status ConstantBProduct::Run(int64_t m, const float* a, int64_t lda, bool accumulate, float* c,
                             int64_t ldc) const {
  if (m == 0 || n_ == 0) return OkStatus();
  const PackedPrimitive* p =
      Packs() && k_ > 0 ? FindPackedPrimitive(PackedKey{m, k_, n_, lda, ldc, accumulate}) : nullptr;
  if (p == nullptr)
    return Sgemm(false, false, m, n_, k_, a, lda, b_, ldb_, accumulate ? 1.0f : 0.0f, c, ldc);
  const void* packed = nullptr;
  {
    const std::lock_guard lock(mu_);
    for (const auto& [layout, data] : packed_)
      if (layout == p->weights) packed = data.get();
    if (packed == nullptr) {
      const dnnl::memory::desc plain({k_, n_}, dnnl::memory::data_type::f32,
                                     dnnl::memory::dims{ldb_, 1});
      std::shared_ptr<void> data;
      KILN_RETURN_IF_ERROR(DnnlCall("packing a matrix product's weights", [&] {
        data = PackWeights(
            dnnl::reorder(dnnl::reorder::primitive_desc(Engine(), plain, Engine(), p->weights)),
            plain, b_, p->weights);
      }));
      packed = data.get();
      packed_.emplace_back(p->weights, std::move(data));
    }
  }
  thread_local std::vector<char> scratch;
  if (scratch.size() < p->scratch.get_size()) scratch.resize(p->scratch.get_size());
  return DnnlCall("matrix product", [&] {
    const uint64_t call = ++bound_calls;
    std::array<dnnl::memory, 4> fresh;
    dnnl_exec_arg_t list[4] = {{DNNL_ARG_SRC, Bind(p->a, a, call, &fresh[0])},
                               {DNNL_ARG_WEIGHTS, Bind(p->weights, packed, call, &fresh[1])},
                               {DNNL_ARG_DST, Bind(p->c, c, call, &fresh[2])},
                               {}};
    int args = 3;
    if (!scratch.empty())
      list[args++] = {DNNL_ARG_SCRATCHPAD, Bind(p->scratch, scratch.data(), call, &fresh[3])};
    dnnl::error::wrap_c_api(
        dnnl_primitive_execute(p->primitive.get(), ThreadStream().get(), args, list),
        "could not execute a matrix product");
  });
}

Status Sgemm(bool ta, bool tb, int64_t m, int64_t n, int64_t k, const float* a, int64_t lda,
             const float* b, int64_t ldb, float beta, float* c, int64_t ldc) {
  if (m == 0 || n == 0) return OkStatus();
  ApplyCpuIsaCap();
  const dnnl_status_t s =
      dnnl_sgemm(ta ? 'T' : 'N', tb ? 'T' : 'N', m, n, k, 1.0f, a, lda, b, ldb, beta, c, ldc);
  if (s != dnnl_success) return Internal("oneDNN sgemm failed (status ", static_cast<int>(s), ")");
  return OkStatus();
}

}  // namespace kiln::exec::onednn
