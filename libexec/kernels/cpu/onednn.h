// oneDNN behind the CPU kernel table: matrix products, convolutions and pooling on float32.
// oneDNN picks the best JIT kernel for the CPU at run time (AVX2, AVX-512, AMX), runs on the
// OpenMP threads our ThreadPool shares, and takes fused epilogues (bias, batch-norm folded into
// the weights, activations) as post-ops. Its C++ API throws; every call goes through
// DnnlCall, so no exception leaves a kernel.
#pragma once

#include <dnnl.hpp>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "kernels/epilogue.h"
#include "kernels/kernel_util.h"
#include "kernels/window_util.h"

namespace kiln::exec::onednn {

// oneDNN's memory objects take `void*` for every argument; a primitive only reads its sources
// and weights, so a kernel's read-only input is handed over through this one cast.
inline void* SourceHandle(const Tensor& t) { return const_cast<void*>(t.raw_data()); }

// The process's CPU engine.
const dnnl::engine& Engine();
// A stream for the calling thread (made once per thread).
dnnl::stream& ThreadStream();

// Runs f (which may throw dnnl::error or std::bad_alloc) and turns a throw into an Internal
// error naming `what`.
template <typename F>
Status DnnlCall(std::string_view what, F&& f) {
  try {
    f();
    return OkStatus();
  } catch (const dnnl::error& e) {
    return Internal("oneDNN ", what, " failed: ", e.what());
  } catch (const std::bad_alloc&) {
    return ResourceExhausted("out of memory in oneDNN ", what);
  }
}

// The activation as a oneDNN post-op (nothing for kNone).
void AppendActivation(const Epilogue& e, dnnl::post_ops* ops);
// The activation applied in place on the CPU, for the paths oneDNN does not take.
void ApplyActivation(const Epilogue& e, float* data, int64_t n, const ThreadPool& threads);
// The post-activation scale and shift (_KilnScaleShift, _KilnShift) applied in place on `out`,
// whose innermost dim is the channels, from the kernel's inputs (nothing when there are none).
void ApplyPostScaleShift(const KernelContext& ctx, const Epilogue& e, Tensor* out);
// Whether oneDNN's form of the activation turns NaN into a number: its ReLU and ReLU6 are
// max/min instructions that return the bound for a NaN. A product or convolution fused with
// one checks its input, and when that holds NaN or Inf computes without oneDNN's activation,
// so NaN stays NaN as in TensorFlow's kernels.
bool ActivationDropsNaN(const Epilogue& e);
// Whether every element is finite (no NaN, no +-Inf).
bool AllFinite(const float* p, int64_t n);

// One argument of a primitive: its slot, the descriptor the primitive was made with (held by the
// caller as long as the primitive), and this call's buffer.
struct MemArg {
  int arg;
  const dnnl::memory::desc* md;
  const void* data;
};

// While alive, oneDNN primitives made on this thread are built for at most `max_threads`
// threads: oneDNN fixes a kernel's split of the work when it is made, from the thread count of
// the making thread. A primitive built for one thread runs wholly on the thread that executes
// it, so kernels can run several at once on their own pieces of the data, in our ParallelFor,
// with results that do not depend on the thread count.
class BuildThreads {
 public:
  explicit BuildThreads(int max_threads);
  ~BuildThreads();
  BuildThreads(const BuildThreads&) = delete;
  BuildThreads& operator=(const BuildThreads&) = delete;
  // The thread count primitives made now are built for.
  int threads() const { return threads_; }

