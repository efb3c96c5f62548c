"""`torchmetrics.retrieval` on torchtally: TorchMetrics' flat `update(preds, target, indexes)`
form over a preallocated buffer.

TorchMetrics keeps every `(preds, target, indexes)` triple in growing lists and loops over the
queries in Python at compute. Here the triples go into a buffer of `capacity` rows allocated at
construction (25 bytes per candidate: the default 65,536 rows cost 1.6 MiB), the update is an
`index_copy_` at the fill count (traceable, no host sync), and compute groups every query at
once with sorts and scatters (`torchtally.functional.retrieval.flat_query_values`, and
`flat_query_curves` for the precision-recall curve). More candidates than `capacity` raise a
clear error at compute.

As TorchMetrics, scores are ranked as float32 (its update converts them), and the checks that
need no data (shapes, dtypes, arguments) raise in `update` with TorchMetrics' messages; the
ones that read values (targets not 0/1, a query without a positive target under
`empty_target_action="error"`) raise at compute.

The flat form is the slower path; `torchtally.metrics.RetrievalNDCGMetric` and friends take
`(B, K)` per-query candidate lists in constant memory.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import torch
from torch import Tensor

from torchtally._errors import ErrorKinds, tracing
from torchtally._optional import import_optional
from torchtally.compat.torchmetrics._base import Metric
from torchtally.functional.retrieval import (
    aggregate_query_values,
    check_max_fpr,
    check_retrieval_args,
    counted_query_values,
    flat_query_curves,
    flat_query_values,
    query_statistics,
    recall_at_fixed_precision,
    retrieval_aggregate,
)

__all__ = [
    "RetrievalAUROC",
    "RetrievalFallOut",
    "RetrievalHitRate",
    "RetrievalMAP",
    "RetrievalMRR",
    "RetrievalNormalizedDCG",
    "RetrievalPrecision",
    "RetrievalPrecisionRecallCurve",
    "RetrievalRPrecision",
    "RetrievalRecall",
    "RetrievalRecallAtFixedPrecision",
]

#: Candidates the buffer holds unless `capacity` says otherwise.
DEFAULT_CAPACITY = 1 << 16

_EMPTY_TARGET_ACTIONS = ("error", "skip", "neg", "pos")
_AGGREGATIONS = ("mean", "median", "min", "max")


def _is_int(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _check_k(name: str, value: object) -> None:
    """TorchMetrics' check of `top_k` and `max_k` (bools refused too)."""
    if value is not None and not (_is_int(value) and value > 0):  # type: ignore[operator]
        raise ValueError(
            f"Argument `{name}` has to be a positive integer or None. Received: {name}={value!r}"
        )


def _check_adaptive_k(adaptive_k: object) -> None:
    if not isinstance(adaptive_k, bool):
        raise ValueError(
            f"Argument `adaptive_k` has to be a boolean. Received: adaptive_k={adaptive_k!r}"
        )


def _check_common(
    empty_target_action: object, ignore_index: object, aggregation: object, capacity: object
) -> None:
    """TorchMetrics' checks of the arguments every retrieval class takes, in its order."""
    if empty_target_action not in _EMPTY_TARGET_ACTIONS:
        raise ValueError(
            f"Argument `empty_target_action` received a wrong value `{empty_target_action}`. "
            f"It must be one of {_EMPTY_TARGET_ACTIONS}."
        )
    if ignore_index is not None and not _is_int(ignore_index):
        raise ValueError(
            "Argument `ignore_index` must be an integer or None. "
            f"Received: ignore_index={ignore_index!r}"
        )
    if not (aggregation in _AGGREGATIONS or callable(aggregation)):
        raise ValueError(
            "Argument `aggregation` must be one of `mean`, `median`, `min`, `max` or a custom "
            "callable function which takes tensor of values, but got "
            f"{aggregation!r}."
        )
    if not _is_int(capacity) or capacity < 1:  # type: ignore[operator]
        raise ValueError(
            f"Argument `capacity` must be an integer >= 1. Received: capacity={capacity!r}"
        )


