"""Ranking metrics: AUROC (exact or binned), thresholded AUC, precision@k and recall@k."""

from torchtally.metrics.ranking._at_k import PrecisionAtKMetric, RecallAtKMetric
from torchtally.metrics.ranking._auc import AUCMetric
from torchtally.metrics.ranking._auroc import AUROCMetric

__all__ = ["AUCMetric", "AUROCMetric", "PrecisionAtKMetric", "RecallAtKMetric"]
