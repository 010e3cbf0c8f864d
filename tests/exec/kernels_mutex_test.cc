// Mutexes (MutexV2, MutexLock, ConsumeMutexLock): two acquisitions exclude each other (a second
// one waits on another thread until the first lock is consumed or dropped), critical sections
// in graphs run by concurrent calls lose no update, a graph whose locks TF's executor would
// interleave with the other section's release runs on one thread, a deadline ends a wait, this
// thread's own held lock is an error rather than a hang, and TF's errors for bad inputs.
#include <doctest/doctest.h>
#include <google/protobuf/text_format.h>

#include <atomic>
#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include "kernel_test_util.h"
#include "kiln/exec/executor.h"

namespace kiln::testing {
namespace {

using exec::FunctionLibrary;
using exec::PreparedFunction;

Tensor Mutex(ResourceManager* rm, const std::string& name) {
  auto h = OpRunner("MutexV2").String("shared_name", name).Resources(rm).Run1();
  REQUIRE_MESSAGE(h.ok(), h.status().ToString());
  return *h;
}

Result<Tensor> Lock(const Tensor& mutex) { return OpRunner("MutexLock").Input(mutex).Run1(); }

Status Consume(const Tensor& lock) {
  return OpRunner("ConsumeMutexLock").Input(lock).Run().status();
}

TEST_CASE("MutexLock: a second acquisition waits until the first lock is consumed") {
  ResourceManager rm;
  const Tensor mutex = Mutex(&rm, "m");
  auto first = Lock(mutex);
  REQUIRE_MESSAGE(first.ok(), first.status().ToString());
  std::atomic<bool> released{false}, acquired{false}, released_before{false};
  std::thread second([&] {
    auto lock = Lock(mutex);  // another thread: waits
    released_before = released.load();
    acquired = lock.ok();
  });
  // Give the second acquisition time to start waiting (the checks below hold whatever the
  // timing: it may never take the lock before the release).
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  CHECK_FALSE(acquired.load());
  released = true;
  REQUIRE(Consume(*first).ok());
  second.join();
  CHECK(acquired.load());
  CHECK(released_before.load());
}

TEST_CASE("MutexLock: the lock is released when its variant dies unconsumed") {
  ResourceManager rm;
  const Tensor mutex = Mutex(&rm, "m");
  std::atomic<bool> acquired{false};
  std::thread other;
  {
    auto first = Lock(mutex);
    REQUIRE(first.ok());
    other = std::thread([&] { acquired = Lock(mutex).ok(); });
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    CHECK_FALSE(acquired.load());
  }  // the lock's last tensor goes
  other.join();
  CHECK(acquired.load());
  // Consumed, and dropped too: free for this thread.
  auto again = Lock(mutex);
  CHECK_MESSAGE(again.ok(), again.status().ToString());
}

TEST_CASE("MutexLock: a lock this thread holds is an error, not a wait for itself") {
  ResourceManager rm;
  const Tensor mutex = Mutex(&rm, "m");
  auto first = Lock(mutex);
  REQUIRE(first.ok());
  auto second = Lock(mutex);
  REQUIRE_FALSE(second.ok());
  CHECK(second.status().code() == StatusCode::kFailedPrecondition);
  CHECK(second.status().message().find("deadlock") != std::string::npos);
  REQUIRE(Consume(*first).ok());
  CHECK(Lock(mutex).ok());
}

TEST_CASE("MutexV2: shared by container and name, and the handle is of a mutex") {
  ResourceManager rm;
  const Tensor a = Mutex(&rm, "m");
  const Tensor b = Mutex(&rm, "m");
  auto in_c =
      OpRunner("MutexV2").String("container", "c").String("shared_name", "m").Resources(&rm).Run1();
  REQUIRE(in_c.ok());
  using Handle = std::shared_ptr<ResourceBase>;
  CHECK(a.scalar<Handle>() == b.scalar<Handle>());
  CHECK(a.scalar<Handle>() != in_c->scalar<Handle>());
  // An empty shared_name is the name "" of the container, as TF's ResourceHandleOp.
  const Tensor u1 = Mutex(&rm, ""), u2 = Mutex(&rm, "");
  CHECK(u1.scalar<Handle>() == u2.scalar<Handle>());
  // A variable of the same name is another resource (TF keys resources by type too).
  auto var = OpRunner("VarHandleOp")
                 .Type("dtype", DType::kFloat)
                 .ShapeAttr("shape", PartialShape::Scalar())
                 .String("shared_name", "m")
                 .Resources(&rm)
                 .Run1();
  REQUIRE(var.ok());
  auto not_mutex = Lock(*var);
  REQUIRE_FALSE(not_mutex.ok());
  CHECK(not_mutex.status().message().find("expected a mutex handle") != std::string::npos);
}

TEST_CASE("ConsumeMutexLock: TF's errors for what is not a lock") {
  auto map = OpRunner("EmptyTensorMap").Run1();
  REQUIRE(map.ok());
  Status s = Consume(*map);
  CHECK(s.message().find("Expected input to contain a SharedLockReleaser object, but saw "
                         "variant: 'TensorMap<size=0>'") != std::string::npos);
  auto mutex = OpRunner("MutexV2").Run1();
  REQUIRE(mutex.ok());
  auto lock = Lock(*mutex);
  REQUIRE(lock.ok());
  Tensor two(DType::kVariant, Shape{2});
  two.data<std::shared_ptr<const VariantBase>>()[0] =
      lock->scalar<std::shared_ptr<const VariantBase>>();
  s = OpRunner("ConsumeMutexLock")
          .Input(two, TensorSpec{DType::kVariant, PartialShape::UnknownRank()})
          .Run()
          .status();
  CHECK(s.message().find("Expected input to be a scalar, saw shape: (2,)") != std::string::npos);
}

// ---- graphs ----------------------------------------------------------------------------------

tensorflow::FunctionDefLibrary ParseLibrary(const std::string& text) {
  tensorflow::FunctionDefLibrary lib;
  REQUIRE(google::protobuf::TextFormat::ParseFromString(text, &lib));
  return lib;
}

// counter += 1 inside the critical section of mutex "mu" (the value read goes through a
// 100000-element Fill and Max, so that calls without the lock would overlap and lose updates);
// returns the value it wrote.
const char* kIncrement = R"pb(
  function {
    signature {
      name: "increment"
      output_arg { name: "out" type: DT_INT32 }
    }
    node_def {
      name: "mu"
      op: "MutexV2"
      attr {
        key: "shared_name"
        value { s: "mu" }
      }
    }
    node_def {
      name: "var"
      op: "VarHandleOp"
      attr {
        key: "dtype"
        value { type: DT_INT32 }
      }
      attr {
        key: "shape"
        value { shape {} }
      }
      attr {
        key: "shared_name"
        value { s: "counter" }
      }
    }
    node_def { name: "lock" op: "MutexLock" input: "mu:resource:0" }
    node_def {
      name: "read"
      op: "ReadVariableOp"
      input: "var:resource:0"
      input: "^lock"
      attr {
        key: "dtype"
        value { type: DT_INT32 }
      }
    }
    node_def {
      name: "one"
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
      name: "dims"
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
            tensor_shape { dim { size: 1 } }
            int_val: 100000
          }
        }
      }
    }
    node_def {
      name: "spread"
      op: "Fill"
      input: "dims:output:0"
      input: "read:value:0"
      attr {
        key: "T"
        value { type: DT_INT32 }
      }
      attr {
        key: "index_type"
        value { type: DT_INT32 }
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
            int_val: 0
          }
        }
      }
    }
    node_def {
      name: "back"
      op: "Max"
      input: "spread:output:0"
      input: "axis:output:0"
      attr {
        key: "T"
        value { type: DT_INT32 }
      }
      attr {
        key: "Tidx"
        value { type: DT_INT32 }
      }
    }
    node_def {
      name: "plus"
      op: "AddV2"
      input: "back:output:0"
      input: "one:output:0"
      attr {
        key: "T"
        value { type: DT_INT32 }
      }
    }
    node_def {
      name: "assign"
      op: "AssignVariableOp"
      input: "var:resource:0"
      input: "plus:z:0"
      attr {
        key: "dtype"
        value { type: DT_INT32 }
      }
    }
    node_def { name: "release" op: "ConsumeMutexLock" input: "lock:mutex_lock:0" input: "^assign" }
    node_def {
      name: "result"
      op: "Identity"
      input: "plus:z:0"
      input: "^release"
      attr {
        key: "T"
        value { type: DT_INT32 }
      }
    }
    ret { key: "out" value: "result:output:0" }
  }
)pb";