 private:
  int saved_;
  int threads_;
};

// The cost model for oneDNN's products and convolutions: the threads `macs` multiply-adds are
// worth, one per kMacsPerThread, at least 1. Work below that runs on the calling thread with no
// parallel region: waking and joining a team costs more than such a product on a quiet machine,
// and milliseconds when other processes hold the cores (a descheduled worker holds up the join).
inline constexpr double kMacsPerThread = 1 << 19;
int ThreadsWorth(double macs);

// The same while the calling thread is contended (CallingThreadContended in
// kiln/exec/thread_pool.h): a region then waits milliseconds for its workers to start and for the
// caller to resume, so a thread is worth it only for about 128 M multiply-adds (milliseconds of
// work). Less was worse: a ResNet50 at batch 1 mixing one- and two-thread convolutions left the
// workers asleep between regions, each paying the wake-ups.
inline constexpr double kContendedMacsPerThread = 1 << 27;

// A primitive's twin built for fewer threads (its work at kContendedMacsPerThread), which
// ExecuteBound runs instead of the primitive while the calling thread is contended. Made on the
// first such call and kept only when it takes the same argument layouts and gives the same bits as
// the primitive (both run once on pseudo-random operands: oneDNN may block or split a reduction
// differently for another thread count), so results never depend on the machine's load.
class LeanTwin {
 public:
  LeanTwin() = default;
  LeanTwin(const LeanTwin&) = delete;
  LeanTwin& operator=(const LeanTwin&) = delete;
  // For a primitive of `macs` multiply-adds built for `threads`.
  void Plan(double macs, int threads);
  // The threads the twin is built for; 0 when a twin would not have fewer than the primitive.
  int threads() const { return threads_; }
  // The twin of `p` (built for `p_threads`, executed with `args`), made and checked on the first
  // call; null when it was refused.
  const dnnl::primitive* Get(const ThreadPool& pool, const dnnl::primitive& p, int p_threads,
                             std::initializer_list<MemArg> args) const;
  const dnnl::memory::desc& scratch() const { return scratch_; }

