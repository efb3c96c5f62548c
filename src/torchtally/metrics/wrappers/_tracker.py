"""`MetricTracker`: a metric's value per step (epoch), and the best value and its step."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import torch
from torch import Tensor

from torchtally.metrics._base import Metric

__all__ = ["MetricTracker"]


def _detached(value: Any) -> Any:
    if isinstance(value, Tensor):
        return value.detach().clone()
    if isinstance(value, Mapping):
        return {k: _detached(v) for k, v in value.items()}
    raise TypeError(
        "MetricTracker tracks metrics whose compute returns a tensor or a dict of tensors. "
        f"Received: {type(value).__name__}"
    )


class MetricTracker:
    """Track a metric (or a `MetricCollection`) over steps such as epochs (TorchMetrics'
    `MetricTracker`).

    `increment()` starts a step: the metric is reset in place (its state keeps its memory, so
    compiled steps stay valid); `update`/`compute` act on the current step. Finished steps
    keep only their computed values (host-side bookkeeping between epochs, never inside a
    traced step). `best_metric()` returns the best value and its step, by `higher_is_better`.

    Args:
        metric: The metric or collection to track.
        higher_is_better: Whether larger values are better: one bool, or a dict by the
            collection's keys.

    Example:
        >>> from torchtally.metrics import MeanMetric
        >>> tracker = MetricTracker(MeanMetric(), higher_is_better=False)
        >>> for epoch_loss in ([3.0, 2.0], [1.0, 1.5], [2.0, 2.0]):
        ...     tracker.increment()
        ...     tracker.update(torch.tensor(epoch_loss))
        >>> tracker.best_metric(return_step=True)
        (1.25, 1)
    """

    def __init__(self, metric: Any, higher_is_better: bool | Mapping[str, bool] = True) -> None:
        if not isinstance(metric, Metric) and not hasattr(metric, "compute"):
            raise TypeError(
                "Argument `metric` must be a torchtally Metric or MetricCollection. "
                f"Received: metric={type(metric).__name__}"
            )
        if not isinstance(higher_is_better, (bool, Mapping)):
            raise TypeError(
                "Argument `higher_is_better` must be a bool or a dict of bools. "
                f"Received: higher_is_better={higher_is_better!r}"
            )
        self.metric = metric
        self.higher_is_better = higher_is_better
        self._history: list[Any] = []
        self._started = False

    @property
    def n_steps(self) -> int:
        """Steps started so far."""
        return len(self._history) + int(self._started)

    def increment(self) -> None:
        """Finish the current step (keeping its value) and start a new one."""
        if self._started:
            self._history.append(_detached(self.metric.compute()))
            self.metric.reset()
        self._started = True

    def _require_step(self) -> None:
        if not self._started:
            raise ValueError("Call `increment()` to start a step before updating or computing.")

    def update(self, *args: Any, **kwargs: Any) -> None:
        """Update the current step's metric."""
        self._require_step()
        self.metric.update(*args, **kwargs)

    def compute(self) -> Any:
        """The current step's value."""
        self._require_step()
        return self.metric.compute()

    def compute_all(self) -> Any:
        """Every step's value stacked along a first dimension (a dict for collections)."""
        self._require_step()
        values = [*self._history, _detached(self.metric.compute())]
        if isinstance(values[0], Mapping):
            return {k: torch.stack([v[k] for v in values]) for k in values[0]}
        return torch.stack(values)

    def _best(self, values: Tensor, higher: bool) -> tuple[float, int]:
        if values.dim() != 1:
            raise ValueError(
                "best_metric needs a scalar value per step. "
                f"Received values of shape {tuple(values.shape[1:])} per step"
            )
        finite = torch.where(torch.isnan(values), -torch.inf if higher else torch.inf, values)
        step = int(finite.argmax() if higher else finite.argmin())
        return float(values[step]), step

    def best_metric(self, return_step: bool = False) -> Any:
        """The best value over the steps (NaN steps ignored), with its step if `return_step`;
        a dict of them for collections."""
        values = self.compute_all()
        if isinstance(values, Mapping):
            best = {}
            for key, series in values.items():
                higher = (
                    self.higher_is_better.get(key, True)
                    if isinstance(self.higher_is_better, Mapping)
                    else self.higher_is_better
                )
                best[key] = self._best(series, higher)
            if return_step:
                return {k: v[0] for k, v in best.items()}, {k: v[1] for k, v in best.items()}
            return {k: v[0] for k, v in best.items()}
        higher = bool(self.higher_is_better) if isinstance(self.higher_is_better, bool) else True
        value, step = self._best(values, higher)
        return (value, step) if return_step else value
