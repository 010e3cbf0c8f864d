// Request decoding and response encoding of the REST (TF Serving v1, KServe V2) and gRPC
// tensor formats, checked against values built by hand, and their refusals of hostile input.
#include <doctest/doctest.h>

#include <cmath>
#include <complex>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "kiln/serve/base64.h"
#include "kiln/serve/proto_codec.h"
#include "kiln/serve/rest_predict.h"
#include "kiln/serve/tensor_rows.h"
#include "kiln/serve/v2_codec.h"
#include "kserve/grpc_predict_v2.pb.h"
#include "tensorflow/example.pb.h"
#include "tensorflow/framework.pb.h"

namespace kiln::serve {
namespace {

std::vector<exec::SignatureArg> XArgs() {
  return {{"x", "x:0", {DType::kFloat, PartialShape({-1, 2})}}};
}
std::vector<exec::SignatureArg> MultiArgs() {
  return {{"a", "a:0", {DType::kInt64, PartialShape({-1})}},
          {"s", "s:0", {DType::kString, PartialShape({-1})}}};
}

Result<RestPredictRequest> DecodeRest(std::string_view body,
                                      const std::vector<exec::SignatureArg>& args) {
  RestPredictDecoder d(RequestLimits{});
  KILN_RETURN_IF_ERROR(d.Parse(body));
  return d.Decode("serving_default", args);
}

TEST_CASE("JSON errors echo invalid UTF-8 as U+FFFD, valid UTF-8 as it is (issue 24 #6)") {
  // A model name from a URL with raw bytes: the error body must still be UTF-8 JSON.
  const std::string bad = std::string("model '") + "\xff\xfe" + "x\xc0\xaf" + "\xe2\x82" + "'";
  const std::string body = RestErrorBody(bad);
  CHECK(body == "{\"error\": \"model '\\ufffd\\ufffdx\\ufffd\\ufffd\\ufffd\\ufffd'\"}");
  const std::string good = "caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80";  // é, €, 😀
  CHECK(RestErrorBody(good) == "{\"error\": \"" + good + "\"}");
}

TEST_CASE("base64 matches RFC 4648 test vectors and refuses bad characters") {
  const std::pair<const char*, const char*> vectors[] = {{"", ""},
                                                         {"f", "Zg=="},
                                                         {"fo", "Zm8="},
                                                         {"foo", "Zm9v"},
                                                         {"foob", "Zm9vYg=="},
                                                         {"fooba", "Zm9vYmE="},
                                                         {"foobar", "Zm9vYmFy"}};
  for (const auto& [plain, coded] : vectors) {
    CHECK(Base64Encode(plain) == coded);
    auto d = Base64Decode(coded);
    REQUIRE(d.ok());
    CHECK(*d == plain);
  }
  CHECK_FALSE(Base64Decode("Zm9v!").ok());
  CHECK_FALSE(Base64Decode("Z").ok());
}

TEST_CASE("REST row format: unnamed instances stack on a new batch dimension") {
  auto r = DecodeRest(R"({"instances": [[1, 2], [3.5, -4]]})", XArgs());
  REQUIRE(r.ok());
  CHECK(r->format == RestFormat::kRow);
  const Tensor& x = r->inputs.at("x");
  CHECK(x.shape() == Shape{2, 2});
  CHECK(std::vector<float>(x.flat<float>().begin(), x.flat<float>().end()) ==
        std::vector<float>{1, 2, 3.5f, -4});
}

TEST_CASE("REST row format: named instances, int64 and b64 strings") {
  auto r = DecodeRest(
      R"({"signature_name": "sig", "instances": [{"a": 5, "s": "hi"}, {"a": -9007199254740993, "s": {"b64": "AAEC"}}]})",
      MultiArgs());
  REQUIRE(r.ok());
  CHECK(r->inputs.at("a").flat<int64_t>()[1] == -9007199254740993LL);  // exact beyond 2^53
  CHECK(r->inputs.at("s").flat<std::string>()[0] == "hi");
  CHECK(r->inputs.at("s").flat<std::string>()[1] == std::string("\0\1\2", 3));
}

TEST_CASE("REST columnar format: named and bare inputs keep their own shape") {
  auto bare = DecodeRest(R"({"inputs": [[1, 2]]})", XArgs());
  REQUIRE(bare.ok());
  CHECK(bare->format == RestFormat::kColumnar);
  CHECK(bare->inputs.at("x").shape() == Shape{1, 2});
  auto named = DecodeRest(R"({"inputs": {"a": [1, 2, 3], "s": ["x", "y", "z"]}})", MultiArgs());
  REQUIRE(named.ok());
  CHECK(named->inputs.at("a").shape() == Shape{3});
}

TEST_CASE("REST decoding refuses what TF Serving refuses, with a message") {
  const std::pair<const char*, const char*> bad[] = {
      {R"({"instances": [[1, 2], [3]]})", "instance 1"},
      {R"({"instances": [[1, 2]], "inputs": [[1, 2]]})", "exactly one"},
      {R"({"instances": []})", "non-empty"},
      {R"({"instances": [["a", "b"]]})", "expected a number"},
      {R"({"instances": [[1, 2]], "extra": 1})", "unknown key"},
      {R"({"instances": [[1, 2]])", "malformed JSON"},
      {R"([1, 2])", "JSON object"},
      {R"({"instances": [[1e300, 2]]})", "without loss of precision"},
  };
  for (const auto& c : bad) {
    const char* body = c.first;
    const char* why = c.second;
    CAPTURE(body);
    auto r = DecodeRest(body, XArgs());
    REQUIRE_FALSE(r.ok());
    CHECK(r.status().code() == StatusCode::kInvalidArgument);
    CHECK(r.status().message().find(why) != std::string::npos);
  }
  // A bare NaN is a number: not a string tensor's value (a quoted "NaN" is).
  auto nan_string = DecodeRest(R"({"instances": [{"a": 1, "s": NaN}]})", MultiArgs());
  REQUIRE_FALSE(nan_string.ok());
  CHECK(nan_string.status().message().find("got the number NaN") != std::string::npos);
  CHECK(DecodeRest(R"({"instances": [{"a": 1, "s": "NaN"}]})", MultiArgs()).ok());
  auto missing = DecodeRest(R"({"instances": [{"a": 1}]})", MultiArgs());
  REQUIRE_FALSE(missing.ok());
  CHECK(missing.status().message().find("missing input 's'") != std::string::npos);
}

TEST_CASE("REST classify/regress examples: JSON features, b64, the context under each example") {
  auto r = DecodeRestExamples(
      R"({"signature_name": "classify", "context": {"country": "Mexico", "lang": "en"},
          "examples": [{"age": 29.5, "n": [1, 2], "country": {"b64": "Q2FuYWRh"}}, {}]})",
      RequestLimits{});
  REQUIRE(r.ok());
  CHECK(r->signature_name == "classify");
  REQUIRE(r->examples.size() == 2);
  tensorflow::Example first, second;
  REQUIRE(first.ParseFromString(r->examples[0]));
  REQUIRE(second.ParseFromString(r->examples[1]));
  const auto& f = first.features().feature();
  CHECK(f.at("age").float_list().value(0) == 29.5f);
  CHECK(f.at("n").int64_list().value_size() == 2);
  // The example's own feature replaces the context's (TF Serving appends the serialized example
  // to the serialized context), it is not appended to it.
  REQUIRE(f.at("country").bytes_list().value_size() == 1);
  CHECK(f.at("country").bytes_list().value(0) == "Canada");
  CHECK(f.at("lang").bytes_list().value(0) == "en");
  CHECK(second.features().feature().at("country").bytes_list().value(0) == "Mexico");
  // As TF Serving's AddValueToFeature: [] is a feature of no kind (an empty row of any dtype),
  // true/false are int64 1/0, bare NaN/Infinity are floats while the string "NaN" stays bytes.
  auto kinds = DecodeRestExamples(
      R"({"examples": [{"e": [], "b": [true, false], "f": [NaN, -Infinity, 1.0], "s": "NaN"}]})",
      RequestLimits{});
  REQUIRE(kinds.ok());
  tensorflow::Example k;
  REQUIRE(k.ParseFromString(kinds->examples[0]));
  const auto& kf = k.features().feature();
  CHECK(kf.at("e").kind_case() == tensorflow::Feature::KIND_NOT_SET);
  REQUIRE(kf.at("b").int64_list().value_size() == 2);
  CHECK(kf.at("b").int64_list().value(0) == 1);
  REQUIRE(kf.at("f").float_list().value_size() == 3);
  CHECK(std::isnan(kf.at("f").float_list().value(0)));
  CHECK(kf.at("f").float_list().value(1) == -std::numeric_limits<float>::infinity());
  CHECK(kf.at("s").bytes_list().value(0) == "NaN");
  const std::pair<const char*, const char*> bad[] = {
      {R"({"examples": []})", "non-empty"},
      {R"({"examples": [{"x": [1, "a"]}]})", "expecting int64"},
      {R"({"examples": [{"x": [1, 2.5]}]})", "expecting int64"},
      {R"({"examples": [{"x": [2.5, 1]}]})", "expecting float"},
      {R"({"examples": [{"x": 18446744073709551615}]})", "above int64's range"},
      {R"({"examples": [{"x": 1e300}]})", "without loss of precision"},
      {R"({"examples": [{"x": [[1]]}]})", "got array"},
      {R"({"examples": [{"x": null}]})", "got null"},
      {R"({"examples": [{"x": {"b64": "!!"}}]})", "example 0 feature 'x'"},
      {R"({"examples": [1]})", "example 0 must be an object"},
      {R"({"context": [], "examples": [{}]})", "context must be an object"},
  };
  for (const auto& c : bad) {
    const char* body = c.first;
    const char* why = c.second;
    CAPTURE(body);
    auto e = DecodeRestExamples(body, RequestLimits{});
    REQUIRE_FALSE(e.ok());
    CHECK(e.status().code() == StatusCode::kInvalidArgument);
    CHECK(e.status().message().find(why) != std::string::npos);
  }
}

