// Op-tester cases of the mutex ops (resource_ops.cc): MutexV2, MutexLock, ConsumeMutexLock. A lock
// is state: MutexLock runs once, on the single-op path (a second run would wait for the first
// one's lock), and ConsumeMutexLock's reference checks that the mutex is free again. That two
// acquisitions exclude each other, across threads and in graphs, is
// tests/exec/kernels_mutex_test.cc's.
#include "kiln/exec/resources.h"
#include "ops/op_cases.h"

namespace kiln::testing {
namespace {

ResourceManager* Manager() {
  static ResourceManager rm;
  return &rm;
}

// A mutex handle: the model's by name, or (no name) one of its own.
Tensor NewMutex(const std::string& shared_name = "") {
  OpRunner r("MutexV2");
  if (!shared_name.empty()) r.String("shared_name", shared_name).Resources(Manager());
  auto h = r.Run1();
  REQUIRE_MESSAGE(h.ok(), h.status().ToString());
  return *h;
}

Tensor Lock(const Tensor& mutex) {
  auto lock = OpRunner("MutexLock").Input(mutex).Run1();
  REQUIRE_MESSAGE(lock.ok(), lock.status().ToString());
  return *lock;
}

}  // namespace

std::vector<OpCase> MutexCases() {
  std::vector<OpCase> c;
  // The model's mutex of that name: the handle a MutexV2 of the same name gives (handles compare
  // by the resource they hold).
  c.push_back(OpCaseBuilder("MutexV2", "MutexV2 shared")
                  .String("shared_name", "cases_mutex")
                  .Resources(Manager())
                  .Reference1([](const auto&) { return NewMutex("cases_mutex"); })
                  .Build());
  c.push_back(OpCaseBuilder("MutexV2", "MutexV2 in a container")
                  .String("container", "c")
                  .String("shared_name", "cases_mutex")
                  .Resources(Manager())
                  .Build());
  c.push_back(
      OpCaseBuilder("MutexLock").Input(NewMutex()).NonDeterministic().SingleOpOnly().Build());
  const Tensor mutex = NewMutex();
  c.push_back(OpCaseBuilder("ConsumeMutexLock")
                  .Input(Lock(mutex))
                  .Reference([mutex](const auto&) {
                    // Free again: this thread may take it (while held, MutexLock fails here
                    // rather than wait for itself).
                    auto again = OpRunner("MutexLock").Input(mutex).Run1();
                    CHECK_MESSAGE(again.ok(), again.status().ToString());
                    return std::vector<Tensor>{};
                  })
                  .Build());
  return c;
}

}  // namespace kiln::testing
