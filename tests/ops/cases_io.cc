// Op-tester cases of the I/O and side-effect ops: ShardedFilename, SaveV2, MergeV2Checkpoints,
// RestoreV2, ReadFile, Assert, PrintV2, Print, EagerPyFunc (PyFunc, PyFuncStateless) and the
// batching ops (Batch, Unbatch, UnbatchGrad). Files go to a temporary directory; what the
// writers wrote is read back with the bundle reader in tests/exec/kernels_checkpoint_test.cc.
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "kernels/host_callback.h"
#include "kiln/exec/tensor_bundle.h"
#include "ops/op_cases.h"

namespace kiln::testing {
namespace {

namespace fs = std::filesystem;

// One per process (ctest runs several op-tester processes at once, each writing its cases),
// removed at exit.
struct CaseDirHolder {
  fs::path dir = fs::temp_directory_path() / ("kiln_io_cases_" + std::to_string(::getpid()));
  CaseDirHolder() {
    fs::remove_all(dir);
    fs::create_directories(dir);
  }
  ~CaseDirHolder() {
    std::error_code ec;
    fs::remove_all(dir, ec);
  }
};

fs::path CaseDir() {
  static const CaseDirHolder holder;
  return holder.dir;
}

// A one-shard bundle at `prefix` holding `tensors`.
void WriteBundle(const std::string& prefix,
                 const std::vector<std::pair<std::string, Tensor>>& tensors) {
  exec::BundleWriter w(prefix);
  for (const auto& [k, t] : tensors) REQUIRE(w.Add(k, t).ok());
  REQUIRE(w.Finish().ok());
}

}  // namespace

std::vector<OpCase> IoCases() {
  std::vector<OpCase> c;
  const fs::path dir = CaseDir();

  c.push_back(
      OpCaseBuilder("ShardedFilename")
          .Input(Tensor::StringScalar("ckpt/part"))
          .Input(Tensor::Scalar<int32_t>(3))
          .Input(Tensor::Scalar<int32_t>(12))
          .Reference1([](const auto&) { return Tensor::StringScalar("ckpt/part-00003-of-00012"); })
          .Build());

  // SaveV2 writes the same bundle on every run.
  const Tensor a = RandomOf(DType::kFloat, Shape{3, 2}, 1);
  const Tensor b = Make<std::string>({"x", "yz"}, {2});
  c.push_back(OpCaseBuilder("SaveV2")
                  .TypeList("dtypes", {DType::kFloat, DType::kString})
                  .Input(Tensor::StringScalar((dir / "saved" / "part-00000-of-00001").string()))
                  .Input(Make<std::string>({"a", "b"}, {2}))
                  .Input(Make<std::string>({"", ""}, {2}))
                  .Input(a)
                  .Input(b)
                  .Build());

  // RestoreV2 reads back what a bundle holds.
  const std::string restore_prefix = (dir / "restore_me").string();
  WriteBundle(restore_prefix, {{"w", a}, {"names", b}});
  c.push_back(OpCaseBuilder("RestoreV2")
                  .TypeList("dtypes", {DType::kString, DType::kFloat})
                  .Input(Tensor::StringScalar(restore_prefix))
                  .Input(Make<std::string>({"names", "w"}, {2}))
                  .Input(Make<std::string>({"", ""}, {2}))
                  .Reference([a, b](const auto&) {
                    return std::vector<Tensor>{b, a};
                  })
                  .Build());

  // MergeV2Checkpoints consumes its sources, so it runs once, on the single-op path.
  const std::string s0 = (dir / "merge_tmp" / "part-00000-of-00002").string();
  const std::string s1 = (dir / "merge_tmp" / "part-00001-of-00002").string();
  fs::create_directories(dir / "merge_tmp");
  WriteBundle(s0, {{"a", a}});
  WriteBundle(s1, {{"b", b}});
  c.push_back(OpCaseBuilder("MergeV2Checkpoints")
                  .Input(Make<std::string>({s0, s1}, {2}))
                  .Input(Tensor::StringScalar((dir / "merged").string()))
                  .NonDeterministic()
                  .SingleOpOnly()
                  .Build());

  const fs::path file = dir / "read_me.txt";
  std::ofstream(file) << "contents\n\x01\xff";
  c.push_back(
      OpCaseBuilder("ReadFile")
          .Input(Tensor::StringScalar(file.string()))
          .Reference1([](const auto&) { return Tensor::StringScalar("contents\n\x01\xff"); })
          .Build());

  c.push_back(OpCaseBuilder("Assert", "Assert that holds")
                  .TypeList("T", {DType::kString, DType::kInt32})
                  .Input(Tensor::Scalar(true))
                  .Input(Tensor::StringScalar("never shown"))
                  .Input(Make<int32_t>({1, 2}, {2}))
                  .Build());

  c.push_back(OpCaseBuilder("PrintV2")
                  .String("output_stream", "log(info)")
                  .Input(Tensor::StringScalar("op tester: PrintV2 case"))
                  .Build());

  c.push_back(
      OpCaseBuilder("Print")
          .T(DType::kFloat)
          .TypeList("U", {DType::kInt32})
          .String("message", "op tester: Print case ")
          .Int("first_n", 1)
          .Input(Make<float>({1, -2, 3}, {3}))
          .Input(Make<int32_t>({4, 5}, {2}))
          .Reference([](const std::vector<Tensor>& in) { return std::vector<Tensor>{in[0]}; })
          .Build());

  // In-graph batching for one caller (batch_ops.cc): Batch leads a batch of itself.
  c.push_back(OpCaseBuilder("Batch")
                  .TypeList("T", {DType::kFloat, DType::kInt32})
                  .Int("num_batch_threads", 1)
                  .Int("max_batch_size", 8)
                  .Int("batch_timeout_micros", 1000)
                  .Input(Make<float>({1, 2, 3, 4, 5, 6}, {2, 3}))
                  .Input(Make<int32_t>({7, 8}, {2}))
                  .Reference([](const std::vector<Tensor>& in) {
                    return std::vector<Tensor>{in[0], in[1], Make<int64_t>({0, 0, 2}, {1, 3}),
                                               Tensor::Scalar<int64_t>(0)};
                  })
                  .Build());
  c.push_back(OpCaseBuilder("Unbatch", "Unbatch the rows of one id")
                  .T(DType::kFloat)
                  .Input(Make<float>({1, 2, 3, 4, 5, 6, 7, 8}, {4, 2}))
                  .Input(Make<int64_t>({7, 0, 1, 5, 1, 3}, {2, 3}))
                  .Input(Tensor::Scalar<int64_t>(5))
                  .Reference([](const std::vector<Tensor>&) {
                    return std::vector<Tensor>{Make<float>({3, 4, 5, 6}, {2, 2})};
                  })
                  .Build());
  c.push_back(OpCaseBuilder("Unbatch", "Unbatch strings")
                  .T(DType::kString)
                  .Input(Make<std::string>({"a", "b", "c"}, {3}))
                  .Input(Make<int64_t>({2, 2, 3}, {1, 3}))
                  .Input(Tensor::Scalar<int64_t>(2))
                  .Reference([](const std::vector<Tensor>&) {
                    return std::vector<Tensor>{Make<std::string>({"c"}, {1})};
                  })
                  .Build());
  c.push_back(
      OpCaseBuilder("UnbatchGrad")
          .T(DType::kFloat)
          .Input(Make<float>({0, 0, 0, 0}, {2, 2}))
          .Input(Make<int64_t>({9, 0, 2}, {1, 3}))
          .Input(Make<float>({1, -2, 3, -4}, {2, 2}))
          .Input(Tensor::Scalar<int64_t>(9))
          .Reference([](const std::vector<Tensor>& in) { return std::vector<Tensor>{in[2]}; })
          .Build());

  static const auto callback = exec::RegisterHostCallback(
      "op_case_square", [](std::span<const Tensor> in, std::vector<Tensor>* out) {
        Tensor t(DType::kFloat, in[0].shape());
        for (int64_t i = 0; i < t.NumElements(); ++i)
          t.data<float>()[i] = in[0].data<float>()[i] * in[0].data<float>()[i];
        out->push_back(std::move(t));
        return OkStatus();
      });
  for (const char* op : {"EagerPyFunc", "PyFunc", "PyFuncStateless"}) {
    c.push_back(OpCaseBuilder(op)
                    .String("token", callback->token)
                    .TypeList("Tin", {DType::kFloat})
                    .TypeList("Tout", {DType::kFloat})
                    .Input(RandomOf(DType::kFloat, Shape{4, 3}, 7))
                    .Reference1([](const std::vector<Tensor>& in) {
                      return RefUnaryDouble(in[0], [](double x) {
                        return static_cast<double>(static_cast<float>(x) * static_cast<float>(x));
                      });
                    })
                    .Build());
  }
  return c;
}

}  // namespace kiln::testing
