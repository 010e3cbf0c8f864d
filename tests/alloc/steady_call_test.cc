// A steady call allocates nothing: the global operator new is replaced by a counting one for
// this test binary, and fixed-shape functions run with caller-bound outputs while it counts.
#include <doctest/doctest.h>
#include <google/protobuf/text_format.h>

#include <atomic>
#include <cstdlib>
#include <initializer_list>
#include <map>
#include <new>
#include <string>
#include <utility>

#include "kiln/core/npy.h"
#include "kiln/exec/executor.h"
#include "kiln/exec/saved_model.h"
#include "tensorflow/framework.pb.h"

namespace {

std::atomic<bool> g_counting{false};
std::atomic<long> g_allocations{0};
std::atomic<long> g_bytes{0};

void* Counted(size_t n, size_t align) {
  if (g_counting.load(std::memory_order_relaxed)) {
    g_allocations.fetch_add(1, std::memory_order_relaxed);
    g_bytes.fetch_add(static_cast<long>(n), std::memory_order_relaxed);
  }
  if (align <= alignof(std::max_align_t)) return std::malloc(n == 0 ? 1 : n);
  return std::aligned_alloc(align, (n + align - 1) / align * align);
}

}  // namespace

// Every form of new the project and its libraries use.
void* operator new(size_t n) {
  void* p = Counted(n, alignof(std::max_align_t));
  if (p == nullptr) throw std::bad_alloc();
  return p;
}
void* operator new[](size_t n) { return operator new(n); }
void* operator new(size_t n, const std::nothrow_t&) noexcept {
  return Counted(n, alignof(std::max_align_t));
}
void* operator new[](size_t n, const std::nothrow_t&) noexcept {
  return Counted(n, alignof(std::max_align_t));
}
void* operator new(size_t n, std::align_val_t a) {
  void* p = Counted(n, static_cast<size_t>(a));
  if (p == nullptr) throw std::bad_alloc();
  return p;
}
void* operator new[](size_t n, std::align_val_t a) { return operator new(n, a); }
void* operator new(size_t n, std::align_val_t a, const std::nothrow_t&) noexcept {
  return Counted(n, static_cast<size_t>(a));
}
void operator delete(void* p) noexcept { std::free(p); }
void operator delete[](void* p) noexcept { std::free(p); }
void operator delete(void* p, size_t) noexcept { std::free(p); }
void operator delete[](void* p, size_t) noexcept { std::free(p); }
void operator delete(void* p, std::align_val_t) noexcept { std::free(p); }
void operator delete[](void* p, std::align_val_t) noexcept { std::free(p); }
void operator delete(void* p, size_t, std::align_val_t) noexcept { std::free(p); }
void operator delete(void* p, std::align_val_t, const std::nothrow_t&) noexcept { std::free(p); }

