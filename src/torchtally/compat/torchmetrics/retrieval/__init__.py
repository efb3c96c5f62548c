"""`torchmetrics.retrieval` on torchtally: TorchMetrics' flat `update(preds, target, indexes)`
form over a preallocated buffer.

TorchMetrics keeps every `(preds, target, indexes)` triple in growing lists and loops over the
queries in Python at compute. Here the triples go into a buffer of `capacity` rows allocated at
construction (25 bytes per candidate: the default 65,536 rows cost 1.6 MiB), the update is an
`index_copy_` at the fill count (traceable, no host sync), and compute groups every query at
once with sorts and scatters (`torchtally.functional.retrieval.flat_query_values`). More
candidates than `capacity` raise a clear error at compute.

The flat form is the slower path; `torchtally.metrics.RetrievalNDCGMetric` and friends take
`(B, K)` per-query candidate lists in constant memory.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import torch
from torch import Tensor

from torchtally._errors import ErrorKinds, tracing
from torchtally.compat.torchmetrics._base import Metric
from torchtally.functional.retrieval import (
    check_retrieval_args,
    flat_query_values,
    query_statistics,
    retrieval_aggregate,
)

__all__ = [
    "RetrievalHitRate",
    "RetrievalMAP",
    "RetrievalMRR",
    "RetrievalNormalizedDCG",
    "RetrievalPrecision",
    "RetrievalRPrecision",
    "RetrievalRecall",
]

#: Candidates the buffer holds unless `capacity` says otherwise.
DEFAULT_CAPACITY = 1 << 16


class _Retrieval(Metric):
    """Shared buffer, update and compute; subclasses fix `_kind`."""

    _kind = ""
    # TorchMetrics 1.9's MAP, MRR, precision and recall never count a candidate scored <= 0 as
    # retrieved (recall still counts it in its denominator); see `flat_query_values`.
    _nonpositive_never_retrieved = False
    error_kinds = ErrorKinds(invalid_targets="targets that are not 0/1 (negative for NDCG)")
    higher_is_better = True
    plot_lower_bound, plot_upper_bound = 0.0, 1.0
    is_differentiable = False
    _cat_whole_buffers = True  # unfilled rows have valid=False: compute stays traceable
    cat_overflow_terms = (
        "candidates",
        "use torchtally.metrics' grouped form ((B, K) candidate lists) for constant memory",
    )

    def __init__(
        self,
        empty_target_action: str = "neg",
        ignore_index: int | None = None,
        top_k: int | None = None,
        aggregation: str | Callable[..., Tensor] = "mean",
        capacity: int = DEFAULT_CAPACITY,
        adaptive_k: bool = False,
        **kwargs: Any,
    ) -> None:
        if not (aggregation in ("mean", "median", "min", "max") or callable(aggregation)):
            raise ValueError(
                "Argument `aggregation` must be one of ('mean', 'median', 'min', 'max') or a "
                f"callable over the per-query values. Received: aggregation={aggregation!r}"
            )
        additive = aggregation if aggregation in ("mean", "min", "max") else "mean"
        check_retrieval_args(self._kind, top_k, empty_target_action, str(additive))
        if ignore_index is not None and (
            not isinstance(ignore_index, int) or isinstance(ignore_index, bool)
        ):
            raise ValueError(
                f"Argument `ignore_index` must be None or an integer. Received: ignore_index={ignore_index!r}"
            )
        if not isinstance(capacity, int) or isinstance(capacity, bool) or capacity < 1:
            raise ValueError(
                f"Argument `capacity` must be an integer >= 1. Received: capacity={capacity!r}"
            )
        super().__init__(**kwargs)
        self.empty_target_action, self.ignore_index = empty_target_action, ignore_index
        self.top_k, self.aggregation, self.adaptive_k = top_k, aggregation, adaptive_k
        self.capacity = capacity
        self.register_state("preds", torch.zeros(capacity, dtype=torch.float64), False, "cat")
        self.register_state("target", torch.zeros(capacity, dtype=torch.float64), False, "cat")
        self.register_state("indexes", torch.zeros(capacity, dtype=torch.int64), False, "cat")
        self.register_state("valid", torch.zeros(capacity, dtype=torch.bool), False, "cat")

    def _batch(self, preds: Tensor, target: Tensor, indexes: Tensor) -> dict[str, Any]:
        for name, value in (("preds", preds), ("target", target), ("indexes", indexes)):
            if not isinstance(value, Tensor):
                raise ValueError(
                    f"Argument `{name}` must be a tensor (order: update(preds, target, "
                    f"indexes)). Received: {type(value).__name__}"
                )
        if not preds.is_floating_point() or indexes.is_floating_point():
            raise ValueError(
                "Arguments `preds` and `indexes` must be float scores and integer query ids "
                "(order: update(preds, target, indexes)). Received: preds.dtype="
                f"{preds.dtype}, indexes.dtype={indexes.dtype}"
            )
        if not preds.shape == target.shape == indexes.shape:
            raise ValueError(
                "Arguments `preds`, `target` and `indexes` must have the same shape. Received: "
                f"{tuple(preds.shape)}, {tuple(target.shape)}, {tuple(indexes.shape)}"
            )
        p, t, i = preds.reshape(-1), target.reshape(-1), indexes.reshape(-1)
        valid = torch.ones_like(t, dtype=torch.bool)
        if self.ignore_index is not None:
            valid = t != self.ignore_index
        t = torch.where(valid, t, 0).double()
        # NDCG takes graded relevance; the others 0/1.
        bad = t < 0 if self._kind == "ndcg" else (t != 0) & (t != 1)
        invalid = valid & bad
        return {
            "preds": p.double(),
            "target": t,
            "indexes": i.long(),
            "valid": valid,
            "_errors": {"invalid_targets": invalid.sum()},
        }

    def _value(self, state: Mapping[str, Tensor]) -> Tensor:
        values, candidates, relevance = flat_query_values(
            self._kind,
            state["preds"],
            state["target"],
            state["indexes"],
            self.top_k,
            state["valid"],
            adaptive_k=self.adaptive_k,
            nonpositive_never_retrieved=self._nonpositive_never_retrieved,
        )
        total, weight, minimum, maximum, empty = query_statistics(
            values, candidates, relevance, self.empty_target_action
        )
        if self.empty_target_action == "error" and not tracing(empty) and int(empty):
            raise ValueError(
                f"`{type(self).__name__}` got {int(empty)} queries with no positive target, "
                "which empty_target_action='error' forbids."
            )
        if self.aggregation == "median" or callable(self.aggregation):
            value = self._per_query_aggregate(values, candidates, relevance)
        else:
            value = retrieval_aggregate(total, weight, minimum, maximum, self.aggregation)
        return value.to(torch.get_default_dtype())

    def _per_query_aggregate(self, values: Tensor, candidates: Tensor, relevance: Tensor) -> Tensor:
        """TorchMetrics' median (the lower middle value) or callable over the counted queries'
        values after `empty_target_action`; 0.0 without any. The median is a masked
        `nanmedian` (traceable); a callable gets the counted values, selected on the host."""
        is_query = candidates > 0
        empty = is_query & (relevance <= 0)
        if self.empty_target_action == "neg":
            values = torch.where(empty, 0.0, values)
        elif self.empty_target_action == "pos":
            values = torch.where(empty, 1.0, values)
        counted = is_query
        if self.empty_target_action in ("skip", "error"):
            counted = is_query & ~empty
        if self.aggregation == "median":
            middle = torch.where(counted, values, float("nan")).nanmedian()
            return torch.where(counted.any(), middle, 0.0)
        kept = values[counted].to(torch.get_default_dtype())
        if kept.numel() == 0:
            return torch.zeros((), dtype=torch.get_default_dtype(), device=values.device)
        return torch.as_tensor(self.aggregation(kept, dim=None))  # type: ignore[operator]


class RetrievalNormalizedDCG(_Retrieval):
    """TorchMetrics' `RetrievalNormalizedDCG` (graded relevance, `top_k`)."""

    _kind = "ndcg"