TEST_CASE("JSON nested 10000 deep is refused before parsing (CVE-2025-0649 class)") {
  std::string body =
      R"({"instances": )" + std::string(10000, '[') + "1" + std::string(10000, ']') + "}";
  auto r = DecodeRest(body, XArgs());
  REQUIRE_FALSE(r.ok());
  CHECK(r.status().message().find("nested deeper") != std::string::npos);
  // Brackets inside strings do not count.
  auto s = DecodeRest(R"({"inputs": {"a": [1], "s": [")" + std::string(200, '[') + R"("]}})",
                      MultiArgs());
  CHECK(s.ok());
}

TEST_CASE("REST responses: row and columnar, b64 for *_bytes, NaN as TF Serving writes it") {
  Tensor y(DType::kFloat, Shape{2, 2});
  const float vals[] = {0.1f, 2, std::numeric_limits<float>::quiet_NaN(), -1e-20f};
  std::memcpy(y.raw_data(), vals, sizeof(vals));
  auto row = EncodeRestPredictResponse({{"y", y}}, RestFormat::kRow);
  REQUIRE(row.ok());
  CHECK(*row == R"({"predictions": [[0.1,2.0], [NaN,-1e-20]]})");
  Tensor b(DType::kString, Shape{2});
  b.flat<std::string>()[0] = "ok";
  b.flat<std::string>()[1] = std::string("\xff", 1);
  auto col = EncodeRestPredictResponse({{"y", y}, {"z_bytes", b}}, RestFormat::kColumnar);
  REQUIRE(col.ok());
  CHECK(
      *col ==
      R"({"outputs": {"y": [[0.1,2.0],[NaN,-1e-20]], "z_bytes": [{"b64": "b2s="},{"b64": "/w=="}]}})");
  Tensor scalar = Tensor::Scalar<float>(1);
  CHECK_FALSE(EncodeRestPredictResponse({{"y", scalar}}, RestFormat::kRow).ok());
  // float16 and bfloat16 as numbers (they were null), complex as [real, imaginary].
  Tensor h(DType::kHalf, Shape{3});
  h.flat<Half>()[0].bits = 0x3e00;  // 1.5
  h.flat<Half>()[1].bits = 0xc200;  // -3
  h.flat<Half>()[2].bits = 0x0001;  // the smallest subnormal, 2^-24
  Tensor bf(DType::kBFloat16, Shape{2});
  bf.flat<BFloat16>()[0].bits = 0x3fc0;  // 1.5
  bf.flat<BFloat16>()[1].bits = 0xff80;  // -inf
  Tensor c(DType::kComplex64, Shape{1});
  c.flat<std::complex<float>>()[0] = {1.5f, -2};
  auto half = EncodeRestPredictResponse({{"bf", bf}, {"c", c}, {"h", h}}, RestFormat::kColumnar);
  REQUIRE(half.ok());
  CHECK(
      *half ==
      R"({"outputs": {"bf": [1.5,-Infinity], "c": [[1.5,-2.0]], "h": [1.5,-3.0,5.9604645e-08]}})");
}

