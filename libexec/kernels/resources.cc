// Resource variables and the per-model resource manager.
#include "kiln/exec/resources.h"

#include <algorithm>
#include <mutex>
#include <shared_mutex>

namespace kiln::exec {
namespace {

Status CheckValue(const std::string& name, DType dtype, const PartialShape& shape,
                  const Tensor& value) {
  if (value.dtype() != dtype) {
    return InvalidArgument("variable '", name, "': expected a value of dtype ",
                           DTypeShortName(dtype), ", got ", DTypeShortName(value.dtype()));
  }
  if (!shape.IsCompatibleWith(value.shape())) {
    return InvalidArgument("variable '", name, "': shape ", value.shape().ToString(),
                           " is not compatible with the declared shape ", shape.ToPythonString());
  }
  return OkStatus();
}

}  // namespace

bool VariableResource::initialized() const {
  std::shared_lock lock(mu_);
  return initialized_;
}

Result<Tensor> VariableResource::Read() const {
  std::shared_lock lock(mu_);
  if (!initialized_) {
    return FailedPrecondition("variable '", name_,
                              "' is not initialized: it was read before any assignment");
  }
  return value_;
}

namespace {

// What a variable stores for an assigned value. It owns its buffer, since the caller may reuse
// or fill `value` afterwards, except for a read-only view (a mapped bundle file): nobody writes
// that, so the variable shares it, and its first update gets a fresh buffer (UpdateMany never
// updates a read-only buffer in place).
Tensor OwnedValue(const Tensor& value) {
  return value.BufferIsReadOnly() ? value : value.DeepCopy();
}

Status FrozenError(const std::string& name) {
  return FailedPrecondition("variable '", name,
                            "' is read-only in this loaded model: no function of the model writes "
                            "it, so its value was folded into the prepared graphs (load with "
                            "LoadOptions::freeze_variables = false to assign it)");
}

}  // namespace

Status VariableResource::Assign(const Tensor& value) {
  if (frozen()) return FrozenError(name_);
  KILN_RETURN_IF_ERROR(CheckValue(name_, dtype_, shape_, value));
  Tensor copy = OwnedValue(value);
  std::unique_lock lock(mu_);
  value_ = std::move(copy);
  initialized_ = true;
  return OkStatus();
}

Status VariableResource::Update(const std::function<Result<Tensor>(const Tensor&)>& fn) {
  if (frozen()) return FrozenError(name_);
  std::unique_lock lock(mu_);
  if (!initialized_) {
    return FailedPrecondition("variable '", name_,
                              "' is not initialized: it was updated before any assignment");
  }
  KILN_ASSIGN_OR_RETURN(Tensor next, fn(value_));
  KILN_RETURN_IF_ERROR(CheckValue(name_, dtype_, shape_, next));
  value_ = next.Retainable();
  return OkStatus();
}

Status VariableResource::UpdateMany(
    std::span<VariableResource* const> vars,
    const std::function<Status(std::span<const Tensor>, std::vector<Tensor>*)>& fn) {
  std::vector<VariableResource*> order(vars.begin(), vars.end());
  std::sort(order.begin(), order.end());
  for (size_t i = 1; i < order.size(); ++i)
    if (order[i] == order[i - 1])
      return InvalidArgument("variable '", order[i]->name_, "' is passed more than once");
  std::vector<std::unique_lock<std::shared_mutex>> locks;
  locks.reserve(order.size());
  for (VariableResource* v : order) locks.emplace_back(v->mu_);
  std::vector<Tensor> current;
  std::vector<Tensor> next;
  current.reserve(vars.size());
  next.reserve(vars.size());
  for (VariableResource* v : vars) {
    if (!v->initialized_)
      return FailedPrecondition("variable '", v->name_,
                                "' is not initialized: it was updated before any assignment");
    // A buffer no reader holds is updated in place (an optimizer's slots, and the variable
    // once the step's reads are released); a shared one gets a new buffer, so readers keep a
    // consistent value, and so does a read-only one (a value mapped from the bundle's data
    // file, which is never written: BufferIsExclusive is false for it).
    if (v->value_.BufferIsExclusive() && !v->value_.BufferIsReadOnly() &&
        !v->value_.BufferIsTransient() && DTypeIsPod(v->dtype_)) {
      next.push_back(v->value_);
    } else {
      KILN_ASSIGN_OR_RETURN(Tensor fresh,
                            Tensor::Allocate(CpuAllocator(), v->value_.dtype(), v->value_.shape()));
      next.push_back(std::move(fresh));
    }
    current.push_back(v->value_);
  }
  KILN_RETURN_IF_ERROR(fn(current, &next));
  if (next.size() != vars.size())
    return Internal("UpdateMany: ", next.size(), " new values for ", vars.size(), " variables");
  for (size_t i = 0; i < vars.size(); ++i)
    KILN_RETURN_IF_ERROR(CheckValue(vars[i]->name_, vars[i]->dtype_, vars[i]->shape_, next[i]));
  for (size_t i = 0; i < vars.size(); ++i) vars[i]->value_ = next[i].Retainable();
  return OkStatus();
}

Status VariableResource::AssignAnyShape(const Tensor& value) {
  if (value.dtype() != dtype_)
    return InvalidArgument("variable '", name_, "': expected a value of dtype ",
                           DTypeShortName(dtype_), ", got ", DTypeShortName(value.dtype()));
  Tensor copy = OwnedValue(value);
  std::unique_lock lock(mu_);
  value_ = std::move(copy);
  initialized_ = true;
  return OkStatus();
}

std::string VariableResource::DebugString() const {
  std::shared_lock lock(mu_);
  std::string s = "Variable '" + name_ + "' dtype=" + DTypeShortName(dtype_) +
                  " shape=" + shape_.ToPythonString();
  if (!initialized_) s += " (uninitialized)";
  return s;
}

std::shared_ptr<ResourceBase> ResourceManager::LookupOrCreate(
    const std::string& name, const std::function<std::shared_ptr<ResourceBase>()>& create) {
  std::lock_guard lock(mu_);
  auto it = resources_.find(name);
  if (it != resources_.end()) return it->second;
  std::shared_ptr<ResourceBase> r = create();
  if (r != nullptr) resources_.emplace(name, r);
  return r;
}

std::shared_ptr<ResourceBase> ResourceManager::Lookup(const std::string& name) const {
  std::lock_guard lock(mu_);
  auto it = resources_.find(name);
  return it == resources_.end() ? nullptr : it->second;
}

}  // namespace kiln::exec
