"""Retrieval functionals over per-query candidate lists: NDCG@k, MRR, MAP, HitRate@k,
Precision@k, Recall@k and R-precision (TorchMetrics' definitions)."""

from torchtally.functional.retrieval._core import (
    AGGREGATIONS,
    EMPTY_TARGET_ACTIONS,
    KINDS,
    check_retrieval_args,
    flat_query_values,
    grouped_query_values,
    query_statistics,
    retrieval_aggregate,
    retrieval_hit_rate,
    retrieval_map,
    retrieval_mrr,
    retrieval_ndcg,
    retrieval_precision,
    retrieval_r_precision,
    retrieval_recall,
)

__all__ = [
    "AGGREGATIONS",
    "EMPTY_TARGET_ACTIONS",
    "KINDS",
    "check_retrieval_args",
    "flat_query_values",
    "grouped_query_values",
    "query_statistics",
    "retrieval_aggregate",
    "retrieval_hit_rate",
    "retrieval_map",
    "retrieval_mrr",
    "retrieval_ndcg",
    "retrieval_precision",
    "retrieval_r_precision",
    "retrieval_recall",
]
