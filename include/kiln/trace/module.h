// Module: tf.Module's counterpart. A module owns variables, submodules and methods (traced
// Functions), each under a name; it declares them once, usually in its constructor:
//
//   class DemoModule : public kiln::trace::Module {
//    public:
//     explicit DemoModule(float init)
//         : Module("demo_module"),
//           x_(AddVariable("x", Tensor::Scalar(init))),
//           addprint(AddMethod("addprint", {{"a", DType::kFloat}}, [this](const Values& a) {
//             x_.AssignAdd(a[0]);
//             return Result<Values>(Values{x_.Read()});
//           })) {}
//     Variable x_;
//     Function& addprint;
//   };
//
// The tree of names is what a saved bundle records: a variable's path from the root
// ("dense_1/kernel") is its identity and its checkpoint key. Modules are neither copyable nor
// movable (methods capture `this`).
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "kiln/core/status.h"
#include "kiln/core/tensor.h"
#include "kiln/trace/function.h"
#include "kiln/trace/variable.h"

namespace kiln::trace {

class Module {
 public:
  // One named child, in declaration order: exactly one of the three is set.
  struct Child {
    std::string name;
    Variable variable;
    Module* module = nullptr;
    Function* function = nullptr;
  };

  explicit Module(std::string name = "module");
  virtual ~Module();
  Module(const Module&) = delete;
  Module& operator=(const Module&) = delete;

  // Its name in its parent once added there, else the name it was constructed with.
  const std::string& name() const { return name_; }
  // The class name shown in summaries ("Dense").
  virtual std::string type_name() const { return "Module"; }

  // A module that is not trainable removes its variables, and those of its submodules, from
  // trainable_variables() (Keras's layer.trainable = False).
  bool trainable() const { return trainable_; }
  void set_trainable(bool trainable) { trainable_ = trainable; }

  // Declaration. Names must be non-empty, made of [A-Za-z0-9_.-], not start with '.', and be
  // unique within the module. A failure makes the returned handle invalid and is reported by
  // status() (and by saving).
  Variable AddVariable(std::string name, const Tensor& initial, VariableOptions options = {});
  // Adds an existing variable (shared with another module, or created by Variable::Create).
  Variable AddVariable(std::string name, Variable variable);
  template <typename M>
  // NOLINTNEXTLINE(performance-unnecessary-value-param): name is moved; clang-tidy 14 misses it
  M& AddModule(std::string name, std::unique_ptr<M> module) {
    M& ref = *module;
    AdoptModule(std::move(name), std::move(module));
    return ref;
  }
  // A module others share too (a layer of a functional model, which its graph nodes keep
  // alive). A module has one parent all the same.
  template <typename M>
  // NOLINTNEXTLINE(performance-unnecessary-value-param): name is moved; clang-tidy 14 misses it
  M& AddModule(std::string name, std::shared_ptr<M> module) {
    M& ref = *module;
    AdoptModule(std::move(name), std::shared_ptr<Module>(std::move(module)));
    return ref;
  }
  template <typename M, typename... Args>
  M& EmplaceModule(std::string name, Args&&... args) {
    return AddModule(std::move(name), std::make_unique<M>(std::forward<Args>(args)...));
  }
  Function& AddMethod(std::string name, InputSignature signature, Function::Body body);
  Function& AddMethod(std::string name, Function::Body body);

  // Direct children in declaration order.
  const std::vector<Child>& children() const { return children_; }
  // A direct child by name; nullptr when there is none of that kind.
  Function* FindMethod(std::string_view name) const;
  Module* FindModule(std::string_view name) const;

  // Recursive listings in declaration order (depth first), each variable or module once.
  std::vector<Variable> variables() const;
  std::vector<Variable> trainable_variables() const;
  std::vector<Variable> non_trainable_variables() const;
  // Scoped names relative to this module: "dense_1/kernel".
  std::vector<std::pair<std::string, Variable>> named_variables() const;
  // Every module below this one (not itself).
  std::vector<Module*> submodules() const;
  std::vector<std::pair<std::string, Module*>> named_submodules() const;

  // OK, or the first declaration error in this module or below it.
  Status status() const;

 protected:
  // Lets a container (Sequential) give an added module a name before adding it.
  static void SetName(Module& module, std::string name) { module.name_ = std::move(name); }
  // Keeps the first declaration error (status() reports it).
  void RecordError(Status status);

 private:
  void AdoptModule(std::string name, std::shared_ptr<Module> module);
  Status CheckNewName(std::string_view name) const;
  void Walk(const std::string& prefix, bool trainable,
            std::vector<std::pair<std::string, Variable>>* vars, std::vector<bool>* var_trainable,
            std::vector<std::pair<std::string, Module*>>* modules) const;

  std::string name_;
  bool trainable_ = true;
  bool attached_ = false;
  std::vector<Child> children_;
  std::vector<std::shared_ptr<Module>> owned_modules_;
  std::vector<std::unique_ptr<Function>> owned_functions_;
  Status status_;
};

}  // namespace kiln::trace
