"""`torchmetrics.wrappers.tracker`: `MetricTracker`, a metric's value per step (epoch)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, cast

import torch
from torch import Tensor, nn

from torchtally.compat.torchmetrics._base import Metric
from torchtally.compat.torchmetrics.collection import MetricCollection
from torchtally.compat.torchmetrics.utilities.prints import rank_zero_warn
from torchtally.compat.torchmetrics.wrappers.classwise import ClasswiseWrapper

__all__ = ["MetricTracker"]


def _detached(value: Any) -> Any:
    if isinstance(value, Tensor):
        return value.detach().clone()
    if isinstance(value, Mapping):
        return {k: _detached(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return type(value)(_detached(v) for v in value)
    return value


class MetricTracker(nn.Module):
    """TorchMetrics' `MetricTracker`: `increment()` starts a step (an epoch), `update`,
    `forward` and `compute` act on the current one, `compute_all()` stacks every step's value
    and `best_metric(return_step=...)` picks the best by `maximize` (default: the metric's
    `higher_is_better`).

    Finished steps keep their computed values (host-side bookkeeping between epochs) instead
    of a deep copy of the metric per step; the metric itself is reset in place (its state
    keeps its memory, so compiled steps stay valid).

    Raises:
        TypeError: `metric` is neither a metric nor a collection.
        AttributeError: `maximize` is None and a metric has no `higher_is_better`.
        ValueError: `maximize` is neither a bool nor a list of bools of the collection's
            length (a single bool for a single metric).
    """

    def __init__(
        self, metric: Metric | MetricCollection, maximize: bool | list[bool] | None = None
    ) -> None:
        if not isinstance(metric, (Metric, MetricCollection)):
            raise TypeError(
                "Metric arg need to be an instance of a torchmetrics `Metric` or "
                f"`MetricCollection` but got {metric}"
            )
        super().__init__()
        self.metric = metric
        self.maximize: bool | list[bool]
        if maximize is None:
            if isinstance(metric, Metric):
                if metric.higher_is_better is None:
                    raise AttributeError(
                        f"The metric '{type(metric).__name__}' does not have a "
                        "'higher_is_better' attribute. Please provide the `maximize` argument "
                        "explicitly."
                    )
                self.maximize = bool(metric.higher_is_better)
            else:
                flags: list[bool] = []
                for name, member in metric.items():
                    higher = getattr(member, "higher_is_better", None)
                    if higher is None:
                        raise AttributeError(
                            f"The metric '{name}' in the MetricCollection does not have a "
                            "'higher_is_better' attribute. Please provide the `maximize` "
                            "argument explicitly."
                        )
                    classes = getattr(getattr(member, "metric", None), "num_classes", None)
                    if isinstance(member, ClasswiseWrapper) and isinstance(classes, int):
                        flags.extend([higher] * classes)
                    else:
                        flags.append(higher)
                self.maximize = flags
        else:
            if not isinstance(maximize, (bool, list)):
                raise ValueError(
                    "Argument `maximize` should either be a single bool or list of bool"
                )
            if isinstance(maximize, list) and not all(isinstance(m, bool) for m in maximize):
                raise ValueError("Argument `maximize` is list but not type of bool.")
            if (
                isinstance(maximize, list)
                and isinstance(metric, MetricCollection)
                and len(maximize) != len(metric)
            ):
                raise ValueError(
                    "The len of argument `maximize` should match the length of the metric collection"
                )
            if isinstance(metric, Metric) and not isinstance(maximize, bool):
                raise ValueError(
                    "Argument `maximize` should be a single bool when `metric` is a single Metric"
                )
            self.maximize = maximize
        self._history: list[Any] = []
        self._increment_called = False

    @property
    def n_steps(self) -> int:
        """Steps started so far."""
        return len(self._history) + int(self._increment_called)

    def increment(self) -> None:
        """Finish the current step (keeping its value) and start a new one."""
        if self._increment_called:
            self._history.append(_detached(self.metric.compute()))
            self.metric.reset()
        self._increment_called = True

    def _check_for_increment(self, method: str) -> None:
        if not self._increment_called:
            raise ValueError(f"`{method}` cannot be called before `.increment()` has been called.")

    def forward(self, *args: Any, **kwargs: Any) -> Any:
        """The current step's batch value (the metric's `forward`)."""
        self._check_for_increment("forward")
        return self.metric(*args, **kwargs)

    def update(self, *args: Any, **kwargs: Any) -> None:
        """Update the current step's metric."""
        self._check_for_increment("update")
        self.metric.update(*args, **kwargs)

    def compute(self) -> Any:
        """The current step's value."""
        self._check_for_increment("compute")
        return self.metric.compute()

    def compute_all(self) -> Any:
        """Every step's value stacked along a first dimension (a dict of them for a
        collection; the list of values when they do not stack)."""
        self._check_for_increment("compute_all")
        values = [*self._history, _detached(self.metric.compute())]
        try:
            if isinstance(values[0], dict):
                return {k: torch.stack([v[k] for v in values], dim=0) for k in values[0]}
            if isinstance(values[0], list):
                return torch.stack([torch.stack(v, dim=0) for v in values], dim=0)
            return torch.stack(values, dim=0)
        except TypeError:
            return values

    def reset(self) -> None:
        """Reset the current step's metric."""
        self.metric.reset()

    def reset_all(self) -> None:
        """Forget every step."""
        self.metric.reset()
        self._history.clear()
        self._increment_called = False

    def best_metric(self, return_step: bool = False) -> Any:
        """The best value over the steps by `maximize`, with its step if `return_step`; a dict
        of them for a collection. None (with a warning) where the best is not defined: a
        value that is not a scalar, or nested results."""
        values = self.compute_all()
        if isinstance(values, list):
            rank_zero_warn(
                "Encountered nested structure. You are probably using a metric collection inside "
                "a metric collection, or a metric wrapper inside a metric collection, which is "
                "not supported by `.best_metric()` method. Returning `None` instead."
            )
            return (None, None) if return_step else None
        if isinstance(self.metric, Metric) and not isinstance(self.metric, ClasswiseWrapper):
            pick = torch.max if self.maximize else torch.min
            try:
                best, step = pick(cast(Tensor, values), 0)
                if return_step:
                    return best.item(), step.item()
                return best.item()
            except (ValueError, RuntimeError) as error:
                rank_zero_warn(
                    f"Encountered the following error when trying to get the best metric: {error}"
                    "this is probably due to the 'best' not being defined for this metric."
                    "Returning `None` instead.",
                    UserWarning,
                )
                return (None, None) if return_step else None
        maximize = (
            self.maximize if isinstance(self.maximize, list) else len(values) * [self.maximize]
        )
        best_values: dict[str, Any] = {}
        best_steps: dict[str, Any] = {}
        for index, (key, series) in enumerate(values.items()):
            try:
                pick = torch.max if maximize[index] else torch.min
                best, step = pick(series, 0)
                best_values[key], best_steps[key] = best.item(), step.item()
            except (ValueError, RuntimeError) as error:
                rank_zero_warn(
                    "Encountered the following error when trying to get the best metric for "
                    f"metric {key}:{error} this is probably due to the 'best' not being defined "
                    "for this metric.Returning `None` instead.",
                    UserWarning,
                )
                best_values[key], best_steps[key] = None, None
        return (best_values, best_steps) if return_step else best_values

    def plot(self, val: Any = None, ax: Any = None) -> tuple[Any, Any]:
        """Plot the steps' values (`compute_all()` unless `val` is given) with the tracked
        metric's `plot`: a line over steps for a sequence of values."""
        values = val if val is not None else self.compute_all()
        if isinstance(values, Tensor) and values.dim() >= 1:
            values = list(values)
        plot = self.metric.plot if isinstance(self.metric, Metric) else None
        if plot is None:
            raise TypeError("MetricTracker.plot plots a single tracked metric, not a collection.")
        return plot(values, ax=ax)