class _Retrieval(Metric):
    """Shared buffer, update and compute; subclasses fix `_kind`."""

    _kind = ""
    # TorchMetrics 1.9's MAP, MRR, precision and recall never count a candidate scored <= 0 as
    # retrieved (recall still counts it in its denominator); see `flat_query_values`.
    _nonpositive_never_retrieved = False
    #: The targets an "empty" query lacks (fall-out's are the negative ones).
    _empty_lacks = "positive"
    error_kinds = ErrorKinds(invalid_targets="targets that are not 0/1 (negative for NDCG)")
    higher_is_better = True
    plot_lower_bound: float | None = 0.0
    plot_upper_bound: float | None = 1.0
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
        _check_common(empty_target_action, ignore_index, aggregation, capacity)
        _check_k("top_k", top_k)
        _check_adaptive_k(adaptive_k)
        check_retrieval_args(self._kind or "recall", top_k, empty_target_action)
        super().__init__(**kwargs)
        self.empty_target_action, self.ignore_index = empty_target_action, ignore_index
        self.top_k, self.aggregation, self.adaptive_k = top_k, aggregation, adaptive_k
        self.capacity = capacity
        self.register_state("preds", torch.zeros(capacity, dtype=torch.float64), False, "cat")
        self.register_state("target", torch.zeros(capacity, dtype=torch.float64), False, "cat")
        self.register_state("indexes", torch.zeros(capacity, dtype=torch.int64), False, "cat")
        self.register_state("valid", torch.zeros(capacity, dtype=torch.bool), False, "cat")

    def _batch(self, preds: Tensor, target: Tensor, indexes: Tensor | None) -> dict[str, Any]:
        # TorchMetrics' checks, in its order, as far as they need no data.
        if indexes is None:
            raise ValueError("Argument `indexes` cannot be None")
        for name, value in (("preds", preds), ("target", target), ("indexes", indexes)):
            if not isinstance(value, Tensor):
                raise ValueError(
                    f"Argument `{name}` must be a tensor (order: update(preds, target, "
                    f"indexes)). Received: {type(value).__name__}"
                )
        if not preds.shape == target.shape == indexes.shape:
            raise ValueError(
                "`indexes`, `preds` and `target` must be of the same shape. Received: "
                f"preds {tuple(preds.shape)}, target {tuple(target.shape)}, "
                f"indexes {tuple(indexes.shape)}"
            )
        if indexes.dtype != torch.long:
            raise ValueError(
                "`indexes` must be a tensor of long integers (order: update(preds, target, "
                f"indexes)). Received: indexes.dtype={indexes.dtype}"
            )
        if indexes.dim() == 0 or indexes.numel() == 0:
            raise ValueError(
                "`indexes`, `preds` and `target` must be non-empty and non-scalar tensors. "
                f"Received: shape {tuple(indexes.shape)}"
            )
        if target.dtype not in (torch.bool, torch.long, torch.int) and not (
            target.is_floating_point()
        ):
            raise ValueError(
                "`target` must be a tensor of booleans, integers or floats. "
                f"Received: target.dtype={target.dtype}"
            )
        if not preds.is_floating_point():
            raise ValueError(
                "`preds` must be a tensor of floats (order: update(preds, target, indexes)). "
                f"Received: preds.dtype={preds.dtype}"
            )
        p, t, i = preds.reshape(-1), target.reshape(-1), indexes.reshape(-1)
        valid = torch.ones_like(t, dtype=torch.bool)
        if self.ignore_index is not None:
            valid = t != self.ignore_index
        # TorchMetrics ranks float32 scores and float32 (float) targets.
        if t.is_floating_point():
            t = t.float()
        t = torch.where(valid, t, 0).double()
        # NDCG takes graded relevance; the others 0/1.
        bad = t < 0 if self._kind == "ndcg" else (t != 0) & (t != 1)
        invalid = valid & bad
        return {
            "preds": p.float().double(),
            "target": t,
            "indexes": i,
            "valid": valid,
            "_errors": {"invalid_targets": invalid.sum()},
        }

    def _query_values(self, state: Mapping[str, Tensor]) -> tuple[Tensor, Tensor, Tensor]:
        return flat_query_values(
            self._kind,
            state["preds"],
            state["target"],
            state["indexes"],
            self.top_k,
            state["valid"],
            adaptive_k=self.adaptive_k,
            nonpositive_never_retrieved=self._nonpositive_never_retrieved,
        )

    def _raise_on_empty(self, empty: Tensor) -> None:
        if self.empty_target_action == "error" and not tracing(empty) and int(empty):
            raise ValueError(
                "`compute` method was provided with a query with no "
                f"{self._empty_lacks} target. (`{type(self).__name__}`: {int(empty)} such "
                "queries, which empty_target_action='error' forbids.)"
            )

    def _value(self, state: Mapping[str, Tensor]) -> Tensor:
        values, candidates, relevance = self._query_values(state)
        total, weight, minimum, maximum, empty = query_statistics(
            values, candidates, relevance, self.empty_target_action
        )
        self._raise_on_empty(empty)
        if self.aggregation in ("mean", "min", "max"):
            value = retrieval_aggregate(total, weight, minimum, maximum, str(self.aggregation))
        else:
            # TorchMetrics' median (the lower middle value) or callable over the counted
            # queries' values.
            values, counted = counted_query_values(
                values, candidates, relevance, self.empty_target_action
            )
            if callable(self.aggregation):
                values = values.to(torch.get_default_dtype())
            value = aggregate_query_values(values, counted, self.aggregation)
        return value.to(torch.get_default_dtype())


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
        aggregation: str | Callable[..., Tensor] = "mean",
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
        aggregation: str | Callable[..., Tensor] = "mean",
        capacity: int = DEFAULT_CAPACITY,
        **kwargs: Any,
    ) -> None:
        super().__init__(empty_target_action, ignore_index, None, aggregation, capacity, **kwargs)


