// What the sparse rearranging ops' definitions and CPU kernels (sparse_manip_ops.cc) share.
#pragma once

#include <complex>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "kernels/kernel_util.h"
#include "kernels/type_lists.h"
#include "kiln/core/status.h"
#include "kiln/core/tensor.h"

namespace kiln::exec::sparse_manip {

// SparseConcat.
struct ConcatState : OpState {
  int64_t n = 0;
  int64_t dim = 0;
};

// SparseFillEmptyRowsGrad, RaggedFillEmptyRowsGrad.
using GradTypes =
    TypeList<float, double, Half, BFloat16, int8_t, int16_t, int32_t, int64_t, uint8_t, uint16_t,
             uint32_t, uint64_t, std::complex<float>, std::complex<double>>;

// ---- Sparse tensors maps ---------------------------------------------------------------------

// Sparse tensors kept by handle (TF's sparse_tensors_map_ops.cc), what tf.data and the queues of
// TF 1 input pipelines pass sparse tensors through: a SparseTensorsMap resource (by container
// and shared_name) maps int64 handles, counted up from 0, to sparse tensors.
// AddSparseToTensorsMap stores one and returns its handle; AddManySparseToTensorsMap stores each
// row of the first dim of a rank > 1 sparse tensor (sorted indices required; rows without
// entries stored empty) and returns one handle per row; TakeManySparseFromTensorsMap takes
// tensors out by handle (they are removed) and stacks them into one sparse tensor: the handle's
// position leads each index, the indices follow in the order they were stored (not reordered),
// and each dim is the largest of the tensors'. An Add with no shared_name uses the node's name,
// a TakeMany with none has a map of its own (as TF's ContainerInfo); every dtype is taken.

class SparseTensorsMap final : public ResourceBase {
 public:
  struct Entry {
    Tensor indices;  // [n, rank] int64
    Tensor values;   // [n]
    std::vector<int64_t> shape;
  };

  explicit SparseTensorsMap(std::string name) : name_(std::move(name)) {}
  std::string DebugString() const override { return "A SparseTensorsMap"; }
  const void* TypeTag() const override { return &kTypeTag; }
  static constexpr char kTypeTag = 'S';

  int64_t Add(Entry e) {
    // The map outlives the call: no arena memory.
    e.indices = e.indices.Retainable();
    e.values = e.values.Retainable();
    std::lock_guard lock(mu_);
    const int64_t handle = counter_++;
    entries_[handle] = std::move(e);
    return handle;
  }

  // Removes the tensors of `handles` in order into `out`; at an unknown handle it fails, and
  // those before it stay removed (as TF's).
  Status Take(const int64_t* handles, int64_t n, std::vector<Entry>* out) {
    std::lock_guard lock(mu_);
    for (int64_t i = 0; i < n; ++i) {
      auto it = entries_.find(handles[i]);
      if (it == entries_.end())
        return InvalidArgument("Unable to find SparseTensor: ", handles[i], " in map: ", name_);
      out->push_back(std::move(it->second));
      entries_.erase(it);
    }
    return OkStatus();
  }

 private:
  std::string name_;
  std::mutex mu_;
  int64_t counter_ = 0;
  std::unordered_map<int64_t, Entry> entries_;
};

struct MapState : OpState {
  DType dtype = DType::kInvalid;
  std::shared_ptr<SparseTensorsMap> map;
};

}  // namespace kiln::exec::sparse_manip
