// The op families that make up the op table. Family F's definitions live in kernels/<f>_ops.cc
// (F in snake case: MathUnary in math_unary_ops.cc) and its CPU kernels in kernels/cpu/<f>_ops.cc
// (kernels/full/ and kernels/cpu/full/ for the full runtime's own families), given as plain
// arrays through F##OpDefs() and F##CpuKernels(); op_table.cc sorts the families a runtime lists
// (op_table_builder.h). Adding a family means its files and its name in one of the two lists
// below. Only the op tables include this header (kernels/full/op_families_full.cc,
// runtime/op_families_minimal.cc, the table a reduced build generates): a family file does not,
// so adding a family recompiles the tables, not every kernel.
#pragma once

#include <span>

#include "kiln/exec/op_table.h"

namespace kiln::exec {

// Every family, once. The protobuf-free runtime (runtime/) has the first list; the full
// runtime has both. The second list's families need a library that runtime does not link:
// checkpoint writing (protobuf), regular expressions (RE2), Unicode text (ICU) and image codecs
// (libjpeg, libpng, zlib).
#define KILN_OP_FAMILIES(X) \
  X(Basic)                  \
  X(Math)                   \
  X(MatMul)                 \
  X(Einsum)                 \
  X(Nn)                     \
  X(LayerNorm)              \
  X(Attention)              \
  X(Int8Product)            \
  X(String)                 \
  X(Resource)               \
  X(Io)                     \
  X(Shape)                  \
  X(Concat)                 \
  X(Slice)                  \
  X(Fill)                   \
  X(Conv)                   \
  X(ControlFlow)            \
  X(TensorList)             \
  X(Compare)                \
  X(MathArith)              \
  X(Reduction)              \
  X(Random)                 \
  X(StatelessRandom)        \
  X(StatefulRandom)         \
  X(RandomDistribution)     \
  X(HostCallback)           \
  X(MathUnary)              \
  X(Complex)                \
  X(MathBinary)             \
  X(Scan)                   \
  X(Count)                  \
  X(CountSparse)            \
  X(EditDistance)           \
  X(Clustering)             \
  X(Matrix)                 \
  X(Linalg)                 \
  X(ParseExample)           \
  X(SequenceExample)        \
  X(DecodeRaw)              \
  X(Segment)                \
  X(Loss)                   \
  X(Quantize)               \
  X(Quantized)              \
  X(QuantizedConvert)       \
  X(QuantizedImage)         \
  X(QuantizedProduct)       \
  X(QuantizedReference)     \
  X(UniformQuantized)       \
  X(UniformQuantizedConv)   \
  X(Passthrough)            \
  X(BroadcastArgs)          \
  X(Split)                  \
  X(Pad)                    \
  X(Reverse)                \
  X(Gather)                 \
  X(Scatter)                \
  X(Index)                  \
  X(Space)                  \
  X(Partition)              \
  X(Sparse)                 \
  X(SparseMath)             \
  X(SparseManip)            \
  X(Ragged)                 \
  X(RaggedVariant)          \
  X(TensorListBulk)         \
  X(TensorArray)            \
  X(Stack)                  \
  X(Case)                   \
  X(ConvNd)                 \
  X(PoolNd)                 \
  X(Norm)                   \
  X(Bias)                   \
  X(Rnn)                    \
  X(ImageResize)            \
  X(ImageScaleTranslate)    \
  X(ImageColor)             \
  X(Nms)                    \
  X(Ctc)                    \
  X(Fft)                    \
  X(StringConvert)          \
  X(StringRagged)           \
  X(SparseCross)            \
  X(Lookup)                 \
  X(Assert)                 \
  X(Training)               \
  X(ResourceScatter)        \
  X(SegmentGrad)            \
  X(ImageGrad)              \
  X(Dilation)               \
  X(ImageDraw)              \
  X(SpecialFunction)        \
  X(TensorMap)              \
  X(Batch)                  \
  X(RefVariable)            \
  X(ConvGeneric)            \
  X(Glimpse)                \
  X(RnnGrad)                \
  X(Optional)

#define KILN_OP_FAMILIES_FULL_ONLY(X) \
  X(Checkpoint)                       \
  X(Regex)                            \
  X(StringText)                       \
  X(ImageCodec)                       \
  X(Serialize)                        \
  X(ProtoCodec)                       \
  X(SparseSerialize)

// Each family's two arrays, declared from the lists.
#define KILN_DECLARE_FAMILY(F)               \
  std::span<const OpDefinition> F##OpDefs(); \
  std::span<const KernelEntry> F##CpuKernels();
KILN_OP_FAMILIES(KILN_DECLARE_FAMILY)
KILN_OP_FAMILIES_FULL_ONLY(KILN_DECLARE_FAMILY)
#undef KILN_DECLARE_FAMILY

}  // namespace kiln::exec
