// The CPU kernels of the tf.SequenceExample parse ops in kernels/sequence_example_ops.cc
// (ParseSequenceExampleV2, ParseSequenceExample, ParseSingleSequenceExample): each record read
// with the wire-format parser (kernels/example_wire.h), as TensorFlow's fast parser reads it.
// Errors are TF's, naming the key, the record (debug_name or <unknown>) and the step.
#include "kernels/sequence_example_ops.h"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <string>
#include <vector>

#include "kernels/example_wire.h"
#include "kernels/kernel_util.h"

namespace kiln::exec {
namespace {

using sequence_example::Form;
using sequence_example::Group;
using sequence_example::Inputs;
using sequence_example::InputsOf;
using sequence_example::SeqState;

const char* TypeName(DType t) {
  return t == DType::kFloat ? "float" : t == DType::kInt64 ? "int64" : "string";
}
FeatureValues::Kind KindOf(DType t) {
  return t == DType::kFloat   ? FeatureValues::Kind::kFloat
         : t == DType::kInt64 ? FeatureValues::Kind::kInt64
                              : FeatureValues::Kind::kBytes;
}

// ---- compute ---------------------------------------------------------------------------------

// Every key of each kind, read from the attrs or the inputs of the op's form.
struct Keys {
  std::vector<std::string> cs, cd, cr, fs, fd, fr;
  std::vector<bool> missing_ok;  // per fd key
};

Result<Keys> ReadKeys(const KernelContext& ctx, const SeqState& st, const Inputs& in) {
  Keys k;
  if (st.form == Form::kV1) {
    k.cs = st.cs.keys;
    k.cd = st.cd.keys;
    k.fs = st.fs.keys;
    k.fd = st.fd.keys;
    for (const std::string& key : k.fd)
      k.missing_ok.push_back(std::find(st.missing_ok.begin(), st.missing_ok.end(), key) !=
                             st.missing_ok.end());
    return k;
  }
  if (st.form == Form::kV2) {
    const char* names[] = {"context_sparse_keys",     "context_dense_keys",
                           "context_ragged_keys",     "feature_list_sparse_keys",
                           "feature_list_dense_keys", "feature_list_ragged_keys"};
    std::vector<std::string>* lists[] = {&k.cs, &k.cd, &k.cr, &k.fs, &k.fd, &k.fr};
    const int counts[] = {st.cs.size(), st.cd.size(), st.cr.size(),
                          st.fs.size(), st.fd.size(), st.fr.size()};
    for (int g = 0; g < 6; ++g) {
      const Tensor& t = ctx.input(in.keys + g);
      if (t.NumElements() != counts[g])
        return ctx.Error("input '", names[g], "' holds ", t.NumElements(), " keys; the attrs give ",
                         counts[g]);
      lists[g]->assign(t.data<std::string>(), t.data<std::string>() + t.NumElements());
    }
    const Tensor& m = ctx.input(in.missing);
    if (m.NumElements() != st.fd.size())
      return ctx.Error("input 'feature_list_dense_missing_assumed_empty' holds ", m.NumElements(),
                       " values for ", st.fd.size(), " feature_list_dense_keys");
    k.missing_ok.assign(m.data<bool>(), m.data<bool>() + m.NumElements());
    return k;
  }
  // ParseSingleSequenceExample: one scalar input per key.
  int at = in.keys;
  const char* names[] = {"context_sparse_keys", "context_dense_keys", "feature_list_sparse_keys",
                         "feature_list_dense_keys"};
  std::vector<std::string>* lists[] = {&k.cs, &k.cd, &k.fs, &k.fd};
  const int counts[] = {st.cs.size(), st.cd.size(), st.fs.size(), st.fd.size()};
  for (int g = 0; g < 4; ++g) {
    for (int i = 0; i < counts[g]; ++i, ++at) {
      const Tensor& t = ctx.input(at);
      if (t.rank() != 0)
        return ctx.Error("expected ", names[g], "[", i, "] to be a scalar, got shape ",
                         t.shape().ToString());
      lists[g]->push_back(t.data<std::string>()[0]);
    }
  }
  const Tensor& m = ctx.input(in.missing);
  if (m.rank() != 1)
    return ctx.Error("expected feature_list_dense_missing_assumed_empty to be a vector, got shape ",
                     m.shape().ToString());
  const auto missing = m.flat<std::string>();
  for (const std::string& key : k.fd)
    k.missing_ok.push_back(std::find(missing.begin(), missing.end(), key) != missing.end());
  return k;
}

std::vector<std::string> SortedUnique(std::initializer_list<const std::vector<std::string>*> ls) {
  std::vector<std::string> all;
  for (const auto* l : ls) all.insert(all.end(), l->begin(), l->end());
  std::sort(all.begin(), all.end());
  all.erase(std::unique(all.begin(), all.end()), all.end());
  return all;
}
size_t Slot(const std::vector<std::string>& wanted, const std::string& key) {
  return static_cast<size_t>(std::lower_bound(wanted.begin(), wanted.end(), key) - wanted.begin());
}

// Typed output writing: values of a feature at `at`, zeros / "" as padding.
void Put(const FeatureValues& v, Tensor* out, int64_t at) {
  if (v.kind == FeatureValues::Kind::kFloat)
    std::copy(v.floats.begin(), v.floats.end(), out->data<float>() + at);
  if (v.kind == FeatureValues::Kind::kInt64)
    std::copy(v.ints.begin(), v.ints.end(), out->data<int64_t>() + at);
  if (v.kind == FeatureValues::Kind::kBytes)
    for (size_t i = 0; i < v.bytes.size(); ++i)
      out->data<std::string>()[at + static_cast<int64_t>(i)] = std::string(v.bytes[i]);
}
void Pad(Tensor* out, int64_t from, int64_t to) {
  if (out->dtype() == DType::kFloat)
    std::fill(out->data<float>() + from, out->data<float>() + to, 0.f);
  if (out->dtype() == DType::kInt64)
    std::fill(out->data<int64_t>() + from, out->data<int64_t>() + to, int64_t{0});
  if (out->dtype() == DType::kString)
    for (int64_t i = from; i < to; ++i) out->data<std::string>()[i].clear();
}
void CopyTensor(const Tensor& from, Tensor* to, int64_t at) {
  const int64_t n = from.NumElements();
  if (from.dtype() == DType::kFloat) std::copy_n(from.data<float>(), n, to->data<float>() + at);
  if (from.dtype() == DType::kInt64) std::copy_n(from.data<int64_t>(), n, to->data<int64_t>() + at);
  if (from.dtype() == DType::kString)
    std::copy_n(from.data<std::string>(), n, to->data<std::string>() + at);
}
void PutSplit(Tensor* t, int64_t i, int64_t v) {
  if (t->dtype() == DType::kInt32)
    t->data<int32_t>()[i] = static_cast<int32_t>(v);
  else
    t->data<int64_t>()[i] = v;
}

// The parsed records: every wanted context feature and feature list of every record.
class Records {
 public:
  Records(const KernelContext& ctx, const Tensor& ser, const Tensor& names, const Keys& k)
      : ctx_(ctx), ser_(ser), names_(names) {
    ctx_keys_ = SortedUnique({&k.cs, &k.cd, &k.cr});
    list_keys_ = SortedUnique({&k.fs, &k.fd, &k.fr});
  }
  int64_t batch() const { return ser_.NumElements(); }
  std::string Name(int64_t b) const {
    return names_.NumElements() == batch() && names_.NumElements() > 0
               ? names_.data<std::string>()[b]
               : std::string("<unknown>");
  }

