// The CPU kernels of the tf.Example parse ops in kernels/parse_example_ops.cc (ParseExampleV2,
// ParseExample, ParseSingleExample): each record read with the wire-format parser
// (kernels/example_wire.h), as TensorFlow's fast parser reads it. Errors are TF's, naming the
// key and the record.
#include "kernels/parse_example_ops.h"

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "kernels/example_wire.h"
#include "kernels/kernel_util.h"

namespace kiln::exec {
namespace {

using parse_example::Form;
using parse_example::Inputs;
using parse_example::InputsOf;
using parse_example::ParseState;

const char* TypeName(DType t) {
  return t == DType::kFloat ? "float" : t == DType::kInt64 ? "int64" : "string";
}
const char* KindName(FeatureValues::Kind k) {
  return k == FeatureValues::Kind::kFloat   ? "float"
         : k == FeatureValues::Kind::kInt64 ? "int64"
                                            : "string";
}
const char* ListName(FeatureValues::Kind k) {
  return k == FeatureValues::Kind::kFloat   ? "float_list"
         : k == FeatureValues::Kind::kInt64 ? "int64_list"
                                            : "bytes_list";
}
// A record in an error, quoted as TF quotes it, its bytes C-escaped as TF's own debug strings
// (TF echoes them raw: a serialized proto's binary in a terminal or a log). TF echoes all of it;
// a long one is cut here (the message travels in a gRPC status, whose metadata is limited) and
// its size given.
std::string QuotedRecord(const std::string& record) {
  constexpr size_t kShown = 1024;
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out = "'";
  for (size_t i = 0; i < std::min(record.size(), kShown); ++i) {
    const auto c = static_cast<unsigned char>(record[i]);
    if (c == '\\' || c == '\'') {
      out += '\\';
      out += static_cast<char>(c);
    } else if (c >= 0x20 && c < 0x7f) {
      out += static_cast<char>(c);
    } else {
      out += "\\x";
      out += kHex[c >> 4];
      out += kHex[c & 0xf];
    }
  }
  out += "'";
  if (record.size() > kShown) out += internal::StrCat("... (", record.size(), " bytes)");
  return out;
}
FeatureValues::Kind KindOf(DType t) {
  return t == DType::kFloat   ? FeatureValues::Kind::kFloat
         : t == DType::kInt64 ? FeatureValues::Kind::kInt64
                              : FeatureValues::Kind::kBytes;
}

// ---- compute ---------------------------------------------------------------------------------

Result<std::vector<std::string>> KeysFrom(const KernelContext& ctx, int first, int count,
                                          bool one_per_input) {
  std::vector<std::string> keys;
  if (first < 0) return keys;
  if (one_per_input) {
    for (int i = 0; i < count; ++i) {
      const Tensor& t = ctx.input(first + i);
      if (t.NumElements() != 1) return ctx.Error("each key input must be a scalar string");
      keys.push_back(t.data<std::string>()[0]);
    }
    return keys;
  }
  const Tensor& t = ctx.input(first);
  if (t.NumElements() != count)
    return ctx.Error("input of keys holds ", t.NumElements(), " keys; the attrs give ", count);
  for (int64_t i = 0; i < t.NumElements(); ++i) keys.push_back(t.data<std::string>()[i]);
  return keys;
}

// Appends `n` values of feature `v` (or of a default tensor) to typed output storage.
void Append(const FeatureValues& v, DType t, Tensor* out, int64_t at) {
  if (t == DType::kFloat) std::copy(v.floats.begin(), v.floats.end(), out->data<float>() + at);
  if (t == DType::kInt64) std::copy(v.ints.begin(), v.ints.end(), out->data<int64_t>() + at);
  if (t == DType::kString)
    for (size_t i = 0; i < v.bytes.size(); ++i)
      out->data<std::string>()[at + static_cast<int64_t>(i)] = std::string(v.bytes[i]);
}
void CopyElem(const Tensor& from, int64_t i, Tensor* to, int64_t j) {
  if (from.dtype() == DType::kFloat) to->data<float>()[j] = from.data<float>()[i];
  if (from.dtype() == DType::kInt64) to->data<int64_t>()[j] = from.data<int64_t>()[i];
  if (from.dtype() == DType::kString) to->data<std::string>()[j] = from.data<std::string>()[i];
}

Status ComputeParse(const KernelContext& ctx) {
  const auto& st = ctx.state<ParseState>();
  const Inputs in = InputsOf(st);
  const Tensor& ser = ctx.input(0);
  if (ser.rank() > 1) return ctx.Error("input 'serialized' must be a scalar or a vector");
  const bool scalar = ser.rank() == 0;
  const int64_t batch = ser.NumElements();
  std::vector<std::string> sparse_keys = st.sparse_keys, dense_keys = st.dense_keys, ragged_keys;
  if (st.form != Form::kSingle) {
    const bool v1 = st.form == Form::kV1;
    KILN_ASSIGN_OR_RETURN(sparse_keys, KeysFrom(ctx, in.sparse_keys, st.num_sparse, v1));
    KILN_ASSIGN_OR_RETURN(dense_keys, KeysFrom(ctx, in.dense_keys, st.num_dense, v1));
    KILN_ASSIGN_OR_RETURN(ragged_keys, KeysFrom(ctx, in.ragged_keys, st.num_ragged, false));
  }
  // Every key once, sorted, and where each feature's values land.
  std::vector<std::string> wanted;
  for (const auto* keys : {&sparse_keys, &dense_keys, &ragged_keys})
    wanted.insert(wanted.end(), keys->begin(), keys->end());
  std::sort(wanted.begin(), wanted.end());
  wanted.erase(std::unique(wanted.begin(), wanted.end()), wanted.end());
  auto slot = [&](const std::string& k) {
    return static_cast<size_t>(std::lower_bound(wanted.begin(), wanted.end(), k) - wanted.begin());
  };
  // Where an error is: TF's batch parser names the record, its single-record parser (a scalar
  // `serialized`) only the key.
  auto where = [&](int64_t b, const std::string& key) {
    return scalar ? internal::StrCat("Key: ", key, ".  ")
                  : internal::StrCat("Name: <unknown>, Key: ", key, ", Index: ", b, ".  ");
  };
  std::vector<std::vector<FeatureValues>> values(batch);
  std::vector<std::vector<bool>> found(batch);
  for (int64_t b = 0; b < batch; ++b) {
    const std::string& record = ser.data<std::string>()[b];
    size_t bad = 0;
    if (ParseExampleFeatures(record, wanted, &values[b], &found[b], &bad).ok()) continue;
    if (bad == wanted.size())
      return ctx.Error("Could not parse example input, value: ", QuotedRecord(record));
    if (!scalar) return ctx.Error(where(b, wanted[bad]), "Can't parse serialized Example.");
    const FeatureValues::Kind kind = values[b][bad].kind;
    return ctx.Error(where(b, wanted[bad]), "Can't parse serialized Example",
                     kind == FeatureValues::Kind::kNone
                         ? std::string(".")
                         : internal::StrCat(": Parsing ", ListName(kind), " failed."));
  }
  // The feature of record b for `key` checked against dtype t; null when missing.
  auto feature = [&](int64_t b, const std::string& key, DType t) -> Result<const FeatureValues*> {
    const size_t i = slot(key);
    if (!found[b][i] || values[b][i].kind == FeatureValues::Kind::kNone) return nullptr;
    const FeatureValues& v = values[b][i];
    if (v.kind != KindOf(t))
      return ctx.Error(where(b, key), "Data types don't match. Data type: ", KindName(v.kind),
                       " but expected type: ", TypeName(t));
    return &v;
  };
  int out = 0;
  const int rank_plus = scalar ? 1 : 2;
  // Sparse: indices, then values, then shapes (each group num_sparse outputs).
  for (int s = 0; s < st.num_sparse; ++s) {
    const DType t = st.sparse_types[s];
    int64_t total = 0, longest = 0;
    std::vector<const FeatureValues*> per(batch);
    for (int64_t b = 0; b < batch; ++b) {
      KILN_ASSIGN_OR_RETURN(per[b], feature(b, sparse_keys[s], t));
      const int64_t n = per[b] ? static_cast<int64_t>(per[b]->size()) : 0;
      total += n;
      longest = std::max(longest, n);
    }
    KILN_ASSIGN_OR_RETURN(Tensor * idx, ctx.AllocateOutput(out + s, Shape{total, rank_plus}));
    KILN_ASSIGN_OR_RETURN(Tensor * val, ctx.AllocateOutput(out + st.num_sparse + s, Shape{total}));
    KILN_ASSIGN_OR_RETURN(Tensor * shp,
                          ctx.AllocateOutput(out + 2 * st.num_sparse + s, Shape{rank_plus}));
    int64_t at = 0;
    for (int64_t b = 0; b < batch; ++b) {
      if (!per[b]) continue;
      const int64_t n = static_cast<int64_t>(per[b]->size());
      Append(*per[b], t, val, at);
      for (int64_t i = 0; i < n; ++i) {
        int64_t* row = idx->data<int64_t>() + (at + i) * rank_plus;
        if (!scalar) row[0] = b;
        row[rank_plus - 1] = i;
      }
      at += n;
    }
    if (!scalar) shp->data<int64_t>()[0] = batch;
    shp->data<int64_t>()[rank_plus - 1] = longest;
  }
  out += 3 * st.num_sparse;
  // Dense.
  for (int d = 0; d < st.num_dense; ++d) {
    const DType t = st.dense_types[d];
    const std::string& key = dense_keys[d];
    const PartialShape& ds = st.dense_shapes[d];
    const Tensor& dflt = ctx.input(in.defaults + d);
    if (ds.unknown_rank()) return ctx.Error("dense feature '", key, "' has no shape");
    const bool variable = ds.rank() > 0 && ds.dim(0) < 0;
    int64_t stride = 1;
    for (int i = variable ? 1 : 0; i < ds.rank(); ++i) {
      if (ds.dim(i) < 0)
        return ctx.Error("dense feature '", key, "': only the first dim may be unknown, got ",
                         ds.ToPythonString());
      stride *= ds.dim(i);
    }
    std::vector<const FeatureValues*> per(batch);
    int64_t rows = variable ? 0 : 1;
    for (int64_t b = 0; b < batch; ++b) {
      KILN_ASSIGN_OR_RETURN(per[b], feature(b, key, t));
      const int64_t n = per[b] ? static_cast<int64_t>(per[b]->size()) : 0;
      if (per[b] && !variable && n != stride)
        return ctx.Error(where(b, key), "Number of ", TypeName(t),
                         " values != expected.  Values size: ", n,
                         " but output shape: ", ds.ToCliString());
      if (per[b] && variable && (stride == 0 ? n != 0 : n % stride != 0))
        return ctx.Error(where(b, key), "Number of ", TypeName(t), " values is not a multiple of ",
                         stride, " (the shape after the first dim of ", ds.ToCliString(), ")");
      if (variable && stride > 0) rows = std::max(rows, n / stride);
      if (!per[b] && !variable && dflt.NumElements() == 0)
        return ctx.Error(scalar ? "" : "Name: <unknown>, ", "Feature: ", key,
                         " (data type: ", TypeName(t), ") is required but could not be found.");
    }
    Shape shape;
    if (!scalar) shape.AddDim(batch);
    if (variable) shape.AddDim(rows);
    for (int i = variable ? 1 : 0; i < ds.rank(); ++i) shape.AddDim(ds.dim(i));
    KILN_ASSIGN_OR_RETURN(Tensor * o, ctx.AllocateOutput(out + d, shape));
    const int64_t per_record = rows * stride;
    if (!variable && per_record > 0 && dflt.NumElements() != 0 && dflt.NumElements() != 1 &&
        dflt.NumElements() != per_record)
      return ctx.Error("dense feature '", key, "': default holds ", dflt.NumElements(),
                       " values, expected ", per_record);
    for (int64_t b = 0; b < batch; ++b) {
      const int64_t base = b * per_record;
      int64_t have = 0;
      if (per[b]) {
        Append(*per[b], t, o, base);
        have = static_cast<int64_t>(per[b]->size());
      }
      // The rest (all of a missing record, the padding of a short one) from the default.
      for (int64_t i = have; i < per_record; ++i) {
        if (dflt.NumElements() == 0)
          return ctx.Error(where(b, key), "Feature: ", key,
                           " needs a default value to pad to the longest record");
        CopyElem(dflt, dflt.NumElements() == 1 ? 0 : i, o, base + i);
      }
    }
  }
  out += st.num_dense;
  // Ragged: values, then row splits.
  for (int r = 0; r < st.num_ragged; ++r) {
    const DType t = st.ragged_types[r];
    std::vector<const FeatureValues*> per(batch);
    int64_t total = 0;
    for (int64_t b = 0; b < batch; ++b) {
      KILN_ASSIGN_OR_RETURN(per[b], feature(b, ragged_keys[r], t));
      total += per[b] ? static_cast<int64_t>(per[b]->size()) : 0;
    }
    KILN_ASSIGN_OR_RETURN(Tensor * val, ctx.AllocateOutput(out + r, Shape{total}));
    KILN_ASSIGN_OR_RETURN(Tensor * splits,
                          ctx.AllocateOutput(out + st.num_ragged + r, Shape{batch + 1}));
    int64_t at = 0;
    for (int64_t b = 0; b <= batch; ++b) {
      if (splits->dtype() == DType::kInt32)
        splits->data<int32_t>()[b] = static_cast<int32_t>(at);
      else
        splits->data<int64_t>()[b] = at;
      if (b == batch || !per[b]) continue;
      Append(*per[b], t, val, at);
      at += static_cast<int64_t>(per[b]->size());
    }
  }
  return OkStatus();
}

constexpr KernelEntry kCpu[] = {
    {"ParseExampleV2", ComputeParse},
    {"ParseExample", ComputeParse},
    {"ParseSingleExample", ComputeParse},
};

}  // namespace

std::span<const KernelEntry> ParseExampleCpuKernels() { return kCpu; }

}  // namespace kiln::exec
