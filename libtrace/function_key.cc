// The call key of a traced function: arguments (tensors, specs, host values), the specs they
// bind to, and how two keys compare (fit, and why not).
#include "kiln/trace/function_key.h"

#include <cxxabi.h>

#include <charconv>
#include <cstdlib>
#include <set>

#include "function_key_util.h"

namespace kiln::trace {

namespace internal {

std::string DemangledName(const char* mangled) {
  int status = 0;
  char* out = abi::__cxa_demangle(mangled, nullptr, nullptr, &status);
  std::string name = (status == 0 && out != nullptr) ? out : mangled;
  std::free(out);
  return name;
}

std::string GivenSpecText(const TensorSpec& spec) {
  return "TensorSpec(shape=" + spec.shape.ToPythonString() +
         ", dtype=" + DTypeShortName(spec.dtype) + ")";
}

std::string PrettySpecText(const TensorSpec& spec) {
  return DTypeShortName(spec.dtype) + " Tensor, shape=" + spec.shape.ToPythonString();
}

Status ValidateSignature(const std::string& fn, const InputSignature& sig) {
  std::set<std::string> names;
  for (size_t i = 0; i < sig.size(); ++i) {
    const ArgSpec& a = sig[i];
    if (a.name.empty()) return InvalidArgument("function '", fn, "': argument ", i, " has no name");
    for (char c : a.name) {
      const bool ok =
          (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
      if (!ok) {
        return InvalidArgument("function '", fn, "': argument name '", a.name,
                               "' may hold only letters, digits and '_'");
      }
    }
    if (!names.insert(a.name).second) {
      return InvalidArgument("function '", fn, "': two arguments are named '", a.name, "'");
    }
    if (!HoldsData(a.dtype)) {
      return InvalidArgument("function '", fn, "': argument '", a.name, "' has dtype ",
                             DTypeShortName(a.dtype), "; signatures take plain tensors");
    }
  }
  return OkStatus();
}

bool Covers(const PartialShape& general, const PartialShape& specific) {
  if (general.unknown_rank()) return true;
  if (specific.unknown_rank() || specific.rank() != general.rank()) return false;
  for (int i = 0; i < general.rank(); ++i) {
    if (general.dim(i) >= 0 && general.dim(i) != specific.dim(i)) return false;
  }
  return true;
}

bool SameHost(const HostValue& a, const HostValue& b) { return a == b; }

bool Fits(const BoundArg& have, const BoundArg& want) {
  if (have.host.has_value() != want.host.has_value()) return false;
  if (have.host) return SameHost(*have.host, *want.host);
  return have.spec.dtype == want.spec.dtype && Covers(have.spec.shape, want.spec.shape);
}

std::string Difference(const std::string& name, const BoundArg& have, const BoundArg& want) {
  if (Fits(have, want)) return {};
  if (have.host && want.host) {
    return "host argument `" + name + "`: " + HostValueString(*have.host) + " -> " +
           HostValueString(*want.host);
  }
  if (have.host) {
    return "argument `" + name + "`: host value " + HostValueString(*have.host) + " -> " +
           PrettySpecText(want.spec);
  }
  if (want.host) {
    return "argument `" + name + "`: " + PrettySpecText(have.spec) + " -> host value " +
           HostValueString(*want.host);
  }
  if (have.spec.dtype != want.spec.dtype) {
    return "argument `" + name + "`: dtype " + DTypeShortName(have.spec.dtype) + " -> " +
           DTypeShortName(want.spec.dtype);
  }
  return "argument `" + name + "`: new shape " + have.spec.shape.ToPythonString() + " -> " +
         want.spec.shape.ToPythonString();
}

std::string SanitizeFunctionName(std::string_view name) {
  std::string out;
  for (char c : name) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
    out += ok ? c : '_';
  }
  return out.empty() ? "function" : out;
}

}  // namespace internal

using internal::GivenSpecText;
using internal::PrettySpecText;

std::string HostValueString(const HostValue& value) {
  struct Visitor {
    std::string operator()(int64_t v) const { return std::to_string(v); }
    std::string operator()(double v) const {
      char buf[64];
      auto [end, ec] = std::to_chars(buf, buf + sizeof(buf), v);  // shortest round trip
      std::string t = ec == std::errc() ? std::string(buf, end) : std::to_string(v);
      // Python writes a float with a decimal point: 1.0, not 1.
      if (t.find_first_of(".eni") == std::string::npos) t += ".0";
      return t;
    }
    std::string operator()(bool v) const { return v ? "True" : "False"; }
    std::string operator()(const std::string& v) const { return "'" + v + "'"; }
    std::string operator()(const EnumValue& v) const {
      return v.type + "(" + std::to_string(v.value) + ")";
    }
  };
  return std::visit(Visitor{}, value);
}

namespace {

// A host value as the tensor TensorFlow would convert it to.
Tensor HostTensor(const HostValue& value) {
  struct Visitor {
    Tensor operator()(int64_t v) const { return Tensor::Scalar<int32_t>(static_cast<int32_t>(v)); }
    Tensor operator()(double v) const { return Tensor::Scalar<float>(static_cast<float>(v)); }
    Tensor operator()(bool v) const { return Tensor::Scalar<bool>(v); }
    Tensor operator()(const std::string& v) const { return Tensor::Scalar<std::string>(v); }
    Tensor operator()(const EnumValue& v) const {
      return Tensor::Scalar<int32_t>(static_cast<int32_t>(v.value));
    }
  };
  return std::visit(Visitor{}, value);
}

}  // namespace

Arg::Arg(HostValue host) : kind_(Kind::kHost), value_(HostTensor(host)), host_(std::move(host)) {}

Arg Arg::Spec(TensorSpec spec) {
  Arg a;
  a.kind_ = Kind::kSpec;
  a.spec_ = spec;
  a.value_ = Value::Error(InvalidArgument("an Arg::Spec has no value; it only names a spec"));
  return a;
}

TensorSpec Arg::spec() const {
  if (kind_ == Kind::kSpec) return spec_;
  return value_.spec();
}

int64_t Arg::int_value() const {
  if (kind_ != Kind::kHost) return 0;
  if (const auto* i = std::get_if<int64_t>(&host_)) return *i;
  if (const auto* d = std::get_if<double>(&host_)) return static_cast<int64_t>(*d);
  if (const auto* b = std::get_if<bool>(&host_)) return *b ? 1 : 0;
  if (const auto* e = std::get_if<EnumValue>(&host_)) return e->value;
  return 0;
}

double Arg::double_value() const {
  if (kind_ != Kind::kHost) return 0.0;
  if (const auto* d = std::get_if<double>(&host_)) return *d;
  return static_cast<double>(int_value());
}

bool Arg::bool_value() const { return int_value() != 0 || double_value() != 0.0; }

const std::string& Arg::string_value() const {
  static const std::string* const empty = new std::string();
  if (kind_ != Kind::kHost) return *empty;
  const auto* s = std::get_if<std::string>(&host_);
  return s != nullptr ? *s : *empty;
}

std::string Arg::ToString() const {
  switch (kind_) {
    case Kind::kHost:
      return HostValueString(host_);
    case Kind::kSpec:
      return GivenSpecText(spec_);
    case Kind::kTensor:
      break;
  }
  if (value_.is_symbolic() && !name_.empty()) {
    return "Tensor(\"" + name_ + ":0\", shape=" + value_.shape().ToPythonString() +
           ", dtype=" + DTypeShortName(value_.dtype()) + ")";
  }
  return value_.ok() ? GivenSpecText(value_.spec()) : value_.DebugString();
}

std::string BoundArg::ToString() const {
  if (host) return name + "=" + HostValueString(*host);
  return name + ": " + PrettySpecText(spec);
}

std::string ArgSpec::ToString() const {
  return "TensorSpec(shape=" + shape.ToPythonString() + ", dtype=" + DTypeShortName(dtype) +
         ", name='" + name + "')";
}
}  // namespace kiln::trace
