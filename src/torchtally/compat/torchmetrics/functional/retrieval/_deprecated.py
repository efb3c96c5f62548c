"""The retrieval functions under their deprecated root names (`torchmetrics.functional.
retrieval_*`): TorchMetrics 1.9's signatures there (`retrieval_reciprocal_rank` without
`top_k`) and its FutureWarning, then the function of `torchmetrics.functional.retrieval`."""

from __future__ import annotations

import warnings

from torch import Tensor

from torchtally.compat.torchmetrics.functional.retrieval import _functions as retrieval

__all__ = [
    "retrieval_average_precision",
    "retrieval_fall_out",
    "retrieval_hit_rate",
    "retrieval_normalized_dcg",
    "retrieval_precision",
    "retrieval_precision_recall_curve",
    "retrieval_r_precision",
    "retrieval_recall",
    "retrieval_reciprocal_rank",
]


def _warn(name: str) -> None:
    warnings.warn(
        f"Importing `{name}` from `torchmetrics.functional` was deprecated and will be removed "
        f"in 2.0. Import `{name}` from `torchmetrics.retrieval` instead.",
        FutureWarning,
        stacklevel=3,
    )


def retrieval_average_precision(preds: Tensor, target: Tensor, top_k: int | None = None) -> Tensor:
    """Deprecated root name of `functional.retrieval.retrieval_average_precision`."""
    _warn("retrieval_average_precision")
    return retrieval.retrieval_average_precision(preds, target, top_k)


def retrieval_fall_out(preds: Tensor, target: Tensor, top_k: int | None = None) -> Tensor:
    """Deprecated root name of `functional.retrieval.retrieval_fall_out`."""
    _warn("retrieval_fall_out")
    return retrieval.retrieval_fall_out(preds, target, top_k)


def retrieval_hit_rate(preds: Tensor, target: Tensor, top_k: int | None = None) -> Tensor:
    """Deprecated root name of `functional.retrieval.retrieval_hit_rate`."""
    _warn("retrieval_hit_rate")
    return retrieval.retrieval_hit_rate(preds, target, top_k)


def retrieval_normalized_dcg(preds: Tensor, target: Tensor, top_k: int | None = None) -> Tensor:
    """Deprecated root name of `functional.retrieval.retrieval_normalized_dcg`."""
    _warn("retrieval_normalized_dcg")
    return retrieval.retrieval_normalized_dcg(preds, target, top_k)


def retrieval_precision(
    preds: Tensor, target: Tensor, top_k: int | None = None, adaptive_k: bool = False
) -> Tensor:
    """Deprecated root name of `functional.retrieval.retrieval_precision`."""
    _warn("retrieval_precision")
    return retrieval.retrieval_precision(preds, target, top_k, adaptive_k)


def retrieval_precision_recall_curve(
    preds: Tensor, target: Tensor, max_k: int | None = None, adaptive_k: bool = False
) -> tuple[Tensor, Tensor, Tensor]:
    """Deprecated root name of `functional.retrieval.retrieval_precision_recall_curve`."""
    _warn("retrieval_precision_recall_curve")
    return retrieval.retrieval_precision_recall_curve(preds, target, max_k, adaptive_k)


def retrieval_r_precision(preds: Tensor, target: Tensor) -> Tensor:
    """Deprecated root name of `functional.retrieval.retrieval_r_precision`."""
    _warn("retrieval_r_precision")
    return retrieval.retrieval_r_precision(preds, target)


def retrieval_recall(preds: Tensor, target: Tensor, top_k: int | None = None) -> Tensor:
    """Deprecated root name of `functional.retrieval.retrieval_recall`."""
    _warn("retrieval_recall")
    return retrieval.retrieval_recall(preds, target, top_k)


def retrieval_reciprocal_rank(preds: Tensor, target: Tensor) -> Tensor:
    """Deprecated root name of `functional.retrieval.retrieval_reciprocal_rank` (no `top_k`)."""
    _warn("retrieval_reciprocal_rank")
    return retrieval.retrieval_reciprocal_rank(preds, target)
