"""`torchmetrics.wrappers.classwise`: `ClasswiseWrapper`."""

from __future__ import annotations

from typing import Any

import torch
from torch import Tensor

from torchtally.compat.torchmetrics._base import Metric
from torchtally.compat.torchmetrics.wrappers.abstract import WrapperMetric

__all__ = ["ClasswiseWrapper"]


def _check_affix(name: str, value: Any) -> None:
    if value is not None and not isinstance(value, str):
        raise ValueError(
            f"Expected argument `{name}` to either be `None` or a string but got {value} "
            f"(argument `{name}` must be None or a string. Received: {name}={value!r})"
        )


class ClasswiseWrapper(WrapperMetric):
    """TorchMetrics' `ClasswiseWrapper`: a per-class result (`average=None`) as a dict
    `{prefix + label + postfix: value}`; without prefix and postfix the prefix is the
    metric's class name in lower case and "_". Updates go to the wrapped metric unchanged."""

    def __init__(
        self,
        metric: Metric,
        labels: list[str] | None = None,
        prefix: str | None = None,
        postfix: str | None = None,
    ) -> None:
        if not isinstance(metric, Metric):
            raise ValueError(
                "Expected argument `metric` to be an instance of `torchmetrics.Metric` but got "
                f"{metric} (argument `metric` must be a compatible metric. Received: "
                f"{type(metric).__name__})"
            )
        if labels is not None and (
            not isinstance(labels, list) or not all(isinstance(x, str) for x in labels)
        ):
            raise ValueError(
                "Expected argument `labels` to either be `None` or a list of strings but got "
                f"{labels}"
            )
        _check_affix("prefix", prefix)
        _check_affix("postfix", postfix)
        super().__init__()
        self.metric, self.labels = metric, labels
        self._prefix, self._postfix = prefix, postfix
        self._update_count = 1  # the wrapped metric warns for itself

    @property
    def higher_is_better(self) -> bool | None:  # type: ignore[override]
        """The wrapped metric's."""
        return self.metric.higher_is_better

    def _filter_kwargs(self, **kwargs: Any) -> dict[str, Any]:
        return self.metric._filter_kwargs(**kwargs)

    def _convert_output(self, values: Tensor) -> dict[str, Tensor]:
        if not self._prefix and not self._postfix:
            prefix, postfix = f"{type(self.metric).__name__.lower()}_", ""
        else:
            prefix, postfix = self._prefix or "", self._postfix or ""
        names = self.labels if self.labels is not None else [str(i) for i in range(len(values))]
        if len(names) != len(values):
            raise ValueError(
                f"Argument `labels` must name every class ({len(values)}). Received: "
                f"{len(names)} labels"
            )
        return {
            f"{prefix}{name}{postfix}": value for name, value in zip(names, values, strict=True)
        }

    def update(self, *args: Any, **kwargs: Any) -> None:
        self.metric.update(*args, **kwargs)

    @torch.jit.unused
    def forward(self, *args: Any, **kwargs: Any) -> dict[str, Tensor]:
        return self._convert_output(self.metric(*args, **kwargs))

    def compute(self) -> dict[str, Tensor]:
        return self._convert_output(self.metric.compute())

    def reset(self) -> None:
        self.metric.reset()
