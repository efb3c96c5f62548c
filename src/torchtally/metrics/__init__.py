"""Metrics whose `update` is pure tensor work on preallocated state.

Every metric here is a `Metric` (an `nn.Module`): `update` folds a batch into registered
state tensors without reading them, `compute` returns the value, `metric(...)` does both.
"""

from torchtally._errors import MetricValueError
from torchtally.metrics._base import Metric, Reduction, compute_all_metrics, get_all_metrics
from torchtally.metrics.aggregation import LearningRateMetric, MeanMetric, PerplexityMetric
from torchtally.metrics.calibration import CalibrationErrorMetric
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
from torchtally.metrics.curves import (
    AveragePrecisionMetric,
    PrecisionRecallCurveMetric,
    ROCMetric,
)
from torchtally.metrics.ranking import AUCMetric, AUROCMetric, PrecisionAtKMetric, RecallAtKMetric
from torchtally.metrics.regression import MAEMetric, MSEMetric, R2ScoreMetric, SMAPEMetric
from torchtally.metrics.retrieval import (
    RetrievalHitRateMetric,
    RetrievalMAPMetric,
    RetrievalMRRMetric,
    RetrievalNDCGMetric,
    RetrievalPrecisionMetric,
    RetrievalRecallMetric,
    RetrievalRPrecisionMetric,
)
from torchtally.metrics.wrappers import BootStrapper

__all__ = [
    "AUCMetric",
    "AUROCMetric",
    "AccuracyMetric",
    "AveragePrecisionMetric",
    "BootStrapper",
    "CalibrationErrorMetric",
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
    "PrecisionRecallCurveMetric",
    "R2ScoreMetric",
    "ROCMetric",
    "RecallAtKMetric",
    "RecallMetric",
    "Reduction",
    "RetrievalHitRateMetric",
    "RetrievalMAPMetric",
    "RetrievalMRRMetric",
    "RetrievalNDCGMetric",
    "RetrievalPrecisionMetric",
    "RetrievalRPrecisionMetric",
    "RetrievalRecallMetric",
    "SMAPEMetric",
    "TopKAccuracyMetric",
    "compute_all_metrics",
    "get_all_metrics",
]
