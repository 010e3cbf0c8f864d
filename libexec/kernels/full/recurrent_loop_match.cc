// The fused recurrent loop (recurrent_loop.h). The forms recognised are what Keras 3 exports
// (float32; or float16/bfloat16 over Cast float32 variables: a mixed-precision layer). The LSTM:
//   cond: LogicalAnd(Less(counter, limit), Less(time, T))        (either order)
//   body: x = TensorListGetItem(xs, time)
//         z = BiasAdd(MatMul(x, ReadVariableOp(kernel)) + MatMul(h, ReadVariableOp(recurrent)),
//                     ReadVariableOp(bias));  i, f, g, o = Split(1, z, num_split=4)
//         c' = sigmoid(f) * c + sigmoid(i) * tanh(g);  h' = sigmoid(o) * tanh(c')
//         out' = TensorListSetItem(out, time or a constant index, h')
//         returns counter + 1, limit, time + 1, out', h', c', and xs and the weights unchanged
// The GRU (reset_after=True) and the SimpleRNN (tanh or relu) differ in the cell only (MatchGru,
// MatchSimple). tf.keras 2 (TF <= 2.15's Keras, and tf_keras) makes the LSTM and GRU loops with
// the weights passed in as tensors rather than read from variables, a cond of Less(time, T)
// alone, and a GRU whose recurrent part is split by a Split with its bias apart. With a mask, each
// new state and the list's value are SelectV2(Tile(mask_t), new, old), and the last output is one
// more loop variable. Identity nodes anywhere on the way are looked through; operands of +, * may
// come in either order. Every node of both functions must be part of the form, so a body that does
// anything more (prints, writes a variable) is never taken for one.
#include <algorithm>
#include <cstdio>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "kernels/recurrent_loop.h"
#include "kernels/recurrent_loop_form.h"
#include "kernels/type_lists.h"
#include "kiln/core/proto_convert.h"
#include "kiln/exec/executor.h"
#include "tensorflow/framework.pb.h"

namespace kiln::exec {

namespace {

// One function's graph, for matching: nodes by name, args by name, and the nodes matched.
class FunctionView {
 public:
  explicit FunctionView(const tensorflow::FunctionDef& f) : f_(f) {
    for (int i = 0; i < f.signature().input_arg_size(); ++i)
      args_[f.signature().input_arg(i).name()] = i;
    for (const auto& n : f.node_def()) nodes_[n.name()] = &n;
  }

  // What an input reference ("node:out:0" or an arg name) names, through Identity nodes.
  struct Ref {
    const tensorflow::NodeDef* node = nullptr;  // null: an arg
    int arg = -1;
    int index = 0;  // output index within the node's output arg
  };
  std::optional<Ref> Resolve(std::string_view input) {
    for (;;) {
      const size_t colon = input.find(':');
      if (colon == std::string_view::npos) {
        auto a = args_.find(std::string(input));
        if (a == args_.end()) return std::nullopt;
        return Ref{nullptr, a->second, 0};
      }
      auto n = nodes_.find(std::string(input.substr(0, colon)));
      if (n == nodes_.end()) return std::nullopt;
      const size_t last = input.rfind(':');
      const int index = std::atoi(std::string(input.substr(last + 1)).c_str());
      const tensorflow::NodeDef* node = n->second;
      Use(node);
      if (node->op() == "Identity" && node->input_size() >= 1) {
        input = node->input(0);
        continue;
      }
      return Ref{node, -1, index};
    }
  }
  // The node behind data input `i` of `node` when it is an `op` node.
  const tensorflow::NodeDef* Input(const tensorflow::NodeDef& node, int i, std::string_view op,
                                   int* index = nullptr) {
    if (i >= node.input_size()) return nullptr;
    auto r = Resolve(node.input(i));
    if (!r || r->node == nullptr || r->node->op() != op) return nullptr;
    if (index != nullptr) *index = r->index;
    return r->node;
  }
  // The arg behind data input `i` of `node`, or -1.
  int InputArg(const tensorflow::NodeDef& node, int i) {
    if (i >= node.input_size()) return -1;
    auto r = Resolve(node.input(i));
    return r && r->node == nullptr ? r->arg : -1;
  }
  // The value of the Const behind data input `i`.
  std::optional<Tensor> InputConst(const tensorflow::NodeDef& node, int i) {
    const tensorflow::NodeDef* k = Input(node, i, "Const");
    if (k == nullptr) return std::nullopt;
    auto it = k->attr().find("value");
    if (it == k->attr().end()) return std::nullopt;
    auto t = TensorFromProto(it->second.tensor());
    if (!t.ok()) return std::nullopt;
    return std::move(t).value();
  }
  // The scalar integer Const behind data input `i`.
  std::optional<int64_t> InputInt(const tensorflow::NodeDef& node, int i) {
    auto t = InputConst(node, i);
    if (!t || t->NumElements() != 1) return std::nullopt;
    if (t->dtype() == DType::kInt32) return t->data<int32_t>()[0];
    if (t->dtype() == DType::kInt64) return t->data<int64_t>()[0];
    return std::nullopt;
  }
  // The scalar float Const behind data input `i`.
  std::optional<float> InputFloat(const tensorflow::NodeDef& node, int i) {
    auto t = InputConst(node, i);
    if (!t || t->NumElements() != 1) return std::nullopt;
    if (t->dtype() == DType::kFloat) return t->data<float>()[0];
    if (t->dtype() == DType::kHalf) return static_cast<float>(ComputeData<Half>(*t)[0]);
    if (t->dtype() == DType::kBFloat16) return static_cast<float>(ComputeData<BFloat16>(*t)[0]);
    return std::nullopt;
  }
  // The int vector Const behind data input `i`.
  std::optional<std::vector<int64_t>> InputInts(const tensorflow::NodeDef& node, int i) {
    auto t = InputConst(node, i);
    if (!t || t->rank() != 1) return std::nullopt;
    std::vector<int64_t> v;
    for (int64_t j = 0; j < t->NumElements(); ++j) {
      if (t->dtype() == DType::kInt32)
        v.push_back(t->data<int32_t>()[j]);
      else if (t->dtype() == DType::kInt64)
        v.push_back(t->data<int64_t>()[j]);
      else
        return std::nullopt;
    }
    return v;
  }
  // The function's output i.
  std::optional<Ref> Output(int i) {
    if (i >= f_.signature().output_arg_size()) return std::nullopt;
    auto it = f_.ret().find(f_.signature().output_arg(i).name());
    if (it == f_.ret().end()) return std::nullopt;
    return Resolve(it->second);
  }
  void Use(const tensorflow::NodeDef* n) { used_.insert(n); }
  // Every node is part of the match, a constant, or a NoOp.
  bool AllUsed() const {
    for (const auto& n : f_.node_def())
      if (!used_.count(&n) && n.op() != "Const" && n.op() != "NoOp") return false;
    return true;
  }
  int num_args() const { return f_.signature().input_arg_size(); }
  tensorflow::DataType ArgType(int i) const { return f_.signature().input_arg(i).type(); }
  int num_outputs() const { return f_.signature().output_arg_size(); }

