// A model loaded from its serving plan alone: variables, signatures and restored functions come
// from the plan's model section (savedmodel-cli compile says when a bundle has one), and
// saved_model.pb is never parsed. This is how the protobuf-free runtime (the kiln::runtime
// library and kiln-run, CMake option KILN_MINIMAL_RUNTIME) loads every model; SavedModel::Load
// does the same whenever a fresh plan covers the load. docs/serving-plan.md.
#pragma once

#include <filesystem>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "kiln/core/status.h"
#include "kiln/exec/saved_model.h"

namespace kiln::exec {

class PlanModel {
 public:
  // Opens dir/assets.extra/kiln.plan, verifies it (checksum, structure, freshness against the
  // bundle's files) and prepares what `options` asks for from it. The error names the plan and
  // why it cannot serve this load: missing, corrupt, stale, compiled for other tags or options,
  // not self-contained (compile said why), or lacking a requested signature. options.plan is
  // ignored: a plan is always required here. Only the variables that the loaded signatures
  // and methods capture are restored (and their checksums verified): a serving load needs no
  // more. The others are listed in variables() without a value. Keras's model.export, for one,
  // saves every weight twice (`variables` and `_all_variables`), and the functions capture one
  // copy.
  static Result<std::unique_ptr<PlanModel>> Load(const std::filesystem::path& dir,
                                                 const LoadOptions& options = {});
  ~PlanModel();

  const std::filesystem::path& dir() const { return core_.dir; }
  std::vector<std::string> SignatureNames() const { return core_.SignatureNames(); }
  // NotFound naming the signature and listing the available ones.
  Result<const Signature*> GetSignature(std::string_view name) const {
    return core_.GetSignature(name);
  }
  std::vector<std::string> FunctionNames() const { return core_.FunctionNames(); }
  Result<const RestoredFunction*> GetFunction(std::string_view name) const {
    return core_.GetFunction(name);
  }
  std::span<const RestoredVariable> variables() const { return core_.variables; }
  // Functions prepared from the plan's graphs.
  int functions_from_plan() const { return functions_from_plan_; }

 private:
  PlanModel();
  LoadedModel core_;
  int functions_from_plan_ = 0;
};

}  // namespace kiln::exec
