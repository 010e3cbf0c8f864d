// Op-tester cases of ragged tensors: RaggedRange, RaggedGather, RaggedTensorToSparse,
// RaggedTensorToTensor, RaggedTensorToVariant, RaggedTensorFromVariant. The references build
// the ragged tensor as an explicit tree of rows and walk that.
#include <algorithm>
#include <cmath>

#include "kernels/ragged_util.h"
#include "ops/array_ref.h"
#include "ops/op_cases.h"

namespace kiln::testing {
namespace {

using Splits = std::vector<int64_t>;

// A ragged row: sub-rows, or (at the last ragged level) the value rows it holds.
struct Node {
  std::vector<Node> kids;
  std::vector<int64_t> values;
};

Node Build(const std::vector<Splits>& s, size_t level, int64_t row) {
  Node n;
  for (int64_t c = s[level][row]; c < s[level][row + 1]; ++c) {
    if (level + 1 == s.size()) {
      n.values.push_back(c);
    } else {
      n.kids.push_back(Build(s, level + 1, c));
    }
  }
  return n;
}

std::vector<Node> Tree(const std::vector<Splits>& s) {
  std::vector<Node> rows;
  for (size_t r = 0; r + 1 < s[0].size(); ++r) rows.push_back(Build(s, 0, static_cast<int64_t>(r)));
  return rows;
}

// Splits (one per level below `nodes`) and value rows of a list of rows `depth` levels deep.
void Flatten(const std::vector<const Node*>& nodes, int depth, std::vector<Splits>* splits,
             std::vector<int64_t>* rows) {
  Splits s = {0};
  std::vector<const Node*> next;
  for (const Node* n : nodes) {
    if (depth == 1) {
      s.push_back(s.back() + static_cast<int64_t>(n->values.size()));
      rows->insert(rows->end(), n->values.begin(), n->values.end());
    } else {
      s.push_back(s.back() + static_cast<int64_t>(n->kids.size()));
      for (const Node& k : n->kids) next.push_back(&k);
    }
  }
  splits->push_back(s);
  if (depth > 1) Flatten(next, depth - 1, splits, rows);
}

Tensor Rows(const Tensor& values, const std::vector<int64_t>& rows) {
  Shape s = values.shape();
  s.set_dim(0, static_cast<int64_t>(rows.size()));
  const int64_t per = values.dim(0) == 0 ? 0 : values.NumElements() / values.dim(0);
  return RefMove(values, s, [&](const Index& o) {
    return rows[o[0]] * per + (per == 0 ? 0 : FlatOf(o, s) % per);
  });
}

Tensor SplitsOf(const Splits& s, DType t) {
  return RefUnaryDouble(
      Make<int64_t>(s, Shape{static_cast<int64_t>(s.size())}), [](double v) { return v; }, t);
}

// rt = [[[v0, v1], [v2]], [], [[v3, v4, v5]], [[], [v6]]] with values of shape [7, 2].
const std::vector<Splits> kSplits = {{0, 2, 2, 3, 5}, {0, 2, 3, 6, 6, 7}};

}  // namespace

std::vector<OpCase> RaggedCases() {
  std::vector<OpCase> c;
  // RaggedRange with broadcast scalars, both directions, empty rows.
  for (DType t : {DType::kInt32, DType::kInt64, DType::kFloat, DType::kDouble}) {
    for (DType ts : {DType::kInt64, DType::kInt32}) {
      auto conv = [t](const std::vector<double>& v) {
        return RefUnaryDouble(
            Vec<double>(v), [](double x) { return x; }, t);
      };
      c.push_back(OpCaseBuilder("RaggedRange", "RaggedRange " + DTypeShortName(t) + " splits " +
                                                   DTypeShortName(ts))
                      .T(t)
                      .Type("Tsplits", ts)
                      .Input(conv({0, 5, 2, 1}))
                      .Input(RefUnaryDouble(
                          Tensor::Scalar<double>(8), [](double x) { return x; }, t))
                      .Input(conv({3, -1, 1, 10}))
                      .Reference([t, ts](const std::vector<Tensor>&) {
                        const double starts[] = {0, 5, 2, 1}, deltas[] = {3, -1, 1, 10};
                        Splits s = {0};
                        std::vector<double> v;
                        for (int r = 0; r < 4; ++r) {
                          for (double x = starts[r]; deltas[r] > 0 ? x < 8 : x > 8; x += deltas[r])
                            v.push_back(x);
                          s.push_back(static_cast<int64_t>(v.size()));
                        }
                        return std::vector<Tensor>{
                            SplitsOf(s, ts), RefUnaryDouble(
                                                 Vec<double>(v), [](double x) { return x; }, t)};
                      })
                      .Build());
    }
  }
  c.push_back(OpCaseBuilder("RaggedRange", "RaggedRange all scalars, float step")
                  .T(DType::kFloat)
                  .Input(Tensor::Scalar<float>(0.0f))
                  .Input(Tensor::Scalar<float>(1.0f))
                  .Input(Tensor::Scalar<float>(0.25f))
                  .Reference([](const auto&) {
                    return std::vector<Tensor>{Vec<int64_t>({0, 4}),
                                               Vec<float>({0.0f, 0.25f, 0.5f, 0.75f})};
                  })
                  .Build());

  // RaggedGather: flat, 2-D and scalar indices into a ragged rank 2 tensor (and rank 1).
  for (DType t : {DType::kFloat, DType::kString, DType::kInt32, DType::kHalf}) {
    const Tensor values = Distinct(t, Shape{7, 2});
    for (DType ts : {DType::kInt64, DType::kInt32}) {
      for (const Tensor& indices :
           {Make<int64_t>({3, 0, 0, 1}, Shape{4}), Make<int32_t>({2, 0, 1, 3}, Shape{2, 2}),
            Tensor::Scalar<int32_t>(3), Make<int32_t>({}, Shape{0})}) {
        for (int levels : {2, 1}) {
          const std::vector<Splits> sp(kSplits.begin(), kSplits.begin() + levels);
          const Tensor vals = levels == 2 ? values : Distinct(t, Shape{5, 2}, 5);
          const int out_rank = levels + indices.rank() - 1;
          OpCaseBuilder b("RaggedGather", "RaggedGather " + DTypeShortName(t) + " splits " +
                                              DTypeShortName(ts) + " ragged rank " +
                                              std::to_string(levels) + " indices " +
                                              indices.shape().ToString());
          b.Type("Tvalues", t)
              .Type("Tindices", indices.dtype())
              .Type("Tsplits", ts)
              .Int("PARAMS_RAGGED_RANK", levels)
              .Int("OUTPUT_RAGGED_RANK", out_rank);
          for (const Splits& s : sp) b.Input(SplitsOf(s, ts));
          b.Input(vals).Input(indices);
          c.push_back(b.Reference([sp, levels, ts](const std::vector<Tensor>& in) {
                         const std::vector<Node> tree = Tree(sp);
                         const Tensor& ind = in[levels + 1];
                         std::vector<const Node*> picked;
                         for (int64_t i = 0; i < ind.NumElements(); ++i) {
                           const int64_t r = ind.dtype() == DType::kInt32 ? ind.data<int32_t>()[i]
                                                                          : ind.data<int64_t>()[i];
                           picked.push_back(&tree[r]);
                         }
                         std::vector<Splits> out;
                         // The indices' outer dims: uniform rows.
                         int64_t count = 1;
                         for (int d = 0; d + 1 < ind.rank(); ++d) {
                           count *= ind.dim(d);
                           Splits s;
                           for (int64_t i = 0; i <= count; ++i) s.push_back(i * ind.dim(d + 1));
                           out.push_back(s);
                         }
                         std::vector<int64_t> rows;
                         if (ind.rank() == 0) {
                           if (levels == 1) {
                             rows = picked[0]->values;
                           } else {
                             std::vector<const Node*> kids;
                             for (const Node& k : picked[0]->kids) kids.push_back(&k);
                             Flatten(kids, levels - 1, &out, &rows);
                           }
                         } else {
                           Flatten(picked, levels, &out, &rows);
                         }
                         std::vector<Tensor> r;
                         for (const Splits& s : out) r.push_back(SplitsOf(s, ts));
                         r.push_back(Rows(in[levels], rows));
                         return r;
                       }).Build());
        }
      }
    }
  }

  // RaggedTensorToSparse.
  for (DType t : {DType::kFloat, DType::kString, DType::kInt64}) {
    c.push_back(OpCaseBuilder("RaggedTensorToSparse")
                    .T(t)
                    .Type("Tsplits", DType::kInt64)
                    .Int("RAGGED_RANK", 2)
                    .Input(Vec<int64_t>(kSplits[0]))
                    .Input(Vec<int64_t>(kSplits[1]))
                    .Input(Distinct(t, Shape{7, 2}))
                    .Reference([](const std::vector<Tensor>& in) {
                      const std::vector<Node> tree = Tree(kSplits);
                      std::vector<int64_t> idx;
                      int64_t w1 = 0, w2 = 0;
                      for (size_t i = 0; i < tree.size(); ++i) {
                        w1 = std::max<int64_t>(w1, static_cast<int64_t>(tree[i].kids.size()));
                        for (size_t j = 0; j < tree[i].kids.size(); ++j) {
                          const auto& vals = tree[i].kids[j].values;
                          w2 = std::max<int64_t>(w2, static_cast<int64_t>(vals.size()));
                          for (size_t k = 0; k < vals.size(); ++k)
                            for (int64_t e = 0; e < 2; ++e)
                              idx.insert(idx.end(),
                                         {static_cast<int64_t>(i), static_cast<int64_t>(j),
                                          static_cast<int64_t>(k), e});
                        }
                      }
                      return std::vector<Tensor>{
                          Make<int64_t>(idx, Shape{14, 4}),
                          RefMove(in[2], Shape{14}, [](const Index& o) { return o[0]; }),
                          Vec<int64_t>({4, w1, w2, 2})};
                    })
                    .Build());
  }

  // RaggedTensorToTensor: natural size, a given (truncating and padding) shape, a broadcast
  // default, VALUE_ROWIDS partitions.
  for (DType t : {DType::kFloat, DType::kString, DType::kInt32, DType::kBool}) {
    const Tensor values = Distinct(t, Shape{7, 2});
    for (const std::vector<int64_t>& shape :
         {std::vector<int64_t>{}, std::vector<int64_t>{-1, -1, -1, -1},
          std::vector<int64_t>{3, 1, 4, 2}, std::vector<int64_t>{5, -1, 2, -1}}) {
      for (bool row_default : {false, true}) {
        OpCaseBuilder b("RaggedTensorToTensor",
                        "RaggedTensorToTensor " + DTypeShortName(t) + " shape " +
                            std::to_string(shape.size()) +
                            (shape.empty() ? "" : std::to_string(shape[0])) +
                            (row_default ? " row default" : ""));
        b.T(t)
            .Type("Tindex", DType::kInt64)
            .Type("Tshape", DType::kInt64)
            .Int("num_row_partition_tensors", 2)
            .StringList("row_partition_types", {"ROW_SPLITS", "ROW_SPLITS"});
        if (shape.empty()) {
          b.ConstInput(Tensor::Scalar<int64_t>(-1));
        } else {
          b.ConstInput(Vec<int64_t>(shape));
        }
        b.Input(values)
            .Input(row_default ? Distinct(t, Shape{2}, 50) : Distinct(t, Shape{}, 60))
            .Input(Vec<int64_t>(kSplits[0]))
            .Input(Vec<int64_t>(kSplits[1]));
        c.push_back(b.Reference1([shape](const std::vector<Tensor>& in) {
                       const std::vector<Node> tree = Tree(kSplits);
                       int64_t dims[4] = {4, 0, 0, 2};
                       for (const Node& r : tree) {
                         dims[1] = std::max<int64_t>(dims[1], static_cast<int64_t>(r.kids.size()));
                         for (const Node& k : r.kids)
                           dims[2] =
                               std::max<int64_t>(dims[2], static_cast<int64_t>(k.values.size()));
                       }
                       for (size_t d = 0; d < shape.size(); ++d)
                         if (shape[d] >= 0) dims[d] = shape[d];
                       const Shape out{dims[0], dims[1], dims[2], dims[3]};
                       const Tensor& dflt = in[2];
                       Tensor r(in[1].dtype(), out);
                       for (int64_t i = 0; i < out.num_elements(); ++i) {
                         const Index o = Unravel(i, out);
                         const Node* row = o[0] < 4 ? &tree[o[0]] : nullptr;
                         const Node* kid = row && o[1] < static_cast<int64_t>(row->kids.size())
                                               ? &row->kids[o[1]]
                                               : nullptr;
                         if (kid && o[2] < static_cast<int64_t>(kid->values.size())) {
                           CopyElement(in[1], kid->values[o[2]] * 2 + o[3], &r, i);
                         } else {
                           CopyElement(dflt, dflt.rank() == 0 ? 0 : o[3], &r, i);
                         }
                       }
                       return r;
                     }).Build());
      }
    }
  }
  c.push_back(OpCaseBuilder("RaggedTensorToTensor", "RaggedTensorToTensor VALUE_ROWIDS")
                  .T(DType::kFloat)
                  .Type("Tindex", DType::kInt32)
                  .Type("Tshape", DType::kInt32)
                  .Int("num_row_partition_tensors", 2)
                  .StringList("row_partition_types", {"FIRST_DIM_SIZE", "VALUE_ROWIDS"})
                  .ConstInput(Tensor::Scalar<int32_t>(-1))
                  .Input(Vec<float>({1, 2, 3}))
                  .Input(Tensor::Scalar<float>(0))
                  .Input(Tensor::Scalar<int32_t>(4))
                  .Input(Vec<int32_t>({0, 0, 3}))
                  .Reference1([](const auto&) {
                    return Make<float>({1, 2, 0, 0, 0, 0, 3, 0}, Shape{4, 2});
                  })
                  .Build());

  // RaggedTensorToVariant (whole, batched, ragged rank 0) and RaggedTensorFromVariant.
  using exec::RaggedVariant;
  auto variant = [](std::vector<Tensor> splits, Tensor values) {
    Tensor t(DType::kVariant, Shape());
    t.scalar<std::shared_ptr<const VariantBase>>() =
        std::make_shared<const RaggedVariant>(std::move(splits), std::move(values));
    return t;
  };
  const Tensor values = Distinct(DType::kInt32, Shape{7});
  c.push_back(OpCaseBuilder("RaggedTensorToVariant", "RaggedTensorToVariant whole")
                  .Type("Tvalues", DType::kInt32)
                  .Type("Tsplits", DType::kInt64)
                  .Int("RAGGED_RANK", 2)
                  .Bool("batched_input", false)
                  .Input(Vec<int64_t>(kSplits[0]))
                  .Input(Vec<int64_t>(kSplits[1]))
                  .Input(values)
                  .Reference1([variant](const std::vector<Tensor>& in) {
                    return variant({in[0], in[1]}, in[2]);
                  })
                  .Build());
  c.push_back(
      OpCaseBuilder("RaggedTensorToVariant", "RaggedTensorToVariant ragged rank 0")
          .Type("Tvalues", DType::kFloat)
          .Int("RAGGED_RANK", 0)
          .Bool("batched_input", false)
          .Input(Distinct(DType::kFloat, Shape{3, 2}))
          .Reference1([variant](const std::vector<Tensor>& in) { return variant({}, in[0]); })
          .Build());
  // Batched: row i as its own ragged tensor of ragged rank 1, splits rebased to 0.
  auto batched_rows = [variant](const Tensor& vals) {
    const std::vector<Node> tree = Tree(kSplits);
    Tensor out(DType::kVariant, Shape{4});
    for (int64_t i = 0; i < 4; ++i) {
      std::vector<const Node*> kids;
      for (const Node& k : tree[i].kids) kids.push_back(&k);
      std::vector<Splits> s;
      std::vector<int64_t> rows;
      Flatten(kids, 1, &s, &rows);
      out.data<std::shared_ptr<const VariantBase>>()[i] =
          variant({Vec<int64_t>(s[0])}, Rows(vals, rows))
              .scalar<std::shared_ptr<const VariantBase>>();
    }
    return out;
  };
  c.push_back(
      OpCaseBuilder("RaggedTensorToVariant", "RaggedTensorToVariant batched")
          .Type("Tvalues", DType::kInt32)
          .Type("Tsplits", DType::kInt64)
          .Int("RAGGED_RANK", 2)
          .Bool("batched_input", true)
          .Input(Vec<int64_t>(kSplits[0]))
          .Input(Vec<int64_t>(kSplits[1]))
          .Input(values)
          .Reference1([batched_rows](const std::vector<Tensor>& in) { return batched_rows(in[2]); })
          .Build());
  // FromVariant: the batched rows stack back into the original; a scalar decodes as itself.
  c.push_back(
      OpCaseBuilder("RaggedTensorFromVariant", "RaggedTensorFromVariant stacks rows")
          .Type("Tvalues", DType::kInt32)
          .Type("Tsplits", DType::kInt64)
          .Int("input_ragged_rank", 1)
          .Int("output_ragged_rank", 2)
          .Input(batched_rows(values))
          .Reference([values](const auto&) {
            return std::vector<Tensor>{Vec<int64_t>(kSplits[0]), Vec<int64_t>(kSplits[1]), values};
          })
          .Build());
  c.push_back(
      OpCaseBuilder("RaggedTensorFromVariant", "RaggedTensorFromVariant inferred rank")
          .Type("Tvalues", DType::kInt32)
          .Type("Tsplits", DType::kInt64)
          .Int("input_ragged_rank", -1)
          .Int("output_ragged_rank", 2)
          .Input(variant({Vec<int64_t>(kSplits[0]), Vec<int64_t>(kSplits[1])}, values))
          .Reference([values](const auto&) {
            return std::vector<Tensor>{Vec<int64_t>(kSplits[0]), Vec<int64_t>(kSplits[1]), values};
          })
          .Build());
  {
    // A [2, 2] tensor of ragged rank 0 elements (vectors of 1, 0, 2, 1 values).
    Tensor enc(DType::kVariant, Shape{2, 2});
    const std::vector<std::vector<float>> parts = {{1}, {}, {2, 3}, {4}};
    for (int i = 0; i < 4; ++i) {
      enc.data<std::shared_ptr<const VariantBase>>()[i] =
          variant({}, Vec<float>(parts[i])).scalar<std::shared_ptr<const VariantBase>>();
    }
    c.push_back(OpCaseBuilder("RaggedTensorFromVariant", "RaggedTensorFromVariant 2-D, rank 0")
                    .Type("Tvalues", DType::kFloat)
                    .Type("Tsplits", DType::kInt32)
                    .Int("input_ragged_rank", 0)
                    .Int("output_ragged_rank", 2)
                    .Input(enc)
                    .Reference([](const auto&) {
                      return std::vector<Tensor>{Vec<int32_t>({0, 2, 4}),
                                                 Vec<int32_t>({0, 1, 1, 3, 4}),
                                                 Vec<float>({1, 2, 3, 4})};
                    })
                    .Build());
  }
  return c;
}

}  // namespace kiln::testing
