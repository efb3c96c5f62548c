"""Classification metrics."""

from torchtally.metrics.classification._accuracy import AccuracyMetric
from torchtally.metrics.classification._confusion_matrix import ConfusionMatrixMetric
from torchtally.metrics.classification._dice import DiceCoefficientMetric
from torchtally.metrics.classification._fbeta import F1ScoreMetric, FBetaScoreMetric
from torchtally.metrics.classification._mean_iou import MeanIOUMetric
from torchtally.metrics.classification._mean_per_class_accuracy import MeanPerClassAccuracyMetric
from torchtally.metrics.classification._precision import PrecisionMetric
from torchtally.metrics.classification._recall import RecallMetric
from torchtally.metrics.classification._top_k_accuracy import TopKAccuracyMetric

__all__ = [
    "AccuracyMetric",
    "ConfusionMatrixMetric",
    "DiceCoefficientMetric",
    "F1ScoreMetric",
    "FBetaScoreMetric",
    "MeanIOUMetric",
    "MeanPerClassAccuracyMetric",
    "PrecisionMetric",
    "RecallMetric",
    "TopKAccuracyMetric",
]