namespace kiln::exec {
namespace {

struct Count {
  long allocations;
  long bytes;
};

// Runs `call` `n` times while counting allocations.
template <typename F>
Count CountDuring(int n, F&& call) {
  g_allocations = 0;
  g_bytes = 0;
  g_counting = true;
  for (int i = 0; i < n; ++i) call();
  g_counting = false;
  return {g_allocations.load(), g_bytes.load()};
}

// y = sum(relu(x * w + b), axis 1) with x [64, 256]: element-wise ops, broadcasting and a
// reduction, all planned in the arena.
const char* kElementwise = R"pb(
  signature {
    name: "f"
    input_arg { name: "x" type: DT_FLOAT }
    input_arg { name: "w" type: DT_FLOAT }
    input_arg { name: "b" type: DT_FLOAT }
    output_arg { name: "y" type: DT_FLOAT }
  }
  node_def {
    name: "m"
    op: "Mul"
    input: "x"
    input: "w"
    attr {
      key: "T"
      value { type: DT_FLOAT }
    }
  }
  node_def {
    name: "a"
    op: "AddV2"
    input: "m:z:0"
    input: "b"
    attr {
      key: "T"
      value { type: DT_FLOAT }
    }
  }
  node_def {
    name: "r"
    op: "Relu"
    input: "a:z:0"
    attr {
      key: "T"
      value { type: DT_FLOAT }
    }
  }
  node_def {
    name: "axis"
    op: "Const"
    attr {
      key: "dtype"
      value { type: DT_INT32 }
    }
    attr {
      key: "value"
      value {
        tensor {
          dtype: DT_INT32
          tensor_shape {}
          int_val: 1
        }
      }
    }
  }
  node_def {
    name: "s"
    op: "Sum"
    input: "r:activations:0"
    input: "axis:output:0"
    attr {
      key: "T"
      value { type: DT_FLOAT }
    }
    attr {
      key: "Tidx"
      value { type: DT_INT32 }
    }
  }
  ret { key: "y" value: "s:output:0" }
)pb";

TEST_CASE("a steady call of a fixed-shape function allocates nothing") {
  tensorflow::FunctionDef fdef;
  REQUIRE(google::protobuf::TextFormat::ParseFromString(kElementwise, &fdef));
  tensorflow::FunctionDefLibrary proto;
  FunctionLibrary lib(proto);
  const std::vector<TensorSpec> specs = {{DType::kFloat, PartialShape{64, 256}},
                                         {DType::kFloat, PartialShape{256}},
                                         {DType::kFloat, PartialShape{256}}};
  auto fn = PreparedFunction::Prepare(fdef, lib, specs);
  REQUIRE_MESSAGE(fn.ok(), fn.status().ToString());
  CHECK((*fn)->plan_stats().planned_slots >= 2);  // the intermediates live in the arena
  std::vector<Tensor> args = {Tensor(DType::kFloat, Shape{64, 256}),
                              Tensor(DType::kFloat, Shape{256}), Tensor(DType::kFloat, Shape{256})};
  for (int i = 0; i < 64 * 256; ++i) args[0].data<float>()[i] = static_cast<float>(i % 7) - 3;
  for (int i = 0; i < 256; ++i) {
    args[1].data<float>()[i] = 0.5f;
    args[2].data<float>()[i] = 1.0f;
  }
  std::vector<Tensor> outs = {Tensor(DType::kFloat, Shape{64})};
  ThreadPool one(1);
  RunOptions options;
  options.threads = &one;
  for (int i = 0; i < 3; ++i) REQUIRE((*fn)->Run(args, {}, outs, options).ok());  // warm up
  const float* bound = outs[0].data<float>();
  Status status;
  const Count c = CountDuring(20, [&] { status = (*fn)->Run(args, {}, outs, options); });
  REQUIRE(status.ok());
  CHECK(c.allocations == 0);
  CHECK(c.bytes == 0);
  CHECK(outs[0].data<float>() == bound);  // the result went into the caller's buffer
  float want = 0;
  for (int j = 0; j < 256; ++j) want += std::max(0.0f, (static_cast<float>(j % 7) - 3) * 0.5f + 1);
  CHECK(outs[0].data<float>()[0] == doctest::Approx(want));
}

// A Dense layer stack as Keras exports it: MatMul + BiasAdd + Relu, twice, then Softmax; the
// products fuse and run on oneDNN.
std::string MlpFunction(int64_t in, int64_t hidden, int64_t out) {
  auto weights = [](const std::string& name, int64_t rows, int64_t cols) {
    std::string t =
        "tensor { dtype: DT_FLOAT tensor_shape { dim { size: " + std::to_string(rows) + " }";
    if (cols > 0) t += " dim { size: " + std::to_string(cols) + " }";
    t += " } float_val: 0.01 }";
    return "node_def { name: \"" + name +
           "\" op: \"Const\" attr { key: \"dtype\" value { type: DT_FLOAT } } attr { key: "
           "\"value\" value { " +
           t + " } } }\n";
  };
  auto op = [](const std::string& name, const std::string& type, const std::string& a,
               const std::string& b) {
    std::string n = "node_def { name: \"" + name + "\" op: \"" + type + "\" input: \"" + a + "\"";
    if (!b.empty()) n += " input: \"" + b + "\"";
    return n + " attr { key: \"T\" value { type: DT_FLOAT } } }\n";
  };
  std::string f =
      "signature { name: \"mlp\" input_arg { name: \"x\" type: DT_FLOAT } output_arg { name: "
      "\"y\" type: DT_FLOAT } }\n";
  f += weights("w1", in, hidden) + weights("b1", hidden, 0) + weights("w2", hidden, out) +
       weights("b2", out, 0);
  f += op("mm1", "MatMul", "x", "w1:output:0") +
       op("ba1", "BiasAdd", "mm1:product:0", "b1:output:0") + op("r1", "Relu", "ba1:output:0", "") +
       op("mm2", "MatMul", "r1:activations:0", "w2:output:0") +
       op("ba2", "BiasAdd", "mm2:product:0", "b2:output:0") +
       op("sm", "Softmax", "ba2:output:0", "");
  return f + "ret { key: \"y\" value: \"sm:softmax:0\" }\n";
}

TEST_CASE("a steady call through oneDNN allocates no tensor memory") {
  tensorflow::FunctionDef fdef;
  REQUIRE(google::protobuf::TextFormat::ParseFromString(MlpFunction(256, 512, 10), &fdef));
  tensorflow::FunctionDefLibrary proto;
  FunctionLibrary lib(proto);
  const std::vector<TensorSpec> specs = {{DType::kFloat, PartialShape{64, 256}}};
  auto fn = PreparedFunction::Prepare(fdef, lib, specs);
  REQUIRE_MESSAGE(fn.ok(), fn.status().ToString());
  CHECK((*fn)->plan_stats().fused == 2);
  std::vector<Tensor> args = {Tensor(DType::kFloat, Shape{64, 256})};
  std::vector<Tensor> outs = {Tensor(DType::kFloat, Shape{64, 10})};
  ThreadPool one(1);
  RunOptions options;
  options.threads = &one;
  // Contended too: the products built for more threads then run their one-thread twins
  // (kernels/cpu/onednn.h), in the scratch sized for the primitives.
  for (const bool contended : {false, true}) {
    INFO("contended: ", contended);
    OverrideContention(contended);
    for (int i = 0; i < 3; ++i) REQUIRE((*fn)->Run(args, {}, outs, options).ok());
    Status status;
    const int calls = 20;
    const Count c = CountDuring(calls, [&] { status = (*fn)->Run(args, {}, outs, options); });
    OverrideContention(std::nullopt);
    REQUIRE(status.ok());
    // oneDNN builds a small argument map for each primitive it executes (its C API does); that
    // is all: no tensor memory, which would be 64 x 512 floats (128 KiB) per call here.
    INFO("allocations per call: ", c.allocations / calls, ", bytes per call: ", c.bytes / calls);
    CHECK(c.bytes / calls < 4096);
    CHECK(outs[0].data<float>()[0] == doctest::Approx(0.1f));  // uniform weights: even softmax
  }
}

// A call whose 1 MB result the caller takes (no bound output) and drops before the next call:
// the host allocator keeps the freed buffer for the next request of its size (core/tensor.cc),
// so steady calls take no large block from the heap (glibc would give it back to the system
// and the next call would fault every page in again).
TEST_CASE("a large result the caller drops is the next call's buffer") {
  const char* relu = R"pb(
    signature {
      name: "f"
      input_arg { name: "x" type: DT_FLOAT }
      output_arg { name: "y" type: DT_FLOAT }
    }
    node_def {
      name: "r"
      op: "Relu"
      input: "x"
      attr {
        key: "T"
        value { type: DT_FLOAT }
      }
    }
    ret { key: "y" value: "r:activations:0" }
  )pb";
  tensorflow::FunctionDef fdef;
  REQUIRE(google::protobuf::TextFormat::ParseFromString(relu, &fdef));
  tensorflow::FunctionDefLibrary proto;
  FunctionLibrary lib(proto);
  const std::vector<TensorSpec> specs = {{DType::kFloat, PartialShape{512, 512}}};
  auto fn = PreparedFunction::Prepare(fdef, lib, specs);
  REQUIRE_MESSAGE(fn.ok(), fn.status().ToString());
  std::vector<Tensor> args = {Tensor(DType::kFloat, Shape{512, 512})};
  for (int i = 0; i < 512 * 512; ++i) args[0].data<float>()[i] = static_cast<float>(i % 5) - 2;
  ThreadPool one(1);
  RunOptions options;
  options.threads = &one;
  std::vector<Tensor> outs(1);
  for (int i = 0; i < 3; ++i) {  // warm up
    outs[0] = Tensor();
    REQUIRE((*fn)->Run(args, {}, outs, options).ok());
  }
  Status status;
  const Count c = CountDuring(20, [&] {
    outs[0] = Tensor();  // the caller drops the last result
    status = (*fn)->Run(args, {}, outs, options);
  });
  REQUIRE(status.ok());
  CHECK(outs[0].NumElements() == 512 * 512);
  CHECK(outs[0].data<float>()[3] == 1.f);
  CHECK(c.bytes < 256 * 1024);  // small bookkeeping only: 20 MB without the reuse
}

