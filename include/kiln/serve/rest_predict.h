// TensorFlow Serving's REST API request and response bodies (the JSON mapping documented in
// "RESTful API": row format `instances`, columnar format `inputs`, {"b64": ...} for binary
// strings, `signature_name`), decoded to and from tensors for one signature.
#pragma once

#include <map>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "kiln/core/status.h"
#include "kiln/core/tensor.h"
#include "kiln/exec/saved_model.h"
#include "kiln/serve/limits.h"

namespace kiln::serve {

enum class RestFormat { kRow, kColumnar };

struct RestPredictRequest {
  std::string signature_name;  // empty: "serving_default"
  RestFormat format = RestFormat::kRow;
  std::map<std::string, Tensor> inputs;
};

// Parses the body of POST .../:predict: the JSON is checked for nesting before parsing, then
// every input is decoded with the dtype the signature declares, and checked against limits.
// `signature_of` resolves the body's signature_name (after parsing) to the signature.
class RestPredictDecoder {
 public:
  explicit RestPredictDecoder(RequestLimits limits) : limits_(limits) {}
  // First step: parse and find the signature name.
  Status Parse(std::string_view body);
  const std::string& signature_name() const { return signature_name_; }
  // Second step: decode the inputs for the resolved signature.
  Result<RestPredictRequest> Decode(const exec::Signature& signature) const {
    return Decode(signature.name(), signature.inputs());
  }
  Result<RestPredictRequest> Decode(std::string_view signature_name,
                                    std::span<const exec::SignatureArg> inputs) const;

 private:
  struct ParsedBody;
  RequestLimits limits_;
  std::string signature_name_;
  std::shared_ptr<const ParsedBody> parsed_;
};

// {"predictions": ...} for row format (outputs split along dimension 0, all outputs must have
// the same batch size), {"outputs": ...} for columnar. A single output is written bare, several
// as an object by key. String outputs whose key ends in "_bytes" are written {"b64": ...}.
Result<std::string> EncodeRestPredictResponse(const std::map<std::string, Tensor>& outputs,
                                              RestFormat format);

// The body of POST .../:classify and :regress: {"signature_name", "context", "examples"}. Each
// example's JSON features (ints to int64_list, any float to float_list, strings and
// {"b64": ...} to bytes_list) become a serialized tf.train.Example, appended to the serialized
// context as TF Serving feeds an ExampleListWithContext: an example's own feature replaces the
// context's of the same name.
struct RestExamplesRequest {
  std::string signature_name;  // empty: "serving_default"
  std::vector<std::string> examples;
};
Result<RestExamplesRequest> DecodeRestExamples(std::string_view body, const RequestLimits& limits);

// {"error": "<message>"}, as TF Serving answers failures.
std::string RestErrorBody(std::string_view message);

}  // namespace kiln::serve