TEST_CASE("REST requests: bare NaN and Infinity tokens, float16 and bfloat16 inputs") {
  // Python's json.dumps writes NaN, Infinity and -Infinity bare; TF Serving reads them.
  auto r = DecodeRest(R"({"instances": [[NaN, Infinity], [-Infinity, "NaN"]]})", XArgs());
  REQUIRE_MESSAGE(r.ok(), r.status().ToString());
  const Tensor& x = r->inputs.at("x");
  CHECK(std::isnan(x.flat<float>()[0]));
  CHECK(x.flat<float>()[1] == std::numeric_limits<float>::infinity());
  CHECK(x.flat<float>()[2] == -std::numeric_limits<float>::infinity());
  CHECK(std::isnan(x.flat<float>()[3]));
  // Inside strings the words are text.
  auto s =
      DecodeRest(R"({"instances": [{"a": 1, "s": "NaN -Infinity \" Infinity"}]})", MultiArgs());
  REQUIRE(s.ok());
  CHECK(s->inputs.at("s").flat<std::string>()[0] == "NaN -Infinity \" Infinity");
  const std::vector<exec::SignatureArg> half_args = {
      {"h", "h:0", {DType::kHalf, PartialShape({-1})}},
      {"b", "b:0", {DType::kBFloat16, PartialShape({-1})}}};
  auto h =
      DecodeRest(R"({"inputs": {"h": [1.5, -3, 65520, 1e-8], "b": [1.5, 3.0078125]}})", half_args);
  REQUIRE_MESSAGE(h.ok(), h.status().ToString());
  const auto hv = h->inputs.at("h").flat<Half>();
  CHECK(hv[0].bits == 0x3e00);
  CHECK(hv[1].bits == 0xc200);
  CHECK(hv[2].bits == 0x7c00);  // rounds to infinity
  CHECK(hv[3].bits == 0x0000);  // below half the smallest subnormal
  const auto bv = h->inputs.at("b").flat<BFloat16>();
  CHECK(bv[0].bits == 0x3fc0);
  CHECK(bv[1].bits == 0x4040);  // 3.0078125 is halfway between 3 and 3.015625: to even, 3
}

