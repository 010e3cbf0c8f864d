// LoadedModel: the part of a loaded model that SavedModel and PlanModel share (saved_model.h).
#include "kiln/exec/executor.h"
#include "kiln/exec/resources.h"
#include "kiln/exec/saved_model.h"
#include "loader/loader_common.h"

namespace kiln::exec {

LoadedModel::LoadedModel() = default;
LoadedModel::~LoadedModel() = default;
LoadedModel::LoadedModel(LoadedModel&&) noexcept = default;
LoadedModel& LoadedModel::operator=(LoadedModel&&) noexcept = default;

std::vector<std::string> LoadedModel::SignatureNames() const { return NamesOf(signatures); }

Result<const Signature*> LoadedModel::GetSignature(std::string_view name) const {
  if (auto it = unavailable_signatures.find(name); it != unavailable_signatures.end())
    return Unimplemented(it->second);
  return FindIn(signatures, name, "signature", dir);
}

std::vector<std::string> LoadedModel::FunctionNames() const { return NamesOf(functions); }

Result<const RestoredFunction*> LoadedModel::GetFunction(std::string_view name) const {
  return FindIn(functions, name, "restored function", dir);
}

void LoadedModel::Clear() {
  // Functions and signatures first: their prepared graphs refer to the resources.
  signatures.clear();
  unavailable_signatures.clear();
  functions.clear();
  variables.clear();
  library.reset();
  resources.reset();
}

}  // namespace kiln::exec
