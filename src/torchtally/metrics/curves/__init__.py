"""Curve metrics: average precision, precision-recall curve and ROC curve, exact or binned."""

from torchtally.metrics.curves._curves import (
    AveragePrecisionMetric,
    PrecisionRecallCurveMetric,
    ROCMetric,
)

__all__ = ["AveragePrecisionMetric", "PrecisionRecallCurveMetric", "ROCMetric"]
