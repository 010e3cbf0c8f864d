// Stateful objects shared between graph runs: the resource manager and resource variables.
#pragma once

#include <atomic>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <shared_mutex>
#include <span>
#include <string>
#include <vector>

#include "kiln/core/status.h"
#include "kiln/core/tensor.h"

namespace kiln::exec {

// A resource variable. Reads return the current tensor (buffers are never mutated in place:
// an assignment swaps in a new buffer), so a reader keeps a consistent value while others
// assign. Safe to use from several threads. A value restored from a mapped bundle is a
// read-only view of the file: the variable shares it without a copy, and the first update
// writes a fresh buffer (copy on write), never the mapping.
class VariableResource : public ResourceBase {
 public:
  VariableResource(std::string name, DType dtype, PartialShape shape)
      : name_(std::move(name)), dtype_(dtype), shape_(shape) {}

  const std::string& name() const { return name_; }
  DType dtype() const { return dtype_; }
  const PartialShape& shape() const { return shape_; }
  bool initialized() const;

  // Fails (naming the variable) when it has not been assigned yet.
  Result<Tensor> Read() const;
  // Fails when the dtype differs, or the shape is incompatible with the declared shape. The
  // variable stores a copy, or the tensor itself when its buffer is read-only (a mapped file).
  Status Assign(const Tensor& value);
  // Replaces the value with fn(current) under the variable's lock (assign_add and friends).
  Status Update(const std::function<Result<Tensor>(const Tensor&)>& fn);
  // Like Update for several variables at once (a train step's variable and its slots): all are
  // locked (in address order, so concurrent steps cannot deadlock), fn gets their current
  // values in the order given and writes their new ones into `next`, which holds one tensor of
  // the same dtype and shape per variable: the current tensor itself when no reader shares its
  // buffer and it is writable (an update in place: element i must be read before it is
  // written), else (shared, or a read-only view of a mapped file) a fresh, uninitialised one. Fails
  // when a variable is uninitialized or appears twice (changing nothing), or when fn fails (an
  // in-place update may then have been partly written).
  static Status UpdateMany(
      std::span<VariableResource* const> vars,
      const std::function<Status(std::span<const Tensor> current, std::vector<Tensor>* next)>& fn);
  // Assign without the shape check against the declared shape (TF1 Assign with
  // validate_shape=false); the dtype is still checked.
  Status AssignAnyShape(const Tensor& value);

  // A frozen variable is read-only: its value may have been folded into prepared graphs
  // (a loaded model freezes the variables none of its functions writes). Assign and Update
  // then fail and say so.
  void Freeze() { frozen_.store(true, std::memory_order_release); }
  bool frozen() const { return frozen_.load(std::memory_order_acquire); }

  std::string DebugString() const override;
  const void* TypeTag() const override { return &kTypeTag; }
  static constexpr char kTypeTag = 'V';

 private:
  std::string name_;
  DType dtype_;
  PartialShape shape_;
  mutable std::shared_mutex mu_;
  Tensor value_;
  bool initialized_ = false;
  std::atomic<bool> frozen_{false};
};

// The variable behind a resource, or nullptr when it is another kind of resource.
inline VariableResource* AsVariable(ResourceBase* r) {
  return r != nullptr && r->TypeTag() == &VariableResource::kTypeTag
             ? static_cast<VariableResource*>(r)
             : nullptr;
}

// Resources of one loaded model (or one tracing context), by shared name.
class ResourceManager {
 public:
  // Returns the existing resource of that name, or the one `create` makes.
  std::shared_ptr<ResourceBase> LookupOrCreate(
      const std::string& name, const std::function<std::shared_ptr<ResourceBase>()>& create);
  std::shared_ptr<ResourceBase> Lookup(const std::string& name) const;

 private:
  mutable std::mutex mu_;
  std::map<std::string, std::shared_ptr<ResourceBase>> resources_;
};

}  // namespace kiln::exec
