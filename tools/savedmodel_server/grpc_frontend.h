// gRPC front end: TensorFlow Serving's PredictionService and KServe's GRPCInferenceService on
// one port (grpc++ synchronous server).
#pragma once

#include <cstddef>
#include <memory>
#include <string>

#include "kiln/core/status.h"
#include "kiln/serve/server_core.h"

namespace kiln::serve {

struct GrpcOptions {
  std::string address = "0.0.0.0:8500";
  int max_threads = 64;
  int max_message_bytes = 64 << 20;
  size_t memory_quota_bytes = size_t{1} << 30;  // what the transport may buffer in all
};

class GrpcFrontend {
 public:
  static Result<std::unique_ptr<GrpcFrontend>> Start(ServerCore* core, const GrpcOptions& options);
  ~GrpcFrontend();
  int port() const;
  // Refuses new calls, waits up to `grace_seconds` for the ones in flight.
  void Shutdown(int grace_seconds);

 private:
  GrpcFrontend();
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace kiln::serve