TEST_CASE("V2 REST: JSON tensors and the binary extension decode to the same tensor") {
  auto json = DecodeV2RestRequest(
      R"({"inputs": [{"name": "x", "shape": [2, 2], "datatype": "FP32", "data": [[1, 2], [3, 4]]}]})",
      -1, RequestLimits{});
  REQUIRE(json.ok());
  const float vals[] = {1, 2, 3, 4};
  std::string header =
      R"({"inputs": [{"name": "x", "shape": [2, 2], "datatype": "FP32", "parameters": {"binary_data_size": 16}}], "outputs": [{"name": "y", "parameters": {"binary_data": true}}]})";
  std::string body = header + std::string(reinterpret_cast<const char*>(vals), sizeof(vals));
  auto bin = DecodeV2RestRequest(body, static_cast<int64_t>(header.size()), RequestLimits{});
  REQUIRE(bin.ok());
  CHECK(TensorsEqual(json->inputs.at("x"), bin->inputs.at("x")));
  CHECK(bin->binary_output.at("y"));

  auto reply = EncodeV2RestResponse("m", "3", "", {{"y", bin->inputs.at("x")}}, *bin);
  REQUIRE(reply.ok());
  REQUIRE(reply->json_length > 0);
  CHECK(reply->body.substr(reply->json_length) ==
        std::string(reinterpret_cast<const char*>(vals), sizeof(vals)));
}