  Status Parse() {
    const int64_t n = batch();
    ctx_values_.resize(n);
    ctx_found_.resize(n);
    list_steps_.resize(n);
    list_found_.resize(n);
    for (int64_t b = 0; b < n; ++b) {
      SequenceExampleParts parts;
      Status s =
          ParseSequenceExampleParts(ser_.data<std::string>()[b], ctx_keys_, list_keys_, &parts);
      if (!s.ok())
        return ctx_.Error("Invalid protocol message input, example id: ", Name(b), ": ",
                          s.message());
      ctx_values_[b].resize(ctx_keys_.size());
      ctx_found_[b] = parts.context_found;
      for (size_t i = 0; i < ctx_keys_.size(); ++i) {
        if (!parts.context_found[i]) continue;
        s = ParseFeature(parts.context[i], &ctx_values_[b][i]);
        if (!s.ok())
          return ctx_.Error("Name: ", Name(b), ", Context feature: ", ctx_keys_[i], ": ",
                            s.message());
      }
      list_steps_[b].resize(list_keys_.size());
      list_found_[b] = parts.lists_found;
      for (size_t i = 0; i < list_keys_.size(); ++i) {
        if (!parts.lists_found[i]) continue;
        s = ParseFeatureList(parts.lists[i], &list_steps_[b][i]);
        if (!s.ok())
          return ctx_.Error("Error in sequence feature ", list_keys_[i], " in example ", Name(b),
                            ": ", s.message());
      }
    }
    return OkStatus();
  }

