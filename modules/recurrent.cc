#include "kiln/modules/recurrent.h"

#include <algorithm>
#include <utility>
#include <vector>

#include "kiln/modules/initializers.h"
#include "kiln/trace/array_ops.h"
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
  std::string cell_name = name() + "_cell";
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

Values RecurrentBase::Run(const Value& input) {
  if (!built()) return {Value::Error(FailedPrecondition(Who(), " is not built"))};
  std::vector<Value> steps = internal::Unstack(input, 1, input.shape().dim(1));
  if (options_.go_backwards) std::reverse(steps.begin(), steps.end());
  Values states(static_cast<size_t>(num_states_), ZeroState(input));
  Values outputs;
  for (const Value& x : steps) {
    states = Step(x, states);
    if (options_.return_sequences) outputs.push_back(states[0]);
  }
  Values result{options_.return_sequences ? internal::Stack(outputs, 1) : states[0]};
  if (options_.return_state) result.insert(result.end(), states.begin(), states.end());
  return result;
}

trace::Value RecurrentBase::Call(const Value& input, bool /*training*/) { return Run(input)[0]; }

Values RecurrentBase::CallWithStates(const Value& input, bool /*training*/) {
  if (!input.ok()) return {input};
  trace::NameScope scope(name());
  if (!built()) {
    Status s = Build(input.shape());
    if (!s.ok()) return {Value::Error(s)};
  }
  Result<PartialShape> out = OutputShape(input.shape());
  if (!out.ok()) return {Value::Error(out.status())};
  return Run(input);
}

LSTM::LSTM(RecurrentOptions options) : RecurrentBase("LSTM", "lstm", 4, 2, options) {}

Shape LSTM::BiasShape() const { return Shape{4 * options().units}; }

Tensor LSTM::InitialBias() const {
  const int64_t u = options().units;
  Tensor b = Zeros(DType::kFloat, BiasShape());
  if (options().unit_forget_bias) std::fill_n(b.flat<float>().data() + u, u, 1.0F);
  return b;
}

Values LSTM::Step(const Value& x, const Values& states) {
  const RecurrentOptions& o = options();
  Value z = trace::MatMul(x, kernel().Read()) + trace::MatMul(states[0], recurrent_kernel().Read());
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

Values GRU::Step(const Value& x, const Values& states) {
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
  const Values xg = SplitLast(AddMaybe(trace::MatMul(x, kernel().Read()), input_bias), 3);
  Value rz, rr, rh;  // the recurrent terms of z, r and the candidate
  if (o.reset_after) {
    const Values rg =
        SplitLast(AddMaybe(trace::MatMul(h, recurrent_kernel().Read()), recurrent_bias), 3);
    rz = rg[0];
    rr = rg[1];
    rh = rg[2];
  } else {
    const Values rk = SplitLast(recurrent_kernel().Read(), 3);
    rz = trace::MatMul(h, rk[0]);
    rr = trace::MatMul(h, rk[1]);
    rh = rk[2];
  }
  const Value z = ApplyActivation(o.recurrent_activation, xg[0] + rz);
  const Value r = ApplyActivation(o.recurrent_activation, xg[1] + rr);
  // reset_after: r scales h's projection; otherwise r scales h before the projection.
  const Value candidate =
      ApplyActivation(o.activation, xg[2] + (o.reset_after ? r * rh : trace::MatMul(r * h, rh)));
  return {z * h + (trace::Scalar(1.0F) - z) * candidate};
}

}  // namespace kiln::modules
