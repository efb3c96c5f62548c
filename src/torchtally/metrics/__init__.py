"""Metrics whose `update` is pure tensor work on preallocated state.

Every metric here is a `Metric` (an `nn.Module`): `update` folds a batch into registered
state tensors without reading them, `compute` returns the value, `metric(...)` does both.
"""

from torchtally._errors import MetricValueError
from torchtally.metrics._base import Metric, Reduction, compute_all_metrics, get_all_metrics
from torchtally.metrics.aggregation import LearningRateMetric, MeanMetric, PerplexityMetric
from torchtally.metrics.classification import (
    AccuracyMetric,
    ConfusionMatrixMetric,
    DiceCoefficientMetric,
    F1ScoreMetric,
    FBetaScoreMetric,
    MeanIOUMetric,
    MeanPerClassAccuracyMetric,
    PrecisionMetric,
    RecallMetric,
    TopKAccuracyMetric,
)
from torchtally.metrics.collection import MetricCollection
from torchtally.metrics.ranking import AUCMetric, AUROCMetric, PrecisionAtKMetric, RecallAtKMetric
from torchtally.metrics.regression import MAEMetric, MSEMetric, R2ScoreMetric, SMAPEMetric

__all__ = [
    "AUCMetric",
    "AUROCMetric",
    "AccuracyMetric",
    "ConfusionMatrixMetric",
    "DiceCoefficientMetric",
    "F1ScoreMetric",
    "FBetaScoreMetric",
    "LearningRateMetric",
    "MAEMetric",
    "MSEMetric",
    "MeanIOUMetric",
    "MeanMetric",
    "MeanPerClassAccuracyMetric",
    "Metric",
    "MetricCollection",
    "MetricValueError",
    "PerplexityMetric",
    "PrecisionAtKMetric",
    "PrecisionMetric",
    "R2ScoreMetric",
    "RecallAtKMetric",
    "RecallMetric",
    "Reduction",
    "SMAPEMetric",
    "TopKAccuracyMetric",
    "compute_all_metrics",
    "get_all_metrics",
]
