// Module: named variables, submodules and methods; recursive listings with scoped names.
#include "kiln/trace/module.h"

#include <set>

#include "graph.h"

namespace kiln::trace {
namespace {

// A handle that reports why the declaration failed.
Variable InvalidVariable(std::string name, Status status) {
  auto state = std::make_shared<internal::VariableState>();
  state->name = std::move(name);
  state->status = std::move(status);
  return internal::VariableAccess::Make(std::move(state));
}

bool IsNameChar(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
         c == '.' || c == '-';
}

}  // namespace

Module::Module(std::string name) : name_(std::move(name)) {}
Module::~Module() = default;

void Module::RecordError(Status status) {
  if (status_.ok()) status_ = std::move(status);
}

Status Module::CheckNewName(std::string_view name) const {
  if (name.empty()) return InvalidArgument("module '", name_, "': a child name is empty");
  for (char c : name) {
    if (!IsNameChar(c)) {
      return InvalidArgument("module '", name_, "': child name '", name,
                             "' may hold only letters, digits, '_', '.' and '-'");
    }
  }
  if (name[0] == '.' || name[0] == '-' || name == "signatures") {
    return InvalidArgument("module '", name_, "': '", name, "' is not a usable child name");
  }
  for (const Child& c : children_) {
    if (c.name == name) {
      return InvalidArgument("module '", name_, "' already has a child named '", name, "'");
    }
  }
  return OkStatus();
}

Variable Module::AddVariable(std::string name, const Tensor& initial, VariableOptions options) {
  Status s = CheckNewName(name);
  if (!s.ok()) {
    RecordError(s);
    return InvalidVariable(std::move(name), s);
  }
  Variable v = Variable::Create(name, initial, options);
  if (!v.valid()) RecordError(v.status().WithContext("module '" + name_ + "'"));
  children_.push_back(Child{std::move(name), v, nullptr, nullptr});
  return v;
}

Variable Module::AddVariable(std::string name, Variable variable) {
  Status s = CheckNewName(name);
  if (s.ok() && !variable.valid()) {
    s = variable.status().WithContext("module '" + name_ + "': variable '" + name + "'");
  }
  if (!s.ok()) {
    RecordError(s);
    return InvalidVariable(std::move(name), s);
  }
  children_.push_back(Child{std::move(name), variable, nullptr, nullptr});
  return variable;
}

void Module::AdoptModule(std::string name, std::shared_ptr<Module> module) {
  Status s = CheckNewName(name);
  if (s.ok() && module->attached_) {
    s = InvalidArgument("module '", name_, "': module '", module->name_, "' already has a parent");
  }
  Module* raw = module.get();
  owned_modules_.push_back(std::move(module));  // kept alive even when rejected
  if (!s.ok()) {
    RecordError(s);
    return;
  }
  raw->name_ = name;
  raw->attached_ = true;
  children_.push_back(Child{std::move(name), Variable(), raw, nullptr});
}

Function& Module::AddMethod(std::string name, InputSignature signature, Function::Body body) {
  auto fn = std::make_unique<Function>(name, std::move(signature), std::move(body));
  Function& ref = *fn;
  owned_functions_.push_back(std::move(fn));
  Status s = CheckNewName(name);
  if (!s.ok()) {
    RecordError(s);
    return ref;
  }
  children_.push_back(Child{std::move(name), Variable(), nullptr, &ref});
  return ref;
}

Function& Module::AddMethod(std::string name, Function::Body body) {
  auto fn = std::make_unique<Function>(name, std::move(body));
  Function& ref = *fn;
  owned_functions_.push_back(std::move(fn));
  Status s = CheckNewName(name);
  if (!s.ok()) {
    RecordError(s);
    return ref;
  }
  children_.push_back(Child{std::move(name), Variable(), nullptr, &ref});
  return ref;
}

Function* Module::FindMethod(std::string_view name) const {
  for (const Child& c : children_) {
    if (c.name == name) return c.function;
  }
  return nullptr;
}

Module* Module::FindModule(std::string_view name) const {
  for (const Child& c : children_) {
    if (c.name == name) return c.module;
  }
  return nullptr;
}

void Module::Walk(const std::string& prefix, bool trainable,
                  std::vector<std::pair<std::string, Variable>>* vars,
                  std::vector<bool>* var_trainable,
                  std::vector<std::pair<std::string, Module*>>* modules) const {
  for (const Child& c : children_) {
    if (c.variable.valid()) {
      bool seen = false;
      for (const auto& [path, v] : *vars) seen = seen || v == c.variable;
      if (seen) continue;
      vars->emplace_back(prefix + c.name, c.variable);
      var_trainable->push_back(trainable && c.variable.trainable());
    } else if (c.module != nullptr) {
      modules->emplace_back(prefix + c.name, c.module);
      c.module->Walk(prefix + c.name + "/", trainable && c.module->trainable(), vars, var_trainable,
                     modules);
    }
  }
}

std::vector<std::pair<std::string, Variable>> Module::named_variables() const {
  std::vector<std::pair<std::string, Variable>> vars;
  std::vector<bool> trainable;
  std::vector<std::pair<std::string, Module*>> modules;
  Walk("", trainable_, &vars, &trainable, &modules);
  return vars;
}

std::vector<Variable> Module::variables() const {
  std::vector<Variable> out;
  for (auto& [path, v] : named_variables()) out.push_back(v);
  return out;
}

std::vector<Variable> Module::trainable_variables() const {
  std::vector<std::pair<std::string, Variable>> vars;
  std::vector<bool> trainable;
  std::vector<std::pair<std::string, Module*>> modules;
  Walk("", trainable_, &vars, &trainable, &modules);
  std::vector<Variable> out;
  for (size_t i = 0; i < vars.size(); ++i) {
    if (trainable[i]) out.push_back(vars[i].second);
  }
  return out;
}

std::vector<Variable> Module::non_trainable_variables() const {
  std::vector<std::pair<std::string, Variable>> vars;
  std::vector<bool> trainable;
  std::vector<std::pair<std::string, Module*>> modules;
  Walk("", trainable_, &vars, &trainable, &modules);
  std::vector<Variable> out;
  for (size_t i = 0; i < vars.size(); ++i) {
    if (!trainable[i]) out.push_back(vars[i].second);
  }
  return out;
}

std::vector<std::pair<std::string, Module*>> Module::named_submodules() const {
  std::vector<std::pair<std::string, Variable>> vars;
  std::vector<bool> trainable;
  std::vector<std::pair<std::string, Module*>> modules;
  Walk("", trainable_, &vars, &trainable, &modules);
  return modules;
}

std::vector<Module*> Module::submodules() const {
  std::vector<Module*> out;
  for (auto& [path, m] : named_submodules()) out.push_back(m);
  return out;
}

Status Module::status() const {
  if (!status_.ok()) return status_;
  for (const Child& c : children_) {
    if (c.module != nullptr) {
      Status s = c.module->status();
      if (!s.ok()) return s;
    }
  }
  return OkStatus();
}

}  // namespace kiln::trace