class RetrievalFallOut(_Retrieval):
    """TorchMetrics' `RetrievalFallOut` (`top_k`): the fraction of a query's non-relevant
    candidates in its top k (lower is better). Its empty query is one without a negative
    target, counted 1 by default (`empty_target_action="pos"`)."""

    _kind = "fall_out"
    _empty_lacks = "negative"
    higher_is_better = False

    def __init__(
        self,
        empty_target_action: str = "pos",
        ignore_index: int | None = None,
        top_k: int | None = None,
        aggregation: str | Callable[..., Tensor] = "mean",
        capacity: int = DEFAULT_CAPACITY,
        **kwargs: Any,
    ) -> None:
        super().__init__(empty_target_action, ignore_index, top_k, aggregation, capacity, **kwargs)


class RetrievalAUROC(_Retrieval):
    """TorchMetrics' `RetrievalAUROC` (`top_k`, `max_fpr`): per query, the binary AUROC of its
    top-k candidates (0 when they hold one class only), as TorchMetrics' `binary_auroc`
    (a query whose top-k scores leave [0, 1] is ranked by their float32 sigmoid)."""

    _kind = "auroc"

    def __init__(
        self,
        empty_target_action: str = "neg",
        ignore_index: int | None = None,
        top_k: int | None = None,
        max_fpr: float | None = None,
        aggregation: str | Callable[..., Tensor] = "mean",
        capacity: int = DEFAULT_CAPACITY,
        **kwargs: Any,
    ) -> None:
        super().__init__(empty_target_action, ignore_index, top_k, aggregation, capacity, **kwargs)
        # TorchMetrics checks it only when a query's AUROC is computed; here at once.
        check_max_fpr(max_fpr)
        self.max_fpr = max_fpr

    def _query_values(self, state: Mapping[str, Tensor]) -> tuple[Tensor, Tensor, Tensor]:
        return flat_query_values(
            "auroc",
            state["preds"],
            state["target"],
            state["indexes"],
            self.top_k,
            state["valid"],
            max_fpr=self.max_fpr,
            sigmoid_out_of_range=True,
        )


