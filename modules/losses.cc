// Losses as trace ops: the cross-entropies use TensorFlow's fused ops where Keras does
// (SparseSoftmaxCrossEntropyWithLogits, SoftmaxCrossEntropyWithLogits).
#include "kiln/modules/losses.h"

#include <string>
#include <string_view>

#include "kiln/trace/math_ops.h"
#include "kiln/trace/op_builder.h"
#include "kiln/trace/ops.h"

namespace kiln::modules {

using trace::Value;

namespace {

constexpr double kEpsilon = 1e-7;  // Keras's backend epsilon

std::string SpecText(const Value& v) {
  return DTypeShortName(v.dtype()) + " " + v.shape().ToPythonString();
}

Value Fail(std::string_view loss, std::string_view what) {
  return Value::Error(InvalidArgument(loss, ": ", what));
}

bool IsFloat(DType t) { return t == DType::kFloat || t == DType::kDouble || t == DType::kHalf; }

Value Const(const Value& like, double v) { return trace::Cast(trace::Scalar(v), like.dtype()); }

// log(clip(p, eps, 1 - eps)): probabilities turned into logits of the same softmax.
Value ClippedLog(const Value& p) {
  return trace::Log(trace::Minimum(trace::Maximum(p, Const(p, kEpsilon)), Const(p, 1 - kEpsilon)));
}

}  // namespace

Value SparseCategoricalCrossentropy(const Value& labels, const Value& scores, bool from_logits) {
  constexpr std::string_view kName = "SparseCategoricalCrossentropy";
  if (!labels.ok()) return labels;
  if (!scores.ok()) return scores;
  if (labels.dtype() != DType::kInt32 && labels.dtype() != DType::kInt64) {
    return Fail(kName, "labels must be int32 or int64 class indices, got " + SpecText(labels));
  }
  if (!IsFloat(scores.dtype()) || scores.shape().rank() != 2) {
    return Fail(kName, "scores must be floating-point [batch, classes], got " + SpecText(scores));
  }
  Value y = labels;
  if (labels.shape().rank() == 2 && labels.shape().dim(1) == 1) {
    y = trace::OpBuilder("Squeeze").Input(labels).Attr("T", labels.dtype()).BuildOne();
  }
  if (y.shape().rank() != 1 || !PartialShape({scores.shape().dim(0)}).IsCompatibleWith(y.shape())) {
    return Fail(kName, "labels " + SpecText(labels) + " do not match scores " + SpecText(scores) +
                           " (one class index per row)");
  }
  Value logits = from_logits ? scores : ClippedLog(scores);
  trace::Values r = trace::OpBuilder("SparseSoftmaxCrossEntropyWithLogits")
                        .Input(logits)
                        .Input(y)
                        .Attr("T", logits.dtype())
                        .Attr("Tlabels", y.dtype())
                        .Build();
  return trace::Mean(r[0]);
}

Value CategoricalCrossentropy(const Value& labels, const Value& scores, bool from_logits) {
  constexpr std::string_view kName = "CategoricalCrossentropy";
  if (!labels.ok()) return labels;
  if (!scores.ok()) return scores;
  if (labels.dtype() != scores.dtype() || !IsFloat(scores.dtype()) || scores.shape().rank() != 2 ||
      !labels.shape().IsCompatibleWith(scores.shape())) {
    return Fail(kName, "labels " + SpecText(labels) + " and scores " + SpecText(scores) +
                           " must be floating-point [batch, classes] of one dtype and shape");
  }
  Value logits = from_logits ? scores : ClippedLog(scores);
  trace::Values r = trace::OpBuilder("SoftmaxCrossEntropyWithLogits")
                        .Input(logits)
                        .Input(labels)
                        .Attr("T", logits.dtype())
                        .Build();
  return trace::Mean(r[0]);
}

Value BinaryCrossentropy(const Value& labels, const Value& scores, bool from_logits) {
  constexpr std::string_view kName = "BinaryCrossentropy";
  if (!labels.ok()) return labels;
  if (!scores.ok()) return scores;
  if (labels.dtype() != scores.dtype() || !IsFloat(scores.dtype()) ||
      !labels.shape().IsCompatibleWith(scores.shape())) {
    return Fail(kName, "labels " + SpecText(labels) + " and scores " + SpecText(scores) +
                           " must be floating-point values of one dtype and shape");
  }
  if (from_logits) {
    // max(x, 0) - x * z + log(1 + exp(-|x|)), stable for large |x|.
    const Value& x = scores;
    Value loss = trace::Add(trace::Sub(trace::Maximum(x, Const(x, 0)), trace::Mul(x, labels)),
                            trace::OpBuilder("Log1p")
                                .Input(trace::Exp(trace::Neg(trace::Abs(x))))
                                .Attr("T", x.dtype())
                                .BuildOne());
    return trace::Mean(loss);
  }
  Value p =
      trace::Minimum(trace::Maximum(scores, Const(scores, kEpsilon)), Const(scores, 1 - kEpsilon));
  Value one = Const(p, 1.0);
  Value loss =
      trace::Neg(trace::Add(trace::Mul(labels, trace::Log(p)),
                            trace::Mul(trace::Sub(one, labels), trace::Log(trace::Sub(one, p)))));
  return trace::Mean(loss);
}

Value MeanSquaredError(const Value& labels, const Value& predictions) {
  if (!labels.ok()) return labels;
  if (!predictions.ok()) return predictions;
  if (labels.dtype() != predictions.dtype() || !IsFloat(predictions.dtype()) ||
      !labels.shape().IsCompatibleWith(predictions.shape())) {
    return Fail("MeanSquaredError", "labels " + SpecText(labels) + " and predictions " +
                                        SpecText(predictions) +
                                        " must be floating-point values of one dtype and shape");
  }
  return trace::Mean(trace::Square(trace::Sub(predictions, labels)));
}

}  // namespace kiln::modules