TEST_CASE("V2 BYTES: 4-byte length prefixes, checked against the declared shape") {
  std::string data;
  for (std::string s : {"ab", ""}) {
    uint32_t n = static_cast<uint32_t>(s.size());
    data.append(reinterpret_cast<const char*>(&n), 4);
    data += s;
  }
  auto t = TensorFromV2Bytes(data, DType::kString, Shape{2}, "s");
  REQUIRE(t.ok());
  CHECK(t->flat<std::string>()[0] == "ab");
  CHECK(TensorToV2Bytes(*t) == data);
  CHECK_FALSE(TensorFromV2Bytes(data, DType::kString, Shape{3}, "s").ok());
  CHECK_FALSE(TensorFromV2Bytes(data.substr(0, 5), DType::kString, Shape{2}, "s").ok());
  // A length that claims more than is there.
  std::string lie =
      "\xff\xff\xff\x7f"
      "abc";
  CHECK_FALSE(TensorFromV2Bytes(lie, DType::kString, Shape{1}, "s").ok());
}

TEST_CASE("V2 hostile shapes and lengths are refused before allocation") {
  const char* bad[] = {
      R"({"inputs": [{"name": "x", "shape": [4611686018427387904], "datatype": "FP32", "data": [1]}]})",
      R"({"inputs": [{"name": "x", "shape": [2147483648, 2147483648], "datatype": "INT8", "data": [1]}]})",
      R"({"inputs": [{"name": "x", "shape": [3], "datatype": "FP32", "data": [1, 2]}]})",
      R"({"inputs": [{"name": "x", "shape": [-1], "datatype": "FP32", "data": []}]})",
      R"({"inputs": [{"name": "x", "shape": [1], "datatype": "FP99", "data": [1]}]})",
      R"({"inputs": [{"name": "x", "shape": [1], "datatype": "FP32", "data": ["a"]}]})",
      R"({"inputs": [{"name": "x", "shape": [1], "datatype": "FP32", "parameters": {"binary_data_size": 4}}]})",
  };
  for (const char* body : bad) {
    CAPTURE(body);
    auto r = DecodeV2RestRequest(body, -1, RequestLimits{});
    REQUIRE_FALSE(r.ok());
    CHECK(r.status().code() == StatusCode::kInvalidArgument);
  }
}

