"""Curve functionals: precision-recall curve, ROC curve and average precision, exact or
binned, for binary, multiclass and multilabel tasks."""

from torchtally.functional.curves._curves import (
    AVERAGES,
    TASKS,
    average_precision,
    binned_average_precision,
    binned_counts,
    binned_curve_update,
    binned_pr_curve,
    binned_roc,
    curve_inputs,
    curve_shapes,
    curve_thresholds,
    exact_average_precision,
    exact_pr_curve,
    exact_roc,
    precision_recall_curve,
    roc_curve,
)
from torchtally.functional.curves._partial import mcclish_standardized, partial_roc_areas

__all__ = [
    "AVERAGES",
    "TASKS",
    "average_precision",
    "binned_average_precision",
    "binned_counts",
    "binned_curve_update",
    "binned_pr_curve",
    "binned_roc",
    "curve_inputs",
    "curve_shapes",
    "curve_thresholds",
    "exact_average_precision",
    "exact_pr_curve",
    "exact_roc",
    "mcclish_standardized",
    "partial_roc_areas",
    "precision_recall_curve",
    "roc_curve",
]