  // Record b's context feature `key` checked against t; null when missing.
  Result<const FeatureValues*> Context(int64_t b, const std::string& key, DType t) const {
    const size_t i = Slot(ctx_keys_, key);
    if (!ctx_found_[b][i]) return nullptr;
    const FeatureValues& v = ctx_values_[b][i];
    if (v.kind != FeatureValues::Kind::kNone && v.kind != KindOf(t))
      return ctx_.Error("Name: ", Name(b), ", Context feature: ", key,
                        ".  Data types don't match. Expected type: ", TypeName(t));
    return &v;
  }
  // Record b's feature list `key`, every step checked against t; null when missing.
  Result<const std::vector<FeatureValues>*> List(int64_t b, const std::string& key, DType t) const {
    const size_t i = Slot(list_keys_, key);
    if (!list_found_[b][i]) return nullptr;
    const auto& steps = list_steps_[b][i];
    for (size_t j = 0; j < steps.size(); ++j)
      if (steps[j].kind != FeatureValues::Kind::kNone && steps[j].kind != KindOf(t))
        return ctx_.Error("Name: ", Name(b), ", Feature list: ", key, ", Index: ", j,
                          ".  Data types don't match. Expected type: ", TypeName(t));
    return &steps;
  }

 private:
  const KernelContext& ctx_;
  const Tensor& ser_;
  const Tensor& names_;
  std::vector<std::string> ctx_keys_, list_keys_;
  std::vector<std::vector<FeatureValues>> ctx_values_;
  std::vector<std::vector<bool>> ctx_found_;
  std::vector<std::vector<std::vector<FeatureValues>>> list_steps_;
  std::vector<std::vector<bool>> list_found_;
};

// Where the outputs of each kind start.
struct Outputs {
  int cs = 0, cd, cr, fs, fd, fd_len, fr;
};
Outputs OutputsOf(const SeqState& st) {
  Outputs o;
  o.cd = o.cs + 3 * st.cs.size();
  o.cr = o.cd + st.cd.size();
  o.fs = o.cr + 2 * st.cr.size();
  o.fd = o.fs + 3 * st.fs.size();
  o.fd_len = o.fd + st.fd.size();
  o.fr = o.fd_len + (st.form == Form::kSingle ? 0 : st.fd.size());
  return o;
}

Shape Batched(bool scalar, int64_t batch, std::vector<int64_t> dims) {
  if (!scalar) dims.insert(dims.begin(), batch);
  Shape s;
  for (int64_t d : dims) s.AddDim(d);
  return s;
}

Status ContextSparse(const KernelContext& ctx, const Records& rec, const Group& g,
                     const std::vector<std::string>& keys, int out, bool scalar) {
  const int64_t batch = rec.batch();
  const int64_t w = scalar ? 1 : 2;
  for (int s = 0; s < g.size(); ++s) {
    std::vector<const FeatureValues*> per(batch);
    int64_t total = 0, longest = 0;
    for (int64_t b = 0; b < batch; ++b) {
      KILN_ASSIGN_OR_RETURN(per[b], rec.Context(b, keys[s], g.types[s]));
      const int64_t n = per[b] ? static_cast<int64_t>(per[b]->size()) : 0;
      total += n;
      longest = std::max(longest, n);
    }
    KILN_ASSIGN_OR_RETURN(Tensor * idx, ctx.AllocateOutput(out + s, Shape{total, w}));
    KILN_ASSIGN_OR_RETURN(Tensor * val, ctx.AllocateOutput(out + g.size() + s, Shape{total}));
    KILN_ASSIGN_OR_RETURN(Tensor * shp, ctx.AllocateOutput(out + 2 * g.size() + s, Shape{w}));
    int64_t at = 0;
    for (int64_t b = 0; b < batch; ++b) {
      if (!per[b]) continue;
      Put(*per[b], val, at);
      for (int64_t i = 0; i < static_cast<int64_t>(per[b]->size()); ++i, ++at) {
        int64_t* row = idx->data<int64_t>() + at * w;
        if (!scalar) row[0] = b;
        row[w - 1] = i;
      }
    }
    if (!scalar) shp->data<int64_t>()[0] = batch;
    shp->data<int64_t>()[w - 1] = longest;
  }
  return OkStatus();
}

Status ContextDense(const KernelContext& ctx, const Records& rec, const Group& g,
                    const std::vector<std::string>& keys, int first_default, int out, bool scalar) {
  const int64_t batch = rec.batch();
  for (int d = 0; d < g.size(); ++d) {
    const std::string& key = keys[d];
    const Tensor& dflt = ctx.input(first_default + d);
    const auto dims = g.shapes[d].dims();
    const Shape shape = Batched(true, 0, {dims.begin(), dims.end()});
    if (dflt.NumElements() > 0 && dflt.shape() != shape)
      return ctx.Error("default_value[", d, "].shape() == ", dflt.shape().ToString(),
                       " != context_dense_shapes[", d, "] == ", shape.ToString());
    const int64_t n = shape.num_elements();
    std::vector<const FeatureValues*> per(batch);
    int64_t longest = dflt.NumElements();
    for (int64_t b = 0; b < batch; ++b) {
      KILN_ASSIGN_OR_RETURN(per[b], rec.Context(b, key, g.types[d]));
      if (per[b]) longest = std::max(longest, static_cast<int64_t>(per[b]->size()));
    }
    if (longest != n)
      return ctx.Error("Inconsistent max number of elements for feature ", key, ": expected ", n,
                       ", but found ", longest);
    const Shape out_shape = Batched(scalar, batch, {dims.begin(), dims.end()});
    KILN_ASSIGN_OR_RETURN(Tensor * o, ctx.AllocateOutput(out + d, out_shape));
    for (int64_t b = 0; b < batch; ++b) {
      if (!per[b]) {
        if (dflt.NumElements() == 0)
          return ctx.Error("Feature: ", key, " (data type: ", TypeName(g.types[d]),
                           ") is required but could not be found.");
        CopyTensor(dflt, o, b * n);
        continue;
      }
      if (static_cast<int64_t>(per[b]->size()) != n)
        return ctx.Error("Unexpected number of elements in example ", rec.Name(b), " for feature ",
                         key, ": ", per[b]->size(), ", expected ", n);
      Put(*per[b], o, b * n);
    }
  }
  return OkStatus();
}

Status ContextRagged(const KernelContext& ctx, const Records& rec, const Group& g,
                     const std::vector<std::string>& keys, int out, bool scalar) {
  const int64_t batch = rec.batch();
  for (int r = 0; r < g.size(); ++r) {
    std::vector<const FeatureValues*> per(batch);
    int64_t total = 0;
    for (int64_t b = 0; b < batch; ++b) {
      KILN_ASSIGN_OR_RETURN(per[b], rec.Context(b, keys[r], g.types[r]));
      total += per[b] ? static_cast<int64_t>(per[b]->size()) : 0;
    }
    KILN_ASSIGN_OR_RETURN(Tensor * val, ctx.AllocateOutput(out + r, Shape{total}));
    KILN_ASSIGN_OR_RETURN(Tensor * splits, ctx.AllocateOutput(out + g.size() + r,
                                                              scalar ? Shape() : Shape{batch + 1}));
    int64_t at = 0;
    if (scalar) PutSplit(splits, 0, 0);
    for (int64_t b = 0; b <= batch; ++b) {
      if (!scalar) PutSplit(splits, b, at);
      if (b == batch || !per[b]) continue;
      Put(*per[b], val, at);
      at += static_cast<int64_t>(per[b]->size());
    }
  }
  return OkStatus();
}

Status ListDense(const KernelContext& ctx, const Records& rec, const Group& g, const Keys& k,
                 int out, int out_len, bool scalar) {
  const int64_t batch = rec.batch();
  for (int d = 0; d < g.size(); ++d) {
    const std::string& key = k.fd[d];
    const auto dims = g.shapes[d].dims();
    const int64_t row = Batched(true, 0, {dims.begin(), dims.end()}).num_elements();
    std::vector<const std::vector<FeatureValues>*> per(batch);
    int64_t longest = 0, most_steps = 0;
    for (int64_t b = 0; b < batch; ++b) {
      KILN_ASSIGN_OR_RETURN(per[b], rec.List(b, key, g.types[d]));
      if (!per[b]) continue;
      int64_t n = 0;
      for (const FeatureValues& v : *per[b]) n += static_cast<int64_t>(v.size());
      longest = std::max(longest, n);
      most_steps = std::max(most_steps, static_cast<int64_t>(per[b]->size()));
    }
    if (row > 0 && longest % row != 0)
      return ctx.Error("Feature list '", key,
                       "' has an unexpected number of values.  Total values size: ", longest,
                       " is not consistent with output shape: ", g.shapes[d].ToPythonString(),
                       " per step");
    const int64_t rows = row > 0 ? longest / row : most_steps;
    std::vector<int64_t> out_dims = {rows};
    out_dims.insert(out_dims.end(), dims.begin(), dims.end());
    KILN_ASSIGN_OR_RETURN(Tensor * o,
                          ctx.AllocateOutput(out + d, Batched(scalar, batch, out_dims)));
    Tensor* lengths = nullptr;
    if (out_len >= 0) {
      const Shape len_shape = Batched(scalar, batch, {});
      KILN_ASSIGN_OR_RETURN(lengths, ctx.AllocateOutput(out_len + d, len_shape));
    }
    for (int64_t b = 0; b < batch; ++b) {
      if (!per[b] && !k.missing_ok[d])
        return ctx.Error(
            "Name: ", rec.Name(b), ", Feature list '", key,
            "' is required but could not be found.  Did you mean to include it in "
            "feature_list_dense_missing_assumed_empty or feature_list_dense_defaults?");
      const int64_t base = b * rows * row;
      int64_t at = base;
      const int64_t steps = per[b] ? static_cast<int64_t>(per[b]->size()) : 0;
      for (int64_t j = 0; j < steps; ++j) {
        const FeatureValues& v = (*per[b])[j];
        if (static_cast<int64_t>(v.size()) != row)
          return ctx.Error("Name: ", rec.Name(b), ", Key: ", key, ", Index: ", j,
                           ".  Number of values != expected.  values size: ", v.size(),
                           " but output shape: ", g.shapes[d].ToPythonString());
        Put(v, o, at);
        at += row;
      }
      Pad(o, at, base + rows * row);
      if (lengths) lengths->data<int64_t>()[b] = steps;
    }
  }
  return OkStatus();
}

Status ListSparse(const KernelContext& ctx, const Records& rec, const Group& g,
                  const std::vector<std::string>& keys, int out, bool scalar) {
  const int64_t batch = rec.batch();
  const int64_t w = scalar ? 2 : 3;
  for (int s = 0; s < g.size(); ++s) {
    std::vector<const std::vector<FeatureValues>*> per(batch);
    int64_t total = 0, most_steps = 0, longest = 0;
    for (int64_t b = 0; b < batch; ++b) {
      KILN_ASSIGN_OR_RETURN(per[b], rec.List(b, keys[s], g.types[s]));
      if (!per[b]) continue;
      most_steps = std::max(most_steps, static_cast<int64_t>(per[b]->size()));
      for (const FeatureValues& v : *per[b]) {
        total += static_cast<int64_t>(v.size());
        longest = std::max(longest, static_cast<int64_t>(v.size()));
      }
    }
    KILN_ASSIGN_OR_RETURN(Tensor * idx, ctx.AllocateOutput(out + s, Shape{total, w}));
    KILN_ASSIGN_OR_RETURN(Tensor * val, ctx.AllocateOutput(out + g.size() + s, Shape{total}));
    KILN_ASSIGN_OR_RETURN(Tensor * shp, ctx.AllocateOutput(out + 2 * g.size() + s, Shape{w}));
    int64_t at = 0;
    for (int64_t b = 0; b < batch; ++b) {
      if (!per[b]) continue;
      for (size_t j = 0; j < per[b]->size(); ++j) {
        const FeatureValues& v = (*per[b])[j];
        Put(v, val, at);
        for (int64_t i = 0; i < static_cast<int64_t>(v.size()); ++i, ++at) {
          int64_t* r = idx->data<int64_t>() + at * w;
          if (!scalar) r[0] = b;
          r[w - 2] = static_cast<int64_t>(j);
          r[w - 1] = i;
        }
      }
    }
    int64_t* sh = shp->data<int64_t>();
    if (!scalar) sh[0] = batch;
    sh[w - 2] = most_steps;
    sh[w - 1] = longest;
  }
  return OkStatus();
}

Status ListRagged(const KernelContext& ctx, const Records& rec, const Group& g,
                  const std::vector<std::string>& keys, int out, bool scalar) {
  const int64_t batch = rec.batch();
  const int n = g.size();
  for (int r = 0; r < n; ++r) {
    std::vector<const std::vector<FeatureValues>*> per(batch);
    int64_t total = 0, steps = 0;
    for (int64_t b = 0; b < batch; ++b) {
      KILN_ASSIGN_OR_RETURN(per[b], rec.List(b, keys[r], g.types[r]));
      if (!per[b]) continue;
      steps += static_cast<int64_t>(per[b]->size());
      for (const FeatureValues& v : *per[b]) total += static_cast<int64_t>(v.size());
    }
    KILN_ASSIGN_OR_RETURN(Tensor * val, ctx.AllocateOutput(out + r, Shape{total}));
    KILN_ASSIGN_OR_RETURN(Tensor * outer,
                          ctx.AllocateOutput(out + n + r, scalar ? Shape() : Shape{batch + 1}));
    KILN_ASSIGN_OR_RETURN(Tensor * inner, ctx.AllocateOutput(out + 2 * n + r, Shape{steps + 1}));
    int64_t at = 0, step = 0;
    PutSplit(inner, 0, 0);
    PutSplit(outer, 0, 0);
    for (int64_t b = 0; b < batch; ++b) {
      if (per[b]) {
        for (const FeatureValues& v : *per[b]) {
          Put(v, val, at);
          at += static_cast<int64_t>(v.size());
          PutSplit(inner, ++step, at);
        }
      }
      if (!scalar) PutSplit(outer, b + 1, step);
    }
  }
  return OkStatus();
}

Status ComputeSequenceExample(const KernelContext& ctx) {
  const auto& st = ctx.state<SeqState>();
  const Inputs in = InputsOf(st);
  const Tensor& ser = ctx.input(0);
  if (ser.rank() > 1 || (st.form == Form::kSingle && ser.rank() != 0))
    return ctx.Error("expected serialized to be a ",
                     st.form == Form::kSingle ? "scalar" : "scalar or vector",
                     ", got shape: ", ser.shape().ToString());
  const Tensor& names = ctx.input(in.debug_name);
  if (names.NumElements() > 0 && names.NumElements() != ser.NumElements())
    return ctx.Error("input 'debug_name' must be empty or hold one name per record");
  const bool scalar = ser.rank() == 0;
  KILN_ASSIGN_OR_RETURN(Keys k, ReadKeys(ctx, st, in));
  Records rec(ctx, ser, names, k);
  KILN_RETURN_IF_ERROR(rec.Parse());
  const Outputs o = OutputsOf(st);
  KILN_RETURN_IF_ERROR(ContextSparse(ctx, rec, st.cs, k.cs, o.cs, scalar));
  KILN_RETURN_IF_ERROR(ContextDense(ctx, rec, st.cd, k.cd, in.defaults, o.cd, scalar));
  KILN_RETURN_IF_ERROR(ContextRagged(ctx, rec, st.cr, k.cr, o.cr, scalar));
  KILN_RETURN_IF_ERROR(ListSparse(ctx, rec, st.fs, k.fs, o.fs, scalar));
  KILN_RETURN_IF_ERROR(
      ListDense(ctx, rec, st.fd, k, o.fd, st.form == Form::kSingle ? -1 : o.fd_len, scalar));
  return ListRagged(ctx, rec, st.fr, k.fr, o.fr, scalar);
}

constexpr KernelEntry kCpu[] = {
    {"ParseSequenceExampleV2", ComputeSequenceExample},
    {"ParseSequenceExample", ComputeSequenceExample},
    {"ParseSingleSequenceExample", ComputeSequenceExample},
};

}  // namespace

std::span<const KernelEntry> SequenceExampleCpuKernels() { return kCpu; }

}  // namespace kiln::exec