TEST_CASE("gRPC TensorProto: fewer values repeat the last, as TF Serving's Tensor::FromProto") {
  RequestLimits limits;
  tensorflow::TensorProto p;
  p.set_dtype(tensorflow::DT_FLOAT);
  p.mutable_tensor_shape()->add_dim()->set_size(3);
  // No values: zeros; one: repeated (tf.make_tensor_proto(2.0, shape=[3])).
  auto none = TensorFromRequestProto(p, limits, "x");
  REQUIRE(none.ok());
  CHECK(none->flat<float>()[2] == 0);
  p.add_float_val(2);
  auto one = TensorFromRequestProto(p, limits, "x");
  REQUIRE_MESSAGE(one.ok(), one.status().ToString());
  CHECK(std::vector<float>(one->flat<float>().begin(), one->flat<float>().end()) ==
        std::vector<float>{2, 2, 2});
  tensorflow::TensorProto s;
  s.set_dtype(tensorflow::DT_STRING);
  s.mutable_tensor_shape()->add_dim()->set_size(2);
  s.add_string_val("a");
  auto strings = TensorFromRequestProto(s, limits, "s");
  REQUIRE(strings.ok());
  CHECK(strings->flat<std::string>()[1] == "a");
  p.add_float_val(2);
  p.add_float_val(3);
  auto full = TensorFromRequestProto(p, limits, "x");
  REQUIRE(full.ok());
  CHECK(full->flat<float>()[2] == 3);
  p.add_float_val(4);  // more values than the shape holds: refused (TF would drop them)
  auto more = TensorFromRequestProto(p, limits, "x");
  REQUIRE_FALSE(more.ok());
  CHECK(more.status().message().find("4 values for shape") != std::string::npos);
  p.mutable_tensor_shape()->mutable_dim(0)->set_size(int64_t{1} << 62);
  auto huge = TensorFromRequestProto(p, limits, "x");
  REQUIRE_FALSE(huge.ok());
  CHECK(huge.status().message().find("limit") != std::string::npos);
}

TEST_CASE("gRPC V2: typed contents and raw contents, counted before allocation") {
  inference::ModelInferRequest req;
  auto* in = req.add_inputs();
  in->set_name("x");
  in->set_datatype("INT32");
  in->add_shape(2);
  in->mutable_contents()->add_int_contents(7);
  in->mutable_contents()->add_int_contents(-8);
  auto r = DecodeV2GrpcRequest(req, RequestLimits{});
  REQUIRE(r.ok());
  CHECK(r->inputs.at("x").flat<int32_t>()[1] == -8);
  in->set_shape(0, int64_t{1} << 40);
  CHECK_FALSE(DecodeV2GrpcRequest(req, RequestLimits{}).ok());
  in->set_shape(0, 2);
  in->clear_contents();
  const int32_t raw[] = {1, 2};
  req.add_raw_input_contents(std::string(reinterpret_cast<const char*>(raw), 8));
  auto rr = DecodeV2GrpcRequest(req, RequestLimits{});
  REQUIRE(rr.ok());
  CHECK(rr->inputs.at("x").flat<int32_t>()[1] == 2);

  inference::ModelInferResponse resp;
  REQUIRE(EncodeV2GrpcResponse("m", "1", "id", {{"y", rr->inputs.at("x")}}, &resp).ok());
  CHECK(resp.outputs(0).datatype() == "INT32");
  CHECK(resp.raw_output_contents(0) == std::string(reinterpret_cast<const char*>(raw), 8));
}

TEST_CASE("ConcatRows pads with the first row, SliceRows gives rows back") {
  auto a = Tensor::FromVector<float>({1, 2}, Shape{1, 2});
  auto b = Tensor::FromVector<float>({3, 4, 5, 6}, Shape{2, 2});
  REQUIRE(a.ok());
  REQUIRE(b.ok());
  std::vector<Tensor> parts = {*a, *b};
  auto cat = ConcatRows(parts, 4);
  REQUIRE(cat.ok());
  CHECK(cat->shape() == Shape{4, 2});
  const std::vector<float> want = {1, 2, 3, 4, 5, 6, 1, 2};
  CHECK(std::vector<float>(cat->flat<float>().begin(), cat->flat<float>().end()) == want);
  CHECK(TensorsEqual(SliceRows(*cat, 1, 2), *b));
  auto c = Tensor::FromVector<float>({1, 2, 3}, Shape{1, 3});
  REQUIRE(c.ok());
  std::vector<Tensor> mismatched = {*a, *c};
  CHECK_FALSE(ConcatRows(mismatched).ok());
}

}  // namespace
}  // namespace kiln::serve
