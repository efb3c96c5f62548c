"""`torchmetrics.retrieval.base`: TorchMetrics' `_retrieval_aggregate`, which its tests and
custom retrieval code import from here. (Its `RetrievalMetric`, a base whose subclasses
compute one query at a time in Python, has no counterpart: the classes here group every query
at once over a preallocated buffer.)"""

from __future__ import annotations

from collections.abc import Callable

from torch import Tensor

__all__: list[str] = []


def _retrieval_aggregate(
    values: Tensor,
    aggregation: str | Callable[..., Tensor] = "mean",
    dim: int | None = None,
) -> Tensor:
    """Reduce `values` over `dim` (None: all of them) by "mean", "median" (the lower middle
    value), "min", "max", or a callable called as `aggregation(values, dim=dim)`."""
    if aggregation == "mean":
        return values.mean() if dim is None else values.mean(dim=dim)
    if aggregation == "median":
        return values.median() if dim is None else values.median(dim=dim).values
    if aggregation == "min":
        return values.min() if dim is None else values.min(dim=dim).values
    if aggregation == "max":
        return values.max() if dim is None else values.max(dim=dim).values
    if not callable(aggregation):
        raise ValueError(
            "Argument `aggregation` must be one of `mean`, `median`, `min`, `max` or a custom "
            f"callable function which takes tensor of values, but got {aggregation!r}."
        )
    return aggregation(values, dim=dim)
