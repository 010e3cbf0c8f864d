// Test-only helper for tests/tf/test_functional_summary.py: builds one of a few fixed models
// (Sequential or functional) that the test also builds in Keras 3, and writes
//
//   DIR/summary.txt       Summary() with Keras's default line length
//   DIR/summary_70.txt    Summary(70)
//   DIR/y_<j>.npy         output j, eagerly, for inputs DIR/x_<i>.npy
//   DIR/y_traced_<j>.npy  the same from a traced function
//   DIR/bundle            a SavedModel whose serving_default takes x_0, ... (batch dynamic)
//
// after copying DIR/w_<k>.npy into the k-th variable (Keras's model.weights order). Prints one
// variable path per line. Usage: kiln_model DIR MODEL. Exit 1 with the error on stderr.
#include <filesystem>
#include <fstream>
#include <functional>
#include <iostream>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "kiln/core/npy.h"
#include "kiln/modules/layers.h"
#include "kiln/trace/trace.h"

namespace fs = std::filesystem;
using kiln::Result;
using kiln::Status;
using kiln::Tensor;
namespace m = kiln::modules;
namespace t = kiln::trace;

namespace {

// A model and how it is summarised.
struct Built {
  std::shared_ptr<m::Layer> model;
  std::function<std::string(int)> summary;
  Status status;
};

Built Seq(std::shared_ptr<m::Sequential> s) {
  return {s, [s](int n) { return *s->Summary(n); }, kiln::OkStatus()};
}

Built Func(std::shared_ptr<m::Model> f) {
  return {f, [f](int n) { return *f->Summary(n); }, kiln::OkStatus()};
}

std::shared_ptr<m::Model> Shared(std::vector<m::SymbolicTensor> in,
                                 std::vector<m::SymbolicTensor> out, std::string name) {
  return m::MakeModel(std::move(in), std::move(out), std::move(name)).get();
}

// Keep in step with MODELS in test_functional_summary.py.
const std::map<std::string, std::function<Built()>>& Models() {
  static const std::map<std::string, std::function<Built()>> table = {
      {"sequential_cnn",
       [] {
         auto s = std::make_shared<m::Sequential>("sequential");
         s->Add<m::Conv2D>(m::ConvOptions{.filters = 8,
                                          .kernel_size = {3},
                                          .activation = m::Activation::kRelu,
                                          .input_shape = {12, 12, 1}});
         s->Add<m::Conv2D>(m::ConvOptions{.filters = 4, .kernel_size = {3}});
         s->Add<m::GlobalAveragePooling2D>();
         s->Add<m::Dense>(10);
         return Seq(s);
       }},
      {"functional_chain",
       [] {
         auto x = m::Input({16});
         auto h = m::MakeLayer<m::Dense>(8, m::Activation::kRelu)(x);
         return Func(Shared({x}, {m::MakeLayer<m::Dense>(3)(h)}, "functional"));
       }},
      {"functional_branches",
       [] {
         auto x = m::Input({8}, kiln::DType::kFloat, "x");
         auto shared = m::MakeLayer<m::Dense>(8, m::Activation::kTanh);
         auto h1 = shared(x);
         auto h2 = m::MakeLayer<m::Dense>(8)(x);
         auto s = m::MakeLayer<m::Add>()({h1, h2});
         auto again = shared(s);  // the shared layer's second call
         auto c = m::MakeLayer<m::Concatenate>()({again, h1});
         auto y = m::MakeLayer<m::Dense>(2)(c);
         return Func(Shared({x}, {y, s}, "branches"));
       }},
      {"functional_nested",
       [] {
         auto xi = m::Input({6});
         auto encoder =
             m::MakeModel({xi}, {m::MakeLayer<m::Dense>(4, m::Activation::kRelu)(xi)}, "encoder");
         auto x = m::Input({6});
         auto y = m::MakeLayer<m::Dense>(2)(encoder(x));
         return Func(Shared({x}, {y}, "outer"));
       }},
      {"functional_two_inputs",
       [] {
         auto a = m::Input({3}, kiln::DType::kFloat, "a");
         auto b = m::Input({2}, kiln::DType::kFloat, "b");
         auto c = m::MakeLayer<m::Concatenate>()({a, b});
         auto y = m::MakeLayer<m::Dense>(4)(c);
         return Func(Shared({a, b}, {y}, "two_inputs"));
       }},
      {"embedding_mask_lstm",
       [] {
         auto x = m::Input({7}, kiln::DType::kInt32);
         auto e = m::MakeLayer<m::Embedding>(
             m::EmbeddingOptions{.input_dim = 20, .output_dim = 4, .mask_zero = true})(x);
         auto h =
             m::MakeLayer<m::LSTM>(m::RecurrentOptions{.units = 5, .return_sequences = true})(e);
         auto y = m::MakeLayer<m::Dense>(2)(m::MakeLayer<m::LSTM>(3)(h));
         return Func(Shared({x}, {y}, "masked_lstm"));
       }},
      {"masking_gru_sequential",
       [] {
         auto s = std::make_shared<m::Sequential>("masked_gru");
         s->Add<m::Masking>(0.0f);
         s->Add<m::GRU>(m::RecurrentOptions{.units = 4, .return_sequences = true});
         s->Add<m::GRU>(3);
         s->Add<m::Dense>(2);
         Built b = Seq(s);
         b.status = s->Build(kiln::PartialShape{-1, 6, 3});
         return b;
       }},
  };
  return table;
}

Status Run(const fs::path& dir, const std::string& name) {
  auto it = Models().find(name);
  if (it == Models().end()) return kiln::InvalidArgument("unknown model '", name, "'");
  Built built = it->second();
  m::Layer& model = *built.model;
  KILN_RETURN_IF_ERROR(built.status);
  KILN_RETURN_IF_ERROR(model.status());
  size_t k = 0;
  for (const auto& [path, v] : model.named_variables()) {
    KILN_ASSIGN_OR_RETURN_CTX(Tensor w, kiln::ReadNpy(dir / ("w_" + std::to_string(k++) + ".npy")),
                              "variable ", path);
    KILN_RETURN_IF_ERROR_CTX(v.SetValue(w), "variable ", path);
    std::cout << path << "\n";
  }
  {
    std::ofstream(dir / "summary.txt") << built.summary(0);
    std::ofstream(dir / "summary_70.txt") << built.summary(70);
  }
  t::Values inputs;
  for (int i = 0; fs::exists(dir / ("x_" + std::to_string(i) + ".npy")); ++i) {
    KILN_ASSIGN_OR_RETURN(Tensor x, kiln::ReadNpy(dir / ("x_" + std::to_string(i) + ".npy")));
    inputs.push_back(t::Value(x));
  }
  const t::Values eager = model.CallMulti(inputs);
  for (size_t j = 0; j < eager.size(); ++j) {
    KILN_ASSIGN_OR_RETURN(Tensor y, eager[j].tensor());
    KILN_RETURN_IF_ERROR(kiln::WriteNpy(dir / ("y_" + std::to_string(j) + ".npy"), y));
  }
  t::Function f("call",
                [&model](const t::Values& a) { return Result<t::Values>(model.CallMulti(a)); });
  std::vector<Tensor> args;
  for (const t::Value& v : inputs) args.push_back(*v.tensor());
  KILN_ASSIGN_OR_RETURN(std::vector<Tensor> traced, f.Call(std::span<const Tensor>(args)));
  for (size_t j = 0; j < traced.size(); ++j) {
    KILN_RETURN_IF_ERROR(
        kiln::WriteNpy(dir / ("y_traced_" + std::to_string(j) + ".npy"), traced[j]));
  }
  kiln::trace::InputSignature signature;
  for (size_t i = 0; i < inputs.size(); ++i) {
    std::vector<int64_t> dims(inputs[i].shape().dims().begin(), inputs[i].shape().dims().end());
    dims[0] = -1;
    KILN_ASSIGN_OR_RETURN(kiln::PartialShape spec, kiln::PartialShape::FromDims(dims));
    signature.push_back({"x_" + std::to_string(i), inputs[i].dtype(), spec});
  }
  t::Function& serve = model.AddMethod("serve", signature,
                                       [&model](const t::Values& a) { return model.CallMulti(a); });
  return t::Save(model, dir / "bundle", {{"serving_default", &serve}});
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 3) {
    std::cerr << "usage: kiln_model DIR MODEL\n";
    return 2;
  }
  Status s = Run(argv[1], argv[2]);
  if (!s.ok()) {
    std::cerr << "kiln_model: " << s.ToString() << "\n";
    return 1;
  }
  return 0;
}
