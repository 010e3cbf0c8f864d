// The call key of a traced function (kiln/trace/function.h has the whole picture): each
// argument is a tensor, keyed by its dtype and shape, or a host value (an integer, a
// floating-point number, a bool, a string or an enum), keyed by its value. ArgSpec and
// InputSignature declare tensor arguments; Arg is one call argument; BoundArg is one argument
// of a concrete function.
#pragma once

#include <concepts>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <typeinfo>
#include <variant>
#include <vector>

#include "kiln/core/shape.h"
#include "kiln/core/tensor.h"
#include "kiln/trace/value.h"

namespace kiln::trace {

// One argument of an input signature.
struct ArgSpec {
  ArgSpec(std::string name, DType dtype, PartialShape shape = PartialShape::Scalar())
      : name(std::move(name)), dtype(dtype), shape(shape) {}
  std::string name;
  DType dtype;
  PartialShape shape;  // note: PartialShape{} is unknown rank; the default here is a scalar

  TensorSpec spec() const { return TensorSpec{dtype, shape}; }
  // "TensorSpec(shape=(None, 784), dtype=float32, name='x')"
  std::string ToString() const;
};
using InputSignature = std::vector<ArgSpec>;

// An enum argument: its type (for the key) and its underlying value.
struct EnumValue {
  std::string type;  // a readable type name
  int64_t value = 0;
  bool operator==(const EnumValue&) const = default;
};

// A host (non-tensor) argument. Part of the cache key by value.
using HostValue = std::variant<int64_t, double, bool, std::string, EnumValue>;

// Python-like: "1", "0.5", "True", "'relu'", "Mode(2)".
std::string HostValueString(const HostValue& value);

namespace internal {
std::string DemangledName(const char* mangled);
}  // namespace internal

// One call argument: a tensor (eager or symbolic), a spec (only to ask for a concrete
// function), or a host value. Converts implicitly from each, so `f(x, 10, true, "relu")` works.
class Arg {
 public:
  Arg(Value value) : kind_(Kind::kTensor), value_(std::move(value)) {}  // NOLINT
  Arg(Tensor tensor) : Arg(Value(std::move(tensor))) {}                 // NOLINT
  template <typename T>
  requires(std::is_integral_v<T> && !std::is_same_v<T, bool>) Arg(T v)  // NOLINT
      : Arg(HostValue(static_cast<int64_t>(v))) {}
  template <typename T>
  requires std::is_floating_point_v<T> Arg(T v)  // NOLINT
      : Arg(HostValue(static_cast<double>(v))) {}
  Arg(bool v) : Arg(HostValue(v)) {}                           // NOLINT
  Arg(const char* s) : Arg(HostValue(std::string(s))) {}       // NOLINT
  Arg(std::string s) : Arg(HostValue(std::move(s))) {}         // NOLINT
  Arg(std::string_view s) : Arg(HostValue(std::string(s))) {}  // NOLINT
  template <typename E>
  requires std::is_enum_v<E> Arg(E e)  // NOLINT
      : Arg(HostValue(
            EnumValue{internal::DemangledName(typeid(E).name()), static_cast<int64_t>(e)})) {}
  explicit Arg(HostValue host);
  // A tensor argument given by its spec: for GetConcreteFunction only.
  static Arg Spec(TensorSpec spec);

  bool is_host() const { return kind_ == Kind::kHost; }
  bool is_tensor() const { return kind_ == Kind::kTensor; }
  bool is_spec() const { return kind_ == Kind::kSpec; }

  // A tensor argument's value. A host argument as a scalar constant (int: int32 as TensorFlow
  // converts Python ints, double: float32, bool, string, enum: int32); used in an op while
  // tracing it is frozen into the graph.
  const Value& value() const { return value_; }
  operator const Value&() const { return value_; }  // NOLINT: args[0] + args[1]
  // A tensor or spec argument's spec.
  TensorSpec spec() const;
  const HostValue& host() const { return host_; }

  // The host value converted (0 / 0.0 / false / "" when the argument is a tensor or a string
  // asked as a number); enums give their underlying value.
  int64_t int_value() const;
  double double_value() const;
  bool bool_value() const;
  const std::string& string_value() const;

  // "1", "'relu'", "TensorSpec(shape=(2,), dtype=int32)"; a traced function's symbolic
  // argument as TensorFlow prints one: Tensor("x:0", shape=(), dtype=int32).
  std::string ToString() const;

 private:
  friend class Function;
  enum class Kind { kTensor, kSpec, kHost };
  Arg() = default;
  std::string name_;  // a traced function's argument name (symbolic arguments)
  Kind kind_ = Kind::kTensor;
  Value value_;
  TensorSpec spec_;  // kSpec
  HostValue host_;
};
using Args = std::vector<Arg>;

// One argument of a concrete function: a tensor it takes (spec) or a host value it was traced
// for (baked into its graph).
struct BoundArg {
  std::string name;
  std::optional<HostValue> host;  // set for a host argument
  TensorSpec spec;                // a tensor argument's spec
  // "x: float32 Tensor, shape=(2,)" / "n=10"
  std::string ToString() const;
};

}  // namespace kiln::trace
