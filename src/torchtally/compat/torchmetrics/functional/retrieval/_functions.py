"""TorchMetrics 1.9's retrieval functions: one query's scores and relevance, one value.

Each is `torchtally.functional.retrieval` on a single query (a `(1, N)` candidate list), so the
function agrees with the compatible retrieval classes, which group their buffer with the same
per-query arithmetic. Here: TorchMetrics' argument checks and messages, its float32 result,
and its input conventions:

* MAP, MRR, precision and recall never count a candidate whose score is <= 0 as retrieved
  (TorchMetrics 1.9 zeroes such targets before ranking; recall's denominator still counts every
  relevant candidate): the native `nonpositive_never_retrieved=True`;
* fall-out, AUROC and the precision-recall curve are the native kinds `fall_out` and `auroc`
  and the native per-query curves (`grouped_query_curves`); AUROC takes TorchMetrics' binary
  AUROC input rule (`sigmoid_out_of_range=True`: a query whose top-k scores leave [0, 1] is
  ranked by their float32 sigmoid).
"""

from __future__ import annotations

import torch
from torch import Tensor

from torchtally.functional.retrieval import (
    check_max_fpr,
    grouped_query_curves,
    grouped_query_values,
)

__all__ = [
    "retrieval_auroc",
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


def _inputs(preds: Tensor, target: Tensor, graded: bool = False) -> tuple[Tensor, Tensor]:
    """TorchMetrics' checks of one query's inputs, flattened: float32 scores and targets (long,
    or float32 for float targets)."""
    if not isinstance(preds, Tensor) or not isinstance(target, Tensor):
        raise TypeError(
            "Arguments `preds` and `target` must be tensors. Received: "
            f"preds={type(preds).__name__}, target={type(target).__name__}"
        )
    if preds.shape != target.shape:
        raise ValueError("`preds` and `target` must be of the same shape")
    if not preds.numel() or not preds.size():
        raise ValueError("`preds` and `target` must be non-empty and non-scalar tensors")
    if target.dtype not in (torch.bool, torch.long, torch.int) and not target.is_floating_point():
        raise ValueError("`target` must be a tensor of booleans, integers or floats")
    if not preds.is_floating_point():
        raise ValueError("`preds` must be a tensor of floats")
    if not graded and bool((target.max() > 1) | (target.min() < 0)):
        raise ValueError("`target` must contain `binary` values")
    target = target.float() if target.is_floating_point() else target.long()
    return preds.float().flatten(), target.flatten()


def _check_k(name: str, value: object) -> None:
    if value is not None and (not isinstance(value, int) or isinstance(value, bool) or value <= 0):
        raise ValueError(f"`{name}` has to be a positive integer or None")


def _check_adaptive_k(adaptive_k: object) -> None:
    if not isinstance(adaptive_k, bool):
        raise ValueError("`adaptive_k` has to be a boolean")


def _value(
    kind: str,
    preds: Tensor,
    target: Tensor,
    top_k: int | None,
    adaptive_k: bool = False,
    nonpositive_never_retrieved: bool = False,
    max_fpr: float | None = None,
) -> Tensor:
    """The native per-query value of the single query `(preds, target)`, in float32;
    `nonpositive_never_retrieved` where TorchMetrics 1.9's function applies that rule (its MAP,
    MRR, precision and recall; not fall-out nor the precision-recall curve)."""
    values, _, _ = grouped_query_values(
        kind,
        preds.unsqueeze(0),
        target.unsqueeze(0),
        top_k,
        adaptive_k=adaptive_k,
        nonpositive_never_retrieved=nonpositive_never_retrieved,
        max_fpr=max_fpr,
        sigmoid_out_of_range=kind == "auroc",
    )
    # A query without relevant candidates is 0 in TorchMetrics (empty_target_action="neg").
    return values[0].nan_to_num(0.0).to(torch.float32)


def retrieval_average_precision(preds: Tensor, target: Tensor, top_k: int | None = None) -> Tensor:
    """Average precision of one query's ranking (within the top k).

    Example:
        >>> import torch
        >>> retrieval_average_precision(torch.tensor([0.2, 0.3, 0.5]),
        ...                             torch.tensor([True, False, True]))
        tensor(0.8333)
    """
    preds, target = _inputs(preds, target)
    _check_k("top_k", top_k)
    return _value("map", preds, target, top_k, nonpositive_never_retrieved=True)


def retrieval_reciprocal_rank(preds: Tensor, target: Tensor, top_k: int | None = None) -> Tensor:
    """1 / rank of the first relevant candidate (within the top k); 0 without one."""
    preds, target = _inputs(preds, target)
    _check_k("top_k", top_k)
    return _value("mrr", preds, target, top_k, nonpositive_never_retrieved=True)


def retrieval_precision(
    preds: Tensor, target: Tensor, top_k: int | None = None, adaptive_k: bool = False
) -> Tensor:
    """Relevant candidates among the top k, over k (`adaptive_k`: over min(k, candidates))."""
    preds, target = _inputs(preds, target)
    _check_adaptive_k(adaptive_k)
    _check_k("top_k", top_k)
    if not bool(target.sum()):
        return torch.zeros((), device=preds.device)
    return _value("precision", preds, target, top_k, adaptive_k, nonpositive_never_retrieved=True)


def retrieval_recall(preds: Tensor, target: Tensor, top_k: int | None = None) -> Tensor:
    """Relevant candidates among the top k, over all relevant candidates."""
    preds, target = _inputs(preds, target)
    _check_k("top_k", top_k)
    return _value("recall", preds, target, top_k, nonpositive_never_retrieved=True)


def retrieval_hit_rate(preds: Tensor, target: Tensor, top_k: int | None = None) -> Tensor:
    """1 if a relevant candidate is among the top k, else 0."""
    preds, target = _inputs(preds, target)
    _check_k("top_k", top_k)
    return _value("hit_rate", preds, target, top_k)


def retrieval_fall_out(preds: Tensor, target: Tensor, top_k: int | None = None) -> Tensor:
    """Non-relevant candidates among the top k, over all non-relevant candidates."""
    preds, target = _inputs(preds, target)
    _check_k("top_k", top_k)
    return _value("fall_out", preds, target, top_k)


def retrieval_r_precision(preds: Tensor, target: Tensor) -> Tensor:
    """Precision at R, R the number of relevant candidates."""
    preds, target = _inputs(preds, target)
    return _value("r_precision", preds, target, None)


def retrieval_normalized_dcg(preds: Tensor, target: Tensor, top_k: int | None = None) -> Tensor:
    """NDCG@k with graded relevance; tied scores share their mean gain (scikit-learn)."""
    preds, target = _inputs(preds, target, graded=True)
    _check_k("top_k", top_k)
    return _value("ndcg", preds, target, top_k)


def retrieval_auroc(
    preds: Tensor, target: Tensor, top_k: int | None = None, max_fpr: float | None = None
) -> Tensor:
    """Binary AUROC of the top-k candidates (0 when they hold only one class)."""
    preds, target = _inputs(preds, target)
    # TorchMetrics reads `top_k or len(preds)`: 0 means every candidate.
    top_k = top_k or None
    _check_k("top_k", top_k)
    check_max_fpr(max_fpr)
    return _value("auroc", preds, target, top_k, max_fpr=max_fpr)


def retrieval_precision_recall_curve(
    preds: Tensor, target: Tensor, max_k: int | None = None, adaptive_k: bool = False
) -> tuple[Tensor, Tensor, Tensor]:
    """`(precision, recall, k)` at every cut-off k = 1 .. `max_k` (None: every candidate)."""
    preds, target = _inputs(preds, target)
    _check_adaptive_k(adaptive_k)
    count = preds.shape[-1]
    if max_k is None:
        max_k = count
    _check_k("max_k", max_k)
    cutoffs = torch.arange(1, max_k + 1, device=preds.device)
    if adaptive_k:
        cutoffs = cutoffs.clamp(max=count)
    if not bool(target.sum()):
        zeros = torch.zeros(max_k, device=preds.device)
        return zeros, zeros.clone(), cutoffs
    precision, recall, _, _ = grouped_query_curves(
        preds.unsqueeze(0), target.unsqueeze(0), max_k, adaptive_k=adaptive_k
    )
    return precision[0].to(torch.float32), recall[0].to(torch.float32), cutoffs
