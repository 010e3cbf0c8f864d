// The dtype list's predicates against TensorFlow's own sets (types.h: kDataTypeIsFloating,
// DataTypeIsInteger, DataTypeIsSigned/Unsigned, DataTypeIsComplex, DataTypeCanUseMemcpy).
#include "kiln/core/dtype.h"

#include <doctest/doctest.h>

#include <set>
#include <string>

namespace kiln {
namespace {

const std::set<DType> kAll = {
    DType::kFloat,       DType::kDouble,  DType::kInt32,    DType::kUInt8,
    DType::kInt16,       DType::kInt8,    DType::kString,   DType::kComplex64,
    DType::kInt64,       DType::kBool,    DType::kBFloat16, DType::kUInt16,
    DType::kComplex128,  DType::kHalf,    DType::kResource, DType::kVariant,
    DType::kUInt32,      DType::kUInt64,  DType::kQInt8,    DType::kQUInt8,
    DType::kQInt16,      DType::kQUInt16, DType::kQInt32,   DType::kFloat8E5M2,
    DType::kFloat8E4M3FN};

TEST_CASE("dtype predicates match TensorFlow's dtype sets") {
  const std::set<DType> floating = {DType::kHalf,   DType::kBFloat16,   DType::kFloat,
                                    DType::kDouble, DType::kFloat8E5M2, DType::kFloat8E4M3FN};
  const std::set<DType> integer = {DType::kInt8,  DType::kInt16,  DType::kInt32,  DType::kInt64,
                                   DType::kUInt8, DType::kUInt16, DType::kUInt32, DType::kUInt64};
  const std::set<DType> unsigned_int = {DType::kUInt8, DType::kUInt16, DType::kUInt32,
                                        DType::kUInt64};
  const std::set<DType> complex = {DType::kComplex64, DType::kComplex128};
  const std::set<DType> not_pod = {DType::kString, DType::kResource, DType::kVariant};
  const std::set<DType> handles = {DType::kResource, DType::kVariant};
  // TF's kQuantizedTypes; its DataTypeIsSigned leaves them out, ours says whether values are.
  const std::set<DType> quantized = {DType::kQInt8, DType::kQUInt8, DType::kQInt16, DType::kQUInt16,
                                     DType::kQInt32};
  const std::set<DType> signed_quantized = {DType::kQInt8, DType::kQInt16, DType::kQInt32};
  for (DType t : kAll) {
    const std::string name = DTypeShortName(t);
    CAPTURE(name);
    CHECK(IsFloatingPoint(t) == (floating.count(t) == 1));
    CHECK(IsInteger(t) == (integer.count(t) == 1));
    CHECK(IsUnsignedInteger(t) == (unsigned_int.count(t) == 1));
    CHECK(IsComplex(t) == (complex.count(t) == 1));
    CHECK(IsSigned(t) == (floating.count(t) + complex.count(t) + integer.count(t) -
                              unsigned_int.count(t) + signed_quantized.count(t) >
                          0));
    CHECK(IsQuantized(t) == (quantized.count(t) == 1));
    CHECK(IsRealNumber(t) == (floating.count(t) + integer.count(t) > 0));
    CHECK(DTypeIsPod(t) == (not_pod.count(t) == 0));
    CHECK(IsHandle(t) == (handles.count(t) == 1));
    CHECK(HoldsData(t) == (handles.count(t) == 0));
    CHECK((DTypeSize(t) > 0) == DTypeIsPod(t));
  }
  // kInvalid and numbers the list does not hold (29 is TF's int4) have no traits at all.
  for (DType t :
       {DType::kInvalid, static_cast<DType>(29), static_cast<DType>(99), static_cast<DType>(-1)}) {
    CHECK_FALSE(IsFloatingPoint(t));
    CHECK_FALSE(IsInteger(t));
    CHECK_FALSE(DTypeIsPod(t));
    CHECK_FALSE(HoldsData(t));
  }
  // The predicates are usable at compile time.
  static_assert(IsFloatingPoint(DType::kHalf) && !IsInteger(DType::kBool));
}

}  // namespace
}  // namespace kiln
