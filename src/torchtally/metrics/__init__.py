"""Metrics whose `update` is pure tensor work on preallocated state.

Every metric here is a `Metric` (an `nn.Module`): `update` folds a batch into registered
state tensors without reading them, `compute` returns the value, `metric(...)` does both.
"""

from torchtally._errors import MetricValueError
from torchtally.metrics._base import (
    CatState,
    ErrorKinds,
    Metric,
    Reduction,
    StateAllocationError,
    compute_all_metrics,
    get_all_metrics,
)
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
from torchtally.metrics.histogram import QuantileMetric
from torchtally.metrics.image import PSNRMetric, SSIMMetric
from torchtally.metrics.multilabel import HammingScoreMetric
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
from torchtally.metrics.text import CharErrorRateMetric, WordErrorRateMetric
from torchtally.metrics.throughput import IterationSpeedMetric
from torchtally.metrics.wrappers import (
    BootStrapper,
    ClasswiseWrapper,
    MetricTracker,
    MultitaskWrapper,
    Running,
)

__all__ = [
    "AUCMetric",
    "AUROCMetric",
    "AccuracyMetric",
    "AveragePrecisionMetric",
    "BootStrapper",
    "CalibrationErrorMetric",
    "CatState",
    "CharErrorRateMetric",
    "ClasswiseWrapper",
    "ConfusionMatrixMetric",
    "DiceCoefficientMetric",
    "ErrorKinds",
    "F1ScoreMetric",
    "FBetaScoreMetric",
    "HammingScoreMetric",
    "IterationSpeedMetric",
    "LearningRateMetric",
    "MAEMetric",
    "MSEMetric",
    "MeanIOUMetric",
    "MeanMetric",
    "MeanPerClassAccuracyMetric",
    "Metric",
    "MetricCollection",
    "MetricTracker",
    "MetricValueError",
    "MultitaskWrapper",
    "PSNRMetric",
    "PerplexityMetric",
    "PrecisionAtKMetric",
    "PrecisionMetric",
    "PrecisionRecallCurveMetric",
    "QuantileMetric",
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
    "Running",
    "SMAPEMetric",
    "SSIMMetric",
    "StateAllocationError",
    "TopKAccuracyMetric",
    "WordErrorRateMetric",
    "compute_all_metrics",
    "get_all_metrics",
]