// An .npz entry (numpy.savez: stored) of 4 MiB: one zip entry, CRC-32 computed bitwise.
std::string StoredNpz(const std::string& npy) {
  uint32_t crc = 0xffffffffu;
  for (unsigned char b : npy) {
    crc ^= b;
    for (int k = 0; k < 8; ++k) crc = (crc & 1) ? (crc >> 1) ^ 0xEDB88320u : crc >> 1;
  }
  crc = ~crc;
  std::string out;
  // Little-endian fields: {value, bytes}.
  auto put = [&](std::initializer_list<std::pair<uint32_t, int>> fields) {
    for (const auto& [v, bytes] : fields)
      for (int i = 0; i < bytes; ++i) out.push_back(static_cast<char>(v >> (8 * i)));
  };
  const auto size = static_cast<uint32_t>(npy.size());
  put({{0x04034b50, 4},
       {20, 2},
       {0, 2},
       {0, 2},
       {0, 4},
       {crc, 4},
       {size, 4},
       {size, 4},
       {5, 2},
       {0, 2}});
  out += "a.npy" + npy;
  const auto central = static_cast<uint32_t>(out.size());
  put({{0x02014b50, 4},
       {20, 2},
       {20, 2},
       {0, 2},
       {0, 2},
       {0, 4},
       {crc, 4},
       {size, 4},
       {size, 4},
       {5, 2},
       {0, 2},
       {0, 2},
       {0, 2},
       {0, 2},
       {0, 4},
       {0, 4}});
  out += "a.npy";
  const auto central_size = static_cast<uint32_t>(out.size()) - central;
  put({{0x06054b50, 4}, {0, 2}, {0, 2}, {1, 2}, {1, 2}, {central_size, 4}, {central, 4}, {0, 2}});
  return out;
}

TEST_CASE("npz: an entry is read straight into its tensor, not through a copy of its bytes") {
  Tensor big(DType::kFloat, Shape{1024, 1024});  // 4 MiB
  for (int64_t i = 0; i < big.NumElements(); ++i) big.data<float>()[i] = static_cast<float>(i);
  auto npy = SerializeNpy(big);
  REQUIRE(npy.ok());
  const std::string zip = StoredNpz(*npy);
  Result<std::map<std::string, Tensor>> got = std::map<std::string, Tensor>{};
  const Count c = CountDuring(1, [&] { got = ParseNpz(zip, "big.npz"); });
  REQUIRE_MESSAGE(got.ok(), got.status().ToString());
  CHECK(got->at("a").data<float>()[1024 * 1024 - 1] == 1024.f * 1024 - 1);
  // The tensor's 4 MiB (unless the allocator's cache had them) and bookkeeping: no second
  // 4 MiB for the entry's bytes.
  CHECK(c.bytes < 5 * 1024 * 1024);
}

}  // namespace
}  // namespace kiln::exec