TEST_CASE("MutexLock: critical sections of concurrent calls lose no update") {
  ResourceManager rm;
  auto var = OpRunner("VarHandleOp")
                 .Type("dtype", DType::kInt32)
                 .ShapeAttr("shape", PartialShape::Scalar())
                 .String("shared_name", "counter")
                 .Resources(&rm)
                 .Run1();
  REQUIRE(var.ok());
  REQUIRE(OpRunner("AssignVariableOp")
              .Type("dtype", DType::kInt32)
              .Input(*var)
              .Input(Tensor::Scalar<int32_t>(0))
              .Run()
              .ok());
  const auto lib_proto = ParseLibrary(kIncrement);
  FunctionLibrary lib(lib_proto);
  exec::PrepareOptions options;
  options.resources = &rm;
  auto fn = PreparedFunction::Prepare(*lib.Find("increment"), lib, {}, options);
  REQUIRE_MESSAGE(fn.ok(), fn.status().ToString());
  constexpr int kThreads = 4, kCalls = 200;
  std::atomic<int> failures{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t)
    threads.emplace_back([&] {
      for (int i = 0; i < kCalls; ++i) {
        std::vector<Tensor> out;
        if (!(*fn)->Run({}, &out).ok()) ++failures;
      }
    });
  for (std::thread& t : threads) t.join();
  CHECK(failures.load() == 0);
  auto value = OpRunner("ReadVariableOp").Type("dtype", DType::kInt32).Input(*var).Run1();
  REQUIRE(value.ok());
  CHECK(value->scalar<int32_t>() == kThreads * kCalls);
}

