// The seed notes' measure_graph_size: a C++ loop over host data unrolls into the graph (11 vs 32
// nodes), a loop over a tensor (ForRange) keeps the graph's size whatever the data.
//
//   measure_graph_size [OUT_DIR]
//
// The tensor version is then exported to OUT_DIR (default: a temporary directory), loaded with
// kiln::exec::SavedModel and run on both data sets: the same losses as before saving.
#include <unistd.h>

#include <filesystem>
#include <iostream>
#include <string>
#include <utility>
#include <vector>

#include "kiln/exec/saved_model.h"
#include "kiln/trace/trace.h"

using kiln::DType;
using kiln::PartialShape;
using kiln::Result;
using kiln::Tensor;
using namespace kiln::trace;  // NOLINT: a sample reads like the seed

using Pairs = std::vector<std::pair<int, int>>;

std::string PairsString(const Pairs& data) {
  std::string s = "[";
  for (size_t i = 0; i < data.size(); ++i) {
    s += (i ? ", (" : "(") + std::to_string(data[i].first) + ", " + std::to_string(data[i].second) +
         ")";
  }
  return s + "]";
}

// train(dataset) over a host list: `loss += tf.abs(y - x)` per pair, unrolled while tracing.
void MeasureHostGraphSize(const Pairs& data) {
  Function train("train", InputSignature{}, [&](const Values&) -> Result<Values> {
    Value loss = Scalar<int32_t>(0);
    for (const auto& [x, y] : data) loss = loss + Abs(Scalar<int32_t>(y - x));  // dummy work
    return Values{loss};
  });
  auto cf = train.GetConcreteFunction();
  if (!cf.ok()) {
    std::cerr << cf.status().ToString() << "\n";
    return;
  }
  std::cout << "train(" << PairsString(data) << ") contains " << (*cf)->num_nodes()
            << " nodes in its graph\n";
}

// The same over a tensor of pairs [n, 2]: one While node whatever n is.
Result<Values> TrainOnTensor(const Values& a) {
  const Value dataset = a[0];
  Value n = Gather(ShapeOf(dataset), Scalar<int32_t>(0));
  return ForRange(Scalar<int32_t>(0), n, Scalar<int32_t>(1),
                  [&](const Value& i, const Values& v) -> Result<Values> {
                    Value pair = Gather(dataset, i);
                    Value x = Gather(pair, Scalar<int32_t>(0));
                    Value y = Gather(pair, Scalar<int32_t>(1));
                    return Values{v[0] + Abs(y - x)};
                  },
                  {Scalar<int32_t>(0)});
}

class TrainModule : public Module {
 public:
  TrainModule()
      : Module("train_module"),
        train(AddMethod("train", {{"dataset", DType::kInt32, PartialShape({-1, 2})}},
                        TrainOnTensor)) {}
  Function& train;
};

Tensor ToTensor(const Pairs& data) {
  Tensor t(DType::kInt32, kiln::Shape{static_cast<int64_t>(data.size()), 2});
  for (size_t i = 0; i < data.size(); ++i) {
    t.flat<int32_t>()[2 * i] = data[i].first;
    t.flat<int32_t>()[2 * i + 1] = data[i].second;
  }
  return t;
}

int main(int argc, char** argv) {
  const std::filesystem::path dir =
      argc > 1 ? std::filesystem::path(argv[1])
               : std::filesystem::temp_directory_path() /
                     ("kiln_measure_graph_size_" + std::to_string(::getpid()));
  const Pairs small_data(3, {1, 1});
  const Pairs big_data(10, {1, 1});
  MeasureHostGraphSize(small_data);
  MeasureHostGraphSize(big_data);

  TrainModule m;
  const Pairs small_tensor_data = {{1, 1}, {1, 3}, {5, 2}};
  const Pairs big_tensor_data(10, {2, 7});
  std::vector<int> losses;
  for (const Pairs* data : {&small_tensor_data, &big_tensor_data}) {
    auto loss = m.train(ToTensor(*data));
    if (!loss.ok()) {
      std::cerr << loss.status().ToString() << "\n";
      return 1;
    }
    losses.push_back((*loss)[0].scalar<int32_t>());
    const ConcreteFunction* cf = *m.train.GetConcreteFunction();
    std::cout << "train(<tensor shape=(" << data->size() << ", 2) dtype=int32>) contains "
              << cf->num_nodes() << " nodes in its graph; loss = " << losses.back() << "\n";
  }

  std::filesystem::remove_all(dir);
  if (kiln::Status s = Save(m, dir, {{"serving_default", &m.train}}); !s.ok()) {
    std::cerr << s.ToString() << "\n";
    return 1;
  }
  auto model = kiln::exec::SavedModel::Load(dir);
  if (!model.ok()) {
    std::cerr << model.status().ToString() << "\n";
    return 1;
  }
  auto sig = (*model)->GetSignature("serving_default");
  if (!sig.ok()) {
    std::cerr << sig.status().ToString() << "\n";
    return 1;
  }
  int k = 0;
  for (const Pairs* data : {&small_tensor_data, &big_tensor_data}) {
    auto out = (*sig)->Run({{"dataset", ToTensor(*data)}});
    if (!out.ok()) {
      std::cerr << out.status().ToString() << "\n";
      return 1;
    }
    const int loss = out->at("output_0").scalar<int32_t>();
    std::cout << "loaded from " << dir.string() << ": loss = " << loss
              << (loss == losses[k++] ? " (same as before saving)" : " (DIFFERENT)") << "\n";
  }
  return 0;
}
