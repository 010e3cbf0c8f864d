// The full runtime's op table: every family (see op_table_builder.h).
#include "kernels/op_families.h"
#include "kernels/op_table_builder.h"

namespace kiln::exec {

void ListOpFamilies(OpTableBuilder& b) {
  b.Add(BasicOpDefs(), BasicCpuKernels());
  b.Add(MathOpDefs(), MathCpuKernels());
  b.Add(MatMulOpDefs(), MatMulCpuKernels());
  b.Add(EinsumOpDefs(), EinsumCpuKernels());
  b.Add(NnOpDefs(), NnCpuKernels());
  b.Add(StringOpDefs(), StringCpuKernels());
  b.Add(ResourceOpDefs(), ResourceCpuKernels());
  b.Add(IoOpDefs(), IoCpuKernels());
  b.Add(ShapeOpDefs(), ShapeCpuKernels());
  b.Add(ConcatOpDefs(), ConcatCpuKernels());
  b.Add(SliceOpDefs(), SliceCpuKernels());
  b.Add(FillOpDefs(), FillCpuKernels());
  b.Add(ConvOpDefs(), ConvCpuKernels());
  b.Add(ControlFlowOpDefs(), ControlFlowCpuKernels());
  b.Add(TensorListOpDefs(), TensorListCpuKernels());
  b.Add(CompareOpDefs(), CompareCpuKernels());
  b.Add(MathExtraOpDefs(), MathExtraCpuKernels());
  b.Add(ReductionOpDefs(), ReductionCpuKernels());
  b.Add(RandomOpDefs(), RandomCpuKernels());
  b.Add(HostCallbackOpDefs(), HostCallbackCpuKernels());
  b.Add(MathUnaryOpDefs(), MathUnaryCpuKernels());
  b.Add(ComplexOpDefs(), ComplexCpuKernels());
  b.Add(MathBinaryOpDefs(), MathBinaryCpuKernels());
  b.Add(ScanOpDefs(), ScanCpuKernels());
  b.Add(CountOpDefs(), CountCpuKernels());
  b.Add(MatrixOpDefs(), MatrixCpuKernels());
  b.Add(SegmentOpDefs(), SegmentCpuKernels());
  b.Add(LossOpDefs(), LossCpuKernels());
  b.Add(QuantizeOpDefs(), QuantizeCpuKernels());
  b.Add(PassthroughOpDefs(), PassthroughCpuKernels());
  b.Add(BroadcastArgsOpDefs(), BroadcastArgsCpuKernels());
  b.Add(SplitOpDefs(), SplitCpuKernels());
  b.Add(PadOpDefs(), PadCpuKernels());
  b.Add(ReverseOpDefs(), ReverseCpuKernels());
  b.Add(GatherOpDefs(), GatherCpuKernels());
  b.Add(ScatterOpDefs(), ScatterCpuKernels());
  b.Add(IndexOpDefs(), IndexCpuKernels());
  b.Add(SpaceOpDefs(), SpaceCpuKernels());
  b.Add(PartitionOpDefs(), PartitionCpuKernels());
  b.Add(SparseOpDefs(), SparseCpuKernels());
  b.Add(RaggedOpDefs(), RaggedCpuKernels());
  b.Add(RaggedVariantOpDefs(), RaggedVariantCpuKernels());
  b.Add(TensorListBulkOpDefs(), TensorListBulkCpuKernels());
  b.Add(TensorArrayOpDefs(), TensorArrayCpuKernels());
  b.Add(CaseOpDefs(), CaseCpuKernels());
  b.Add(ConvExtraOpDefs(), ConvExtraCpuKernels());
  b.Add(PoolExtraOpDefs(), PoolExtraCpuKernels());
  b.Add(NormOpDefs(), NormCpuKernels());
  b.Add(BiasOpDefs(), BiasCpuKernels());
  b.Add(RnnOpDefs(), RnnCpuKernels());
  b.Add(ImageResizeOpDefs(), ImageResizeCpuKernels());
  b.Add(ImageScaleTranslateOpDefs(), ImageScaleTranslateCpuKernels());
  b.Add(ImageColorOpDefs(), ImageColorCpuKernels());
  b.Add(NmsOpDefs(), NmsCpuKernels());
  b.Add(CtcOpDefs(), CtcCpuKernels());
  b.Add(FftOpDefs(), FftCpuKernels());
  b.Add(ImageCodecOpDefs(), ImageCodecCpuKernels());
  b.Add(StringConvertOpDefs(), StringConvertCpuKernels());
  b.Add(StringRaggedOpDefs(), StringRaggedCpuKernels());
  b.Add(SparseCrossOpDefs(), SparseCrossCpuKernels());
  b.Add(StringTextOpDefs(), StringTextCpuKernels());
  b.Add(RegexOpDefs(), RegexCpuKernels());
  b.Add(LookupOpDefs(), LookupCpuKernels());
  b.Add(AssertOpDefs(), AssertCpuKernels());
  b.Add(TrainingOpDefs(), TrainingCpuKernels());
  b.Add(ResourceScatterOpDefs(), ResourceScatterCpuKernels());
  b.Add(CheckpointOpDefs(), CheckpointCpuKernels());
  b.Add(RefVariableOpDefs(), RefVariableCpuKernels());
}

}  // namespace kiln::exec
