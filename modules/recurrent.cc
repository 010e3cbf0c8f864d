#include "kiln/modules/recurrent.h"

#include <algorithm>
#include <utility>
#include <vector>

#include "kiln/modules/initializers.h"
#include "kiln/trace/array_ops.h"
#include "kiln/trace/compare_ops.h"
#include "kiln/trace/math_ops.h"
#include "kiln/trace/op_builder.h"
#include "kiln/trace/ops.h"
#include "nn_ops.h"

namespace kiln::modules {
namespace {

using trace::Value;
using trace::Values;

// Split into `n` parts along the last axis, or `n` copies of the error.
Values SplitLast(const Value& x, int64_t n) {
  Values parts = internal::Split(x, x.shape().rank() - 1, n);
  if (parts.size() != static_cast<size_t>(n)) {
    return Values(static_cast<size_t>(n),
                  parts.empty() ? Value::Error(Internal("Split")) : parts[0]);
  }
  return parts;
}

// TensorFlow's DEFAULT_GRAPH_SEED, as Dropout uses with an op seed.
constexpr int64_t kDefaultGraphSeed = 87654321;

// tf.nn.dropout of ones shaped as `like`: 1/(1 - rate) where kept, 0 where dropped.
Value DropoutMask(const Value& like, float rate, std::optional<int64_t> seed) {
  trace::OpBuilder draw("RandomUniform", "random_uniform");
  draw.Input(trace::ShapeOf(like)).Attr("dtype", like.dtype()).Attr("T", DType::kInt32);
  if (seed) draw.Attr("seed", kDefaultGraphSeed).Attr("seed2", *seed);
  const Value keep =
      trace::Cast(trace::GreaterEqual(draw.BuildOne(), trace::Scalar(rate)), like.dtype());
  return keep * (1.0 / (1.0 - static_cast<double>(rate)));
}

bool ValidRate(float r) { return r >= 0.0f && r < 1.0f; }

// a + b where b may be absent (a bias without use_bias).
Value AddMaybe(const Value& a, const Value& b) { return b.empty() ? a : a + b; }

}  // namespace

RecurrentBase::RecurrentBase(std::string type, std::string name, int gates, int num_states,
                             RecurrentOptions options)
    : Layer(std::move(name)),
      type_(std::move(type)),
      gates_(gates),
      num_states_(num_states),
      options_(options) {
  if (options_.units <= 0) {
    RecordError(InvalidArgument(Who(), ": units must be positive, got ", options_.units));
  }
  if (!ValidRate(options_.dropout) || !ValidRate(options_.recurrent_dropout)) {
    RecordError(InvalidArgument(Who(), ": dropout and recurrent_dropout must be in [0, 1), got ",
                                options_.dropout, " and ", options_.recurrent_dropout));
  }
}

std::string RecurrentBase::Who() const { return type_ + " '" + name() + "'"; }

Result<PartialShape> RecurrentBase::OutputShape(const PartialShape& input) const {
  KILN_RETURN_IF_ERROR(status());
  if (input.unknown_rank() || input.rank() != 3) {
    return InvalidArgument(Who(), ": expected a rank-3 input (batch, timesteps, features), got ",
                           input.ToPythonString());
  }
  if (input.dim(1) <= 0) {
    return InvalidArgument(Who(), ": the number of timesteps must be known while tracing (the ",
                           "time loop is unrolled) and positive, got ", input.ToPythonString());
  }
  if (input.dim(2) < 0 || (features_ >= 0 && input.dim(2) != features_)) {
    return InvalidArgument(Who(), ": expected ",
                           features_ >= 0 ? std::to_string(features_) : std::string("known"),
                           " features on the last axis, got ", input.ToPythonString());
  }
  if (options_.return_sequences) return PartialShape{input.dim(0), input.dim(1), options_.units};
  return PartialShape{input.dim(0), options_.units};
}

Status RecurrentBase::Build(const PartialShape& input) {
  if (built()) return OkStatus();
  KILN_RETURN_IF_ERROR(OutputShape(input).status());
  const int64_t features = input.dim(2);
  const int64_t units = options_.units;
  std::mt19937 own(options_.seed.value_or(0));
  std::mt19937& engine = options_.seed ? own : DefaultEngine();
  // Keras names the cell after the class ("lstm_cell", "gru_cell"), not after the layer, so
  // the second LSTM of a model holds "lstm_1/lstm_cell/kernel".
  std::string cell_name = type_ == "LSTM" ? "lstm_cell" : "gru_cell";
  WeightsModule& cell =
      EmplaceModule<WeightsModule>(cell_name, cell_name, type_ + std::string("Cell"));
  trace::Variable k =
      cell.AddVariable("kernel", GlorotUniform(Shape{features, gates_ * units}, engine));
  trace::Variable rk =
      cell.AddVariable("recurrent_kernel", Orthogonal(Shape{units, gates_ * units}, engine));
  if (options_.use_bias) bias_ = cell.AddVariable("bias", InitialBias());
  KILN_RETURN_IF_ERROR(status());
  kernel_ = k;
  recurrent_kernel_ = rk;
  features_ = features;
  built_input_ = PartialShape{-1, input.dim(1), features};
  return OkStatus();
}

// Zeros of (batch, units): a constant when the batch size is known, else Fill (Keras's
// ops.zeros((batch_size, units))).
Value RecurrentBase::ZeroState(const Value& input) const {
  const int64_t batch = input.shape().dim(0);
  if (batch >= 0) return trace::Constant(Zeros(DType::kFloat, Shape{batch, options_.units}));
  Value dims = internal::Pack({trace::Gather(trace::ShapeOf(input), trace::Scalar<int32_t>(0)),
                               trace::Scalar(static_cast<int32_t>(options_.units))});
  return trace::OpBuilder("Fill")
      .Input(dims)
      .Input(trace::Scalar(0.0F))
      .Attr("T", DType::kFloat)
      .BuildOne();
}

RecurrentBase::DropoutMasks RecurrentBase::MakeDropoutMasks(const Value& x0, const Value& h0,
                                                            bool training) {
  DropoutMasks masks;
  if (!training) return masks;
  // Keras's implementation 1 (one mask per gate) once recurrent_dropout is set, else 2.
  const int count = options_.recurrent_dropout > 0.0f ? gates_ : 1;
  int64_t next = 0;
  auto seed = [&]() -> std::optional<int64_t> {
    if (!options_.seed) return std::nullopt;
    return static_cast<int64_t>(*options_.seed) * 16 + next++;
  };
  if (options_.dropout > 0.0f) {
    for (int g = 0; g < count; ++g)
      masks.input.push_back(DropoutMask(x0, options_.dropout, seed()));
  }
  if (options_.recurrent_dropout > 0.0f) {
    for (int g = 0; g < count; ++g) {
      masks.recurrent.push_back(DropoutMask(h0, options_.recurrent_dropout, seed()));
    }
  }
  return masks;
}

Value RecurrentBase::Project(const Value& x, const Value& w, const Values& masks) const {
  if (masks.empty()) return trace::MatMul(x, w);
  if (masks.size() == 1) return trace::MatMul(x * masks[0], w);
  const Values blocks = SplitLast(w, static_cast<int64_t>(masks.size()));
  Values parts;
  for (size_t g = 0; g < masks.size(); ++g) parts.push_back(trace::MatMul(x * masks[g], blocks[g]));
  return internal::Concat(parts, 1);
}

Values RecurrentBase::Run(const Value& input, const Value& mask, bool training) {
  if (!built()) return {Value::Error(FailedPrecondition(Who(), " is not built"))};
  const int64_t timesteps = input.shape().dim(1);
  std::vector<Value> steps = internal::Unstack(input, 1, timesteps);
  // (batch, 1) bool per step, broadcast over the units by SelectV2.
  std::vector<Value> step_masks;
  if (!mask.empty()) {
    const PartialShape& ms = mask.shape();
    if (ms.unknown_rank() || ms.rank() != 2 || (ms.dim(1) >= 0 && ms.dim(1) != timesteps)) {
      return {Value::Error(InvalidArgument(Who(), ": expected a mask of (batch, ", timesteps,
                                           "), got ", ms.ToPythonString()))};
    }
    const Value m = mask.dtype() == DType::kBool ? mask : trace::Cast(mask, DType::kBool);
    for (const Value& t : internal::Unstack(m, 1, timesteps)) {
      step_masks.push_back(internal::ExpandDims(t, 1));
    }
  }
  if (options_.go_backwards) {
    std::reverse(steps.begin(), steps.end());
    std::reverse(step_masks.begin(), step_masks.end());
  }
  Values states(static_cast<size_t>(num_states_), ZeroState(input));
  const DropoutMasks dropout = MakeDropoutMasks(steps[0], states[0], training);
  Values outputs;
  for (size_t t = 0; t < steps.size(); ++t) {
    Values next = Step(steps[t], states, dropout);
    if (!step_masks.empty()) {
      // Keras: a masked step keeps the states; the output is h, so it repeats too.
      for (size_t i = 0; i < next.size(); ++i) {
        next[i] = trace::Where(step_masks[t], next[i], states[i]);
      }
    }
    states = next;
    if (options_.return_sequences) outputs.push_back(states[0]);
  }
  Values result{options_.return_sequences ? internal::Stack(outputs, 1) : states[0]};
  if (options_.return_state) result.insert(result.end(), states.begin(), states.end());
  return result;
}

trace::Value RecurrentBase::Call(const Value& input, bool training) {
  return Run(input, Value(), training)[0];
}

trace::Value RecurrentBase::CallWithMask(const Value& input, const Value& mask, bool training) {
  return Run(input, mask, training)[0];
}

trace::Value RecurrentBase::ComputeMask(const Value& /*input*/, const Value& mask) const {
  return options_.return_sequences ? mask : Value();
}

Values RecurrentBase::CallWithStates(const Value& input, bool training, const Value& mask) {
  if (!input.ok()) return {input};
  if (!mask.empty() && !mask.ok()) return {mask};
  trace::NameScope scope(name());
  if (!built()) {
    Status s = Build(input.shape());
    if (!s.ok()) return {Value::Error(s)};
  }
  Result<PartialShape> out = OutputShape(input.shape());
  if (!out.ok()) return {Value::Error(out.status())};
  return Run(input, mask, training);
}

LSTM::LSTM(RecurrentOptions options) : RecurrentBase("LSTM", "lstm", 4, 2, options) {}

Shape LSTM::BiasShape() const { return Shape{4 * options().units}; }

Tensor LSTM::InitialBias() const {
  const int64_t u = options().units;
  Tensor b = Zeros(DType::kFloat, BiasShape());
  if (options().unit_forget_bias) std::fill_n(b.flat<float>().data() + u, u, 1.0F);
  return b;
}

Values LSTM::Step(const Value& x, const Values& states, const DropoutMasks& masks) {
  const RecurrentOptions& o = options();
  Value z = Project(x, kernel().Read(), masks.input) +
            Project(states[0], recurrent_kernel().Read(), masks.recurrent);
  if (o.use_bias) z = trace::BiasAdd(z, bias().Read());
  const Values g = SplitLast(z, 4);  // i, f, c, o
  const Value c =
      ApplyActivation(o.recurrent_activation, g[1]) * states[1] +
      ApplyActivation(o.recurrent_activation, g[0]) * ApplyActivation(o.activation, g[2]);
  const Value h = ApplyActivation(o.recurrent_activation, g[3]) * ApplyActivation(o.activation, c);
  return {h, c};
}

GRU::GRU(RecurrentOptions options) : RecurrentBase("GRU", "gru", 3, 1, options) {}

Shape GRU::BiasShape() const {
  const int64_t n = 3 * options().units;
  return options().reset_after ? Shape{2, n} : Shape{n};
}

Tensor GRU::InitialBias() const { return Zeros(DType::kFloat, BiasShape()); }

Values GRU::Step(const Value& x, const Values& states, const DropoutMasks& masks) {
  const RecurrentOptions& o = options();
  const Value& h = states[0];
  Value input_bias;
  Value recurrent_bias;  // reset_after only
  if (o.use_bias && o.reset_after) {
    std::vector<Value> b = internal::Unstack(bias().Read(), 0, 2);
    input_bias = b[0];
    recurrent_bias = b.size() == 2 ? b[1] : b[0];
  } else if (o.use_bias) {
    input_bias = bias().Read();
  }
  const Values xg = SplitLast(AddMaybe(Project(x, kernel().Read(), masks.input), input_bias), 3);
  // h for each gate's recurrent term, with recurrent dropout (one mask per gate then).
  const Values& rm = masks.recurrent;
  const Values hg = rm.empty() ? Values(3, h) : Values{h * rm[0], h * rm[1], h * rm[2]};
  Value rz, rr, rh;  // the recurrent terms of z, r and the candidate
  if (o.reset_after) {
    const Values rg =
        SplitLast(AddMaybe(Project(h, recurrent_kernel().Read(), rm), recurrent_bias), 3);
    rz = rg[0];
    rr = rg[1];
    rh = rg[2];
  } else {
    const Values rk = SplitLast(recurrent_kernel().Read(), 3);
    rz = trace::MatMul(hg[0], rk[0]);
    rr = trace::MatMul(hg[1], rk[1]);
    rh = rk[2];
  }
  const Value z = ApplyActivation(o.recurrent_activation, xg[0] + rz);
  const Value r = ApplyActivation(o.recurrent_activation, xg[1] + rr);
  // reset_after: r scales h's projection; otherwise r scales h before the projection.
  const Value candidate = ApplyActivation(
      o.activation, xg[2] + (o.reset_after ? r * rh : trace::MatMul(r * hg[2], rh)));
  return {z * h + (trace::Scalar(1.0F) - z) * candidate};
}

}  // namespace kiln::modules
