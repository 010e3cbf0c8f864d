// The CPU device's cache of library objects per shape (oneDNN primitives with their packed
// weights): the one made at prepare time when the node's shapes are known, and one per other
// shape a call brings, made on its first use and kept. Lookups of the prepared one take no lock;
// the others are found and made under the cache's own lock, so concurrent calls of one node are
// safe. Kernel states hold one of these instead of a mutex and a list of their own.
#pragma once

#include <memory>
#include <mutex>
#include <vector>

#include "kiln/core/status.h"
#include "kiln/exec/op_table.h"

namespace kiln::exec::cpu {

template <typename P>
class PrimitiveCache {
 public:
  // Set once, at prepare time, before the state is shared.
  void SetPrepared(std::unique_ptr<const P> p) { prepared_ = std::move(p); }
  const P* prepared() const { return prepared_.get(); }

  // The object `matches` accepts: the prepared one, a kept one, or make()'s (a
  // Result<std::unique_ptr<P>>), which runs under the lock and is kept.
  template <typename Match, typename Make>
  Result<const P*> Get(Match matches, Make make) const {
    if (prepared_ != nullptr && matches(*prepared_)) return prepared_.get();
    std::lock_guard lock(mu_);
    for (const auto& p : kept_)
      if (matches(*p)) return p.get();
    auto made = make();
    if (!made.ok()) return made.status();
    kept_.push_back(std::move(made).value());
    return kept_.back().get();
  }

 private:
  std::unique_ptr<const P> prepared_;
  mutable std::mutex mu_;
  mutable std::vector<std::unique_ptr<const P>> kept_;
};

}  // namespace kiln::exec::cpu
