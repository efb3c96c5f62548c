"""Retrieval metrics over queries (TorchMetrics' `Retrieval*` definitions), traceable.

The grouped form, `update(preds, target, mask=None, weights=None)` with `(B, K)` candidate
lists, computes each query's value during `update` and keeps five numbers: the weighted sum and
weight of the values, their min and max, and nothing that grows. The flat form (`capacity=N`),
`update(preds, target, indexes)` as TorchMetrics, stores every candidate in a preallocated
buffer and groups them at compute: exact across batches that split a query, but slower (two
sorts of the whole buffer per compute) and bounded by `capacity`.
"""

from __future__ import annotations

from typing import final

import torch
from torch import Tensor

from torchtally._errors import ErrorKinds, MetricValueError, check_int, tracing
from torchtally.functional._checks import check_tensor, count_negative, count_nonfinite
from torchtally.functional.retrieval._core import (
    check_retrieval_args,
    flat_query_values,
    grouped_query_values,
    query_statistics,
    retrieval_aggregate,
)
from torchtally.metrics._base import Metric

__all__ = [
    "RetrievalHitRateMetric",
    "RetrievalMAPMetric",
    "RetrievalMRRMetric",
    "RetrievalNDCGMetric",
    "RetrievalPrecisionMetric",
    "RetrievalRPrecisionMetric",
    "RetrievalRecallMetric",
]

#: The flat form's query id for candidates dropped by `ignore_index`.
_IGNORED = torch.iinfo(torch.int64).min


