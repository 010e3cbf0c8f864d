// `savedmodel-cli run` on VarsAndArithmeticObjectGraph, whose serving_default computes
// (a + x) * (b + y) / z + c with variables x=1, y=2, z=3 and the graph constant c=5.
#include "savedmodel_cli/run.h"

#include <doctest/doctest.h>
#include <sys/wait.h>

#include <array>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>

#include "cli_test_util.h"
#include "kiln/core/npy.h"

namespace kiln::cli::testing {
namespace {

namespace fs = std::filesystem;

const std::string kModel = Fixture("VarsAndArithmeticObjectGraph").string();

CliResult RunModel(std::vector<std::string> extra) {
  std::vector<std::string> args = {"run",   "--dir",           kModel,           "--tag_set",
                                   "serve", "--signature_def", "serving_default"};
  args.insert(args.end(), extra.begin(), extra.end());
  return RunCli(args);
}

// A stored (uncompressed) zip, as numpy.savez writes it.
uint32_t Crc32(const std::string& data) {
  uint32_t crc = 0xffffffffu;
  for (unsigned char c : data) {
    crc ^= c;
    for (int k = 0; k < 8; ++k) crc = (crc >> 1) ^ (0xedb88320u & (0u - (crc & 1u)));
  }
  return ~crc;
}

void Put16(std::string* s, uint16_t v) {
  s->push_back(static_cast<char>(v & 0xff));
  s->push_back(static_cast<char>(v >> 8));
}
void Put32(std::string* s, uint32_t v) {
  Put16(s, static_cast<uint16_t>(v & 0xffff));
  Put16(s, static_cast<uint16_t>(v >> 16));
}

std::string MakeNpz(const std::vector<std::pair<std::string, Tensor>>& arrays) {
  std::string out, central;
  for (const auto& [key, tensor] : arrays) {
    auto npy = SerializeNpy(tensor);
    REQUIRE(npy.ok());
    const std::string name = key + ".npy";
    const uint32_t offset = static_cast<uint32_t>(out.size());
    const uint32_t crc = Crc32(*npy);
    const uint32_t size = static_cast<uint32_t>(npy->size());
    Put32(&out, 0x04034b50);
    Put16(&out, 20);
    Put16(&out, 0);
    Put16(&out, 0);  // stored
    Put16(&out, 0);
    Put16(&out, 0);
    Put32(&out, crc);
    Put32(&out, size);
    Put32(&out, size);
    Put16(&out, static_cast<uint16_t>(name.size()));
    Put16(&out, 0);
    out += name + *npy;
    Put32(&central, 0x02014b50);
    Put16(&central, 20);
    Put16(&central, 20);
    Put16(&central, 0);
    Put16(&central, 0);
    Put16(&central, 0);
    Put16(&central, 0);
    Put32(&central, crc);
    Put32(&central, size);
    Put32(&central, size);
    Put16(&central, static_cast<uint16_t>(name.size()));
    Put16(&central, 0);
    Put16(&central, 0);
    Put16(&central, 0);
    Put16(&central, 0);
    Put32(&central, 0);
    Put32(&central, offset);
    central += name;
  }
  const uint32_t central_offset = static_cast<uint32_t>(out.size());
  out += central;
  Put32(&out, 0x06054b50);
  Put16(&out, 0);
  Put16(&out, 0);
  Put16(&out, static_cast<uint16_t>(arrays.size()));
  Put16(&out, static_cast<uint16_t>(arrays.size()));
  Put32(&out, static_cast<uint32_t>(central.size()));
  Put32(&out, central_offset);
  Put16(&out, 0);
  return out;
}

TEST_CASE("run with --input_exprs prints each output as saved_model_cli does") {
  CliResult r = RunModel({"--input_exprs", "a=1.0;b=2"});
  CHECK(r.rc == 0);
  CHECK(r.err == "");
  // (1+1)*(2+2)/3 + 5 in float32 is 7.666667 (numpy's shortest float32 digits).
  CHECK(r.out == "Result for output key output_0:\n7.666667\n");

  r = RunModel({"--input_exprs", "a=4;b=1"});  // int literals cast to the float inputs
  CHECK(r.rc == 0);
  CHECK(r.out == "Result for output key output_0:\n10.0\n");
}

TEST_CASE("run --threads sets the intra-op threads, and a bad command line exits 2") {
  CliResult r = RunModel({"--input_exprs", "a=1.0;b=2", "--threads", "1"});
  CHECK(r.rc == 0);
  CHECK(r.out == "Result for output key output_0:\n7.666667\n");
  r = RunModel({"--input_exprs", "a=1.0;b=2", "--threads", "-1"});
  CHECK(r.rc == 1);
  CHECK(r.err.find("--threads must be 0 (all cores) or more, got -1") != std::string::npos);
  r = RunModel({"--input_exprs", "a=1.0;b=2", "--bogus"});
  CHECK(r.rc == 2);
  CHECK(r.err.find("--bogus") != std::string::npos);
}

TEST_CASE("--version prints the program and kiln's version and exits 0") {
  CliResult r = RunCli({"--version"});
  CHECK(r.rc == 0);
  CHECK(r.out.rfind("savedmodel-cli (kiln) ", 0) == 0);
  CHECK(r.out.find_first_of("0123456789") == std::string("savedmodel-cli (kiln) ").size());
}

TEST_CASE("run --device: cpu gives the same output, an absent device lists those there are") {
  CliResult r = RunModel({"--input_exprs", "a=1.0;b=2", "--device", "cpu"});
  CHECK(r.rc == 0);
  CHECK(r.out == "Result for output key output_0:\n7.666667\n");
  r = RunModel({"--input_exprs", "a=1.0;b=2", "--device", "gpu,cpu"});
  CHECK(r.rc == 1);
  CHECK(r.out.empty());
  CHECK(r.err.find("available devices: cpu") != std::string::npos);
}

TEST_CASE("run: a corrupted weight fails its checksum, and --skip_checksums loads it anyway") {
  TempDir dir;
  const fs::path model = dir.path() / "model";
  fs::copy(Fixture("VarsAndArithmeticObjectGraph"), model, fs::copy_options::recursive);
  const fs::path data = model / "variables" / "variables.data-00000-of-00001";
  fs::permissions(data, fs::perms::owner_write, fs::perm_options::add);
  std::string bytes = ReadText(data);
  const float x = 4.0f;  // x (bytes 0..3 of the TF-written file) was 1
  std::memcpy(bytes.data(), &x, 4);
  WriteText(data, bytes);
  const std::vector<std::string> args = {
      "run",      "--dir",           model.string(),    "--tag_set",
      "serve",    "--signature_def", "serving_default", "--input_exprs",
      "a=1.0;b=2"};
  CliResult r = RunCli(args);
  CHECK(r.rc != 0);
  CHECK(r.err.find("checksum mismatch for 'x/.ATTRIBUTES/VARIABLE_VALUE'") != std::string::npos);
  CHECK(r.err.find("restoring variable 'x'") != std::string::npos);
  std::vector<std::string> skip = args;
  skip.push_back("--skip_checksums");
  r = RunCli(skip);
  CHECK(r.rc == 0);
  CHECK(r.err == "");
  // (1 + 4) * (2 + 2) / 3 + 5 in float32 (11.666666): the file's value, unchecked.
  CHECK(r.out == "Result for output key output_0:\n11.666666\n");
}

TEST_CASE("run with --inputs from .npy and .npz files") {
  TempDir dir;
  REQUIRE(WriteNpy(dir.path() / "a.npy", Tensor::Scalar<float>(2.0f)).ok());
  // float64 arrays are converted to the float32 input, as TF's session converts feeds.
  WriteText(dir.path() / "in.npz",
            MakeNpz({{"b", Tensor::Scalar<double>(1.0)}, {"other", Tensor::Scalar<float>(9.0f)}}));
  WriteText(dir.path() / "one.npz", MakeNpz({{"only", Tensor::Scalar<float>(1.0f)}}));

  const std::string a = (dir.path() / "a.npy").string();
  const std::string npz = (dir.path() / "in.npz").string();
  CliResult r = RunModel({"--inputs", "a=" + a + ";b=" + npz + "[b]"});
  CHECK(r.rc == 0);
  CHECK(r.err == "");
  CHECK(r.out == "Result for output key output_0:\n8.0\n");  // 3*3/3 + 5

  r = RunModel({"--inputs", "a=" + a + ";b=" + (dir.path() / "one.npz").string()});
  CHECK(r.rc == 0);
  CHECK(r.out == "Result for output key output_0:\n8.0\n");

  // --input_exprs wins over --inputs for the same key, with a warning.
  r = RunModel({"--inputs", "a=" + a + "[ignored];b=" + npz + "[b]", "--input_exprs", "a=1"});
  CHECK(r.rc == 0);
  CHECK(r.out == "Result for output key output_0:\n7.0\n");  // 2*3/3 + 5
  CHECK(r.err.find("Name key \"ignored\" ignored") != std::string::npos);
  CHECK(r.err.find("input_key a has been specified with both --inputs and --input_exprs") !=
        std::string::npos);

  r = RunModel({"--inputs", "a=" + a + ";b=" + npz});
  CHECK(r.rc != 0);
  CHECK(r.err.find("contains 2 ndarrays") != std::string::npos);
  r = RunModel({"--inputs", "a=" + a + ";b=" + npz + "[missing]"});
  CHECK(r.rc != 0);
  CHECK(r.err.find("does not contain variable with name \"missing\"") != std::string::npos);
  r = RunModel({"--inputs", "a=" + (dir.path() / "nope.npy").string() + ";b=" + npz + "[b]"});
  CHECK(r.rc != 0);
  CHECK(r.err.find("nope.npy") != std::string::npos);
}

TEST_CASE("run --outdir writes <key>.npy and refuses to overwrite without --overwrite") {
  TempDir dir;
  const fs::path out = dir.path() / "new" / "outputs";
  CliResult r = RunModel({"--input_exprs", "a=1;b=2", "--outdir", out.string()});
  CHECK(r.rc == 0);
  const fs::path file = out / "output_0.npy";
  CHECK(r.out == "Result for output key output_0:\n7.666667\nOutput output_0 is saved to " +
                     file.string() + "\n");
  auto saved = ReadNpy(file);
  REQUIRE(saved.ok());
  CHECK(saved->dtype() == DType::kFloat);
  CHECK(saved->rank() == 0);
  CHECK(saved->scalar<float>() == 7.6666669845581055f);

  r = RunModel({"--input_exprs", "a=4;b=1", "--outdir", out.string()});
  CHECK(r.rc != 0);
  CHECK(r.out == "");
  CHECK(r.err.find(file.string() + " already exists") != std::string::npos);
  CHECK(r.err.find("--overwrite") != std::string::npos);
  CHECK(ReadNpy(file)->scalar<float>() == 7.6666669845581055f);  // untouched

  r = RunModel({"--input_exprs", "a=4;b=1", "--outdir", out.string(), "--overwrite"});
  CHECK(r.rc == 0);
  CHECK(ReadNpy(file)->scalar<float>() == 10.0f);
}

TEST_CASE("run: input name errors come from the signature and exit non-zero") {
  CliResult r = RunModel({"--input_exprs", "a=1;c=2"});  // misspelt b
  CHECK(r.rc != 0);
  CHECK(r.out == "");
  CHECK(r.err.find("savedmodel-cli: error: ") == 0);
  CHECK(r.err.find("'c'") != std::string::npos);

  r = RunModel({"--input_exprs", "a=1"});  // b missing
  CHECK(r.rc != 0);
  CHECK(r.err.find("'b'") != std::string::npos);

  r = RunModel({"--input_exprs", "a=1;b=2;extra=3"});
  CHECK(r.rc != 0);
  CHECK(r.err.find("'extra'") != std::string::npos);

  r = RunModel({"--input_exprs", "a=[1,2];b=2"});  // the signature wants scalars
  CHECK(r.rc != 0);
  CHECK(r.err.find("'a'") != std::string::npos);
}

TEST_CASE("run: bad arguments, signatures and tag-sets are errors that name them") {
  CliResult r = RunModel({"--input_exprs", "a=__import__('os').system('echo hacked');b=2"});
  CHECK(r.rc != 0);
  CHECK(r.out == "");
  CHECK(r.err.find("input 'a'") != std::string::npos);
  CHECK(r.err.find("hacked") != std::string::npos);  // quoted back, never run

  r = RunModel({"--input_exprs", "a=[1,2;b=2"});
  CHECK(r.rc != 0);
  CHECK(r.err.find("unbalanced") != std::string::npos);

  r = RunModel({"--inputs", "a:file.npy"});
  CHECK(r.rc != 0);
  CHECK(r.err.find("format is incorrect") != std::string::npos);

  r = RunCli({"run", "--dir", kModel, "--tag_set", "serve", "--signature_def", "INVALID_SIGNATURE",
              "--input_exprs", "a=1;b=2"});
  CHECK(r.rc != 0);
  CHECK(r.err.find("INVALID_SIGNATURE") != std::string::npos);
  CHECK(r.err.find("serving_default") != std::string::npos);

  r = RunCli({"run", "--dir", kModel, "--tag_set", "gpu", "--signature_def", "serving_default",
              "--input_exprs", "a=1;b=2"});
  CHECK(r.rc != 0);
  CHECK(r.err.find("gpu") != std::string::npos);

  r = RunCli({"run", "--dir", kModel, "--signature_def", "serving_default"});  // no --tag_set
  CHECK(r.rc != 0);
  CHECK(r.err.find("--tag_set") != std::string::npos);
}

TEST_CASE("--inputs parsing follows saved_model_cli") {
  auto r = ParseInputsArg(R"(inputx=C:\Program Files\data.npz[v:0];input:0=c:\PROGRA~1\data.npy)");
  REQUIRE(r.ok());
  REQUIRE(r->size() == 2);
  CHECK((*r)[0].key == "inputx");
  CHECK((*r)[0].filename == R"(C:\Program Files\data.npz)");
  CHECK((*r)[0].variable == "v:0");
  CHECK((*r)[1].key == "input:0");
  CHECK((*r)[1].filename == R"(c:\PROGRA~1\data.npy)");
  CHECK(!(*r)[1].variable.has_value());
  CHECK(!ParseInputsArg("inputx=file[[v1]v2").ok());
  CHECK(!ParseInputsArg("inputx:file").ok());
  CHECK(ParseInputsArg(";;")->empty());
}

#ifdef KILN_CLI_PATH
TEST_CASE("the savedmodel-cli binary exits non-zero on errors and prints results on success") {
  TempDir dir;
  const fs::path out = dir.path() / "out.txt";
  const fs::path err = dir.path() / "err.txt";
  auto run = [&](const std::string& args) {
    const std::string cmd = std::string("'") + KILN_CLI_PATH + "' " + args + " > '" + out.string() +
                            "' 2> '" + err.string() + "'";
    const int status = std::system(cmd.c_str());
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  };
  CHECK(run("run --dir '" + kModel +
            "' --tag_set serve --signature_def serving_default --input_exprs 'a=1;b=2'") == 0);
  CHECK(ReadText(out) == "Result for output key output_0:\n7.666667\n");
  CHECK(run("show --dir '" + kModel + "' --all") == 0);
  CHECK(ReadText(out) == ReadText(Golden("VarsAndArithmeticObjectGraph.show_all.txt")));
  CHECK(run("show --dir '" + Fixture("malformed_negative_shape").string() + "'") != 0);
  CHECK(ReadText(err).find("b/initial_value") != std::string::npos);
  CHECK(run("show") != 0);
}
#endif

}  // namespace
}  // namespace kiln::cli::testing
