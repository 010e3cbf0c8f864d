// Test-only helper for tests/tf/test_layers_forward.py: builds one kiln::modules layer from
// key=value options, copies Keras's weights into it, and runs it eagerly and in a traced
// function.
//
//   kiln_layer DIR TYPE [training=0|1] [KEY=VALUE]...
//
// Reads DIR/x.npy and, for each variable of the built layer, DIR/w_<name>.npy (a missing file
// is an error: the weights must match Keras's one for one; a scoped name "lstm_cell/kernel" is
// the file w_lstm_cell__kernel.npy). Writes DIR/y.npy (eager), DIR/y_traced.npy (a
// trace::Function with the training flag as a host argument) and, after the eager call,
// DIR/after_<name>.npy for each variable; prints "<name>\t<trainable>" per variable. Unless
// training, also saves DIR/bundle, a SavedModel of the layer with a serving_default signature
// (input "x", batch size dynamic). Options are those of the layer's options struct (lists as
// 3,3); output=i compares the i-th of a recurrent layer's return_state outputs instead. Exit 1
// with the error on stderr. With DIR/mask.npy (bool), the layer is called with that mask
// (Keras's layer(x, mask=m)), also in the bundle, where it is a constant.
//
// With DIR/gw.npy (shaped as the output), also writes the gradients of sum(y * gw) with
// GradientTape: DIR/g_x.npy (a floating-point x only) and DIR/g_<name>.npy per trainable
// variable from the eager call, DIR/g_traced_x.npy and DIR/g_traced_<name>.npy from a traced
// function that computes them in its graph.
#include <filesystem>
#include <functional>
#include <iostream>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "kiln/core/npy.h"
#include "kiln/modules/layers.h"
#include "kiln/trace/gradient_tape.h"
#include "kiln/trace/trace.h"

namespace fs = std::filesystem;
using kiln::Result;
using kiln::Status;
using kiln::Tensor;
namespace m = kiln::modules;
namespace t = kiln::trace;

namespace {

// A variable's file name part: "lstm_cell/kernel" -> "lstm_cell__kernel".
std::string FileName(std::string name) {
  for (size_t p = name.find('/'); p != std::string::npos; p = name.find('/', p + 2))
    name.replace(p, 1, "__");
  return name;
}

class Options {
 public:
  Status Parse(const std::vector<std::string>& args) {
    for (const std::string& a : args) {
      const size_t eq = a.find('=');
      if (eq == std::string::npos)
        return kiln::InvalidArgument("expected KEY=VALUE, got '", a, "'");
      values_[a.substr(0, eq)] = a.substr(eq + 1);
    }
    return kiln::OkStatus();
  }
  bool Has(const std::string& key) const { return values_.count(key) > 0; }
  std::string Str(const std::string& key, const std::string& dflt = "") {
    used_.insert(key);
    return Has(key) ? values_.at(key) : dflt;
  }
  int64_t Int(const std::string& key, int64_t dflt) {
    return Has(key) ? std::stoll(Str(key)) : dflt;
  }
  float Float(const std::string& key, float dflt) { return Has(key) ? std::stof(Str(key)) : dflt; }
  bool Bool(const std::string& key, bool dflt) { return Has(key) ? Str(key) == "1" : dflt; }
  std::vector<int64_t> Ints(const std::string& key, std::vector<int64_t> dflt) {
    if (!Has(key)) return dflt;
    std::vector<int64_t> out;
    std::stringstream ss(Str(key));
    for (std::string item; std::getline(ss, item, ',');) out.push_back(std::stoll(item));
    return out;
  }
  // Every option given must have been read: a typo is an error, not a silent default.
  Status CheckAllUsed() const {
    for (const auto& [key, value] : values_) {
      if (used_.count(key) == 0) return kiln::InvalidArgument("unknown option '", key, "'");
    }
    return kiln::OkStatus();
  }

