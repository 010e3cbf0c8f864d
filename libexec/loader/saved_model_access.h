// What a SavedModel keeps that only its loader and the serving plan writer see. saved_model.h
// names internal::SavedModelAccess as the class's one friend: the loader (saved_model_loader.h)
// fills a model through it, and the plan writer (plan/full/plan_writer.cc) reads the facts a
// load learnt for it. Users see none of this; they read a model through its public accessors.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "kiln/core/tensor.h"
#include "kiln/exec/saved_model.h"

namespace kiln::internal {

// Where a loaded function's captured tensor came from (one of the three).
struct CaptureSource {
  int variable = -1;  // index into the model's variables()
  Tensor constant;
  std::string asset;  // file name under assets/
};

// What a load learnt for the serving plan writer; the captures are recorded with
// LoadOptions::keep_graphs only.
struct PlanFacts {
  bool self_contained = true;      // no resources but variables, constants and assets
  std::string not_self_contained;  // why not
  bool variables_frozen = false;
  std::vector<std::string> checkpoint_keys;  // per variables()
  std::map<std::string, std::vector<CaptureSource>, std::less<>> signature_captures;
  std::map<std::string, std::vector<std::vector<CaptureSource>>, std::less<>> method_captures;
};

struct SavedModelAccess {
  using LoadedModel = exec::LoadedModel;
  using PlanStatus = exec::PlanStatus;
  using SavedModel = exec::SavedModel;

  // An empty model for a loader to fill.
  static std::unique_ptr<SavedModel> New() { return std::unique_ptr<SavedModel>(new SavedModel()); }

  static LoadedModel& core(SavedModel& m) { return m.core_; }
  static PlanFacts& plan_facts(SavedModel& m) { return *m.plan_facts_; }
  static const PlanFacts& plan_facts(const SavedModel& m) { return *m.plan_facts_; }
  static PlanStatus& plan_status(SavedModel& m) { return m.plan_status_; }
  static void set_loaded_from_plan(SavedModel& m) { m.loaded_from_plan_ = true; }
  static void set_tags(SavedModel& m, std::vector<std::string> tags) { m.tags_ = std::move(tags); }
  // The parsed saved_model.pb and its meta graph the load selected (the proto owns it).
  static std::unique_ptr<tensorflow::SavedModel>& proto(SavedModel& m) { return m.proto_; }
  static const tensorflow::MetaGraphDef*& meta_graph(SavedModel& m) { return m.meta_graph_; }
  // FunctionDefs the loader made (TF1 signatures and their helpers) and the save op.
  static std::vector<std::unique_ptr<tensorflow::FunctionDef>>& synthesized(SavedModel& m) {
    return m.synthesized_;
  }
};

}  // namespace kiln::internal
