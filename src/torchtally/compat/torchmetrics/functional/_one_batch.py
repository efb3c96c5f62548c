"""A compatible metric's value on one batch, without touching its state: the functions of
`torchmetrics.functional` that have a class here are that class's `_batch` then `_value`
(exactly what its `forward` returns), so a function and its class cannot disagree."""

from __future__ import annotations

from typing import Any

import torch
from torch import Tensor

from torchtally.compat.torchmetrics._base import Metric

__all__ = ["compat_class", "one_batch"]


def compat_class(name: str, module: str = "classification") -> Any:
    """The compatible class `name` of `torchmetrics.<module>`, looked up at the call: the
    classes import this package's update helpers, so importing them here at module level would
    be circular."""
    import importlib

    return getattr(importlib.import_module(f"torchtally.compat.torchmetrics.{module}"), name)


def one_batch(metric: Metric, *inputs: Any, validate_args: bool = True, **kwargs: Any) -> Any:
    """`metric`'s value on `inputs` alone. With `validate_args`, the invalid values its update
    counted (a class index out of range, a target neither 0/1 nor `ignore_index`) raise here,
    at the call, instead of at a later `compute`."""
    if not metric.is_differentiable:
        # TorchMetrics computes these without autograd (its curves under no_grad, the rest on
        # integer counts): the value of scores that require grad does not.
        with torch.no_grad():
            return _evaluate(metric, inputs, validate_args, kwargs)
    return _evaluate(metric, inputs, validate_args, kwargs)


def _evaluate(
    metric: Metric, inputs: tuple[Any, ...], validate_args: bool, kwargs: dict[str, Any]
) -> Any:
    batch: dict[str, Any] = metric._batch(*inputs, **kwargs)
    errors: dict[str, Any] | None = batch.pop("_errors", None)
    if validate_args and errors:
        found = {
            kind: int(count)
            for kind, count in errors.items()
            if isinstance(count, Tensor) and int(count)
        }
        if found:
            described = "; ".join(
                f"{metric.error_kinds.get(kind, kind)} ({count} value{'s' if count != 1 else ''})"
                for kind, count in found.items()
            )
            raise RuntimeError(
                f"Arguments `preds` and `target` hold invalid values: {described}. Fix the "
                "inputs, or pass validate_args=False to leave such positions out."
            )
    return metric._value(batch)
