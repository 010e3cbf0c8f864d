// A small harness for kernel tests: builds a PrepareContext from an op name, attrs and input
// tensors (no NodeDef, no graph), runs the op's Prepare, then its CPU kernel over a local
// frame, and hands back the outputs. Plus tensor builders and comparisons with tolerances.
#pragma once

#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <optional>
#include <string>
#include <type_traits>
#include <vector>

#include "kiln/core/proto_convert.h"
#include "kiln/core/tensor.h"
#include "kiln/exec/op_runner.h"
#include "kiln/exec/op_table.h"
#include "kiln/exec/resources.h"
#include "tensorflow/framework.pb.h"

namespace kiln::testing {

using exec::ComputeFn;
using exec::KernelContext;
using exec::OpDefinition;
using exec::PrepareContext;
using exec::PrintSink;
using exec::ProtoAttrMap;
using exec::ResourceManager;
using exec::RunEnv;
using exec::SingleOp;
using exec::SingleOpOptions;
using exec::TensorSpec;

class OpRunner {
 public:
  explicit OpRunner(std::string op, std::string node_name = "node")
      : op_(std::move(op)), node_name_(std::move(node_name)) {}

  // ---- attrs ----
  OpRunner& Type(const std::string& name, DType t) {
    attrs_[name].set_type(static_cast<tensorflow::DataType>(DTypeToProto(t)));
    return *this;
  }
  OpRunner& TypeList(const std::string& name, const std::vector<DType>& types) {
    auto* list = attrs_[name].mutable_list();
    for (DType t : types) list->add_type(static_cast<tensorflow::DataType>(DTypeToProto(t)));
    return *this;
  }
  OpRunner& Int(const std::string& name, int64_t v) {
    attrs_[name].set_i(v);
    return *this;
  }
  OpRunner& IntList(const std::string& name, const std::vector<int64_t>& values) {
    auto* list = attrs_[name].mutable_list();
    for (int64_t v : values) list->add_i(v);
    return *this;
  }
  OpRunner& Bool(const std::string& name, bool v) {
    attrs_[name].set_b(v);
    return *this;
  }
  OpRunner& Float(const std::string& name, float v) {
    attrs_[name].set_f(v);
    return *this;
  }
  OpRunner& FloatList(const std::string& name, const std::vector<float>& values) {
    auto* list = attrs_[name].mutable_list();
    for (float v : values) list->add_f(v);
    return *this;
  }
  OpRunner& String(const std::string& name, const std::string& v) {
    attrs_[name].set_s(v);
    return *this;
  }
  OpRunner& StringList(const std::string& name, const std::vector<std::string>& values) {
    auto* list = attrs_[name].mutable_list();
    for (const std::string& v : values) list->add_s(v);
    return *this;
  }
  OpRunner& ShapeAttr(const std::string& name, const PartialShape& s) {
    PartialShapeToProto(s, attrs_[name].mutable_shape());
    return *this;
  }
  OpRunner& ShapeListAttr(const std::string& name, const std::vector<PartialShape>& shapes) {
    auto* list = attrs_[name].mutable_list();
    for (const PartialShape& s : shapes) PartialShapeToProto(s, list->add_shape());
    return *this;
  }
  OpRunner& TensorAttr(const std::string& name, const Tensor& t) {
    Status s = TensorToProto(t, attrs_[name].mutable_tensor());
    REQUIRE_MESSAGE(s.ok(), s.ToString());
    return *this;
  }
  // The common "T" attr.
  OpRunner& T(DType t) { return Type("T", t); }

  // ---- inputs ----
  // A value input; its spec is the tensor's dtype and full shape.
  OpRunner& Input(const Tensor& t) {
    inputs_.push_back(t);
    specs_.push_back(TensorSpec{t.dtype(), t.shape()});
    constant_.push_back(false);
    return *this;
  }
  // A value input whose prepare-time spec is only `spec` (unknown dims, say).
  OpRunner& Input(const Tensor& t, const TensorSpec& spec) {
    Input(t);
    specs_.back() = spec;
    return *this;
  }
  // A value input that Prepare sees as known (as a Const would be).
  OpRunner& ConstantInput(const Tensor& t) {
    Input(t);
    constant_.back() = true;
    return *this;
  }
  // For Prepare-only tests: an input with a spec and no value.
  OpRunner& InputSpec(const TensorSpec& spec) {
    inputs_.emplace_back();
    specs_.push_back(spec);
    constant_.push_back(false);
    return *this;
  }
  OpRunner& Resources(ResourceManager* rm) {
    resources_ = rm;
    return *this;
  }

