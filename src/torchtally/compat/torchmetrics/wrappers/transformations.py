"""`torchmetrics.wrappers.transformations`: wrappers that transform a metric's inputs first."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import torch
from torch import Tensor

from torchtally.compat.torchmetrics._base import Metric
from torchtally.compat.torchmetrics.collection import MetricCollection
from torchtally.compat.torchmetrics.wrappers.abstract import WrapperMetric

__all__ = ["BinaryTargetTransformer", "LambdaInputTransformer", "MetricInputTransformer"]


class MetricInputTransformer(WrapperMetric):
    """TorchMetrics' `MetricInputTransformer`: `transform_pred` and `transform_target`
    (identities here; subclasses override them) applied to the first two positional inputs,
    then every call forwarded to the wrapped metric or collection.

    Raises:
        TypeError: `wrapped_metric` is neither a metric nor a collection.
    """

    def __init__(self, wrapped_metric: Metric | MetricCollection, **kwargs: Any) -> None:
        if not isinstance(wrapped_metric, (Metric, MetricCollection)):
            raise TypeError(
                "Expected wrapped metric to be an instance of `torchmetrics.Metric` or "
                f"`torchmetrics.MetricsCollection`but received {wrapped_metric}"
            )
        super().__init__(**kwargs)
        self.wrapped_metric = wrapped_metric

    def transform_pred(self, pred: Tensor) -> Tensor:
        """The predictions as the wrapped metric gets them (as they are here)."""
        return pred

    def transform_target(self, target: Tensor) -> Tensor:
        """The targets as the wrapped metric gets them (as they are here)."""
        return target

    def _wrap_transform(self, *args: Any) -> tuple[Any, ...]:
        if len(args) == 1:
            return (self.transform_pred(args[0]),)
        if len(args) == 2:
            return self.transform_pred(args[0]), self.transform_target(args[1])
        return self.transform_pred(args[0]), self.transform_target(args[1]), *args[2:]

    def update(self, *args: Any, **kwargs: Any) -> None:
        self.wrapped_metric.update(*self._wrap_transform(*args), **kwargs)

    def compute(self) -> Any:
        return self.wrapped_metric.compute()

    @torch.jit.unused
    def forward(self, *args: Any, **kwargs: Any) -> Any:
        return self.wrapped_metric(*self._wrap_transform(*args), **kwargs)

    def reset(self) -> None:
        self.wrapped_metric.reset()


class LambdaInputTransformer(MetricInputTransformer):
    """TorchMetrics' `LambdaInputTransformer`: the given functions transform the predictions
    and the targets (None: left as they are).

    Raises:
        TypeError: a transform is given but not callable.
    """

    def __init__(
        self,
        wrapped_metric: Metric | MetricCollection,
        transform_pred: Callable[[Tensor], Tensor] | None = None,
        transform_target: Callable[[Tensor], Tensor] | None = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(wrapped_metric, **kwargs)
        if transform_pred is not None:
            if not callable(transform_pred):
                raise TypeError(
                    "Expected `transform_pred` to be of type `Callable` but received "
                    f"`{transform_pred}`"
                )
            self._tm.transform_pred = transform_pred
        if transform_target is not None:
            if not callable(transform_target):
                raise TypeError(
                    "Expected `transform_target` to be of type `Callable` but received "
                    f"`{transform_target}`"
                )
            self._tm.transform_target = transform_target

    # The transforms are kept in the bookkeeping (`_bookkeeping`), not as attributes that
    # shadow these methods: `nn.Module` would register a transform that is a module (its
    # parameters in the wrapper's `state_dict()`), and torchtally's base takes a change of a
    # public attribute for a change of setting.

    def transform_pred(self, pred: Tensor) -> Tensor:
        """The predictions as the wrapped metric gets them (`transform_pred`'s)."""
        transform = self._tm.transform_pred
        return pred if transform is None else transform(pred)

    def transform_target(self, target: Tensor) -> Tensor:
        """The targets as the wrapped metric gets them (`transform_target`'s)."""
        transform = self._tm.transform_target
        return target if transform is None else transform(target)


class BinaryTargetTransformer(MetricInputTransformer):
    """TorchMetrics' `BinaryTargetTransformer`: targets `t` become `t > threshold` (in the
    targets' dtype) for a metric that needs binary targets.

    Raises:
        TypeError: `threshold` is not an int or a float.
    """

    def __init__(
        self, wrapped_metric: Metric | MetricCollection, threshold: float = 0, **kwargs: Any
    ) -> None:
        super().__init__(wrapped_metric, **kwargs)
        if not isinstance(threshold, (int, float)) or isinstance(threshold, bool):
            raise TypeError(
                f"Expected `threshold` to be of type `int` or `float` but received `{threshold}`"
            )
        self.threshold = threshold

    def transform_target(self, target: Tensor) -> Tensor:
        return target.gt(self.threshold).to(target.dtype)