 private:
  std::map<std::string, std::string> values_;
  std::set<std::string> used_;
};

Result<m::Activation> ActivationOf(Options& o) {
  return m::ActivationFromName(o.Str("activation", "linear"));
}

Result<m::ConvOptions> ConvOptionsOf(Options& o) {
  m::ConvOptions c;
  c.filters = o.Int("filters", 0);
  c.kernel_size = o.Ints("kernel_size", {});
  c.strides = o.Ints("strides", {1});
  c.dilation_rate = o.Ints("dilation_rate", {1});
  KILN_ASSIGN_OR_RETURN(c.padding, m::PaddingFromName(o.Str("padding", "valid")));
  c.groups = o.Int("groups", 1);
  c.depth_multiplier = o.Int("depth_multiplier", 1);
  KILN_ASSIGN_OR_RETURN(c.activation, ActivationOf(o));
  c.use_bias = o.Bool("use_bias", true);
  return c;
}

Result<m::PoolOptions> PoolOptionsOf(Options& o) {
  m::PoolOptions p;
  p.pool_size = o.Ints("pool_size", {2});
  p.strides = o.Ints("strides", {});
  KILN_ASSIGN_OR_RETURN(p.padding, m::PaddingFromName(o.Str("padding", "valid")));
  return p;
}

using Factory = std::function<Result<std::unique_ptr<m::Layer>>(Options&)>;

template <typename L, typename... Args>
Result<std::unique_ptr<m::Layer>> Make(Args&&... args) {
  return std::unique_ptr<m::Layer>(std::make_unique<L>(std::forward<Args>(args)...));
}

template <typename L>
Factory Conv() {
  return [](Options& o) -> Result<std::unique_ptr<m::Layer>> {
    KILN_ASSIGN_OR_RETURN(m::ConvOptions c, ConvOptionsOf(o));
    return Make<L>(c);
  };
}

template <typename L>
Factory Pool() {
  return [](Options& o) -> Result<std::unique_ptr<m::Layer>> {
    KILN_ASSIGN_OR_RETURN(m::PoolOptions p, PoolOptionsOf(o));
    return Make<L>(p);
  };
}

template <typename L>
Factory GlobalPool() {
  return [](Options& o) { return Make<L>(o.Bool("keepdims", false)); };
}

template <typename L>
Factory Recurrent() {
  return [](Options& o) -> Result<std::unique_ptr<m::Layer>> {
    m::RecurrentOptions r;
    r.units = o.Int("units", 0);
    KILN_ASSIGN_OR_RETURN(r.activation, m::ActivationFromName(o.Str("activation", "tanh")));
    KILN_ASSIGN_OR_RETURN(r.recurrent_activation,
                          m::ActivationFromName(o.Str("recurrent_activation", "sigmoid")));
    r.use_bias = o.Bool("use_bias", true);
    r.return_sequences = o.Bool("return_sequences", false);
    r.return_state = o.Bool("return_state", false);
    r.go_backwards = o.Bool("go_backwards", false);
    r.reset_after = o.Bool("reset_after", true);
    r.dropout = o.Float("dropout", 0.0f);
    r.recurrent_dropout = o.Float("recurrent_dropout", 0.0f);
    return Make<L>(r);
  };
}

// Keras class name -> layer.
const std::map<std::string, Factory>& Factories() {
  static const std::map<std::string, Factory> table = {
      {"Conv1D", Conv<m::Conv1D>()},
      {"Conv2D", Conv<m::Conv2D>()},
      {"DepthwiseConv2D", Conv<m::DepthwiseConv2D>()},
      {"SeparableConv2D", Conv<m::SeparableConv2D>()},
      {"Conv2DTranspose", Conv<m::Conv2DTranspose>()},
      {"MaxPooling1D", Pool<m::MaxPooling1D>()},
      {"MaxPooling2D", Pool<m::MaxPooling2D>()},
      {"AveragePooling1D", Pool<m::AveragePooling1D>()},
      {"AveragePooling2D", Pool<m::AveragePooling2D>()},
      {"GlobalMaxPooling1D", GlobalPool<m::GlobalMaxPooling1D>()},
      {"GlobalMaxPooling2D", GlobalPool<m::GlobalMaxPooling2D>()},
      {"GlobalAveragePooling1D", GlobalPool<m::GlobalAveragePooling1D>()},
      {"GlobalAveragePooling2D", GlobalPool<m::GlobalAveragePooling2D>()},
      {"BatchNormalization",
       [](Options& o) {
         return Make<m::BatchNormalization>(
             m::BatchNormalizationOptions{o.Float("momentum", 0.99f), o.Float("epsilon", 1e-3f),
                                          o.Bool("center", true), o.Bool("scale", true)});
       }},
      {"LayerNormalization",
       [](Options& o) {
         return Make<m::LayerNormalization>(m::LayerNormalizationOptions{
             o.Float("epsilon", 1e-3f), o.Bool("center", true), o.Bool("scale", true)});
       }},
      {"Dropout", [](Options& o) { return Make<m::Dropout>(o.Float("rate", 0.5f)); }},
      {"Flatten", [](Options&) { return Make<m::Flatten>(); }},
      {"Reshape", [](Options& o) { return Make<m::Reshape>(o.Ints("target_shape", {})); }},
      {"Embedding",
       [](Options& o) {
         return Make<m::Embedding>(m::EmbeddingOptions{.input_dim = o.Int("input_dim", 0),
                                                       .output_dim = o.Int("output_dim", 0),
                                                       .mask_zero = o.Bool("mask_zero", false)});
       }},
      {"Activation",
       [](Options& o) -> Result<std::unique_ptr<m::Layer>> {
         KILN_ASSIGN_OR_RETURN(m::Activation a, ActivationOf(o));
         return Make<m::ActivationLayer>(a);
       }},
      {"MultiHeadAttention",
       [](Options& o) {
         m::MultiHeadAttentionOptions a;
         a.num_heads = o.Int("num_heads", 0);
         a.key_dim = o.Int("key_dim", 0);
         a.value_dim = o.Int("value_dim", 0);
         a.output_dim = o.Int("output_dim", 0);
         a.use_bias = o.Bool("use_bias", true);
         a.use_causal_mask = o.Bool("use_causal_mask", false);
         return Make<m::MultiHeadAttention>(a);
       }},
      {"Masking", [](Options& o) { return Make<m::Masking>(o.Float("mask_value", 0.0f)); }},
      {"LSTM", Recurrent<m::LSTM>()},
      {"GRU", Recurrent<m::GRU>()},
      {"Dense",
       [](Options& o) -> Result<std::unique_ptr<m::Layer>> {
         KILN_ASSIGN_OR_RETURN(m::Activation a, ActivationOf(o));
         return Make<m::Dense>(
             m::DenseOptions{o.Int("units", 0), a, -1, o.Bool("use_bias", true), std::nullopt});
       }},
  };
  return table;
}

// DIR/mask.npy when there is one, else none (an empty value).
std::optional<Tensor> g_mask;

t::Value Mask() { return g_mask ? t::Constant(*g_mask) : t::Value(); }

// The layer's output, or with output=i > 0 the i-th of a recurrent layer's CallWithStates
// (Keras's return_state list).
t::Value Apply(m::Layer& layer, const t::Value& x, bool training, int64_t output) {
  if (output == 0) return layer.CallMasked(x, Mask(), training);
  auto* rnn = dynamic_cast<m::RecurrentBase*>(&layer);
  if (rnn == nullptr)
    return t::Value::Error(kiln::InvalidArgument("output=: not a recurrent layer"));
  t::Values all = rnn->CallWithStates(x, training, Mask());
  if (all.size() == 1 && !all[0].ok()) return all[0];
  if (output >= static_cast<int64_t>(all.size())) {
    return t::Value::Error(
        kiln::InvalidArgument("output=", output, ": the layer has ", all.size(), " outputs"));
  }
  return all[static_cast<size_t>(output)];
}

struct GradTarget {
  std::vector<std::string> names;  // "x" (when differentiable), then the trainable variables
  std::vector<t::Variable> variables;
};

GradTarget GradTargetOf(const m::Layer& layer, const Tensor& x) {
  GradTarget g;
  if (kiln::IsFloatingPoint(x.dtype())) g.names.push_back("x");
  for (const auto& [name, v] : layer.named_variables()) {
    if (!v.trainable()) continue;
    g.names.push_back(name);
    g.variables.push_back(v);
  }
  return g;
}

// d sum(y * w) / d x (when x is in target.names) and / d each variable, in target.names' order.
// A gradient that does not flow is an error: Keras's layers connect every input and weight.
Result<t::Values> Gradients(t::GradientTape& tape, const t::Value& y, const Tensor& w,
                            const t::Value& x, const GradTarget& target) {
  t::Value loss = t::Sum(y * t::Constant(w));
  t::Values out;
  if (!target.names.empty() && target.names[0] == "x") {
    KILN_ASSIGN_OR_RETURN(t::Values dx, tape.Gradient(loss, t::Values{x}));
    out.push_back(dx[0]);
  }
  KILN_ASSIGN_OR_RETURN(t::Values dv, tape.Gradient(loss, target.variables));
  out.insert(out.end(), dv.begin(), dv.end());
  for (size_t i = 0; i < out.size(); ++i) {
    if (out[i].empty()) return kiln::Internal("no gradient flows to ", target.names[i]);
  }
  return out;
}

// The eager gradients of the call that made `y` (recorded on `tape`), then the same computed
// inside a traced function.
Status WriteGradients(const fs::path& dir, m::Layer& layer, t::GradientTape& tape,
                      const t::Value& y, const t::Value& x, const Tensor& w, bool training,
                      int64_t output) {
  const GradTarget target = GradTargetOf(layer, *x.tensor());
  KILN_ASSIGN_OR_RETURN(t::Values eager, Gradients(tape, y, w, x, target));
  for (size_t i = 0; i < eager.size(); ++i) {
    KILN_ASSIGN_OR_RETURN(Tensor g, eager[i].tensor());
    KILN_RETURN_IF_ERROR(kiln::WriteNpy(dir / ("g_" + FileName(target.names[i]) + ".npy"), g));
  }
  t::Function f("grad", t::FunctionOptions{},
                [&layer, &w, &target, output](const t::Args& a) -> Result<t::Values> {
                  t::GradientTape traced_tape(t::GradientTapeOptions{.persistent = true});
                  t::Value in = a[0].value();
                  if (kiln::IsFloatingPoint(in.dtype())) traced_tape.Watch(in);
                  return Gradients(traced_tape, Apply(layer, in, a[1].bool_value(), output), w, in,
                                   target);
                });
  KILN_ASSIGN_OR_RETURN(std::vector<Tensor> traced, f(*x.tensor(), training));
  for (size_t i = 0; i < traced.size(); ++i) {
    KILN_RETURN_IF_ERROR(
        kiln::WriteNpy(dir / ("g_traced_" + FileName(target.names[i]) + ".npy"), traced[i]));
  }
  return kiln::OkStatus();
}

Status Run(const fs::path& dir, const std::string& type, const std::vector<std::string>& args) {
  Options o;
  KILN_RETURN_IF_ERROR(o.Parse(args));
  const bool training = o.Bool("training", false);
  const int64_t output = o.Int("output", 0);
  auto it = Factories().find(type);
  if (it == Factories().end()) return kiln::InvalidArgument("unknown layer type '", type, "'");
  KILN_ASSIGN_OR_RETURN(std::unique_ptr<m::Layer> layer, it->second(o));
  KILN_RETURN_IF_ERROR(o.CheckAllUsed());
  KILN_RETURN_IF_ERROR(layer->status());
  KILN_ASSIGN_OR_RETURN(Tensor x, kiln::ReadNpy(dir / "x.npy"));
  if (fs::exists(dir / "mask.npy")) {
    KILN_ASSIGN_OR_RETURN(Tensor mask, kiln::ReadNpy(dir / "mask.npy"));
    g_mask = mask;
  }
  KILN_RETURN_IF_ERROR(layer->Build(x.shape()));
  for (const auto& [name, v] : layer->named_variables()) {
    KILN_ASSIGN_OR_RETURN_CTX(Tensor w, kiln::ReadNpy(dir / ("w_" + FileName(name) + ".npy")),
                              "variable ", name);
    if (w.shape() != *v.shape().ToShape()) {
      return kiln::InvalidArgument("variable ", name, ": kiln's shape ", v.shape().ToPythonString(),
                                   ", Keras's ", kiln::PartialShape(w.shape()).ToPythonString());
    }
    KILN_RETURN_IF_ERROR(v.SetValue(w));
    std::cout << name << "\t" << (v.trainable() ? 1 : 0) << "\n";
  }
  // One eager call, recorded on a tape when gradients are asked for (a second call would move
  // BatchNormalization's statistics again).
  const bool grads = fs::exists(dir / "gw.npy");
  t::GradientTape tape(t::GradientTapeOptions{.persistent = true});
  const t::Value xv(x);
  if (grads && kiln::IsFloatingPoint(x.dtype())) tape.Watch(xv);
  t::Value y = Apply(*layer, xv, training, output);
  KILN_RETURN_IF_ERROR(y.status());
  KILN_ASSIGN_OR_RETURN(Tensor eager, y.tensor());
  KILN_RETURN_IF_ERROR(kiln::WriteNpy(dir / "y.npy", eager));
  for (const auto& [name, v] : layer->named_variables()) {
    KILN_ASSIGN_OR_RETURN(Tensor after, v.value());
    KILN_RETURN_IF_ERROR(kiln::WriteNpy(dir / ("after_" + FileName(name) + ".npy"), after));
  }
  if (grads) {
    KILN_ASSIGN_OR_RETURN(Tensor gw, kiln::ReadNpy(dir / "gw.npy"));
    KILN_RETURN_IF_ERROR_CTX(WriteGradients(dir, *layer, tape, y, xv, gw, training, output),
                             "gradients");
  }
  kiln::trace::Function f(
      "call", kiln::trace::FunctionOptions{},
      [&layer, output](const kiln::trace::Args& a) -> Result<kiln::trace::Values> {
        return kiln::trace::Values{Apply(*layer, a[0].value(), a[1].bool_value(), output)};
      });
  KILN_ASSIGN_OR_RETURN(std::vector<Tensor> traced, f(x, training));
  KILN_RETURN_IF_ERROR(kiln::WriteNpy(dir / "y_traced.npy", traced.at(0)));
  if (training) return kiln::OkStatus();
  // An inference bundle: the layer as the root object (its variables as children "kernel",
  // "bias", ...) and serving_default taking x with a dynamic batch size.
  std::vector<int64_t> dims(x.shape().dims().begin(), x.shape().dims().end());
  dims[0] = -1;
  KILN_ASSIGN_OR_RETURN(kiln::PartialShape spec, kiln::PartialShape::FromDims(dims));
  kiln::trace::Function& serve = layer->AddMethod(
      "call", {{"x", x.dtype(), spec}}, [&layer, output](const kiln::trace::Values& a) {
        return kiln::trace::Values{Apply(*layer, a[0], false, output)};
      });
  return kiln::trace::Save(*layer, dir / "bundle", {{"serving_default", &serve}});
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3) {
    std::cerr << "usage: kiln_layer DIR TYPE [training=0|1] [KEY=VALUE]...\n";
    return 2;
  }
  const std::vector<std::string> args(argv + 3, argv + argc);
  Status s = Run(argv[1], argv[2], args);
  if (!s.ok()) {
    std::cerr << "kiln_layer: " << s.ToString() << "\n";
    return 1;
  }
  return 0;
}
