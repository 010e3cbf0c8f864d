// Control flow while tracing, host loops that unroll, nested traced functions, tensor arrays,
// non-strict graph execution, and their export: the functional If / While ops, branch
// and body functions in the library, captures, the errors a body can make, and the same
// results from the graph, from eager execution and from a loaded bundle.
#include <doctest/doctest.h>

#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include "kiln/exec/saved_model.h"
#include "kiln/trace/trace.h"
#include "tensorflow/framework.pb.h"
#include "tensorflow/saved_model.pb.h"
#include "trace/trace_test_util.h"

namespace kiln::trace {
namespace {

Status StatusOf(const Status& s) { return s; }
template <typename T>
Status StatusOf(const Result<T>& r) {
  return r.status();
}
// REQUIRE(ok) that shows the error when it fails.
#define REQUIRE_OK(expr)                   \
  do {                                     \
    const Status status_ = StatusOf(expr); \
    INFO(status_.ToString());              \
    REQUIRE(status_.ok());                 \
  } while (false)

// tf.print('text'): the text is the format, as tf.print puts Python strings in the template.
Status PrintText(std::string_view text) {
  return OpBuilder("PrintV2").Input(StringFormat({}, text)).BuildNoOutput();
}

// Nodes of `f` whose op is `op`.
std::vector<const tensorflow::NodeDef*> NodesWithOp(const tensorflow::FunctionDef& f,
                                                    const std::string& op) {
  std::vector<const tensorflow::NodeDef*> out;
  for (const auto& n : f.node_def()) {
    if (n.op() == op) out.push_back(&n);
  }
  return out;
}

const tensorflow::FunctionDef* FindFunction(const tensorflow::FunctionDefLibrary& lib,
                                            const std::string& name) {
  for (const auto& f : lib.function()) {
    if (f.signature().name() == name) return &f;
  }
  return nullptr;
}

bool HasFunctionStartingWith(const tensorflow::FunctionDefLibrary& lib, const std::string& p) {
  for (const auto& f : lib.function()) {
    if (f.signature().name().rfind(p, 0) == 0) return true;
  }
  return false;
}

int32_t IntOf(const Result<std::vector<Tensor>>& r, size_t i = 0) {
  REQUIRE_OK(r);
  return (*r)[i].scalar<int32_t>();
}

// The seed notes' simple_relu: `if x > 0: return x else: return 0`.
Result<Values> SimpleRelu(const Values& a, int* traces) {
  return Cond(
      a[0] > 0,
      [&]() -> Result<Values> {
        ++*traces;
        return Values{a[0]};
      },
      [&]() -> Result<Values> {
        ++*traces;
        return Values{Scalar<int32_t>(0)};
      });
}

TEST_CASE("Cond becomes one StatelessIf with both branches in the library, traced once") {
  int traces = 0;
  Function relu("simple_relu", {{"x", DType::kInt32}},
                [&](const Values& a) { return SimpleRelu(a, &traces); });
  CHECK(IntOf(relu(Tensor::Scalar<int32_t>(1))) == 1);
  CHECK(IntOf(relu(Tensor::Scalar<int32_t>(-1))) == 0);
  CHECK(IntOf(relu(Tensor::Scalar<int32_t>(7))) == 7);
  CHECK(traces == 2);  // each branch's C++ ran once, during the one trace
  CHECK(relu.trace_count() == 1);

  const ConcreteFunction* cf = *relu.GetConcreteFunction();
  auto ifs = NodesWithOp(cf->function_def(), "StatelessIf");
  REQUIRE(ifs.size() == 1);
  CHECK(NodesWithOp(cf->function_def(), "If").empty());
  const auto& attrs = ifs[0]->attr();
  CHECK(attrs.at("Tcond").type() == tensorflow::DT_BOOL);
  REQUIRE(attrs.at("Tin").list().type_size() == 1);  // x is captured by the true branch
  CHECK(attrs.at("Tin").list().type(0) == tensorflow::DT_INT32);
  CHECK(attrs.at("Tout").list().type_size() == 1);
  CHECK(attrs.at("output_shapes").list().shape_size() == 1);
  const std::string then_name = attrs.at("then_branch").func().name();
  const std::string else_name = attrs.at("else_branch").func().name();
  CHECK(then_name.rfind("cond_true_", 0) == 0);
  CHECK(else_name.rfind("cond_false_", 0) == 0);
  const auto* then_f = FindFunction(cf->library(), then_name);
  const auto* else_f = FindFunction(cf->library(), else_name);
  REQUIRE(then_f != nullptr);
  REQUIRE(else_f != nullptr);
  // Both branches take the same inputs, used or not.
  CHECK(then_f->signature().input_arg_size() == 1);
  CHECK(else_f->signature().input_arg_size() == 1);
  CHECK(ifs[0]->input_size() == 2);  // pred, x
}

TEST_CASE("a branch with a side effect makes a stateful If that runs only when taken") {
  testing::CapturePrints prints;
  Variable counter = Variable::Create("counter", Tensor::Scalar<int32_t>(0));
  Function f("count_positive", {{"x", DType::kInt32}}, [&](const Values& a) -> Result<Values> {
    KILN_ASSIGN_OR_RETURN(Values out,
                          Cond(
                              a[0] > 0,
                              [&]() -> Result<Values> {
                                KILN_RETURN_IF_ERROR(PrintText("pos"));
                                return Values{counter.AssignAdd(Scalar<int32_t>(1))};
                              },
                              [&]() -> Result<Values> { return Values{counter.Read()}; }));
    return out;
  });
  CHECK(IntOf(f(Tensor::Scalar<int32_t>(3))) == 1);
  CHECK(IntOf(f(Tensor::Scalar<int32_t>(-3))) == 1);
  CHECK(IntOf(f(Tensor::Scalar<int32_t>(5))) == 2);
  CHECK(counter.value()->scalar<int32_t>() == 2);
  CHECK(prints.text() == "pos\npos\n");
  const ConcreteFunction* cf = f.concrete_functions()[0];
  CHECK(NodesWithOp(cf->function_def(), "If").size() == 1);
  CHECK(cf->is_stateful());
  CHECK(cf->captured_variables().size() == 1);
}

// The seed notes' fizzbuzz: a tensor for loop with an if/elif chain of tf.print branches.
struct FizzBuzz {
  std::ostringstream trace_log;
  Function fn{"fizzbuzz", {{"n", DType::kInt32}}, [this](const Values& a) -> Result<Values> {
                auto say = [this](const char* what, const char* word) -> BranchFn {
                  return [this, what, word]() -> Result<Values> {
                    trace_log << "Tracing " << what << " branch\n";
                    KILN_RETURN_IF_ERROR(PrintText(word));
                    return Values{};
                  };
                };
                KILN_ASSIGN_OR_RETURN(
                    Values unused,
                    ForRange(Scalar<int32_t>(1), a[0] + 1, Scalar<int32_t>(1),
                             [&](const Value& i, const Values&) -> Result<Values> {
                               trace_log << "Tracing for loop\n";
                               BranchFn default_branch = [&]() -> Result<Values> {
                                 trace_log << "Tracing default branch\n";
                                 KILN_RETURN_IF_ERROR(Print({i}));
                                 return Values{};
                               };
                               BranchFn buzz = [&]() {
                                 return Cond(Equal(i % 5, 0), say("buzz", "buzz"), default_branch);
                               };
                               BranchFn fizz = [&]() {
                                 return Cond(Equal(i % 3, 0), say("fizz", "fizz"), buzz);
                               };
                               KILN_ASSIGN_OR_RETURN(
                                   Values none,
                                   Cond(Equal(i % 15, 0), say("fizzbuzz", "fizzbuzz"), fizz));
                               return Values{};
                             }));
                return Values{};
              }};
};

TEST_CASE("fizzbuzz: each branch's C++ runs once per trace, the graph prints every call") {
  testing::CapturePrints prints;
  FizzBuzz fb;
  REQUIRE_OK(fb.fn(Tensor::Scalar<int32_t>(5)));
  CHECK(fb.trace_log.str() ==
        "Tracing for loop\nTracing fizzbuzz branch\nTracing fizz branch\nTracing buzz branch\n"
        "Tracing default branch\n");
  CHECK(prints.text() == "1\n2\nfizz\n4\nbuzz\n");
  const std::string first_log = fb.trace_log.str();
  REQUIRE_OK(fb.fn(Tensor::Scalar<int32_t>(15)));
  CHECK(fb.fn.trace_count() == 1);
  CHECK(fb.trace_log.str() == first_log);  // nothing more was traced
  CHECK(prints.text() ==
        "1\n2\nfizz\n4\nbuzz\n1\n2\nfizz\n4\nbuzz\nfizz\n7\n8\nfizz\nbuzz\n11\nfizz\n13\n14\n"
        "fizzbuzz\n");
  // One While (stateful: it prints) whose body holds the If chain.
  const ConcreteFunction* cf = fb.fn.concrete_functions()[0];
  CHECK(NodesWithOp(cf->function_def(), "While").size() == 1);
  CHECK(HasFunctionStartingWith(cf->library(), "while_body_"));
  CHECK(HasFunctionStartingWith(cf->library(), "while_cond_"));
  CHECK(HasFunctionStartingWith(cf->library(), "cond_true_"));
}

TEST_CASE("fizzbuzz runs eagerly with the same prints when not traced") {
  testing::CapturePrints prints;
  SetRunFunctionsEagerly(true);
  FizzBuzz fb;
  auto r = fb.fn(Tensor::Scalar<int32_t>(5));
  SetRunFunctionsEagerly(false);
  REQUIRE_OK(r);
  CHECK(prints.text() == "1\n2\nfizz\n4\nbuzz\n");
  // Eagerly, only the branches taken run their C++.
  CHECK(fb.trace_log.str().find("Tracing fizzbuzz branch") == std::string::npos);
  CHECK(fb.fn.trace_count() == 0);
}

// The seed notes' loop: `while tf.reduce_sum(x) > 1: x = tf.tanh(x)`.
Result<Values> TanhUntilSmall(const Values& a) {
  return WhileLoop([](const Values& v) { return Sum(v[0]) > 1.0; },
                   [](const Values& v) -> Result<Values> { return Values{Tanh(v[0])}; }, {a[0]});
}

TEST_CASE("WhileLoop becomes a StatelessWhile with TF's attrs and matches eager") {
  Function f("tanh_loop", {{"x", DType::kFloat, PartialShape({5})}}, TanhUntilSmall);
  Tensor x(DType::kFloat, Shape{5});
  const float init[] = {0.207458f, 0.250728f, 0.0565127f, 0.900473f, 0.927943f};
  for (int i = 0; i < 5; ++i) x.flat<float>()[i] = init[i];
  auto graph = f(x);
  REQUIRE_OK(graph);
  auto eager = TanhUntilSmall({Value(x)});
  REQUIRE_OK(eager);
  Tensor e = *(*eager)[0].tensor();
  float sum = 0;
  for (int i = 0; i < 5; ++i) {
    CHECK((*graph)[0].flat<float>()[i] == doctest::Approx(e.flat<float>()[i]));
    sum += (*graph)[0].flat<float>()[i];
  }
  CHECK(sum <= 1.0f);
  CHECK((*graph)[0].flat<float>()[0] == doctest::Approx(0.17165123f).epsilon(1e-4));

  const ConcreteFunction* cf = *f.GetConcreteFunction();
  auto whiles = NodesWithOp(cf->function_def(), "StatelessWhile");
  REQUIRE(whiles.size() == 1);
  const auto& attrs = whiles[0]->attr();
  CHECK(attrs.at("T").list().type_size() == 1);
  CHECK(attrs.at("parallel_iterations").i() == 10);
  CHECK(attrs.at("output_shapes").list().shape(0).dim_size() == 1);
  CHECK(FindFunction(cf->library(), attrs.at("cond").func().name()) != nullptr);
  CHECK(FindFunction(cf->library(), attrs.at("body").func().name()) != nullptr);
}

TEST_CASE("ForRange sums over tf.range with host and tensor bounds and either sign of delta") {
  Function f(
      "range_sum", {{"start", DType::kInt32}, {"limit", DType::kInt32}, {"delta", DType::kInt32}},
      [](const Values& a) -> Result<Values> {
        return ForRange(
            a[0], a[1], a[2],
            [](const Value& i, const Values& v) -> Result<Values> { return Values{v[0] + i}; },
            {Scalar<int32_t>(0)});
      });
  auto run = [&](int s, int l, int d) {
    return IntOf(
        f(Tensor::Scalar<int32_t>(s), Tensor::Scalar<int32_t>(l), Tensor::Scalar<int32_t>(d)));
  };
  CHECK(run(0, 5, 1) == 10);
  CHECK(run(1, 10, 3) == 1 + 4 + 7);
  CHECK(run(10, 0, -4) == 10 + 6 + 2);
  CHECK(run(5, 0, 1) == 0);
  CHECK(f.trace_count() == 1);

  // A host delta: the condition is a plain Less.
  Function g("count_down", {{"n", DType::kInt32}}, [](const Values& a) -> Result<Values> {
    return ForRange(
        a[0], Scalar<int32_t>(0), Scalar<int32_t>(-1),
        [](const Value& i, const Values& v) -> Result<Values> { return Values{v[0] * i}; },
        {Scalar<int32_t>(1)});
  });
  CHECK(IntOf(g(Tensor::Scalar<int32_t>(5))) == 120);
}

TEST_CASE("outer values used in a loop body are captured and passed through the While") {
  Function f("scaled_sum", {{"n", DType::kInt32}, {"scale", DType::kFloat}},
             [](const Values& a) -> Result<Values> {
               const Value scale = a[1];
               const Value offset = a[1] * 2.0;  // a node of the outer graph
               return ForRange(
                   Scalar<int32_t>(0), a[0], Scalar<int32_t>(1),
                   [&](const Value& i, const Values& v) -> Result<Values> {
                     // A Cond inside the body uses `offset` from two levels up.
                     KILN_ASSIGN_OR_RETURN(
                         Values extra,
                         Cond(
                             Equal(i % 2, 0), [&]() -> Result<Values> { return Values{offset}; },
                             [&]() -> Result<Values> { return Values{Scalar(0.0f)}; }));
                     return Values{v[0] + Cast(i, DType::kFloat) * scale + extra[0]};
                   },
                   {Scalar(0.0f)});
             });
  auto r = f(Tensor::Scalar<int32_t>(4), Tensor::Scalar(0.5f));
  REQUIRE_OK(r);
  // sum(i * 0.5 for i < 4) + offset(1.0) for i = 0, 2
  CHECK((*r)[0].scalar<float>() == doctest::Approx(3.0f + 2.0f));
  const ConcreteFunction* cf = f.concrete_functions()[0];
  auto whiles = NodesWithOp(cf->function_def(), "StatelessWhile");
  REQUIRE(whiles.size() == 1);
  // Loop vars (i, acc) plus captures: limit n, scale, offset.
  CHECK(whiles[0]->input_size() == 5);
  const auto* body = FindFunction(cf->library(), whiles[0]->attr().at("body").func().name());
  REQUIRE(body != nullptr);
  CHECK(body->signature().input_arg_size() == 5);
  CHECK(body->signature().output_arg_size() == 5);
}

TEST_CASE("a symbolic value used as a C++ bool fails the trace naming Cond and WhileLoop") {
  Function f("bad_if", {{"x", DType::kInt32}}, [](const Values& a) -> Result<Values> {
    if (a[0] > 0) return Values{a[0]};
    return Values{Scalar<int32_t>(0)};
  });
  auto r = f(Tensor::Scalar<int32_t>(1));
  REQUIRE_FALSE(r.ok());
  const std::string& msg = r.status().message();
  CHECK(msg.find("used as a C++ bool") != std::string::npos);
  CHECK(msg.find("kiln::trace::Cond") != std::string::npos);
  CHECK(msg.find("WhileLoop") != std::string::npos);
  CHECK(msg.find("bad_if") != std::string::npos);

  // Eagerly the same body takes the real value.
  SetRunFunctionsEagerly(true);
  auto pos = f(Tensor::Scalar<int32_t>(3));
  auto neg = f(Tensor::Scalar<int32_t>(-3));
  SetRunFunctionsEagerly(false);
  CHECK(IntOf(pos) == 3);
  CHECK(IntOf(neg) == 0);
  CHECK(static_cast<bool>(Value(Tensor::Scalar(true))));
  CHECK_FALSE(static_cast<bool>(Value(Tensor::Scalar<int32_t>(0))));
}

TEST_CASE("a while body that changes a loop variable's dtype is an error naming it") {
  Function f("bad_dtype", {{"x", DType::kInt32}}, [](const Values& a) -> Result<Values> {
    WhileOptions opts;
    opts.names = {"x"};
    return WhileLoop(
        [](const Values& v) { return v[0] < 10; },
        [](const Values& v) -> Result<Values> { return Values{Cast(v[0], DType::kFloat)}; }, {a[0]},
        opts);
  });
  auto r = f(Tensor::Scalar<int32_t>(1));
  REQUIRE_FALSE(r.ok());
  const std::string& msg = r.status().message();
  CHECK(msg.find("changes the dtype of loop variable 'x'") != std::string::npos);
  CHECK(msg.find("TensorSpec(shape=(), dtype=int32)") != std::string::npos);
  CHECK(msg.find("TensorSpec(shape=(), dtype=float32)") != std::string::npos);
}

// v = range(0, k) growing each iteration: its shape changes.
Result<Values> GrowingRange(const Values& a, std::vector<PartialShape> invariants) {
  WhileOptions opts;
  opts.names = {"k", "v"};
  opts.shape_invariants = std::move(invariants);
  return WhileLoop([&](const Values& v) { return v[0] < a[0]; },
                   [](const Values& v) -> Result<Values> {
                     Value k = v[0] + 1;
                     return Values{k, Range(Scalar<int32_t>(0), k, Scalar<int32_t>(1))};
                   },
                   {Scalar<int32_t>(1), Constant(Tensor::Scalar<int32_t>(0))}, opts);
}

TEST_CASE("a while body that changes a shape needs a shape invariant") {
  Function bad("bad_shape", {{"n", DType::kInt32}},
               [](const Values& a) { return GrowingRange(a, {}); });
  auto r = bad(Tensor::Scalar<int32_t>(4));
  REQUIRE_FALSE(r.ok());
  const std::string& msg = r.status().message();
  CHECK(msg.find("changes the shape of loop variable 'v'") != std::string::npos);
  CHECK(msg.find("TensorSpec(shape=(), dtype=int32)") != std::string::npos);
  CHECK(msg.find("TensorSpec(shape=(None,), dtype=int32)") != std::string::npos);
  CHECK(msg.find("shape_invariants") != std::string::npos);

  Function good("good_shape", {{"n", DType::kInt32}}, [](const Values& a) {
    return GrowingRange(a, {PartialShape::Scalar(), PartialShape::UnknownRank()});
  });
  auto ok = good(Tensor::Scalar<int32_t>(4));
  REQUIRE_OK(ok);
  REQUIRE((*ok)[1].shape() == Shape{4});
  CHECK((*ok)[1].flat<int32_t>()[3] == 3);
}

// The seed notes' measure_graph_size: `loss += tf.abs(y - x)` over a host list unrolls.
int TrainGraphSize(const std::vector<std::pair<int, int>>& data) {
  Function train("train", InputSignature{}, [&](const Values&) -> Result<Values> {
    Value loss = Scalar<int32_t>(0);
    for (const auto& [x, y] : data) loss = loss + Abs(Scalar<int32_t>(y - x));
    return Values{loss};
  });
  return (*train.GetConcreteFunction())->num_nodes();
}

// The same over a tensor of pairs: one While whatever the length.
int TensorTrainGraphSize(int64_t n) {
  Function train("train", {{"dataset", DType::kInt32, PartialShape({-1, 2})}},
                 [](const Values& a) -> Result<Values> {
                   Value n = Gather(ShapeOf(a[0]), Scalar<int32_t>(0));
                   KILN_ASSIGN_OR_RETURN(
                       Values out, ForRange(Scalar<int32_t>(0), n, Scalar<int32_t>(1),
                                            [&](const Value& i, const Values& v) -> Result<Values> {
                                              Value row = Gather(a[0], i);
                                              Value d = Gather(row, Scalar<int32_t>(1)) -
                                                        Gather(row, Scalar<int32_t>(0));
                                              return Values{v[0] + Abs(d)};
                                            },
                                            {Scalar<int32_t>(0)}));
                   return out;
                 });
  Tensor data(DType::kInt32, Shape{n, 2});
  for (int64_t i = 0; i < 2 * n; ++i) data.flat<int32_t>()[i] = static_cast<int32_t>(i % 3);
  auto r = train(data);
  REQUIRE_OK(r);
  return (*train.GetConcreteFunction())->num_nodes();
}

TEST_CASE("a host loop unrolls (11 vs 32 nodes), a tensor loop keeps its size") {
  CHECK(TrainGraphSize(std::vector<std::pair<int, int>>(3, {1, 1})) == 11);
  CHECK(TrainGraphSize(std::vector<std::pair<int, int>>(10, {1, 1})) == 32);
  const int small = TensorTrainGraphSize(3);
  CHECK(small == TensorTrainGraphSize(10));
  CHECK(small < 11);
}

TEST_CASE("TensorArray: write returns the new array, read, stack, size, unstack") {
  auto body = [](const Values&) -> Result<Values> {
    TensorArray arr(DType::kFloat, 3);
    arr = arr.Write(0, Scalar(0.0f));
    arr = arr.Write(1, Scalar(1.0f));
    TensorArray unwritten = arr.Write(2, Scalar(2.0f));  // `arr` itself is unchanged
    arr = unwritten;
    TensorArray rows = TensorArray::Unstack(arr.Stack() * 10.0);
    return Values{arr.Read(0), arr.Read(1),  arr.Read(2), arr.Stack(),
                  arr.Size(),  rows.Read(2), rows.Size()};
  };
  Function f("array_write_and_read", InputSignature{}, body);
  auto graph = f();
  REQUIRE_OK(graph);
  auto eager = body({});
  REQUIRE_OK(eager);
  for (auto* out : {&*graph}) {
    CHECK((*out)[0].scalar<float>() == 0.0f);
    CHECK((*out)[1].scalar<float>() == 1.0f);
    CHECK((*out)[2].scalar<float>() == 2.0f);
    REQUIRE((*out)[3].shape() == Shape{3});
    CHECK((*out)[3].flat<float>()[2] == 2.0f);
    CHECK((*out)[4].scalar<int32_t>() == 3);
    CHECK((*out)[5].scalar<float>() == 20.0f);
    CHECK((*out)[6].scalar<int32_t>() == 3);
  }
  CHECK((*(*eager)[5].tensor()).scalar<float>() == 20.0f);
  CHECK((*(*eager)[3].tensor()).flat<float>()[1] == 1.0f);

  const auto& fdef = f.concrete_functions()[0]->function_def();
  auto reserve = NodesWithOp(fdef, "TensorListReserve");
  REQUIRE(reserve.size() == 1);
  CHECK(reserve[0]->attr().at("element_dtype").type() == tensorflow::DT_FLOAT);
  CHECK(reserve[0]->attr().at("shape_type").type() == tensorflow::DT_INT32);
  CHECK(NodesWithOp(fdef, "TensorListSetItem").size() == 3);
  CHECK(NodesWithOp(fdef, "TensorListGetItem").size() == 4);
  CHECK(NodesWithOp(fdef, "TensorListStack").size() == 2);
  CHECK(NodesWithOp(fdef, "TensorListFromTensor").size() == 1);
  CHECK(NodesWithOp(fdef, "TensorListLength").size() == 2);
}

// The seed notes' dynamic_rnn with rnn_step(inp, state) = inp + state.
Result<Values> DynamicRnn(const Values& a) {
  Value input = Transpose(a[0], {1, 0, 2});  // [batch, time, f] -> [time, batch, f]
  const int32_t max_seq_len = static_cast<int32_t>(input.shape().dim(0));
  TensorArray states(DType::kFloat, max_seq_len);
  KILN_ASSIGN_OR_RETURN(
      Values out, ForRange(Scalar<int32_t>(0), Scalar<int32_t>(max_seq_len), Scalar<int32_t>(1),
                           [&](const Value& i, const Values& v) -> Result<Values> {
                             Value state = Gather(input, i) + v[0];
                             return Values{state, states.WithHandle(v[1]).Write(i, state)};
                           },
                           {a[1], states}));
  return Values{Transpose(states.WithHandle(out[1]).Stack(), {1, 0, 2})};
}

Tensor RnnInput() {
  Tensor x(DType::kFloat, Shape{2, 3, 4});
  for (int i = 0; i < 24; ++i) x.flat<float>()[i] = 0.25f * static_cast<float>(i % 7);
  return x;
}

void CheckRnnOutput(const Tensor& out, const Tensor& x) {
  REQUIRE(out.shape() == Shape{2, 3, 4});
  for (int b = 0; b < 2; ++b) {
    for (int f = 0; f < 4; ++f) {
      float acc = 0;
      for (int t = 0; t < 3; ++t) {
        acc += x.flat<float>()[(b * 3 + t) * 4 + f];
        CHECK(out.flat<float>()[(b * 3 + t) * 4 + f] == doctest::Approx(acc));
      }
    }
  }
}

TEST_CASE("dynamic_rnn: a TensorArray as a loop variable") {
  Function rnn("dynamic_rnn",
               {{"input_data", DType::kFloat, PartialShape({2, 3, 4})},
                {"initial_state", DType::kFloat, PartialShape({2, 4})}},
               DynamicRnn);
  const Tensor x = RnnInput();
  Tensor zeros(DType::kFloat, Shape{2, 4});
  for (int i = 0; i < 8; ++i) zeros.flat<float>()[i] = 0;
  auto graph = rnn(x, zeros);
  REQUIRE_OK(graph);
  CheckRnnOutput((*graph)[0], x);
  auto eager = DynamicRnn({Value(x), Value(zeros)});
  REQUIRE_OK(eager);
  CheckRnnOutput(*(*eager)[0].tensor(), x);
  const auto& fdef = rnn.concrete_functions()[0]->function_def();
  auto whiles = NodesWithOp(fdef, "StatelessWhile");
  REQUIRE(whiles.size() == 1);
  bool has_variant = false;
  for (int t : whiles[0]->attr().at("T").list().type()) has_variant |= t == tensorflow::DT_VARIANT;
  CHECK(has_variant);
}

TEST_CASE("a traced function calling another: the callee is a library function, traced once") {
  int inner_traces = 0;
  Variable total = Variable::Create("total", Tensor::Scalar(0.0f));
  Function inner("inner", [&](const Values& a) -> Result<Values> {
    ++inner_traces;
    return Values{MatMul(a[0], a[1]) + a[2]};
  });
  Function accumulate("accumulate", [&](const Values& a) -> Result<Values> {
    return Values{total.AssignAdd(a[0])};
  });
  Function outer("outer_function", {{"x", DType::kFloat, PartialShape({1, 2})}},
                 [&](const Values& a) -> Result<Values> {
                   Tensor y(DType::kFloat, Shape{2, 1});
                   y.flat<float>()[0] = 2.0f;
                   y.flat<float>()[1] = 3.0f;
                   KILN_ASSIGN_OR_RETURN(Values r1, CallFunction(inner, {a[0], y, Scalar(4.0f)}));
                   KILN_ASSIGN_OR_RETURN(Values r2, CallFunction(inner, {a[0], y, Scalar(1.0f)}));
                   KILN_ASSIGN_OR_RETURN(Values t,
                                         CallFunction(accumulate, {Sum(r1[0]) + Sum(r2[0])}));
                   return Values{r1[0], t[0]};
                 });
  Tensor x(DType::kFloat, Shape{1, 2});
  x.flat<float>()[0] = 1.0f;
  x.flat<float>()[1] = 2.0f;
  auto r = outer(x);
  REQUIRE_OK(r);
  CHECK((*r)[0].flat<float>()[0] == 12.0f);  // the seed notes' outer_function: [[12.]]
  CHECK((*r)[1].scalar<float>() == 21.0f);
  REQUIRE_OK(outer(x));
  CHECK(total.value()->scalar<float>() == 42.0f);
  CHECK(inner_traces == 1);
  CHECK(inner.trace_count() == 1);
  CHECK(accumulate.trace_count() == 1);

  const ConcreteFunction* cf = outer.concrete_functions()[0];
  auto calls = NodesWithOp(cf->function_def(), "PartitionedCall");
  REQUIRE(calls.size() == 2);
  auto stateful = NodesWithOp(cf->function_def(), "StatefulPartitionedCall");
  REQUIRE(stateful.size() == 1);
  CHECK(stateful[0]->input_size() >= 2);  // the argument and the captured variable
  CHECK(cf->captured_variables().size() == 1);
  for (const auto* c : calls) {
    const std::string callee = c->attr().at("f").func().name();
    CHECK(callee.rfind("__inference_inner_0", 0) == 0);
    CHECK(FindFunction(cf->library(), callee) != nullptr);
  }
}

TEST_CASE("an unused failing op does not run in a graph, but fails eagerly") {
  auto body = [](const Values& a) -> Result<Values> {
    Value unused = Gather(a[0], a[1]);  // out of range for the index below
    (void)unused;
    return Values{a[0] * 2.0};
  };
  Function f("unused_return", {{"x", DType::kFloat, PartialShape({3})}, {"i", DType::kInt32}},
             body);
  Tensor x(DType::kFloat, Shape{3});
  for (int i = 0; i < 3; ++i) x.flat<float>()[i] = static_cast<float>(i);
  auto graph = f(x, Tensor::Scalar<int32_t>(10));
  REQUIRE_OK(graph);
  CHECK((*graph)[0].flat<float>()[2] == 4.0f);
  CHECK(NodesWithOp(f.concrete_functions()[0]->function_def(), "GatherV2").size() == 1);
  Value eager_gather = Gather(Value(x), Value(Tensor::Scalar<int32_t>(10)));
  CHECK_FALSE(eager_gather.ok());
  SetRunFunctionsEagerly(true);
  auto eager = f(x, Tensor::Scalar<int32_t>(10));
  SetRunFunctionsEagerly(false);
  CHECK_FALSE(eager.ok());
}

// A module whose methods use everything above, saved and loaded.
class ControlFlowModule : public Module {
 public:
  ControlFlowModule()
      : Module("control_flow"),
        count(AddVariable("count", Tensor::Scalar<int32_t>(0))),
        relu(AddMethod("simple_relu", {{"x", DType::kInt32}},
                       [this](const Values& a) { return SimpleRelu(a, &traces); })),
        range_sum(AddMethod(
            "range_sum", {{"n", DType::kInt32}},
            [this](const Values& a) -> Result<Values> {
              return ForRange(Scalar<int32_t>(0), a[0], Scalar<int32_t>(1),
                              [this](const Value& i, const Values& v) -> Result<Values> {
                                KILN_ASSIGN_OR_RETURN(
                                    Values odd,
                                    Cond(
                                        Equal(i % 2, 1),
                                        [&]() -> Result<Values> {
                                          return Values{count.AssignAdd(Scalar<int32_t>(1))};
                                        },
                                        [&]() -> Result<Values> { return Values{count.Read()}; }));
                                (void)odd;
                                return Values{v[0] + i};
                              },
                              {Scalar<int32_t>(0)});
            })),
        rnn(AddMethod("dynamic_rnn",
                      {{"input_data", DType::kFloat, PartialShape({2, 3, 4})},
                       {"initial_state", DType::kFloat, PartialShape({2, 4})}},
                      DynamicRnn)),
        twice(AddMethod("twice", {{"x", DType::kInt32}}, [this](const Values& a) -> Result<Values> {
          KILN_ASSIGN_OR_RETURN(Values r, CallFunction(relu, {a[0]}));
          return Values{r[0] * 2.0};
        })) {}
  int traces = 0;
  Variable count;
  Function& relu;
  Function& range_sum;
  Function& rnn;
  Function& twice;
};

TEST_CASE("control flow, tensor arrays and nested calls export and run from the bundle") {
  testing::TempDir tmp;
  ControlFlowModule m;
  CHECK(IntOf(m.range_sum(Tensor::Scalar<int32_t>(5))) == 10);
  CHECK(m.count.value()->scalar<int32_t>() == 2);
  const Tensor x = RnnInput();
  Tensor zeros(DType::kFloat, Shape{2, 4});
  for (int i = 0; i < 8; ++i) zeros.flat<float>()[i] = 0;
  const auto dir = tmp.path() / "bundle";
  REQUIRE_OK(Save(m, dir,
                  {{"serving_default", &m.range_sum},
                   {"relu", &m.relu},
                   {"rnn", &m.rnn},
                   {"twice", &m.twice}}));

  auto exported = BuildSavedModel(m, {{"serving_default", &m.range_sum}});
  REQUIRE_OK(exported);
  const auto& lib = exported->saved_model->meta_graphs(0).graph_def().library();
  std::vector<std::string> names;
  for (const auto& f : lib.function()) names.push_back(f.signature().name());
  // Every func attr in the library names a function of the library.
  for (const auto& f : lib.function()) {
    for (const auto& n : f.node_def()) {
      for (const auto& [k, v] : n.attr()) {
        if (v.has_func()) CHECK(FindFunction(lib, v.func().name()) != nullptr);
      }
    }
  }
  CHECK(HasFunctionStartingWith(lib, "while_body_"));
  CHECK(HasFunctionStartingWith(lib, "cond_true_"));

  auto model = exec::SavedModel::Load(dir);
  REQUIRE_OK(model);
  auto sum = (*(*model)->GetSignature("serving_default"))->Run({{"n", Tensor::Scalar<int32_t>(6)}});
  REQUIRE_OK(sum);
  CHECK(sum->at("output_0").scalar<int32_t>() == 15);
  auto relu = (*(*model)->GetSignature("relu"))->Run({{"x", Tensor::Scalar<int32_t>(-4)}});
  REQUIRE_OK(relu);
  CHECK(relu->at("output_0").scalar<int32_t>() == 0);
  auto twice = (*(*model)->GetSignature("twice"))->Run({{"x", Tensor::Scalar<int32_t>(4)}});
  REQUIRE_OK(twice);
  CHECK(twice->at("output_0").scalar<int32_t>() == 8);
  auto rnn = (*(*model)->GetSignature("rnn"))->Run({{"input_data", x}, {"initial_state", zeros}});
  REQUIRE_OK(rnn);
  CheckRnnOutput(rnn->at("output_0"), x);
  // The loaded state continues: 2 at save, +3 odd numbers below 6.
  auto fn = (*model)->GetFunction("range_sum");
  REQUIRE_OK(fn);
  const Tensor n = Tensor::Scalar<int32_t>(2);
  REQUIRE_OK((*fn)->Call(std::span<const Tensor>(&n, 1)));
  CHECK((*model)->variables().size() == 1);
}

}  // namespace
}  // namespace kiln::trace
