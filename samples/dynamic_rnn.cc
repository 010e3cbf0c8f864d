// The seed notes' dynamic_rnn: a TensorArray written in a loop over time, then stacked.
//
//   dynamic_rnn [OUT_DIR]
//
// rnn_step(inp, state) = inp + state over a [batch=2, time=3, features=4] input, so each
// output row is the running sum over time. Then exported to OUT_DIR (default: a temporary
// directory), loaded with kiln::exec::SavedModel and run again: the same result.
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <iostream>
#include <random>
#include <string>

#include "kiln/exec/saved_model.h"
#include "kiln/trace/trace.h"

using kiln::DType;
using kiln::PartialShape;
using kiln::Result;
using kiln::Tensor;
using namespace kiln::trace;  // NOLINT: a sample reads like the seed

constexpr int kBatch = 2, kSeqLen = 3, kFeatures = 4;

Value RnnStep(const Value& inp, const Value& state) { return inp + state; }

Result<Values> DynamicRnn(const Values& a) {
  // [batch, time, features] -> [time, batch, features]
  Value input_data = Transpose(a[0], {1, 0, 2});
  const int32_t max_seq_len = static_cast<int32_t>(input_data.shape().dim(0));
  TensorArray states(DType::kFloat, max_seq_len);
  KILN_ASSIGN_OR_RETURN(
      Values out, ForRange(Scalar<int32_t>(0), Scalar<int32_t>(max_seq_len), Scalar<int32_t>(1),
                           [&](const Value& i, const Values& v) -> Result<Values> {
                             Value state = RnnStep(Gather(input_data, i), v[0]);
                             return Values{state, states.WithHandle(v[1]).Write(i, state)};
                           },
                           {a[1], states}));
  return Values{Transpose(states.WithHandle(out[1]).Stack(), {1, 0, 2})};
}

class RnnModule : public Module {
 public:
  RnnModule()
      : Module("rnn_module"),
        dynamic_rnn(
            AddMethod("dynamic_rnn",
                      {{"input_data", DType::kFloat, PartialShape({kBatch, kSeqLen, kFeatures})},
                       {"initial_state", DType::kFloat, PartialShape({kBatch, kFeatures})}},
                      DynamicRnn)) {}
  Function& dynamic_rnn;
};

// numpy's layout for a [2, 3, 4] float array.
std::string Show(const Tensor& t) {
  std::string s = "array([";
  char buf[32];
  for (int b = 0; b < kBatch; ++b) {
    s += b ? ",\n\n       [" : "[";
    for (int r = 0; r < kSeqLen; ++r) {
      s += r ? ",\n        [" : "[";
      for (int f = 0; f < kFeatures; ++f) {
        std::snprintf(buf, sizeof buf, "%s%.8f", f ? ", " : "",
                      t.flat<float>()[(b * kSeqLen + r) * kFeatures + f]);
        s += buf;
      }
      s += "]";
    }
    s += "]";
  }
  return s + "], dtype=float32)";
}

int main(int argc, char** argv) {
  const std::filesystem::path dir = argc > 1
                                        ? std::filesystem::path(argv[1])
                                        : std::filesystem::temp_directory_path() /
                                              ("kiln_dynamic_rnn_" + std::to_string(::getpid()));
  // tf.random.uniform([batch_size, seq_len, feature_size]), drawn on the host (seeded).
  std::mt19937 engine(42);
  Tensor input(DType::kFloat, kiln::Shape{kBatch, kSeqLen, kFeatures});
  for (float& x : input.flat<float>()) x = static_cast<float>(engine() >> 8) / 16777216.0f;
  Tensor zeros(DType::kFloat, kiln::Shape{kBatch, kFeatures});
  for (float& x : zeros.flat<float>()) x = 0.0f;

  RnnModule m;
  auto out = m.dynamic_rnn(input, zeros);
  if (!out.ok()) {
    std::cerr << out.status().ToString() << "\n";
    return 1;
  }
  std::cout << "<tf.Tensor: shape=(2, 3, 4), dtype=float32, numpy=\n" << Show((*out)[0]) << ">\n";

  std::filesystem::remove_all(dir);
  if (kiln::Status s = Save(m, dir, {{"serving_default", &m.dynamic_rnn}}); !s.ok()) {
    std::cerr << s.ToString() << "\n";
    return 1;
  }
  auto model = kiln::exec::SavedModel::Load(dir);
  if (!model.ok()) {
    std::cerr << model.status().ToString() << "\n";
    return 1;
  }
  auto sig = (*model)->GetSignature("serving_default");
  auto loaded = sig.ok() ? (*sig)->Run({{"input_data", input}, {"initial_state", zeros}})
                         : Result<std::map<std::string, Tensor>>(sig.status());
  if (!loaded.ok()) {
    std::cerr << loaded.status().ToString() << "\n";
    return 1;
  }
  const Tensor& again = loaded->at("output_0");
  bool same = again.shape() == (*out)[0].shape();
  for (int i = 0; same && i < kBatch * kSeqLen * kFeatures; ++i)
    same = again.flat<float>()[i] == (*out)[0].flat<float>()[i];
  std::cout << "saved to " << dir.string() << "; loaded serving_default gives "
            << (same ? "the same result" : "A DIFFERENT RESULT") << "\n";
  return same ? 0 : 1;
}