class _RetrievalMetric(Metric):
    """Shared state, update and compute; subclasses fix `_kind`."""

    unit = ""
    higher_is_better = True
    input_kind = "retrieval"
    _kind = ""
    error_kinds = ErrorKinds(
        nonfinite_predictions="non-finite predictions",
        invalid_targets="invalid targets",
        empty_queries="queries with no relevant target (empty_target_action='error')",
        negative_weights="negative weights",
    )
    cat_overflow_terms = (
        "samples",
        "use the grouped form ((B, K) candidate lists) for constant memory",
    )

    def __init__(
        self,
        top_k: int | None = None,
        empty_target_action: str = "neg",
        ignore_index: int | None = None,
        aggregation: str = "mean",
        capacity: int | None = None,
        name: str | None = None,
        *,
        adaptive_k: bool = False,
        check_values: bool = True,
    ) -> None:
        check_retrieval_args(self._kind, top_k, empty_target_action, aggregation)
        if ignore_index is not None and (
            isinstance(ignore_index, bool) or not isinstance(ignore_index, int)
        ):
            raise ValueError(
                f"Argument `ignore_index` must be an integer or None. "
                f"Received: ignore_index={ignore_index!r}"
            )
        check_int("capacity", capacity, 1, allow_none=True)
        super().__init__(name, check_values=check_values)
        self.top_k = top_k
        self.empty_target_action = empty_target_action
        self.ignore_index = ignore_index
        self.aggregation = aggregation
        self.capacity = capacity
        self.adaptive_k = adaptive_k
        f64 = torch.float64
        if capacity is None:
            self.register_state("total", torch.zeros((), dtype=f64))
            self.register_state("weight", torch.zeros((), dtype=f64))
            inf = torch.tensor(float("inf"), dtype=f64)
            self.register_state("minimum", inf, reduction="min")
            self.register_state("maximum", -inf, reduction="max")
        else:
            self.register_state("preds", torch.zeros(capacity, dtype=f64), reduction="cat")
            self.register_state("target", torch.zeros(capacity, dtype=f64), reduction="cat")
            self.register_state(
                "indexes", torch.zeros(capacity, dtype=torch.int64), reduction="cat"
            )

    def update(
        self,
        preds: Tensor,
        target: Tensor,
        indexes: Tensor | None = None,
        *,
        mask: Tensor | None = None,
        weights: Tensor | None = None,
    ) -> None:
        """Add one batch of queries.

        Args:
            preds: Grouped form: `(B, K)` scores, a row per query. Flat form: `(N,)`.
            target: Relevance shaped like `preds`: 0/1 (bool or integers), or graded >= 0
                for NDCG.
            indexes: Flat form only (`capacity` set): `(N,)` integer query ids.
            mask: Grouped form: optional `(B, K)` bool, `False` for padding candidates.
            weights: Grouped form: optional `(B,)` per-query weights of the mean (0 drops a
                query).
        """
        if self.capacity is None:
            self._update_grouped(preds, target, indexes, mask, weights)
        else:
            self._update_flat(preds, target, indexes, mask, weights)

    def _update_grouped(
        self,
        preds: Tensor,
        target: Tensor,
        indexes: Tensor | None,
        mask: Tensor | None,
        weights: Tensor | None,
    ) -> None:
        if indexes is not None:
            raise ValueError(
                f"Argument `indexes` is for the flat form (construct `{type(self).__name__}` "
                "with capacity=...); the grouped form takes (B, K) candidate lists. "
                f"Received: indexes of shape {tuple(indexes.shape)}"
            )
        values, candidates, relevance = grouped_query_values(
            self._kind,
            preds,
            target,
            self.top_k,
            mask,
            adaptive_k=self.adaptive_k,
            ignore_index=self.ignore_index,
        )
        if weights is not None:
            check_tensor("weights", weights)
            if weights.shape != candidates.shape:
                raise ValueError(
                    "Argument `weights` must hold one weight per query, shape "
                    f"{tuple(candidates.shape)}. Received: weights.shape={tuple(weights.shape)}"
                )
        total, weight, minimum, maximum, empty = query_statistics(
            values, candidates, relevance, self.empty_target_action, weights
        )
        self.total.add_(total)
        self.weight.add_(weight)
        torch.minimum(self.minimum, minimum, out=self.minimum)
        torch.maximum(self.maximum, maximum, out=self.maximum)
        if self.check_values:
            real = torch.ones_like(target, dtype=torch.bool) if mask is None else mask
            if self.ignore_index is not None:
                real = torch.logical_and(real, target != self.ignore_index)
            self.record_errors(
                nonfinite_predictions=count_nonfinite(torch.where(real, preds, 0.0)),
                invalid_targets=self._count_invalid_targets(torch.where(real, target, 0)),
                empty_queries=(
                    torch.count_nonzero(empty) if self.empty_target_action == "error" else None
                ),
                negative_weights=count_negative(weights),
            )

    def _update_flat(
        self,
        preds: Tensor,
        target: Tensor,
        indexes: Tensor | None,
        mask: Tensor | None,
        weights: Tensor | None,
    ) -> None:
        if indexes is None or mask is not None or weights is not None:
            raise ValueError(
                f"The flat form of `{type(self).__name__}` (capacity={self.capacity}) takes "
                "`update(preds, target, indexes)` with (N,) tensors and no mask or weights. "
                f"Received: indexes={'None' if indexes is None else 'a tensor'}, "
                f"mask={'None' if mask is None else 'a tensor'}, "
                f"weights={'None' if weights is None else 'a tensor'}"
            )
        check_tensor("preds", preds)
        check_tensor("target", target)
        check_tensor("indexes", indexes)
        if not (preds.dim() == 1 and preds.shape == target.shape == indexes.shape):
            raise ValueError(
                "Arguments `preds`, `target` and `indexes` must all have shape (N,). Received: "
                f"preds.shape={tuple(preds.shape)}, target.shape={tuple(target.shape)}, "
                f"indexes.shape={tuple(indexes.shape)}"
            )
        if not preds.is_floating_point() or indexes.is_floating_point():
            raise TypeError(
                "Arguments `preds` and `indexes` must be floating-point scores and integer "
                f"query ids. Received: preds.dtype={preds.dtype}, indexes.dtype={indexes.dtype}"
            )
        indexes = indexes.to(torch.int64)
        if self.ignore_index is not None:
            # Ignored candidates get a sentinel query id that compute leaves out.
            keep = target != self.ignore_index
            indexes = torch.where(keep, indexes, _IGNORED)
            target = torch.where(keep, target, 0)
        self.cat_state("preds").append(preds)
        self.cat_state("target").append(target)
        self.cat_state("indexes").append(indexes)
        if self.check_values:
            real = (
                torch.ones_like(target, dtype=torch.bool)
                if self.ignore_index is None
                else indexes != _IGNORED
            )
            self.record_errors(
                nonfinite_predictions=count_nonfinite(torch.where(real, preds, 0.0)),
                invalid_targets=self._count_invalid_targets(target),
            )

    def _count_invalid_targets(self, target: Tensor) -> Tensor | None:
        if target.dtype == torch.bool:
            return None
        if self._kind == "ndcg":
            return count_negative(target)
        return torch.count_nonzero(torch.logical_and(target != 0, target != 1))

    def compute(self) -> Tensor:
        if self.capacity is None:
            return retrieval_aggregate(
                self.total, self.weight, self.minimum, self.maximum, self.aggregation
            )
        preds, count = self.cat_state("preds").values()
        target, indexes = self.cat_state("target").rows(), self.cat_state("indexes").rows()
        rows = torch.arange(preds.shape[0], device=preds.device)
        valid = rows < count
        if self.ignore_index is not None:
            valid = torch.logical_and(valid, indexes != _IGNORED)
        values, candidates, relevance = flat_query_values(
            self._kind, preds, target, indexes, self.top_k, valid, adaptive_k=self.adaptive_k
        )
        total, weight, minimum, maximum, empty = query_statistics(
            values, candidates, relevance, self.empty_target_action
        )
        # The flat form finds its queries only here, so it counts empty ones here too.
        found_empty = self.check_values and self.empty_target_action == "error"
        if found_empty and not tracing(empty) and int(empty):
            raise MetricValueError(
                f"`{self.name}` received invalid data: queries with no relevant target "
                f"(empty_target_action='error') ({int(empty)} values). Fix the inputs, or "
                "pass check_values=False to skip these checks."
            )
        return retrieval_aggregate(total, weight, minimum, maximum, self.aggregation)

    def extra_repr(self) -> str:
        form = "grouped" if self.capacity is None else f"flat, capacity={self.capacity}"
        return (
            f"name={self.name!r}, top_k={self.top_k}, empty_target_action="
            f"{self.empty_target_action!r}, aggregation={self.aggregation!r}, {form}"
        )