TEST_CASE("MutexLock: a call's deadline ends the wait") {
  ResourceManager rm;
  const auto lib_proto = ParseLibrary(kIncrement);
  FunctionLibrary lib(lib_proto);
  exec::PrepareOptions options;
  options.resources = &rm;
  auto fn = PreparedFunction::Prepare(*lib.Find("increment"), lib, {}, options);
  REQUIRE_MESSAGE(fn.ok(), fn.status().ToString());
  auto held = Lock(Mutex(&rm, "mu"));  // this thread holds the function's mutex
  REQUIRE(held.ok());
  Status s;
  std::thread caller([&] {
    exec::RunOptions run;
    run.deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(50);
    std::vector<Tensor> out;
    s = (*fn)->Run({}, &out, run);
  });
  caller.join();
  CHECK(s.code() == StatusCode::kDeadlineExceeded);
  CHECK(s.message().find("waiting for mutex 'mu'") != std::string::npos);
}

// Two critical sections on one mutex whose locks come first in the body, as when neither lock
// waits for the other section's release (TF's automatic control dependencies order the two
// locks, not a lock after the other release): TF's executor runs the first section while the
// second lock waits; on one thread, the second lock must run after the first release.
const char* kTwoSections = R"pb(
  function {
    signature {
      name: "two_sections"
      input_arg { name: "x" type: DT_FLOAT }
      output_arg { name: "a" type: DT_FLOAT }
      output_arg { name: "b" type: DT_FLOAT }
    }
    node_def {
      name: "mu"
      op: "MutexV2"
      attr {
        key: "shared_name"
        value { s: "mu" }
      }
    }
    node_def { name: "lock1" op: "MutexLock" input: "mu:resource:0" }
    node_def { name: "lock2" op: "MutexLock" input: "mu:resource:0" input: "^lock1" }
    node_def {
      name: "body1"
      op: "AddV2"
      input: "x"
      input: "x"
      input: "^lock1"
      attr {
        key: "T"
        value { type: DT_FLOAT }
      }
    }
    node_def { name: "release1" op: "ConsumeMutexLock" input: "lock1:mutex_lock:0" input: "^body1" }
    node_def {
      name: "body2"
      op: "Mul"
      input: "x"
      input: "x"
      input: "^lock2"
      attr {
        key: "T"
        value { type: DT_FLOAT }
      }
    }
    node_def { name: "release2" op: "ConsumeMutexLock" input: "lock2:mutex_lock:0" input: "^body2" }
    node_def {
      name: "out1"
      op: "Identity"
      input: "body1:z:0"
      input: "^release1"
      attr {
        key: "T"
        value { type: DT_FLOAT }
      }
    }
    node_def {
      name: "out2"
      op: "Identity"
      input: "body2:z:0"
      input: "^release2"
      attr {
        key: "T"
        value { type: DT_FLOAT }
      }
    }
    ret { key: "a" value: "out1:output:0" }
    ret { key: "b" value: "out2:output:0" }
  }
)pb";

TEST_CASE("MutexLock: on one thread, a lock waits for the other critical section's release") {
  ResourceManager rm;
  const auto lib_proto = ParseLibrary(kTwoSections);
  FunctionLibrary lib(lib_proto);
  exec::PrepareOptions options;
  options.resources = &rm;
  auto fn = PreparedFunction::Prepare(
      *lib.Find("two_sections"), lib,
      std::vector{TensorSpec{DType::kFloat, PartialShape::Scalar()}}, options);
  REQUIRE_MESSAGE(fn.ok(), fn.status().ToString());
  for (int call = 0; call < 3; ++call) {
    std::vector<Tensor> out;
    Status s = (*fn)->Run(std::vector{Tensor::Scalar(3.0f)}, &out);
    REQUIRE_MESSAGE(s.ok(), s.ToString());
    CHECK(out[0].scalar<float>() == 6.0f);
    CHECK(out[1].scalar<float>() == 9.0f);
  }
  CHECK(Lock(Mutex(&rm, "mu")).ok());  // both released
}

}  // namespace
}  // namespace kiln::testing
