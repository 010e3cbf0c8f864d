// Recurrent layers with Keras 3's semantics, defaults and variable names:
//
//   LSTM  lstm_cell/kernel [features, 4 units], lstm_cell/recurrent_kernel [units, 4 units],
//         lstm_cell/bias [4 units]; gates in Keras's order i, f, c, o:
//           z = x_t @ kernel + h @ recurrent_kernel + bias
//           c = f * c + i * activation(z_c),  h = o * activation(c)
//         (i, f, o = recurrent_activation of their parts of z).
//   GRU   gru_cell/kernel [features, 3 units], gru_cell/recurrent_kernel [units, 3 units],
//         gru_cell/bias [2, 3 units] with reset_after (the default; [3 units] without);
//         gates z, r, h:  h = z * h + (1 - z) * activation(x_h + r * (h @ rk_h + rb_h)).
//
// Inputs are (batch, timesteps, features). The time loop is unrolled while tracing (Unpack
// along time, one cell step per timestep, Pack of the outputs), so every op of it has a
// gradient and the graph needs no While: the number of timesteps must be known while
// tracing (the batch size may be dynamic). The initial states are zeros, as Keras's (so the
// recurrent kernel gets a gradient, zero, even from a single step). Kernels are Glorot-uniform,
// recurrent kernels orthogonal, biases zeros (LSTM's forget-gate part ones, unit_forget_bias), as
// Keras.
//
// Masks (Keras's mask=, from Embedding(mask_zero) or Masking, or given to CallMasked): bool
// (batch, timesteps); at a masked step the states keep their previous values and the output
// repeats the previous output (zeros before the first unmasked step), as Keras's rnn with
// zero_output_for_mask=False. With return_sequences the output mask is the input's.
//
// dropout / recurrent_dropout: only when `training` (a host value) is true, as Dropout: one
// mask per call of the input (batch, features) and of h (batch, units), the same at every
// step, scaled by 1/(1 - rate) (Keras's DropoutRNNCell). Keras's implementation 2 uses one
// input mask; with recurrent_dropout it switches to implementation 1, one mask per gate for
// both, and so does this layer.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "kiln/modules/activations.h"
#include "kiln/modules/layer.h"
#include "kiln/trace/variable.h"

namespace kiln::modules {

struct RecurrentOptions {
  int64_t units = 0;
  Activation activation = Activation::kTanh;
  Activation recurrent_activation = Activation::kSigmoid;
  bool use_bias = true;
  // The output: (batch, timesteps, units) for every step, else (batch, units) for the last.
  bool return_sequences = false;
  // CallWithStates also returns the final states (Keras's return_state): h (and c for LSTM).
  bool return_state = false;
  // Processes the timesteps last to first; with return_sequences the outputs are in that
  // (reversed) order, as Keras returns them.
  bool go_backwards = false;
  bool unit_forget_bias = true;  // LSTM only
  bool reset_after = true;       // GRU only
  // Fractions in [0, 1) of the inputs / of h to drop while training.
  float dropout = 0.0f;
  float recurrent_dropout = 0.0f;
  // Initializer seed; without one the layer draws from DefaultEngine().
  std::optional<uint32_t> seed;
};

// What LSTM and GRU share: options, shapes, building and the unrolled loop.
class RecurrentBase : public Layer {
 public:
  std::string type_name() const override { return type_; }
  // Integer and bool inputs are cast to float32, as Keras's cells promote them.
  NonFloatInput non_float_input() const override { return NonFloatInput::kCast; }
  const RecurrentOptions& options() const { return options_; }

  bool built() const override { return kernel_.valid(); }
  Status Build(const PartialShape& input) override;
  PartialShape built_input_shape() const override { return built_input_; }
  // (batch, timesteps, features) with known timesteps and features.
  Result<PartialShape> OutputShape(const PartialShape& input) const override;

  // Keras's call with return_state: the output, then the final states (h; h and c for LSTM).
  // Without return_state, only the output. Checks and builds as operator() does.
  trace::Values CallWithStates(const trace::Value& input, bool training = false,
                               const trace::Value& mask = trace::Value());

  bool supports_masking() const override { return true; }
  // The input's mask with return_sequences, else none (Keras).
  trace::Value ComputeMask(const trace::Value& input, const trace::Value& mask) const override;

  // Until built, invalid handles whose status() names the layer and says so.
  trace::Variable kernel() const { return WeightOrError(kernel_, "kernel"); }
  trace::Variable recurrent_kernel() const {
    return WeightOrError(recurrent_kernel_, "recurrent_kernel");
  }
  trace::Variable bias() const { return WeightOrError(bias_, "bias"); }

 protected:
  // `gates`: blocks of `units` columns in the kernels; `num_states`: h (and c).
  RecurrentBase(std::string type, std::string name, int gates, int num_states,
                RecurrentOptions options);
  trace::Value Call(const trace::Value& input, bool training) override;
  trace::Value CallWithMask(const trace::Value& input, const trace::Value& mask,
                            bool training) override;

  // Dropout masks for one call: none, one, or one per gate.
  struct DropoutMasks {
    trace::Values input;      // multiply x_t
    trace::Values recurrent;  // multiply h
  };
  // x @ w with x scaled by the masks: one mask for all of w, or one per block of `units`
  // columns (a gate); none: plain x @ w.
  trace::Value Project(const trace::Value& x, const trace::Value& w,
                       const trace::Values& masks) const;

  // One step from x_t (batch, features) and the states (zeros at the first step); returns the
  // new states, h first.
  virtual trace::Values Step(const trace::Value& x, const trace::Values& states,
                             const DropoutMasks& masks) = 0;
  // The bias's initial value.
  virtual Tensor InitialBias() const = 0;
  virtual Shape BiasShape() const = 0;

  // "LSTM 'lstm'".
  std::string Who() const;

 private:
  trace::Values Run(const trace::Value& input, const trace::Value& mask, bool training);
  DropoutMasks MakeDropoutMasks(const trace::Value& x0, const trace::Value& h0, bool training);
  trace::Value ZeroState(const trace::Value& input) const;

  std::string type_;
  int gates_;
  int num_states_;
  RecurrentOptions options_;
  int64_t features_ = -1;
  PartialShape built_input_ = PartialShape::UnknownRank();
  trace::Variable kernel_;
  trace::Variable recurrent_kernel_;
  trace::Variable bias_;
};

class LSTM final : public RecurrentBase {
 public:
  explicit LSTM(RecurrentOptions options);
  explicit LSTM(int64_t units) : LSTM(RecurrentOptions{.units = units}) {}

 protected:
  trace::Values Step(const trace::Value& x, const trace::Values& states,
                     const DropoutMasks& masks) override;
  Tensor InitialBias() const override;
  Shape BiasShape() const override;
};

class GRU final : public RecurrentBase {
 public:
  explicit GRU(RecurrentOptions options);
  explicit GRU(int64_t units) : GRU(RecurrentOptions{.units = units}) {}

 protected:
  trace::Values Step(const trace::Value& x, const trace::Values& states,
                     const DropoutMasks& masks) override;
  Tensor InitialBias() const override;
  Shape BiasShape() const override;
};

}  // namespace kiln::modules