  // Runs Prepare only; output_specs() holds the result.
  Status Prepare() {
    std::vector<const Tensor*> values;
    for (size_t i = 0; i < inputs_.size(); ++i)
      values.push_back(constant_[i] ? &inputs_[i] : nullptr);
    SingleOpOptions options;
    options.resources = resources_;
    options.print = &sink_;
    auto op = SingleOp::Prepare(op_, node_name_, attrs_, specs_, values, options);
    if (!op.ok()) return op.status();
    single_.emplace(std::move(op).value());
    return OkStatus();
  }
  const std::vector<TensorSpec>& output_specs() const { return single_->output_specs(); }

  // Prepare, then the CPU kernel (the shared single-op path). Checks that outputs match the
  // prepared specs.
  Result<std::vector<Tensor>> Run() {
    KILN_RETURN_IF_ERROR(Prepare());
    printed_.clear();
    KILN_ASSIGN_OR_RETURN(std::vector<Tensor> outputs, single_->Run(inputs_));
    const auto& specs = single_->output_specs();
    for (size_t i = 0; i < outputs.size(); ++i) {
      CHECK_MESSAGE(outputs[i].dtype() == specs[i].dtype, "output ", i, " dtype ",
                    DTypeShortName(outputs[i].dtype()), " vs spec ", specs[i].ToString());
      CHECK_MESSAGE(specs[i].shape.IsCompatibleWith(outputs[i].shape()), "output ", i, " shape ",
                    outputs[i].shape().ToString(), " vs spec ", specs[i].ToString());
    }
    return outputs;
  }
  // Run() for ops with exactly one output.
  Result<Tensor> Run1() {
    KILN_ASSIGN_OR_RETURN(std::vector<Tensor> outs, Run());
    if (outs.size() != 1) return Internal("expected 1 output, got ", outs.size());
    return outs[0];
  }

  // (stream, text) of every print made by the last Run().
  const std::vector<std::pair<std::string, std::string>>& printed() const { return printed_; }