_DOC_ARGS = """
    Args:
        top_k: The cut-off k; None (default) ranks every candidate of a query.
        empty_target_action: A query with no relevant candidate counts "neg" 0 (default),
            "pos" 1, "skip" not at all, or "error": a data error raised at compute.
        ignore_index: Candidates whose target equals it are ignored (padding).
        aggregation: "mean" (default, weighted by `weights`), "min" or "max" over queries;
            0.0 when no query counted (as TorchMetrics).
        capacity: None for the grouped form `update(preds, target, mask=, weights=)` with
            `(B, K)` lists (constant memory); an int for TorchMetrics' flat form
            `update(preds, target, indexes)`, which stores up to `capacity` candidates and
            groups them at compute (exact, slower; overflow raises at compute).
        name: Metric name.
        check_values: Count non-finite scores, invalid targets (not 0/1, or negative for
            NDCG), empty queries under "error" and negative weights; raise them at compute.
"""


def _document(cls: type[_RetrievalMetric], summary: str, example: str) -> None:
    cls.__doc__ = f"{summary}\n{_DOC_ARGS}\n    Example:\n{example}"


@final
class RetrievalNDCGMetric(_RetrievalMetric):
    _kind = "ndcg"


@final
class RetrievalMRRMetric(_RetrievalMetric):
    _kind = "mrr"


@final
class RetrievalMAPMetric(_RetrievalMetric):
    _kind = "map"


@final
class RetrievalHitRateMetric(_RetrievalMetric):
    _kind = "hit_rate"


@final
class RetrievalPrecisionMetric(_RetrievalMetric):
    _kind = "precision"


@final
class RetrievalRecallMetric(_RetrievalMetric):
    _kind = "recall"


@final
class RetrievalRPrecisionMetric(_RetrievalMetric):
    _kind = "r_precision"

    def __init__(
        self,
        empty_target_action: str = "neg",
        ignore_index: int | None = None,
        aggregation: str = "mean",
        capacity: int | None = None,
        name: str | None = None,
        *,
        check_values: bool = True,
    ) -> None:
        super().__init__(
            None,
            empty_target_action,
            ignore_index,
            aggregation,
            capacity,
            name,
            check_values=check_values,
        )


_PREDS = "torch.tensor([[0.9, 0.2, 0.5], [0.1, 0.8, 0.3]])"
_TARGET = "torch.tensor([[1, 0, 0], [0, 0, 1]])"
_EXAMPLE = f"""        >>> metric = {{cls}}({{args}})
        >>> metric({_PREDS}, {_TARGET})
        {{value}}
"""
for _cls, _summary, _args, _value in (
    (
        RetrievalNDCGMetric,
        "Normalized discounted cumulative gain@k, averaged over queries (tie-averaged gains).",
        "top_k=2",
        "tensor(0.8155, dtype=torch.float64)",
    ),
    (
        RetrievalMRRMetric,
        "Mean reciprocal rank of each query's first relevant candidate in its top k.",
        "",
        "tensor(0.7500, dtype=torch.float64)",
    ),
    (
        RetrievalMAPMetric,
        "Mean average precision: per query, the mean precision at each relevant candidate's "
        "rank (within the top k).",
        "",
        "tensor(0.7500, dtype=torch.float64)",
    ),
    (
        RetrievalHitRateMetric,
        "Hit rate@k: the fraction of queries with a relevant candidate in their top k.",
        "top_k=1",
        "tensor(0.5000, dtype=torch.float64)",
    ),
    (
        RetrievalPrecisionMetric,
        "Precision@k: relevant candidates in the top k over k, averaged over queries "
        "(`adaptive_k=True` divides by min(k, candidates)).",
        "top_k=2",
        "tensor(0.5000, dtype=torch.float64)",
    ),
    (
        RetrievalRecallMetric,
        "Recall@k: the fraction of each query's relevant candidates in its top k.",
        "top_k=1",
        "tensor(0.5000, dtype=torch.float64)",
    ),
    (
        RetrievalRPrecisionMetric,
        "R-precision: precision at R, the number of relevant candidates of the query "
        "(takes no top_k).",
        "",
        "tensor(0.5000, dtype=torch.float64)",
    ),
):
    _document(_cls, _summary, _EXAMPLE.format(cls=_cls.__name__, args=_args, value=_value))
