// The op families that make up the op table. Each family lists its definitions and its CPU
// kernels as plain arrays; op_table.cc sorts the families a runtime lists (op_table_builder.h).
// Adding a family means adding its pair here and its name to one of the two lists at the end.
#pragma once

#include <span>

#include "kiln/exec/op_table.h"

namespace kiln::exec {

// Const, Placeholder, Identity, IdentityN, NoOp, StopGradient, Snapshot (basic_ops.cc).
std::span<const OpDefinition> BasicOpDefs();
std::span<const KernelEntry> BasicCpuKernels();

// Element-wise arithmetic, MatMul, Cast (math_ops.cc).
std::span<const OpDefinition> MathOpDefs();
std::span<const KernelEntry> MathCpuKernels();

// MatMul, _FusedMatMul, BatchMatMul, BatchMatMulV2, BatchMatMulV3 (matmul_ops.cc).
std::span<const OpDefinition> MatMulOpDefs();
std::span<const KernelEntry> MatMulCpuKernels();

// Einsum (einsum_ops.cc).
std::span<const OpDefinition> EinsumOpDefs();
std::span<const KernelEntry> EinsumCpuKernels();

// BiasAdd, activations, softmax (nn_ops.cc).
std::span<const OpDefinition> NnOpDefs();
std::span<const KernelEntry> NnCpuKernels();

// StringFormat, PrintV2, StringJoin (string_ops.cc).
std::span<const OpDefinition> StringOpDefs();
std::span<const KernelEntry> StringCpuKernels();

// Resource variables (resource_ops.cc).
std::span<const OpDefinition> ResourceOpDefs();
std::span<const KernelEntry> ResourceCpuKernels();

// RestoreV2 and other checkpoint I/O (io_ops.cc).
std::span<const OpDefinition> IoOpDefs();
std::span<const KernelEntry> IoCpuKernels();

// Shapes and views: Shape, Size, Rank, Reshape, ExpandDims, Squeeze (shape_ops.cc).
std::span<const OpDefinition> ShapeOpDefs();
std::span<const KernelEntry> ShapeCpuKernels();

// Joining and splitting: Pack, Unpack, ConcatV2 (concat_ops.cc).
std::span<const OpDefinition> ConcatOpDefs();
std::span<const KernelEntry> ConcatCpuKernels();

// Selecting elements: Transpose, StridedSlice, GatherV2 (slice_ops.cc).
std::span<const OpDefinition> SliceOpDefs();
std::span<const KernelEntry> SliceCpuKernels();

// Making tensors from values: Fill, Range, Tile, BroadcastTo (fill_ops.cc).
std::span<const OpDefinition> FillOpDefs();
std::span<const KernelEntry> FillCpuKernels();

// Conv2D, DepthwiseConv2dNative, MaxPool, AvgPool over NHWC (conv_ops.cc).
std::span<const OpDefinition> ConvOpDefs();
std::span<const KernelEntry> ConvCpuKernels();

// If, StatelessIf, While, StatelessWhile (control_flow_ops.cc).
std::span<const OpDefinition> ControlFlowOpDefs();
std::span<const KernelEntry> ControlFlowCpuKernels();

// TensorList ops: TF 2's form of tf.TensorArray (tensor_list_ops.cc).
std::span<const OpDefinition> TensorListOpDefs();
std::span<const KernelEntry> TensorListCpuKernels();

// Comparisons, logical ops, Select, SelectV2 (compare_ops.cc).
std::span<const OpDefinition> CompareOpDefs();
std::span<const KernelEntry> CompareCpuKernels();

// FloorMod, FloorDiv, Pow, Rsqrt, Reciprocal, ZerosLike, OnesLike, AddN (math_extra_ops.cc).
std::span<const OpDefinition> MathExtraOpDefs();
std::span<const KernelEntry> MathExtraCpuKernels();

// Sum, Mean, Max, Min, Prod, ArgMax, ArgMin (reduction_ops.cc).
std::span<const OpDefinition> ReductionOpDefs();
std::span<const KernelEntry> ReductionCpuKernels();

// Stateful random ops and Multinomial (random_ops.cc).
std::span<const OpDefinition> RandomOpDefs();
std::span<const KernelEntry> RandomCpuKernels();

// tf.Example parsing: ParseExampleV2, ParseExample, ParseSingleExample (parse_example_ops.cc).
std::span<const OpDefinition> ParseExampleOpDefs();
std::span<const KernelEntry> ParseExampleCpuKernels();

// Bytes read as numbers: DecodeRaw, DecodePaddedRaw (decode_raw_ops.cc).
std::span<const OpDefinition> DecodeRawOpDefs();
std::span<const KernelEntry> DecodeRawCpuKernels();

// Dense linear algebra: Cholesky, MatrixInverse, MatrixSolve, MatrixTriangularSolve,
// LogMatrixDeterminant, Lu, Qr, Svd, SelfAdjointEigV2 (linalg_ops.cc).
std::span<const OpDefinition> LinalgOpDefs();
std::span<const KernelEntry> LinalgCpuKernels();

// Stateless random ops, V1 (seed) and V2 (key, counter, alg) (stateless_random_ops.cc).
std::span<const OpDefinition> StatelessRandomOpDefs();
std::span<const KernelEntry> StatelessRandomCpuKernels();

// EagerPyFunc: host callbacks registered in this process (host_callback_ops.cc).
std::span<const OpDefinition> HostCallbackOpDefs();
std::span<const KernelEntry> HostCallbackCpuKernels();

// Element-wise unary math: trigonometry, special functions, rounding, predicates, Invert,
// Selu/Softplus/Softsign/LeakyRelu, ComplexAbs, CheckNumerics (math_unary_ops.cc).
std::span<const OpDefinition> MathUnaryOpDefs();
std::span<const KernelEntry> MathUnaryCpuKernels();

// Complex numbers: Real, Imag, Angle, Complex (complex_ops.cc).
std::span<const OpDefinition> ComplexOpDefs();
std::span<const KernelEntry> ComplexCpuKernels();

// Element-wise binary math: Div, TruncateDiv, Mod, bit ops, *NoNan, Xdivy, Xlogy, Atan2,
// SquaredDifference, activation gradients, ClipByValue (math_binary_ops.cc).
std::span<const OpDefinition> MathBinaryOpDefs();
std::span<const KernelEntry> MathBinaryCpuKernels();

// Cumsum, Cumprod (exclusive / reverse), LinSpace (scan_ops.cc).
std::span<const OpDefinition> ScanOpDefs();
std::span<const KernelEntry> ScanCpuKernels();

// Bincount, DenseBincount, RaggedBincount, Unique, UniqueV2, UniqueWithCounts (count_ops.cc).
std::span<const OpDefinition> CountOpDefs();
std::span<const KernelEntry> CountCpuKernels();

// MatrixBandPart, MatrixDeterminant, MatrixDiag*, MatrixDiagPart*, MatrixSetDiagV3
// (matrix_ops.cc).
std::span<const OpDefinition> MatrixOpDefs();
std::span<const KernelEntry> MatrixCpuKernels();

// Segment*, UnsortedSegment*, SparseSegment* reductions (segment_ops.cc).
std::span<const OpDefinition> SegmentOpDefs();
std::span<const KernelEntry> SegmentCpuKernels();

// SoftmaxCrossEntropyWithLogits, SparseSoftmaxCrossEntropyWithLogits (loss_ops.cc).
std::span<const OpDefinition> LossOpDefs();
std::span<const KernelEntry> LossCpuKernels();

// FakeQuantWithMinMaxArgs, FakeQuantWithMinMaxVars (quantize_ops.cc).
std::span<const OpDefinition> QuantizeOpDefs();
std::span<const KernelEntry> QuantizeCpuKernels();
// PlaceholderV2, PlaceholderWithDefault, PreventGradient, EnsureShape (passthrough_ops.cc).
std::span<const OpDefinition> PassthroughOpDefs();
std::span<const KernelEntry> PassthroughCpuKernels();
// BroadcastArgs, BroadcastGradientArgs (broadcast_args_ops.cc).
std::span<const OpDefinition> BroadcastArgsOpDefs();
std::span<const KernelEntry> BroadcastArgsCpuKernels();
// Slice, Split, SplitV, Concat (v1) (split_ops.cc).
std::span<const OpDefinition> SplitOpDefs();
std::span<const KernelEntry> SplitCpuKernels();
// Pad, PadV2, MirrorPad (pad_ops.cc).
std::span<const OpDefinition> PadOpDefs();
std::span<const KernelEntry> PadCpuKernels();
// ReverseV2, ReverseSequence, Roll (reverse_ops.cc).
std::span<const OpDefinition> ReverseOpDefs();
std::span<const KernelEntry> ReverseCpuKernels();
// Gather (v1), GatherNd (gather_ops.cc).
std::span<const OpDefinition> GatherOpDefs();
std::span<const KernelEntry> GatherCpuKernels();
// ScatterNd, TensorScatterUpdate/Add/Sub/Max/Min (scatter_ops.cc).
std::span<const OpDefinition> ScatterOpDefs();
std::span<const KernelEntry> ScatterCpuKernels();
// OneHot, TopKV2, Where, InvertPermutation (index_ops.cc).
std::span<const OpDefinition> IndexOpDefs();
std::span<const KernelEntry> IndexCpuKernels();
// SpaceToBatchND, BatchToSpaceND, SpaceToDepth, DepthToSpace, ExtractImagePatches
// (space_ops.cc).
std::span<const OpDefinition> SpaceOpDefs();
std::span<const KernelEntry> SpaceCpuKernels();
// DynamicPartition, DynamicStitch, ParallelDynamicStitch (partition_ops.cc).
std::span<const OpDefinition> PartitionOpDefs();
std::span<const KernelEntry> PartitionCpuKernels();
// SparseToDense, SparseFillEmptyRows, SparseReshape, DenseToDenseSetOperation (sparse_ops.cc).
std::span<const OpDefinition> SparseOpDefs();
std::span<const KernelEntry> SparseCpuKernels();
// RaggedRange, RaggedGather, RaggedTensorToSparse, RaggedTensorToTensor (ragged_ops.cc).
std::span<const OpDefinition> RaggedOpDefs();
std::span<const KernelEntry> RaggedCpuKernels();
// RaggedTensorToVariant, RaggedTensorFromVariant (ragged_variant_ops.cc).
std::span<const OpDefinition> RaggedVariantOpDefs();
std::span<const KernelEntry> RaggedVariantCpuKernels();
// TensorListGather, TensorListConcatV2, TensorListScatterIntoExistingList, TensorListResize
// (tensor_list_bulk_ops.cc).
std::span<const OpDefinition> TensorListBulkOpDefs();
std::span<const KernelEntry> TensorListBulkCpuKernels();
// TF1 tensor arrays: TensorArrayV3 and its Read/Write/Gather/Scatter/Size/Close ops
// (tensor_array_ops.cc).
std::span<const OpDefinition> TensorArrayOpDefs();
std::span<const KernelEntry> TensorArrayCpuKernels();
// Case, StatelessCase (case_ops.cc).
std::span<const OpDefinition> CaseOpDefs();
std::span<const KernelEntry> CaseCpuKernels();
// Conv3D and the convolution backprops: Conv2DBackpropInput/Filter,
// DepthwiseConv2dNativeBackpropInput/Filter, Conv3DBackpropInputV2 (conv_extra_ops.cc).
std::span<const OpDefinition> ConvExtraOpDefs();
std::span<const KernelEntry> ConvExtraCpuKernels();
// AvgPool3D, MaxPool3D, MaxPoolV2, MaxPoolWithArgmax, MaxPoolGrad, AvgPoolGrad
// (pool_extra_ops.cc).
std::span<const OpDefinition> PoolExtraOpDefs();
std::span<const KernelEntry> PoolExtraCpuKernels();
// FusedBatchNorm, FusedBatchNormV2/V3, FusedBatchNormGradV3, LRN (norm_ops.cc).
std::span<const OpDefinition> NormOpDefs();
std::span<const KernelEntry> NormCpuKernels();
// BiasAddGrad, BiasAddV1 (bias_ops.cc).
std::span<const OpDefinition> BiasOpDefs();
std::span<const KernelEntry> BiasCpuKernels();
// LSTMBlockCell (rnn_ops.cc).
std::span<const OpDefinition> RnnOpDefs();
std::span<const KernelEntry> RnnCpuKernels();
// ResizeBilinear, ResizeNearestNeighbor, ResizeBicubic, ResizeArea, CropAndResize
// (image_resize_ops.cc).
std::span<const OpDefinition> ImageResizeOpDefs();
std::span<const KernelEntry> ImageResizeCpuKernels();
// ScaleAndTranslate (image_scale_translate_ops.cc).
std::span<const OpDefinition> ImageScaleTranslateOpDefs();
std::span<const KernelEntry> ImageScaleTranslateCpuKernels();
// RGBToHSV, HSVToRGB, AdjustHue, AdjustSaturation, AdjustContrastv2 (image_color_ops.cc).
std::span<const OpDefinition> ImageColorOpDefs();
std::span<const KernelEntry> ImageColorCpuKernels();
// NonMaxSuppressionV2..V5, CombinedNonMaxSuppression (nms_ops.cc).
std::span<const OpDefinition> NmsOpDefs();
std::span<const KernelEntry> NmsCpuKernels();
// CTCGreedyDecoder (ctc_ops.cc).
std::span<const OpDefinition> CtcOpDefs();
std::span<const KernelEntry> CtcCpuKernels();
// FFT, RFFT, RFFT2D (fft_ops.cc).
std::span<const OpDefinition> FftOpDefs();
std::span<const KernelEntry> FftCpuKernels();
// DecodeJpeg, DecodePng, EncodePng (image_codec_ops.cc; libjpeg-turbo, libpng).
std::span<const OpDefinition> ImageCodecOpDefs();
std::span<const KernelEntry> ImageCodecCpuKernels();
// AsString, StringToNumber, Encode/DecodeBase64, StringToHashBucketFast/Strong
// (string_convert_ops.cc).
std::span<const OpDefinition> StringConvertOpDefs();
std::span<const KernelEntry> StringConvertCpuKernels();
// StringNGrams, UnicodeEncode (string_ragged_ops.cc).
std::span<const OpDefinition> StringRaggedOpDefs();
std::span<const KernelEntry> StringRaggedCpuKernels();
// SparseCross, SparseCrossHashed, SparseCrossV2 (sparse_cross_ops.cc).
std::span<const OpDefinition> SparseCrossOpDefs();
std::span<const KernelEntry> SparseCrossCpuKernels();
// StringLength, StringLower/Upper, StringStrip, Substr, StringSplitV2, UnicodeDecode
// (string_text_ops.cc).
std::span<const OpDefinition> StringTextOpDefs();
std::span<const KernelEntry> StringTextCpuKernels();
// RegexReplace, StaticRegexReplace, StaticRegexFullMatch with RE2 (regex_ops.cc).
std::span<const OpDefinition> RegexOpDefs();
std::span<const KernelEntry> RegexCpuKernels();
// HashTableV2, MutableHashTableV2 and the lookup-table ops (lookup_ops.cc).
std::span<const OpDefinition> LookupOpDefs();
std::span<const KernelEntry> LookupCpuKernels();
// Assert (assert_ops.cc).
std::span<const OpDefinition> AssertOpDefs();
std::span<const KernelEntry> AssertCpuKernels();
// ResourceApply* optimizer updates (training_ops.cc).
std::span<const OpDefinition> TrainingOpDefs();
std::span<const KernelEntry> TrainingCpuKernels();
// ResourceGather, ResourceScatterUpdate/Add, DisableCopyOnRead (resource_scatter_ops.cc).
std::span<const OpDefinition> ResourceScatterOpDefs();
std::span<const KernelEntry> ResourceScatterCpuKernels();
// SaveV2, MergeV2Checkpoints, ShardedFilename (checkpoint_ops.cc).
std::span<const OpDefinition> CheckpointOpDefs();
std::span<const KernelEntry> CheckpointCpuKernels();
// TF1 reference variables: VariableV2, Assign, AssignAdd, AssignSub (ref_variable_ops.cc).
std::span<const OpDefinition> RefVariableOpDefs();
std::span<const KernelEntry> RefVariableCpuKernels();

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
  X(MathExtra)              \
  X(Reduction)              \
  X(Random)                 \
  X(StatelessRandom)        \
  X(HostCallback)           \
  X(MathUnary)              \
  X(Complex)                \
  X(MathBinary)             \
  X(Scan)                   \
  X(Count)                  \
  X(Matrix)                 \
  X(Linalg)                 \
  X(ParseExample)           \
  X(DecodeRaw)              \
  X(Segment)                \
  X(Loss)                   \
  X(Quantize)               \
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
  X(Ragged)                 \
  X(RaggedVariant)          \
  X(TensorListBulk)         \
  X(TensorArray)            \
  X(Case)                   \
  X(ConvExtra)              \
  X(PoolExtra)              \
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
  X(RefVariable)

#define KILN_OP_FAMILIES_FULL_ONLY(X) \
  X(Checkpoint)                       \
  X(Regex)                            \
  X(StringText)                       \
  X(ImageCodec)

}  // namespace kiln::exec
