// Modules track variables and submodules with scoped names; trainable flags.
#include "kiln/trace/module.h"

#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "trace/trace_test_util.h"

namespace kiln::trace {
namespace {

std::vector<std::string> Paths(const Module& m) {
  std::vector<std::string> out;
  for (const auto& [path, v] : m.named_variables()) out.push_back(path);
  return out;
}

std::vector<std::string> Names(const std::vector<Variable>& vars) {
  std::vector<std::string> out;
  for (const Variable& v : vars) out.push_back(v.name());
  return out;
}

TEST_CASE("a module lists its variables and submodules recursively with scoped names") {
  Module root("root");
  root.AddVariable("v", Tensor::Scalar(1.0f));
  Module& child = root.EmplaceModule<Module>("child");
  child.AddVariable("w", Tensor::Scalar(2.0f));
  Module& grand = child.EmplaceModule<Module>("grand");
  grand.AddVariable("u", Tensor::Scalar(3));
  root.AddVariable("z", Tensor::Scalar(4.0));

  CHECK(root.status().ok());
  CHECK(Paths(root) == std::vector<std::string>{"v", "child/w", "child/grand/u", "z"});
  CHECK(Paths(child) == std::vector<std::string>{"w", "grand/u"});
  CHECK(root.variables().size() == 4);
  std::vector<std::string> modules;
  for (const auto& [path, m] : root.named_submodules()) modules.push_back(path);
  CHECK(modules == std::vector<std::string>{"child", "child/grand"});
  CHECK(root.submodules() == std::vector<Module*>{&child, &grand});
  CHECK(child.name() == "child");
  CHECK(root.FindModule("child") == &child);
  CHECK(root.FindModule("v") == nullptr);
}

TEST_CASE("a module that is not trainable drops its variables from trainable_variables") {
  Module root("root");
  root.AddVariable("a", Tensor::Scalar(1.0f));
  Module& frozen = root.EmplaceModule<Module>("frozen");
  frozen.AddVariable("b", Tensor::Scalar(1.0f));
  frozen.EmplaceModule<Module>("inner").AddVariable("c", Tensor::Scalar(1.0f));
  root.AddVariable("d", Tensor::Scalar(1.0f), VariableOptions{.trainable = false});

  CHECK(Names(root.trainable_variables()) == std::vector<std::string>{"a", "b", "c"});
  frozen.set_trainable(false);
  CHECK(Names(root.trainable_variables()) == std::vector<std::string>{"a"});
  CHECK(Names(root.non_trainable_variables()) == std::vector<std::string>{"b", "c", "d"});
  CHECK(root.variables().size() == 4);  // still tracked, only not trainable
  frozen.set_trainable(true);
  CHECK(Names(root.trainable_variables()) == std::vector<std::string>{"a", "b", "c"});
}

TEST_CASE("a variable shared by two modules is listed once, under its first path") {
  Module root("root");
  Variable shared = Variable::Create("shared", Tensor::Scalar(1.0f));
  root.EmplaceModule<Module>("m1").AddVariable("s", shared);
  root.EmplaceModule<Module>("m2").AddVariable("t", shared);
  CHECK(Paths(root) == std::vector<std::string>{"m1/s"});
  CHECK(root.variables()[0] == shared);
}

TEST_CASE("declaration errors make an invalid handle and are reported by status()") {
  Module root("root");
  Variable first = root.AddVariable("v", Tensor::Scalar(1.0f));
  Variable again = root.AddVariable("v", Tensor::Scalar(2.0f));
  CHECK(first.valid());
  CHECK_FALSE(again.valid());
  CHECK(again.status().message().find("already has a child named 'v'") != std::string::npos);
  CHECK_FALSE(root.status().ok());
  CHECK(root.status().message().find("'v'") != std::string::npos);

  Module other("other");
  other.AddVariable("bad/name", Tensor::Scalar(1.0f));
  CHECK(other.status().message().find("bad/name") != std::string::npos);

  Module parent("parent");
  parent.EmplaceModule<Module>("kid").AddVariable("", Tensor::Scalar(1.0f));
  CHECK_FALSE(parent.status().ok());  // errors below a module surface at the top
}

TEST_CASE("variables hold a copy of their initial value and can be read and set on the host") {
  Tensor init = Tensor::Scalar(1.5f);
  Variable v = Variable::Create("v", init);
  init.scalar<float>() = 9.0f;  // the variable keeps its own copy
  REQUIRE(v.value().ok());
  CHECK(v.value()->scalar<float>() == 1.5f);
  CHECK(v.dtype() == DType::kFloat);
  CHECK(v.shape() == PartialShape::Scalar());
  CHECK(v.SetValue(Tensor::Scalar(2.5f)).ok());
  CHECK(v.value()->scalar<float>() == 2.5f);
  CHECK_FALSE(v.SetValue(Tensor::Scalar(1)).ok());  // dtype is fixed
  CHECK(v.DebugString() == "<Variable 'v' shape=() dtype=float32, numpy=2.5>");
}

TEST_CASE("module methods are traced functions that see the module's variables") {
  testing::DemoModule demo(1.0f);
  CHECK(demo.FindMethod("addprint") == &demo.addprint);
  testing::CapturePrints prints;
  auto r1 = demo.addprint(Tensor::Scalar(5.0f));
  REQUIRE(r1.ok());
  CHECK((*r1)[0].scalar<float>() == 6.0f);
  auto r2 = demo.addprint(Tensor::Scalar(50.0f));
  REQUIRE(r2.ok());
  CHECK((*r2)[0].scalar<float>() == 56.0f);
  CHECK(prints.text() == "6\n56\n");
  CHECK(demo.x.value()->scalar<float>() == 56.0f);
  CHECK(demo.submodules().empty());
  CHECK(Names(demo.variables()) == std::vector<std::string>{"x"});
}

}  // namespace
}  // namespace kiln::trace
