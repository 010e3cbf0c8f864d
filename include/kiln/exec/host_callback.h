// Host callbacks: C++ functions a graph calls on every run (tf.py_function's counterpart). The
// graph holds an `EagerPyFunc` node whose attr `token` names a callback registered in this
// process; a registration lives as long as someone holds the handle Register returns (the
// concrete function that traced it, the prepared graph that runs it). Such a graph cannot be
// saved: the callback is code, not data.
//
// The registry is the runtime's (its EagerPyFunc kernel looks tokens up); libtrace registers
// the callbacks a body adds through this header.
#pragma once

#include <functional>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "kiln/core/status.h"
#include "kiln/core/tensor.h"

namespace kiln::exec {

using HostCallbackFn =
    std::function<Status(std::span<const Tensor> inputs, std::vector<Tensor>* outputs)>;

struct HostCallbackEntry {
  std::string name;   // for messages ("side_effect")
  std::string token;  // the node's `token` attr, unique in the process
  HostCallbackFn fn;
};

// Registers `fn`; the registration ends when the last copy of the returned handle goes.
std::shared_ptr<const HostCallbackEntry> RegisterHostCallback(std::string name, HostCallbackFn fn);
// The live registration for `token`, or nullptr.
std::shared_ptr<const HostCallbackEntry> FindHostCallback(const std::string& token);

}  // namespace kiln::exec
