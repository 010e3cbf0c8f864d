// KServe V2 / Open Inference Protocol tensors: the REST JSON body with the binary tensor data
// extension (Inference-Header-Content-Length: the JSON header, then raw tensor bytes), and the
// gRPC ModelInferRequest/Response (typed contents or raw_*_contents). Decoding checks every
// declared shape and data length before it allocates.
#pragma once

#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "kiln/core/status.h"
#include "kiln/core/tensor.h"
#include "kiln/serve/limits.h"

namespace inference {
class ModelInferRequest;
class ModelInferResponse;
}  // namespace inference

namespace kiln::serve {

// "FP32" <-> DType::kFloat, ... (BOOL, UINT8-64, INT8-64, FP16, FP32, FP64, BF16, BYTES).
Result<DType> DTypeFromV2(std::string_view datatype);
Result<std::string> DTypeToV2(DType dtype);

struct V2InferRequest {
  std::string id;
  std::string signature_name;  // parameters.signature_name (kiln's extension), may be empty
  std::map<std::string, Tensor> inputs;
  std::vector<std::string> outputs;           // requested outputs in order; empty = all
  std::map<std::string, bool> binary_output;  // per requested output
  bool all_binary = false;                    // parameters.binary_data_output
};

// `json_length` is the Inference-Header-Content-Length header, or -1 without one (all JSON).
Result<V2InferRequest> DecodeV2RestRequest(std::string_view body, int64_t json_length,
                                           const RequestLimits& limits);

struct V2RestResponse {
  std::string body;
  int64_t json_length = -1;  // set when binary output data follows the JSON
};
// `outputs` in the order they are answered.
Result<V2RestResponse> EncodeV2RestResponse(
    std::string_view model_name, std::string_view model_version, std::string_view id,
    const std::vector<std::pair<std::string, Tensor>>& outputs, const V2InferRequest& request);

// {"error": "<message>"}, as the protocol answers failures.
std::string V2ErrorBody(std::string_view message);

Result<V2InferRequest> DecodeV2GrpcRequest(const inference::ModelInferRequest& request,
                                           const RequestLimits& limits);
// Outputs as raw_output_contents (what Triton answers and tritonclient reads).
Status EncodeV2GrpcResponse(std::string_view model_name, std::string_view model_version,
                            std::string_view id,
                            const std::vector<std::pair<std::string, Tensor>>& outputs,
                            inference::ModelInferResponse* response);

// The binary form of one tensor: raw little-endian elements, or for BYTES each element as a
// 4-byte little-endian length and its bytes.
std::string TensorToV2Bytes(const Tensor& t);
// Parses `bytes` as a tensor of `dtype` and `shape` (already checked against limits).
Result<Tensor> TensorFromV2Bytes(std::string_view bytes, DType dtype, const Shape& shape,
                                 std::string_view what);

}  // namespace kiln::serve