class RetrievalPrecisionRecallCurve(_Retrieval):
    """TorchMetrics' `RetrievalPrecisionRecallCurve`: `(precision, recall, k)`, the
    aggregated precision@k and recall@k over the queries for k = 1 .. `max_k`.

    With `max_k=None` (the largest query's size), compute reads that size from the device;
    with an integer `max_k`, compute traces too (it then holds a `capacity x max_k` table).
    """

    _kind = "recall"
    higher_is_better = True
    plot_lower_bound = plot_upper_bound = None

    def __init__(
        self,
        max_k: int | None = None,
        adaptive_k: bool = False,
        empty_target_action: str = "neg",
        ignore_index: int | None = None,
        aggregation: str | Callable[..., Tensor] = "mean",
        capacity: int = DEFAULT_CAPACITY,
        **kwargs: Any,
    ) -> None:
        _check_k("max_k", max_k)
        super().__init__(
            empty_target_action, ignore_index, None, aggregation, capacity, adaptive_k, **kwargs
        )
        self.max_k = max_k

    def _curves(self, state: Mapping[str, Tensor]) -> tuple[Tensor, Tensor, Tensor]:
        preds = state["preds"]
        precision, recall, candidates, relevance = flat_query_curves(
            preds,
            state["target"],
            state["indexes"],
            self.max_k,
            state["valid"],
            adaptive_k=self.adaptive_k,
            compact=not tracing(preds),
        )
        is_query = candidates > 0
        self._raise_on_empty(torch.count_nonzero(torch.logical_and(is_query, relevance <= 0)))
        action = self.empty_target_action
        precision, counted = counted_query_values(precision, candidates, relevance, action)
        recall, _ = counted_query_values(recall, candidates, relevance, action)
        if callable(self.aggregation):
            precision = precision.to(torch.get_default_dtype())
            recall = recall.to(torch.get_default_dtype())
        dtype = torch.get_default_dtype()
        precision = aggregate_query_values(precision, counted, self.aggregation).to(dtype)
        recall = aggregate_query_values(recall, counted, self.aggregation).to(dtype)
        k = torch.arange(1, precision.shape[0] + 1, device=preds.device)
        return precision, recall, k

    def _value(self, state: Mapping[str, Tensor]) -> Any:
        # TorchMetrics' compute squeezes one-element outputs: a curve of one k is three 0-d.
        return tuple(x.squeeze(0) if x.shape[0] == 1 else x for x in self._curves(state))

    def plot(self, curve: Any = None, ax: Any = None) -> tuple[Any, Any]:
        """Plot precision@k against recall@k (the output of `compute` unless `curve` is
        given); returns `(figure, axes)`.

        Raises:
            ImportError: matplotlib is not installed (the `plots` extra).
        """
        plt = import_optional("matplotlib.pyplot", f"`{type(self).__name__}.plot`", "plots")
        precision, recall, _ = self.compute() if curve is None else curve
        if ax is None:
            fig, ax = plt.subplots()
        else:
            fig = ax.get_figure()
        name = type(self).__name__
        ax.plot(
            torch.as_tensor(recall).detach().cpu().tolist(),
            torch.as_tensor(precision).detach().cpu().tolist(),
            marker="o",
            label=name,
        )
        ax.set_title(name)
        ax.set_xlabel("Recall@k")
        ax.set_ylabel("Precision@k")
        return fig, ax


class RetrievalRecallAtFixedPrecision(RetrievalPrecisionRecallCurve):
    """TorchMetrics' `RetrievalRecallAtFixedPrecision`: `(max_recall, best_k)`, the largest
    aggregated recall@k whose aggregated precision@k is at least `min_precision`, and the
    largest k that reaches it (`max_k` when none does or the recall is 0)."""

    higher_is_better = True

    def __init__(
        self,
        min_precision: float = 0.0,
        max_k: int | None = None,
        adaptive_k: bool = False,
        empty_target_action: str = "neg",
        ignore_index: int | None = None,
        aggregation: str | Callable[..., Tensor] = "mean",
        capacity: int = DEFAULT_CAPACITY,
        **kwargs: Any,
    ) -> None:
        super().__init__(
            max_k, adaptive_k, empty_target_action, ignore_index, aggregation, capacity, **kwargs
        )
        if not (isinstance(min_precision, float) and 0.0 <= min_precision <= 1.0):
            raise ValueError(
                "Argument `min_precision` has to be a positive float between 0 and 1. "
                f"Received: min_precision={min_precision!r}"
            )
        self.min_precision = min_precision

    def _value(self, state: Mapping[str, Tensor]) -> Any:
        precision, recall, _ = self._curves(state)
        return recall_at_fixed_precision(precision, recall, self.min_precision)

    def plot(self, val: Any = None, ax: Any = None) -> tuple[Any, Any]:
        """Plot the maximum recall (of `compute` unless `val` is given); returns
        `(figure, axes)`."""
        return Metric.plot(self, self.compute()[0] if val is None else val, ax)
