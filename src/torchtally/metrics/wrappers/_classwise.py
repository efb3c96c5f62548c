"""`ClasswiseWrapper`: a per-class metric's values as a dict keyed by class name, for logs."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from torch import Tensor, nn

from torchtally.metrics._base import Metric

__all__ = ["ClasswiseWrapper"]


class ClasswiseWrapper(nn.Module):
    """Split a metric's per-class result (a `(C,)` tensor, e.g. `average="none"`) into a dict
    `{f"{prefix}{label}": value}` (TorchMetrics' `ClasswiseWrapper`).

    Updates go to the wrapped metric unchanged (traceable as the metric is); the split happens
    in `compute`. Merge, sync and state handling are the wrapped metric's: use `.metric`.

    Args:
        metric: A metric whose `compute` returns a `(C,)` tensor.
        labels: Class names (C of them); defaults to "0", "1", ...
        prefix: Key prefix; defaults to the metric's name and "_".

    Example:
        >>> from torchtally.metrics.curves import AveragePrecisionMetric
        >>> ap = AveragePrecisionMetric("multiclass", 2, capacity=8, average="none")
        >>> wrapper = ClasswiseWrapper(ap, labels=["cat", "dog"], prefix="ap/")
        >>> wrapper.update(torch.tensor([[0.9, 0.1], [0.3, 0.7]]), torch.tensor([0, 1]))
        >>> {k: float(v) for k, v in wrapper.compute().items()}
        {'ap/cat': 1.0, 'ap/dog': 1.0}
    """

    def __init__(
        self, metric: Metric, labels: Sequence[str] | None = None, prefix: str | None = None
    ) -> None:
        if not isinstance(metric, Metric):
            raise TypeError(
                "Argument `metric` must be a torchtally Metric. "
                f"Received: metric={type(metric).__name__}"
            )
        if labels is not None and not all(isinstance(label, str) for label in labels):
            raise TypeError(f"Argument `labels` must be strings. Received: labels={labels!r}")
        super().__init__()
        self.metric = metric
        self.labels = None if labels is None else list(labels)
        self.prefix = f"{metric.name}_" if prefix is None else prefix

    def update(self, *args: Any, **kwargs: Any) -> None:
        """Update the wrapped metric."""
        self.metric.update(*args, **kwargs)

    def compute(self) -> dict[str, Tensor]:
        values = self.metric.compute()
        if not isinstance(values, Tensor) or values.dim() != 1:
            raise ValueError(
                f"`{type(self.metric).__name__}.compute` must return a (C,) tensor of per-class "
                f"values. Received: {type(values).__name__} "
                f"of shape {tuple(getattr(values, 'shape', ()))}"
            )
        names = self.labels if self.labels is not None else [str(i) for i in range(len(values))]
        if len(names) != values.shape[0]:
            raise ValueError(
                f"Argument `labels` must name every class ({values.shape[0]}). "
                f"Received: {len(names)} labels"
            )
        return {f"{self.prefix}{name}": values[i] for i, name in enumerate(names)}

    def reset(self) -> None:
        self.metric.reset()

    def forward(self, *args: Any, **kwargs: Any) -> dict[str, Tensor]:
        self.update(*args, **kwargs)
        return self.compute()