 private:
  int threads_ = 0;
  mutable std::once_flag made_;
  mutable dnnl::primitive primitive_;  // empty: refused
  mutable dnnl::memory::desc scratch_;
};

// Executes `p` on the calling thread with (arg, memory) pairs and a scratchpad the caller
// allocated (at least `scratch`'s size; may be null when that is 0). Safe inside ParallelFor.
Status ExecuteOnThread(const dnnl::primitive& p, const dnnl::memory::desc& scratch,
                       void* scratch_data,
                       std::initializer_list<std::pair<int, const dnnl::memory*>> args);

// A fused op's float32 output 0 of `shape`, holding input `add_index` (the fused Add's addend,
// which oneDNN's sum post-op adds to) when `e.add`: the addend's buffer where it dies here and
// no other tensor shares it, else a fresh output (so the memory plan can place it). `what` names
// the product in the error for an addend of another shape.
Result<Tensor*> AllocateOutputWithAddend(const KernelContext& ctx, const Epilogue& e, int add_index,
                                         const Shape& shape, std::string_view what);

// A plain row-major float32 memory descriptor of `dims`.
dnnl::memory::desc PlainDesc(const dnnl::memory::dims& dims, dnnl::memory::format_tag tag);

// Execute, binding each argument (and the scratchpad) through a memory object kept per thread
// for its descriptor and pointed at this call's buffer: making four memory objects costs about
// 0.7 us (allocations), re-pointing them 25 ns, which tells on small products called often.
// With a `twin` planned for fewer threads, the twin runs while the calling thread is contended.
Status ExecuteBound(const KernelContext& ctx, const dnnl::primitive& p,
                    const dnnl::memory::desc& scratch, int max_threads,
                    std::initializer_list<MemArg> args, const LeanTwin* twin = nullptr);

// Executes `p` with (arg, memory) pairs through oneDNN's C API (no map built per call); the
// primitive's user-mode scratchpad, when it needs one, comes from the kernel's scratch. It runs
// on at most `max_threads` of the pool's threads (what it was built for: BuildThreads).
Status Execute(const KernelContext& ctx, const dnnl::primitive& p,
               const dnnl::memory::desc& scratch, int max_threads,
               std::initializer_list<std::pair<int, const dnnl::memory*>> args);

// TF's convolution filter [kh, kw, in, out] (depthwise: [kh, kw, channels, multiplier];
// grouped: [kh, kw, in / groups, out]) as oneDNN sees it, of element type `dt`.
dnnl::memory::desc FilterDesc(bool depthwise, int64_t groups, std::span<const int64_t> f,
                              dnnl::memory::data_type dt);

// An inference convolution over the 2-D window `h` x `w` (`bias` null: none).
dnnl::convolution_forward::desc ConvInferenceDesc(const dnnl::memory::desc& src,
                                                  const dnnl::memory::desc& weights,
                                                  const dnnl::memory::desc* bias,
                                                  const dnnl::memory::desc& dst, const WindowDim& h,
                                                  const WindowDim& w);

// The weights at `data` (layout `user`) copied by `reorder` into a new buffer of layout
// `packed` from the CPU allocator, freed with the last copy of the result. oneDNN's errors
// throw: call it inside DnnlCall.
std::shared_ptr<void> PackWeights(const dnnl::reorder& reorder, const dnnl::memory::desc& user,
                                  const void* data, const dnnl::memory::desc& packed);

// Whether oneDNN's kernels on this CPU (within ONEDNN_MAX_CPU_ISA) multiply 8-bit integers
// with dot-product instructions (VNNI or AMX). Without them (AVX2, AVX-512 before VNNI) the
// u8 x s8 pairs sum in 16 bits and saturate, and oneDNN halves s8 weights to avoid it: an
// integer product is then not the float product of the same levels.
bool HasInt8Dot();

// Whether oneDNN gave `pd` its reference implementation (plain loops, hundreds of times slower
// than its JIT kernels), as it does for memory layouts its kernels do not take. Each one is
// counted, so tests can check that what kiln hands over reaches the fast kernels; a kernel that
// gets one computes another way where it has one.
bool IsReference(const dnnl::primitive_desc_base& pd);
// How many primitive descriptors IsReference found to be the reference one, in this process.
int64_t ReferencePrimitivesMade();

// The row stride, in floats, to keep a GEMM's B (weights) at when it is `row_floats` wide: wider
// by 16 when the rows would be a multiple of 512 bytes apart. oneDNN's sgemm loses up to two
// thirds of its speed on such rows (their columns share cache sets): on a Zen 3 core,
// 256x512x768 ran at 64 GFLOP/s with 512-float rows and 97 with 528, 8x3072x768 three times
// faster; and layer widths are usually such sizes (128, 256, 512, 768, 4 x 64 gates...).
inline int64_t PaddedWeightRow(int64_t row_floats) {
  return row_floats >= 128 && row_floats % 128 == 0 ? row_floats + 16 : row_floats;
}

// Products A B with B packed into the layout oneDNN's brgemm matmul reads, where oneDNN has
// that kernel (AVX-512 and up); elsewhere Run is Sgemm on B as given. Sgemm's first call in a
// process makes all of its JIT kernels (22 ms, in the first call of a recurrent model); a
// matmul primitive makes only its own (0.1-0.5 ms), kept for the process per shape.
class ConstantBProduct {
 public:
  // Whether products run on the packed path here.
  static bool Packs();
  // B is k x n, its rows `ldb` floats apart; the caller keeps it while this lives.
  ConstantBProduct(const float* b, int64_t k, int64_t n, int64_t ldb)
      : b_(b), k_(k), n_(n), ldb_(ldb) {}
  // C (m x n, rows `ldc` apart) = A (m x k, rows `lda` apart) B, plus C when `accumulate`. Runs
  // on the calling thread; safe from several threads at once.
  Status Run(int64_t m, const float* a, int64_t lda, bool accumulate, float* c, int64_t ldc) const;

 private:
  const float* b_;
  int64_t k_, n_, ldb_;
  mutable std::mutex mu_;
  // B packed, per layout the kernels of this product's shapes read (usually one).
  mutable std::vector<std::pair<dnnl::memory::desc, std::shared_ptr<void>>> packed_;
};

// C = A B + beta C, row-major float32, with oneDNN's JIT sgemm (the widest vectors the CPU
// has; Eigen's product is built for baseline x86-64 here). `ta`/`tb` read A/B transposed.
// Runs on the calling thread when called inside a parallel region (our ParallelFor).
Status Sgemm(bool ta, bool tb, int64_t m, int64_t n, int64_t k, const float* a, int64_t lda,
             const float* b, int64_t ldb, float beta, float* c, int64_t ldc);

}  // namespace kiln::exec::onednn
