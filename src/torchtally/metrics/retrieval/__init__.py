"""Retrieval metrics over per-query candidate lists: NDCG@k, MRR, MAP, HitRate@k,
Precision@k, Recall@k and R-precision."""

from torchtally.metrics.retrieval._retrieval import (
    RetrievalHitRateMetric,
    RetrievalMAPMetric,
    RetrievalMRRMetric,
    RetrievalNDCGMetric,
    RetrievalPrecisionMetric,
    RetrievalRecallMetric,
    RetrievalRPrecisionMetric,
)

__all__ = [
    "RetrievalHitRateMetric",
    "RetrievalMAPMetric",
    "RetrievalMRRMetric",
    "RetrievalNDCGMetric",
    "RetrievalPrecisionMetric",
    "RetrievalRPrecisionMetric",
    "RetrievalRecallMetric",
]