class RetrievalMRR(_Retrieval):
    """TorchMetrics' `RetrievalMRR` (`top_k`)."""

    _kind = "mrr"
    _nonpositive_never_retrieved = True


class RetrievalMAP(_Retrieval):
    """TorchMetrics' `RetrievalMAP` (`top_k`)."""

    _kind = "map"
    _nonpositive_never_retrieved = True


class RetrievalHitRate(_Retrieval):
    """TorchMetrics' `RetrievalHitRate` (`top_k`)."""

    _kind = "hit_rate"


class RetrievalRecall(_Retrieval):
    """TorchMetrics' `RetrievalRecall` (`top_k`)."""

    _kind = "recall"
    _nonpositive_never_retrieved = True


class RetrievalPrecision(_Retrieval):
    """TorchMetrics' `RetrievalPrecision` (`top_k`, `adaptive_k`)."""

    _kind = "precision"
    _nonpositive_never_retrieved = True

    def __init__(
        self,
        empty_target_action: str = "neg",
        ignore_index: int | None = None,
        top_k: int | None = None,
        adaptive_k: bool = False,
        aggregation: str = "mean",
        capacity: int = DEFAULT_CAPACITY,
        **kwargs: Any,
    ) -> None:
        super().__init__(
            empty_target_action, ignore_index, top_k, aggregation, capacity, adaptive_k, **kwargs
        )


class RetrievalRPrecision(_Retrieval):
    """TorchMetrics' `RetrievalRPrecision` (the cut-off is each query's relevant count)."""

    _kind = "r_precision"

    def __init__(
        self,
        empty_target_action: str = "neg",
        ignore_index: int | None = None,
        aggregation: str = "mean",
        capacity: int = DEFAULT_CAPACITY,
        **kwargs: Any,
    ) -> None:
        super().__init__(empty_target_action, ignore_index, None, aggregation, capacity, **kwargs)