 private:
  std::string op_;
  std::string node_name_;
  ProtoAttrMap attrs_;
  std::vector<Tensor> inputs_;
  std::vector<TensorSpec> specs_;
  std::vector<bool> constant_;
  ResourceManager* resources_ = nullptr;
  std::optional<SingleOp> single_;
  std::vector<std::pair<std::string, std::string>> printed_;
  PrintSink sink_ = [this](std::string_view stream, std::string_view text) {
    printed_.push_back({std::string(stream), std::string(text)});
  };
};

// ---- builders --------------------------------------------------------------------------------

template <typename T>
Tensor Make(const std::vector<T>& values, const Shape& shape) {
  auto t = Tensor::FromVector(values, shape);
  REQUIRE_MESSAGE(t.ok(), t.status().ToString());
  return *t;
}

// Deterministic pseudo-random values in [lo, hi] (integers for integer T).
template <typename T>
Tensor Random(const Shape& shape, uint32_t seed, double lo = -3, double hi = 3) {
  Tensor t(kDTypeOf<T>, shape);
  uint32_t state = seed * 2654435761u + 12345u;
  for (T& v : t.flat<T>()) {
    state = state * 1664525u + 1013904223u;
    double u = (state >> 8) / double(1u << 24);  // [0, 1)
    double x = lo + u * (hi - lo);
    if constexpr (std::is_integral_v<T>) {
      v = static_cast<T>(std::floor(x + 0.5));
    } else {
      v = static_cast<T>(x);
    }
  }
  return t;
}

// Multi-index of flat position `i` in `shape`.
inline std::vector<int64_t> Unravel(int64_t i, const Shape& shape) {
  std::vector<int64_t> idx(shape.rank());
  for (int d = shape.rank() - 1; d >= 0; --d) {
    idx[d] = shape.dim(d) == 0 ? 0 : i % shape.dim(d);
    i = shape.dim(d) == 0 ? 0 : i / shape.dim(d);
  }
  return idx;
}

// Flat position in `shape` of an output multi-index, with numpy broadcasting (right-aligned,
// size-1 dims repeat).
inline int64_t BroadcastIndex(const std::vector<int64_t>& out_idx, const Shape& shape) {
  int64_t flat = 0;
  const int offset = static_cast<int>(out_idx.size()) - shape.rank();
  for (int d = 0; d < shape.rank(); ++d) {
    int64_t i = shape.dim(d) == 1 ? 0 : out_idx[offset + d];
    flat = flat * shape.dim(d) + i;
  }
  return flat;
}

// ---- comparisons -----------------------------------------------------------------------------

template <typename T>
double Tolerance() {
  if constexpr (std::is_same_v<T, float>) return 2e-5;
  if constexpr (std::is_same_v<T, double>) return 1e-12;
  return 0;
}

// Element-wise, with |a-b| <= tol * max(1, |b|); NaN matches NaN.
template <typename T>
void CheckClose(const Tensor& got, const Tensor& want, double tol = Tolerance<T>()) {
  REQUIRE(got.dtype() == want.dtype());
  REQUIRE_MESSAGE(got.shape() == want.shape(), "got shape ", got.shape().ToString(), ", want ",
                  want.shape().ToString());
  auto g = got.flat<T>();
  auto w = want.flat<T>();
  for (size_t i = 0; i < w.size(); ++i) {
    if constexpr (std::is_floating_point_v<T>) {
      if (std::isnan(w[i])) {
        CHECK_MESSAGE(std::isnan(g[i]), "element ", i, ": got ", g[i], ", want nan");
        continue;
      }
      double scale = std::max(1.0, std::abs(static_cast<double>(w[i])));
      CHECK_MESSAGE(std::abs(static_cast<double>(g[i]) - w[i]) <= tol * scale, "element ", i,
                    ": got ", g[i], ", want ", w[i]);
    } else {
      CHECK_MESSAGE(g[i] == w[i], "element ", i, ": got ", g[i], ", want ", w[i]);
    }
  }
}

inline bool Contains(const std::string& s, const std::string& part) {
  return s.find(part) != std::string::npos;
}

// Checks that `s` failed with a message containing every one of `parts`.
inline void CheckError(const Status& s, std::initializer_list<std::string> parts) {
  REQUIRE_MESSAGE(!s.ok(), "expected an error containing '", *parts.begin(), "'");
  for (const std::string& p : parts) {
    CHECK_MESSAGE(Contains(s.message(), p), "message '", s.message(), "' lacks '", p, "'");
  }
}

// numpy's broadcast of two shapes, written out plainly (the reference, not the kernel's code).
inline Shape RefBroadcastShape(const Shape& a, const Shape& b) {
  int rank = std::max(a.rank(), b.rank());
  Shape out;
  for (int i = 0; i < rank; ++i) {
    int ia = i - (rank - a.rank()), ib = i - (rank - b.rank());
    int64_t da = ia >= 0 ? a.dim(ia) : 1, db = ib >= 0 ? b.dim(ib) : 1;
    out.AddDim(da == 1 ? db : da);
  }
  return out;
}

// f applied element by element over the broadcast of a and b, one index at a time.
template <typename T, typename Out = T, typename F>
Tensor RefBinary(const Tensor& a, const Tensor& b, F f) {
  Shape so = RefBroadcastShape(a.shape(), b.shape());
  Tensor want(kDTypeOf<Out>, so);
  for (int64_t i = 0; i < so.num_elements(); ++i) {
    std::vector<int64_t> idx = Unravel(i, so);
    want.data<Out>()[i] =
        f(a.data<T>()[BroadcastIndex(idx, a.shape())], b.data<T>()[BroadcastIndex(idx, b.shape())]);
  }
  return want;
}

}  // namespace kiln::testing