 private:
  const tensorflow::FunctionDef& f_;
  std::map<std::string, int, std::less<>> args_;
  std::map<std::string, const tensorflow::NodeDef*, std::less<>> nodes_;
  std::set<const tensorflow::NodeDef*> used_;
};

bool AttrIs(const tensorflow::NodeDef& n, const char* name, bool want) {
  auto it = n.attr().find(name);
  return it == n.attr().end() ? !want : it->second.b() == want;
}

// The element type a match is tried for (MatchRecurrentLoop tries float32, then float16 and
// bfloat16): every floating op of the form must compute in it.
thread_local tensorflow::DataType t_elem = tensorflow::DT_FLOAT;

bool TypeIs(const tensorflow::NodeDef& n, const char* attr, tensorflow::DataType want) {
  auto it = n.attr().find(attr);
  return it != n.attr().end() && it->second.type() == want;
}

bool FloatT(const tensorflow::NodeDef& n, const char* attr = "T") {
  return TypeIs(n, attr, t_elem);
}

// A binary op's operands in either order: match(0, 1), else match(1, 0).
template <typename Match>
bool EitherOrder(Match match) {
  return match(0, 1) || match(1, 0);
}

// The arg read by a ReadVariableOp behind input i of n.
// ... or, in a mixed-precision layer, the float32 variable cast to the element type.
// ... or (tf.keras 2) an arg of the element type: the weight passed into the loop as a tensor.
// ... or a weight `savedmodel-cli quantize` stored otherwise (*dq says how to read it): int8
// levels cast to float32 and multiplied by constant scales, or float16/bfloat16 cast up.
int VariableArg(FunctionView& v, const tensorflow::NodeDef& n, int i, WeightDequant* dq) {
  *dq = {};
  if (const int arg = v.InputArg(n, i); arg >= 0) return v.ArgType(arg) == t_elem ? arg : -1;
  const tensorflow::NodeDef* r = v.Input(n, i, "ReadVariableOp");
  if (r != nullptr) return FloatT(*r, "dtype") ? v.InputArg(*r, 0) : -1;
  const bool wide = t_elem == tensorflow::DT_FLOAT;
  if (const tensorflow::NodeDef* mul = v.Input(n, i, "Mul"); mul != nullptr) {
    int found = -1;
    if (!wide || !FloatT(*mul) || !EitherOrder([&](int a, int b) {
          const tensorflow::NodeDef* cast = v.Input(*mul, a, "Cast");
          std::optional<Tensor> scales = v.InputConst(*mul, b);
          if (cast == nullptr || !scales || scales->dtype() != DType::kFloat ||
              scales->NumElements() == 0 || !TypeIs(*cast, "SrcT", tensorflow::DT_INT8) ||
              !FloatT(*cast, "DstT"))
            return false;
          const tensorflow::NodeDef* q = v.Input(*cast, 0, "ReadVariableOp");
          if (q == nullptr || !TypeIs(*q, "dtype", tensorflow::DT_INT8)) return false;
          found = v.InputArg(*q, 0);
          dq->stored = DType::kInt8;
          dq->scales.assign(scales->data<float>(), scales->data<float>() + scales->NumElements());
          return found >= 0;
        }))
      return -1;
    return found;
  }
  const tensorflow::NodeDef* cast = v.Input(n, i, "Cast");
  if (cast == nullptr || !FloatT(*cast, "DstT")) return -1;
  for (const auto& [from, stored] : {std::pair{tensorflow::DT_FLOAT, DType::kInvalid},
                                     std::pair{tensorflow::DT_HALF, DType::kHalf},
                                     std::pair{tensorflow::DT_BFLOAT16, DType::kBFloat16}}) {
    if (!TypeIs(*cast, "SrcT", from) || (stored != DType::kInvalid && !wide)) continue;
    r = v.Input(*cast, 0, "ReadVariableOp");
    if (r == nullptr || !TypeIs(*r, "dtype", from)) return -1;
    dq->stored = stored;
    return v.InputArg(*r, 0);
  }
  return -1;
}

// x + 1 where x is arg `i`.
bool IsIncrement(FunctionView& v, const FunctionView::Ref& r, int i) {
  if (r.node == nullptr || r.node->op() != "AddV2") return false;
  return EitherOrder(
      [&](int a, int b) { return v.InputArg(*r.node, a) == i && v.InputInt(*r.node, b) == 1; });
}

// The cond: LogicalAnd(Less(counter, limit), Less(time, T)) (either order); or, when
// loop->limit is -1, Less(time, T) alone. T is a constant or an unchanged variable.
bool MatchCond(const tensorflow::FunctionDef& fdef, RecurrentLoop* loop) {
  FunctionView v(fdef);
  if (v.num_outputs() != 1) return false;
  auto out = v.Output(0);
  if (!out || out->node == nullptr) return false;
  auto time_bound = [&](const tensorflow::NodeDef& time) {
    if (v.InputArg(time, 0) != loop->time) return false;
    if (auto bound = v.InputInt(time, 1)) {
      loop->max_time = *bound;
      return true;
    }
    // A sequence length known only at run time: an unchanged variable (MatchBody classified
    // every changed one).
    const int arg = v.InputArg(time, 1);
    if (arg < 0 || arg == loop->counter || arg == loop->time || arg == loop->out ||
        arg == loop->h || arg == loop->c || arg == loop->prev_out)
      return false;
    loop->max_time_arg = arg;
    return true;
  };
  if (loop->limit < 0) return out->node->op() == "Less" && time_bound(*out->node) && v.AllUsed();
  if (out->node->op() != "LogicalAnd") return false;
  const tensorflow::NodeDef& conj = *out->node;
  bool ok = EitherOrder([&](int a, int b) {
    const tensorflow::NodeDef* count = v.Input(conj, a, "Less");
    const tensorflow::NodeDef* time = v.Input(conj, b, "Less");
    if (count == nullptr || time == nullptr) return false;
    if (v.InputArg(*count, 0) != loop->counter || v.InputArg(*count, 1) != loop->limit)
      return false;
    return time_bound(*time);
  });
  return ok && v.AllUsed();
}

// The LSTM cell: h' and c' from the split gates, c and the Split node.
bool MatchLstmCell(FunctionView& v, const tensorflow::NodeDef& h_new,
                   const tensorflow::NodeDef& c_new, int c_arg, const tensorflow::NodeDef** split) {
  // Sigmoid/Tanh of Split output `gate`, all from one Split.
  auto gate = [&](const tensorflow::NodeDef& n, int i, const char* act, int want) {
    const tensorflow::NodeDef* a = v.Input(n, i, act);
    if (a == nullptr || !FloatT(*a)) return false;
    int index = -1;
    const tensorflow::NodeDef* s = v.Input(*a, 0, "Split", &index);
    if (s == nullptr || index != want || (*split != nullptr && s != *split)) return false;
    *split = s;
    return true;
  };
  if (h_new.op() != "Mul" || !FloatT(h_new)) return false;
  // h' = sigmoid(o) * tanh(c')
  if (!EitherOrder([&](int a, int b) {
        const tensorflow::NodeDef* t = v.Input(h_new, b, "Tanh");
        return gate(h_new, a, "Sigmoid", 3) && t != nullptr && FloatT(*t) &&
               v.Input(*t, 0, "AddV2") == &c_new;
      }))
    return false;
  // c' = sigmoid(f) * c + sigmoid(i) * tanh(g)
  if (c_new.op() != "AddV2" || !FloatT(c_new)) return false;
  return EitherOrder([&](int a, int b) {
    const tensorflow::NodeDef* keep = v.Input(c_new, a, "Mul");
    const tensorflow::NodeDef* write = v.Input(c_new, b, "Mul");
    if (keep == nullptr || write == nullptr || !FloatT(*keep) || !FloatT(*write)) return false;
    const bool keep_ok = EitherOrder([&](int x, int y) {
      return gate(*keep, x, "Sigmoid", 1) && v.InputArg(*keep, y) == c_arg;
    });
    const bool write_ok = EitherOrder(
        [&](int x, int y) { return gate(*write, x, "Sigmoid", 0) && gate(*write, y, "Tanh", 2); });
    return keep_ok && write_ok;
  });
}

// z = BiasAdd(MatMul(x_t, kernel) + MatMul(h, recurrent), bias), x_t = xs[time].
bool MatchProjection(FunctionView& v, const tensorflow::NodeDef& split, RecurrentLoop* loop) {
  if (auto dim = v.InputInt(split, 0); !dim || (*dim != 1 && *dim != -1)) return false;
  auto num = split.attr().find("num_split");
  if (num == split.attr().end() || num->second.i() != 4 || !FloatT(split)) return false;
  const tensorflow::NodeDef* biased = v.Input(split, 1, "BiasAdd");
  if (biased == nullptr || !FloatT(*biased)) return false;
  if (auto f = biased->attr().find("data_format");
      f != biased->attr().end() && f->second.s() != "NHWC")
    return false;
  loop->bias = VariableArg(v, *biased, 1, &loop->bias_dq);
  const tensorflow::NodeDef* sum = v.Input(*biased, 0, "AddV2");
  if (loop->bias < 0 || sum == nullptr || !FloatT(*sum)) return false;
  return EitherOrder([&](int a, int b) {
    const tensorflow::NodeDef* xw = v.Input(*sum, a, "MatMul");
    const tensorflow::NodeDef* hu = v.Input(*sum, b, "MatMul");
    if (xw == nullptr || hu == nullptr) return false;
    for (const tensorflow::NodeDef* m : {xw, hu})
      if (!FloatT(*m) || !AttrIs(*m, "transpose_a", false) || !AttrIs(*m, "transpose_b", false))
        return false;
    const tensorflow::NodeDef* get = v.Input(*xw, 0, "TensorListGetItem");
    if (get == nullptr || !FloatT(*get, "element_dtype")) return false;
    loop->xs = v.InputArg(*get, 0);
    if (v.InputArg(*get, 1) != loop->time || loop->xs < 0) return false;
    loop->kernel = VariableArg(v, *xw, 1, &loop->kernel_dq);
    loop->recurrent = VariableArg(v, *hu, 1, &loop->recurrent_dq);
    return loop->kernel >= 0 && loop->recurrent >= 0 && v.InputArg(*hu, 0) == loop->h;
  });
}

// x[:, a:b] of a rank-2 tensor: dim 0 whole, dim 1 from the constants, stride 1.
bool MatchColumnSlice(FunctionView& v, const tensorflow::NodeDef& n, ColumnSlice* slice) {
  if (n.op() != "StridedSlice" || !FloatT(n)) return false;
  auto mask = [&](const char* name) {
    auto it = n.attr().find(name);
    return it == n.attr().end() ? int64_t{0} : it->second.i();
  };
  if (mask("ellipsis_mask") != 0 || mask("new_axis_mask") != 0 || mask("shrink_axis_mask") != 0)
    return false;
  auto begin = v.InputInts(n, 1), end = v.InputInts(n, 2), strides = v.InputInts(n, 3);
  if (!begin || !end || !strides || begin->size() != 2 || end->size() != 2 ||
      *strides != std::vector<int64_t>{1, 1})
    return false;
  const int64_t bm = mask("begin_mask"), em = mask("end_mask");
  // Dim 0 whole: left out, or from 0 with the end left out.
  if (!((bm & 1) || (*begin)[0] == 0) || !(em & 1)) return false;
  slice->begin = (*begin)[1];
  slice->end = (*end)[1];
  slice->begin_full = (bm & 2) != 0;
  slice->end_full = (em & 2) != 0;
  return true;
}

// Keras's GRU cell with reset_after=True:
//   xz = BiasAdd(MatMul(x_t, kernel), b[0]); split into x_z, x_r, x_h (Split(1, xz, 3))
//   hz = MatMul(h, recurrent) + b[1]; its columns h_z, h_r, h_h (three StridedSlices)
//   z = sigmoid(x_z + h_z); r = sigmoid(x_r + h_r); hh = tanh(x_h + r * h_h)
//   h' = z * h + (1 - z) * hh        with b = Split(0, bias, 2), each part Squeezed.
// tf.keras 2: h_z, h_r, h_h = Split(1, BiasAdd(MatMul(h, recurrent), b1), 3), and b[0], b1 are
// loop variables of their own.
bool MatchGru(FunctionView& v, const tensorflow::NodeDef& h_new, RecurrentLoop* loop) {
  const tensorflow::NodeDef* x_split = nullptr;
  const tensorflow::NodeDef* h_split = nullptr;  // tf.keras 2
  const tensorflow::NodeDef* hz = nullptr;       // Keras 3
  const tensorflow::NodeDef* z_node = nullptr;
  // A Split of BiasAdd(MatMul(h, ...), ...): the recurrent part's.
  auto recurrent_split = [&](const tensorflow::NodeDef& s) {
    const tensorflow::NodeDef* biased = v.Input(s, 1, "BiasAdd");
    const tensorflow::NodeDef* mm = biased != nullptr ? v.Input(*biased, 0, "MatMul") : nullptr;
    return mm != nullptr && v.InputArg(*mm, 0) == loop->h;
  };
  // Gate k of the input's part: output k of the Split of the projected x_t.
  auto x_part = [&](const tensorflow::NodeDef& n, int i, int k) {
    int index = -1;
    const tensorflow::NodeDef* s = v.Input(n, i, "Split", &index);
    if (s == nullptr || index != k || (x_split != nullptr && s != x_split) || recurrent_split(*s))
      return false;
    x_split = s;
    return true;
  };
  // Gate k of the recurrent part: a column slice of hz, or output k of the recurrent Split.
  auto h_part = [&](const tensorflow::NodeDef& n, int i, int k) {
    int index = -1;
    if (const tensorflow::NodeDef* s = v.Input(n, i, "Split", &index)) {
      if (index != k || hz != nullptr || (h_split != nullptr && s != h_split) ||
          !recurrent_split(*s))
        return false;
      h_split = s;
      return true;
    }
    const tensorflow::NodeDef* sl = v.Input(n, i, "StridedSlice");
    ColumnSlice slice;
    if (sl == nullptr || h_split != nullptr || !MatchColumnSlice(v, *sl, &slice)) return false;
    const tensorflow::NodeDef* src = v.Input(*sl, 0, "AddV2");
    if (src == nullptr || (hz != nullptr && src != hz)) return false;
    loop->gru_slices[k] = slice;
    hz = src;
    return true;
  };
  // x_k + h_k.
  auto gate_sum = [&](const tensorflow::NodeDef* sum, int k) {
    if (sum == nullptr || sum->op() != "AddV2" || !FloatT(*sum)) return false;
    return EitherOrder([&](int a, int b) { return x_part(*sum, a, k) && h_part(*sum, b, k); });
  };
  auto sigmoid_of_gate = [&](const tensorflow::NodeDef& n, int i, int k) {
    const tensorflow::NodeDef* sg = v.Input(n, i, "Sigmoid");
    return sg != nullptr && FloatT(*sg) && gate_sum(v.Input(*sg, 0, "AddV2"), k) ? sg : nullptr;
  };
  if (h_new.op() != "AddV2" || !FloatT(h_new)) return false;
  const bool cell_ok = EitherOrder([&](int a, int b) {
    const tensorflow::NodeDef* keep = v.Input(h_new, a, "Mul");
    const tensorflow::NodeDef* write = v.Input(h_new, b, "Mul");
    if (keep == nullptr || write == nullptr || !FloatT(*keep) || !FloatT(*write)) return false;
    // z * h
    if (!EitherOrder([&](int x, int y) {
          z_node = sigmoid_of_gate(*keep, x, 0);
          return z_node != nullptr && v.InputArg(*keep, y) == loop->h;
        }))
      return false;
    // (1 - z) * tanh(x_h + r * h_h)
    return EitherOrder([&](int x, int y) {
      const tensorflow::NodeDef* sub = v.Input(*write, x, "Sub");
      const tensorflow::NodeDef* th = v.Input(*write, y, "Tanh");
      if (sub == nullptr || th == nullptr || !FloatT(*sub) || !FloatT(*th)) return false;
      if (v.InputFloat(*sub, 0) != 1.0f || v.Input(*sub, 1, "Sigmoid") != z_node) return false;
      const tensorflow::NodeDef* cand = v.Input(*th, 0, "AddV2");
      if (cand == nullptr || !FloatT(*cand)) return false;
      return EitherOrder([&](int p, int q) {
        const tensorflow::NodeDef* reset = v.Input(*cand, q, "Mul");
        if (!x_part(*cand, p, 2) || reset == nullptr || !FloatT(*reset)) return false;
        return EitherOrder([&](int e, int f) {
          return sigmoid_of_gate(*reset, e, 1) != nullptr && h_part(*reset, f, 2);
        });
      });
    });
  });
  if (!cell_ok || x_split == nullptr || (hz == nullptr) == (h_split == nullptr)) return false;
  // A Split into 3 along dim 1 (or -1).
  auto splits_gates = [&](const tensorflow::NodeDef& s) {
    auto num = s.attr().find("num_split");
    if (num == s.attr().end() || num->second.i() != 3 || !FloatT(s)) return false;
    auto dim = v.InputInt(s, 0);
    return dim && (*dim == 1 || *dim == -1);
  };
  // BiasAdd (NHWC) of a MatMul without transposes, behind input 1 of the Split `s`.
  auto biased_product = [&](const tensorflow::NodeDef& s,
                            const tensorflow::NodeDef** product) -> const tensorflow::NodeDef* {
    const tensorflow::NodeDef* biased = v.Input(s, 1, "BiasAdd");
    if (biased == nullptr || !FloatT(*biased)) return nullptr;
    if (auto f = biased->attr().find("data_format");
        f != biased->attr().end() && f->second.s() != "NHWC")
      return nullptr;
    const tensorflow::NodeDef* mm = v.Input(*biased, 0, "MatMul");
    if (mm == nullptr || !FloatT(*mm) || !AttrIs(*mm, "transpose_a", false) ||
        !AttrIs(*mm, "transpose_b", false))
      return nullptr;
    *product = mm;
    return biased;
  };
  if (!splits_gates(*x_split)) return false;
  const tensorflow::NodeDef* xw = nullptr;
  const tensorflow::NodeDef* x_biased = biased_product(*x_split, &xw);
  if (x_biased == nullptr) return false;
  if (h_split != nullptr) {
    // tf.keras 2: h_split = Split(1, BiasAdd(MatMul(h, recurrent), b1), 3); b[0] and b1 are
    // loop variables.
    const tensorflow::NodeDef* hu = nullptr;
    const tensorflow::NodeDef* h_biased =
        splits_gates(*h_split) ? biased_product(*h_split, &hu) : nullptr;
    if (h_biased == nullptr || v.InputArg(*hu, 0) != loop->h) return false;
    loop->gru_split = true;
    loop->recurrent = VariableArg(v, *hu, 1, &loop->recurrent_dq);
    loop->bias_recurrent = VariableArg(v, *h_biased, 1, &loop->bias_recurrent_dq);
    loop->bias = VariableArg(v, *x_biased, 1, &loop->bias_dq);
    if (loop->recurrent < 0 || loop->bias_recurrent < 0 || loop->bias < 0) return false;
  } else {
    // The biases: Squeeze(Split(0, ReadVariableOp(bias), 2):k).
    const tensorflow::NodeDef* bias_split = nullptr;
    auto bias_part = [&](const tensorflow::NodeDef& n, int i, int k) {
      const tensorflow::NodeDef* sq = v.Input(n, i, "Squeeze");
      if (sq == nullptr || !FloatT(*sq)) return false;
      int index = -1;
      const tensorflow::NodeDef* s = v.Input(*sq, 0, "Split", &index);
      if (s == nullptr || index != k || (bias_split != nullptr && s != bias_split)) return false;
      auto num = s->attr().find("num_split");
      if (num == s->attr().end() || num->second.i() != 2 || v.InputInt(*s, 0) != 0) return false;
      bias_split = s;
      loop->bias = VariableArg(v, *s, 1, &loop->bias_dq);
      return loop->bias >= 0;
    };
    // hz = MatMul(h, recurrent) + b[1]
    if (!FloatT(*hz) || !EitherOrder([&](int a, int b) {
          const tensorflow::NodeDef* hu = v.Input(*hz, a, "MatMul");
          if (hu == nullptr || !FloatT(*hu) || !AttrIs(*hu, "transpose_a", false) ||
              !AttrIs(*hu, "transpose_b", false) || v.InputArg(*hu, 0) != loop->h)
            return false;
          loop->recurrent = VariableArg(v, *hu, 1, &loop->recurrent_dq);
          return loop->recurrent >= 0 && bias_part(*hz, b, 1);
        }))
      return false;
    if (!bias_part(*x_biased, 1, 0)) return false;
  }
  // x_split = Split(1, BiasAdd(MatMul(xs[time], kernel), b[0]), 3)
  loop->kernel = VariableArg(v, *xw, 1, &loop->kernel_dq);
  const tensorflow::NodeDef* get = v.Input(*xw, 0, "TensorListGetItem");
  if (loop->kernel < 0 || get == nullptr || !FloatT(*get, "element_dtype")) return false;
  loop->xs = v.InputArg(*get, 0);
  return loop->xs >= 0 && v.InputArg(*get, 1) == loop->time;
}

// SelectV2(Tile(TensorListGetItem(mask, t), [1, w]), value, arg keep): a masked update.
// Gives `value` and records the mask list, t's arg and w; *keep < 0 takes any arg (and sets it).
std::optional<FunctionView::Ref> MaskedValue(FunctionView& v, const FunctionView::Ref& ref,
                                             int* keep, RecurrentLoop* loop, int* time_arg) {
  if (ref.node == nullptr || ref.node->op() != "SelectV2" || !FloatT(*ref.node) ||
      ref.node->input_size() < 3)
    return std::nullopt;
  const int old = v.InputArg(*ref.node, 2);
  if (old < 0 || (*keep >= 0 && old != *keep)) return std::nullopt;
  *keep = old;
  const tensorflow::NodeDef* tile = v.Input(*ref.node, 0, "Tile");
  if (tile == nullptr) return std::nullopt;
  auto multiples = v.InputInts(*tile, 1);
  const tensorflow::NodeDef* get = v.Input(*tile, 0, "TensorListGetItem");
  if (!multiples || multiples->size() != 2 || (*multiples)[0] != 1 || get == nullptr)
    return std::nullopt;
  auto dtype = get->attr().find("element_dtype");
  if (dtype == get->attr().end() || dtype->second.type() != tensorflow::DT_BOOL)
    return std::nullopt;
  const int mask = v.InputArg(*get, 0), t = v.InputArg(*get, 1);
  if (mask < 0 || t < 0 || (loop->mask >= 0 && (mask != loop->mask || t != *time_arg)) ||
      (loop->mask_tile != 0 && loop->mask_tile != (*multiples)[1]))
    return std::nullopt;
  loop->mask = mask;
  loop->mask_tile = (*multiples)[1];
  *time_arg = t;
  return v.Resolve(ref.node->input(1));
}

// Keras's SimpleRNN cell: h' = act(BiasAdd(MatMul(x_t, kernel), bias) + MatMul(h, recurrent))
// with act tanh or relu.
bool MatchSimple(FunctionView& v, const tensorflow::NodeDef& h_new, RecurrentLoop* loop) {
  if ((h_new.op() != "Tanh" && h_new.op() != "Relu") || !FloatT(h_new)) return false;
  loop->simple_relu = h_new.op() == "Relu";
  const tensorflow::NodeDef* sum = v.Input(h_new, 0, "AddV2");
  if (sum == nullptr || !FloatT(*sum)) return false;
  return EitherOrder([&](int a, int b) {
    const tensorflow::NodeDef* biased = v.Input(*sum, a, "BiasAdd");
    const tensorflow::NodeDef* hu = v.Input(*sum, b, "MatMul");
    if (biased == nullptr || hu == nullptr || !FloatT(*biased)) return false;
    if (auto f = biased->attr().find("data_format");
        f != biased->attr().end() && f->second.s() != "NHWC")
      return false;
    const tensorflow::NodeDef* xw = v.Input(*biased, 0, "MatMul");
    if (xw == nullptr) return false;
    for (const tensorflow::NodeDef* m : {xw, hu})
      if (!FloatT(*m) || !AttrIs(*m, "transpose_a", false) || !AttrIs(*m, "transpose_b", false))
        return false;
    const tensorflow::NodeDef* get = v.Input(*xw, 0, "TensorListGetItem");
    if (get == nullptr || !FloatT(*get, "element_dtype")) return false;
    loop->xs = v.InputArg(*get, 0);
    loop->kernel = VariableArg(v, *xw, 1, &loop->kernel_dq);
    loop->bias = VariableArg(v, *biased, 1, &loop->bias_dq);
    loop->recurrent = VariableArg(v, *hu, 1, &loop->recurrent_dq);
    return loop->xs >= 0 && v.InputArg(*get, 1) == loop->time && loop->kernel >= 0 &&
           loop->bias >= 0 && loop->recurrent >= 0 && v.InputArg(*hu, 0) == loop->h;
  });
}

bool MatchBody(const tensorflow::FunctionDef& fdef, RecurrentLoop* loop) {
  FunctionView v(fdef);
  const int n = v.num_args();
  if (v.num_outputs() != n || n < 9) return false;
  std::vector<FunctionView::Ref> outs(n);
  std::vector<int> changed;
  for (int i = 0; i < n; ++i) {
    auto r = v.Output(i);
    if (!r) return false;
    outs[i] = *r;
    if (!(r->node == nullptr && r->arg == i)) changed.push_back(i);
  }
  std::vector<int> increments;
  const tensorflow::NodeDef* set_item = nullptr;
  for (int i : changed) {
    if (IsIncrement(v, outs[i], i)) {
      increments.push_back(i);
    } else if (outs[i].node != nullptr && outs[i].node->op() == "TensorListSetItem") {
      if (set_item != nullptr || v.InputArg(*outs[i].node, 0) != i) return false;
      set_item = outs[i].node;
      loop->out = i;
    }
  }
  if (increments.size() != 2 || set_item == nullptr || !FloatT(*set_item, "element_dtype"))
    return false;
  // h' is what the list gets; c' the other changed variable. With a mask, each state's update
  // and the list's value are SelectV2s between the cell's value and the old one, and the
  // output of the last step is one more loop variable.
  auto written = v.Resolve(set_item->input_size() > 2 ? set_item->input(2) : "");
  if (!written || written->node == nullptr) return false;
  int mask_time = -1;
  if (written->node->op() == "SelectV2") {
    for (int i : changed)
      if (outs[i].node == written->node) loop->prev_out = i;
    auto value = MaskedValue(v, *written, &loop->masked_output, loop, &mask_time);
    if (loop->prev_out < 0 || !value || value->node == nullptr) return false;
    written = value;
    if (loop->masked_output != loop->prev_out &&
        std::find(changed.begin(), changed.end(), loop->masked_output) != changed.end())
      return false;
  }
  std::vector<int> states;
  for (int i : changed) {
    if (i == loop->out || i == loop->prev_out || i == increments[0] || i == increments[1]) continue;
    if (loop->mask >= 0) {
      int keep = i;
      auto value = MaskedValue(v, outs[i], &keep, loop, &mask_time);
      if (!value) return false;
      outs[i] = *value;
    }
    states.push_back(i);
  }
  // h (and c for an LSTM).
  if (states.size() != 1 && states.size() != 2) return false;
  loop->cell = states.size() == 2 ? RecurrentLoop::Cell::kLstm : RecurrentLoop::Cell::kGru;
  for (int i : states) {
    if (outs[i].node == written->node)
      loop->h = i;
    else
      loop->c = i;
  }
  if (loop->h < 0) return false;
  // Which increment is time: the one TensorListGetItem reads; try both.
  if (loop->cell == RecurrentLoop::Cell::kLstm) {
    if (loop->c < 0 || outs[loop->c].node == nullptr) return false;
    const tensorflow::NodeDef* split = nullptr;
    if (!MatchLstmCell(v, *written->node, *outs[loop->c].node, loop->c, &split)) return false;
    for (int pick = 0; pick < 2; ++pick) {
      loop->time = increments[pick];
      loop->counter = increments[1 - pick];
      if (MatchProjection(v, *split, loop)) break;
      loop->time = -1;
    }
  } else {
    const bool gru = written->node->op() == "AddV2";
    loop->cell = gru ? RecurrentLoop::Cell::kGru : RecurrentLoop::Cell::kSimple;
    for (int pick = 0; pick < 2; ++pick) {
      loop->time = increments[pick];
      loop->counter = increments[1 - pick];
      if (gru ? MatchGru(v, *written->node, loop) : MatchSimple(v, *written->node, loop)) break;
      loop->time = -1;
    }
  }
  if (loop->time < 0 || (loop->mask >= 0 && mask_time != loop->time)) return false;
  const int index_arg = v.InputArg(*set_item, 1);
  if (index_arg == loop->time) {
    loop->write_at_time = true;
  } else if (auto k = v.InputInt(*set_item, 1)) {
    loop->write_at_time = false;
    loop->write_index = *k;
  } else {
    return false;
  }
  // The limit is the unchanged variable the cond compares the counter with (MatchCond); the
  // list of inputs and the weights must be unchanged too.
  for (int i :
       {loop->xs, loop->kernel, loop->recurrent, loop->bias, loop->bias_recurrent, loop->mask})
    if (std::find(changed.begin(), changed.end(), i) != changed.end()) return false;
  return v.AllUsed();
}

// KILN_RECURRENT_FUSION: unset or 1 fuses, 0 does not, "log" fuses and says so on stderr.

}  // namespace

std::shared_ptr<const RecurrentLoop> MatchRecurrentLoop(const PrepareContext& ctx) {
  if (RecurrentFusionMode() == FusionMode::kOff || ctx.library == nullptr) return nullptr;
  auto body_name = ctx.attrs.GetFunctionName("body");
  auto cond_name = ctx.attrs.GetFunctionName("cond");
  if (!body_name.ok() || !cond_name.ok()) return nullptr;
  const tensorflow::FunctionDef* body = ctx.library->Find(*body_name);
  const tensorflow::FunctionDef* cond = ctx.library->Find(*cond_name);
  if (body == nullptr || cond == nullptr) return nullptr;
  std::shared_ptr<RecurrentLoop> loop;
  for (auto [proto, dtype] : {std::pair{tensorflow::DT_FLOAT, DType::kFloat},
                              std::pair{tensorflow::DT_HALF, DType::kHalf},
                              std::pair{tensorflow::DT_BFLOAT16, DType::kBFloat16}}) {
    t_elem = proto;
    auto trial = std::make_shared<RecurrentLoop>();
    trial->dtype = dtype;
    if (MatchBody(*body, trial.get())) {
      loop = std::move(trial);
      break;
    }
  }
  t_elem = tensorflow::DT_FLOAT;
  if (loop == nullptr) return nullptr;
  // The limit: the counter's bound in the cond, an unchanged variable.
  for (int i = 0; i < body->signature().input_arg_size() && loop->limit < 0; ++i) {
    RecurrentLoop trial = *loop;
    trial.limit = i;
    if (i != loop->counter && i != loop->time && MatchCond(*cond, &trial)) *loop = trial;
  }
  // tf.keras 2: no counter limit, the cond tests the time alone.
  if (loop->limit < 0 && !MatchCond(*cond, loop.get())) return nullptr;
  if (RecurrentFusionMode() == FusionMode::kLog)
    std::fprintf(stderr, "kiln: node '%.*s' (%.*s) runs as a fused %s loop\n",
                 static_cast<int>(ctx.node_name.size()), ctx.node_name.data(),
                 static_cast<int>(ctx.op.size()), ctx.op.data(),
                 loop->cell == RecurrentLoop::Cell::kLstm  ? "LSTM"
                 : loop->cell == RecurrentLoop::Cell::kGru ? "GRU"
                                                           : "SimpleRNN");
  return loop;
}

}  // namespace kiln::exec
