// Op-tester cases of TensorList ops (TF 2's tf.TensorArray): EmptyTensorList,
// TensorListReserve, TensorListSetItem, TensorListGetItem, TensorListLength,
// TensorListElementShape, TensorListStack, TensorListFromTensor, TensorListPushBack,
// TensorListPopBack, TensorListGather, TensorListConcatV2, TensorListScatterIntoExistingList,
// TensorListResize. Lists are built directly as the variant values the ops exchange.
#include "kernels/tensor_list.h"
#include "ops/array_ref.h"
#include "ops/op_cases.h"

namespace kiln::testing {
namespace {

using exec::TensorList;

Tensor List(DType dtype, const PartialShape& shape, std::vector<Tensor> items, int64_t max = -1) {
  return TensorList::Wrap(std::make_shared<const TensorList>(dtype, shape, std::move(items), max));
}

// TF's shape encoding: -1 for an unknown rank, else the dims with -1 unknown.
Tensor ShapeTensor(const PartialShape& s) {
  if (s.unknown_rank()) return Tensor::Scalar<int32_t>(-1);
  return Vec<int32_t>(std::vector<int32_t>(s.dims().begin(), s.dims().end()));
}

Tensor Row(const Tensor& t, int64_t i) {
  Shape s;
  for (int d = 1; d < t.rank(); ++d) s.AddDim(t.dim(d));
  const int64_t per = s.num_elements();
  return RefMove(t, s, [&](const Index& o) { return i * per + FlatOf(o, s); });
}

}  // namespace

namespace {

// TensorListScatter(V2), TensorListSplit, TensorListConcat (v1), TensorListConcatLists,
// TensorListPushBackBatch.
void AddListBuilders(std::vector<OpCase>* c) {
  for (DType t : {DType::kFloat, DType::kString}) {
    const std::string ts = " " + DTypeShortName(t);
    const Tensor rows = Distinct(t, Shape{3, 2});
    const Tensor r0 = Row(rows, 0), r1 = Row(rows, 1), r2 = Row(rows, 2);
    c->push_back(OpCaseBuilder("TensorListScatter", "TensorListScatter" + ts)
                     .Type("element_dtype", t)
                     .Type("shape_type", DType::kInt32)
                     .Input(rows)
                     .Input(Vec<int32_t>({4, 0, 2}))
                     .ConstInput(ShapeTensor(PartialShape{2}))
                     .Reference1([t, r0, r1, r2](const auto&) {
                       return List(t, PartialShape{2}, {r1, Tensor(), r2, Tensor(), r0});
                     })
                     .Build());
    c->push_back(OpCaseBuilder("TensorListScatterV2", "TensorListScatterV2 num_elements" + ts)
                     .Type("element_dtype", t)
                     .Type("shape_type", DType::kInt32)
                     .Input(rows)
                     .Input(Vec<int32_t>({1, 0, 3}))
                     .ConstInput(ShapeTensor(PartialShape{-1}))
                     .Input(Tensor::Scalar<int32_t>(6))
                     .Reference1([t, r0, r1, r2](const auto&) {
                       return List(t, PartialShape{-1}, {r1, r0, Tensor(), r2, Tensor(), Tensor()});
                     })
                     .Build());
    const Tensor five = Distinct(t, Shape{5, 2});
    c->push_back(OpCaseBuilder("TensorListSplit", "TensorListSplit" + ts)
                     .Type("element_dtype", t)
                     .Type("shape_type", DType::kInt32)
                     .Input(five)
                     .ConstInput(ShapeTensor(PartialShape{-1, 2}))
                     .Input(Vec<int64_t>({2, 0, 3}))
                     .Reference1([t, five](const auto&) {
                       auto piece = [&](int64_t from, int64_t n) {
                         return RefMove(five, Shape{n, 2},
                                        [&](const Index& o) { return (from + o[0]) * 2 + o[1]; });
                       };
                       return List(t, PartialShape{-1, 2}, {piece(0, 2), piece(2, 0), piece(2, 3)});
                     })
                     .Build());
    const Tensor p = Distinct(t, Shape{1, 2}, 3), q = Distinct(t, Shape{2, 2}, 20);
    c->push_back(OpCaseBuilder("TensorListConcat", "TensorListConcat" + ts)
                     .Type("element_dtype", t)
                     .ShapeAttr("element_shape", PartialShape{-1, 2})
                     .Input(List(t, PartialShape{-1, 2}, {p, q}))
                     .Reference([t, p, q](const auto&) {
                       Tensor out(t, Shape{3, 2});
                       for (int64_t e = 0; e < 2; ++e) CopyElement(p, e, &out, e);
                       for (int64_t e = 0; e < 4; ++e) CopyElement(q, e, &out, 2 + e);
                       return std::vector<Tensor>{out, Vec<int64_t>({1, 2})};
                     })
                     .Build());
    // Batches of lists: a [2] variant tensor of lists.
    auto batch = [](const Tensor& x, const Tensor& y) {
      using V = std::shared_ptr<const VariantBase>;
      Tensor out(DType::kVariant, Shape{2});
      out.data<V>()[0] = x.scalar<V>();
      out.data<V>()[1] = y.scalar<V>();
      return out;
    };
    const Tensor la = List(t, PartialShape{2}, {r0}), lb = List(t, PartialShape{2}, {r1, r2}),
                 le = List(t, PartialShape{2}, {});
    c->push_back(
        OpCaseBuilder("TensorListConcatLists", "TensorListConcatLists" + ts)
            .Type("element_dtype", t)
            .Input(batch(la, le))
            .Input(batch(lb, la))
            .Reference1([=](const auto&) {
              return batch(List(t, PartialShape{2}, {r0, r1, r2}), List(t, PartialShape{2}, {r0}));
            })
            .Build());
    c->push_back(OpCaseBuilder("TensorListPushBackBatch", "TensorListPushBackBatch" + ts)
                     .Type("element_dtype", t)
                     .Input(batch(la, le))
                     .Input(Distinct(t, Shape{2, 2}, 30))
                     .Reference1([=](const std::vector<Tensor>& in) {
                       return batch(List(t, PartialShape{2}, {r0, Row(in[1], 0)}),
                                    List(t, PartialShape{2}, {Row(in[1], 1)}));
                     })
                     .Build());
  }
}

}  // namespace

std::vector<OpCase> TensorListCases() {
  std::vector<OpCase> c;
  for (DType t : {DType::kFloat, DType::kString, DType::kInt32, DType::kHalf}) {
    const std::string ts = " " + DTypeShortName(t);
    const Tensor a = Distinct(t, Shape{2}, 1), b = Distinct(t, Shape{2}, 5),
                 d = Distinct(t, Shape{2}, 9);
    const PartialShape elem{-1};
    const Tensor full = List(t, elem, {a, b, d});
    const Tensor holey = List(t, PartialShape{2}, {a, Tensor(), d});  // element 1 unset

    c.push_back(OpCaseBuilder("EmptyTensorList", "EmptyTensorList" + ts)
                    .Type("element_dtype", t)
                    .Type("shape_type", DType::kInt32)
                    .ConstInput(ShapeTensor(elem))
                    .Input(Tensor::Scalar<int32_t>(10))
                    .Reference1([t, elem](const auto&) { return List(t, elem, {}, 10); })
                    .Build());
    c.push_back(OpCaseBuilder("TensorListReserve", "TensorListReserve" + ts)
                    .Type("element_dtype", t)
                    .Type("shape_type", DType::kInt32)
                    .Input(ShapeTensor(PartialShape{2}))
                    .Input(Tensor::Scalar<int32_t>(3))
                    .Reference1([t](const auto&) {
                      return List(t, PartialShape{2}, std::vector<Tensor>(3));
                    })
                    .Build());
    c.push_back(OpCaseBuilder("TensorListSetItem", "TensorListSetItem" + ts)
                    .Type("element_dtype", t)
                    .Input(holey)
                    .Input(Tensor::Scalar<int32_t>(1))
                    .Input(b)
                    .Reference1([t, a, b, d](const auto&) {
                      return List(t, PartialShape{2}, {a, b, d});
                    })
                    .Build());
    c.push_back(OpCaseBuilder("TensorListSetItem", "TensorListSetItem growing" + ts)
                    .Type("element_dtype", t)
                    .Bool("resize_if_index_out_of_bounds", true)
                    .Input(full)
                    .Input(Tensor::Scalar<int32_t>(4))
                    .Input(b)
                    .Reference1([t, a, b, d, elem](const auto&) {
                      return List(t, elem, {a, b, d, Tensor(), b});
                    })
                    .Build());
    for (int32_t i : {0, 1}) {
      c.push_back(OpCaseBuilder("TensorListGetItem", "TensorListGetItem " + std::to_string(i) + ts)
                      .Type("element_dtype", t)
                      .Input(holey)
                      .Input(Tensor::Scalar<int32_t>(i))
                      .ConstInput(ShapeTensor(PartialShape{-1}))
                      .Reference1([a, t, i](const auto&) {
                        return i == 0 ? a : Tensor(t, Shape{2});  // unset: zeros
                      })
                      .Build());
    }
    c.push_back(OpCaseBuilder("TensorListLength", "TensorListLength" + ts)
                    .Input(holey)
                    .Reference1([](const auto&) { return Tensor::Scalar<int32_t>(3); })
                    .Build());
    c.push_back(OpCaseBuilder("TensorListElementShape", "TensorListElementShape" + ts)
                    .Type("shape_type", DType::kInt64)
                    .Input(full)
                    .Reference1([](const auto&) { return Vec<int64_t>({-1}); })
                    .Build());
    const Tensor stacked = Distinct(t, Shape{3, 2}, 1);
    c.push_back(OpCaseBuilder("TensorListStack", "TensorListStack" + ts)
                    .Type("element_dtype", t)
                    .Int("num_elements", 3)
                    .Input(List(t, elem, {Row(stacked, 0), Row(stacked, 1), Row(stacked, 2)}))
                    .ConstInput(ShapeTensor(PartialShape{2}))
                    .Reference1([stacked](const auto&) { return stacked; })
                    .Build());
    c.push_back(OpCaseBuilder("TensorListFromTensor", "TensorListFromTensor" + ts)
                    .Type("element_dtype", t)
                    .Type("shape_type", DType::kInt32)
                    .Input(stacked)
                    .ConstInput(ShapeTensor(elem))
                    .Reference1([t, elem](const std::vector<Tensor>& in) {
                      return List(t, elem, {Row(in[0], 0), Row(in[0], 1), Row(in[0], 2)});
                    })
                    .Build());
    c.push_back(OpCaseBuilder("TensorListPushBack", "TensorListPushBack" + ts)
                    .Type("element_dtype", t)
                    .Input(full)
                    .Input(a)
                    .Reference1([t, a, b, d, elem](const auto&) {
                      return List(t, elem, {a, b, d, a});
                    })
                    .Build());
    c.push_back(OpCaseBuilder("TensorListPopBack", "TensorListPopBack" + ts)
                    .Type("element_dtype", t)
                    .Input(full)
                    .ConstInput(ShapeTensor(elem))
                    .Reference([t, a, b, d, elem](const auto&) {
                      return std::vector<Tensor>{List(t, elem, {a, b}), d};
                    })
                    .Build());

    // The bulk ops.
    c.push_back(OpCaseBuilder("TensorListGather", "TensorListGather" + ts)
                    .Type("element_dtype", t)
                    .Input(holey)
                    .Input(Vec<int32_t>({2, 1, 0, 2}))
                    .ConstInput(ShapeTensor(PartialShape{-1}))
                    .Reference1([a, d, t](const auto&) {
                      Tensor out(t, Shape{4, 2});  // the unset element reads as zeros
                      for (int64_t e = 0; e < 2; ++e) {
                        CopyElement(d, e, &out, e);
                        CopyElement(a, e, &out, 4 + e);
                        CopyElement(d, e, &out, 6 + e);
                      }
                      return out;
                    })
                    .Build());
    const Tensor long_row = Distinct(t, Shape{3}, 20);
    c.push_back(OpCaseBuilder("TensorListConcatV2", "TensorListConcatV2" + ts)
                    .Type("element_dtype", t)
                    .Type("shape_type", DType::kInt32)
                    .Input(List(t, elem, {a, long_row, Tensor(), d}))
                    .ConstInput(ShapeTensor(elem))
                    .Input(Vec<int64_t>({9, 9, 1, 9}))  // only entry 2 (unset) is used
                    .Reference([a, long_row, d, t](const auto&) {
                      Tensor out(t, Shape{8});
                      int64_t at = 0;
                      for (const Tensor* p : {&a, &long_row}) {
                        for (int64_t e = 0; e < p->NumElements(); ++e)
                          CopyElement(*p, e, &out, at++);
                      }
                      ++at;  // one zero row for the unset element
                      for (int64_t e = 0; e < 2; ++e) CopyElement(d, e, &out, at++);
                      return std::vector<Tensor>{out, Vec<int64_t>({2, 3, 1, 2})};
                    })
                    .Build());
    c.push_back(
        OpCaseBuilder("TensorListScatterIntoExistingList", "TensorListScatterIntoExistingList" + ts)
            .Type("element_dtype", t)
            .Input(holey)
            .Input(stacked)
            .Input(Vec<int32_t>({1, 4, 0}))  // index 4 grows the list
            .Reference1([t, d, stacked](const auto&) {
              return List(t, PartialShape{2},
                          {Row(stacked, 2), Row(stacked, 0), d, Tensor(), Row(stacked, 1)});
            })
            .Build());
    for (int32_t size : {1, 5}) {
      c.push_back(OpCaseBuilder("TensorListResize", "TensorListResize " + std::to_string(size) + ts)
                      .Input(full)
                      .Input(Tensor::Scalar<int32_t>(size))
                      .Reference1([t, a, b, d, elem, size](const auto&) {
                        return size == 1 ? List(t, elem, {a})
                                         : List(t, elem, {a, b, d, Tensor(), Tensor()});
                      })
                      .Build());
    }
  }
  AddListBuilders(&c);
  return c;
}

}  // namespace kiln::testing
