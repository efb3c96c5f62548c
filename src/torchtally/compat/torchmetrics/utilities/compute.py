"""`torchmetrics.utilities.compute`: `auc`, the trapezoidal area under points `(x, y)`."""

from __future__ import annotations

import torch
from torch import Tensor

__all__ = ["auc"]


def auc(x: Tensor, y: Tensor, reorder: bool = False) -> Tensor:
    """The area under the curve through the points `(x, y)` by the trapezoidal rule, as
    TorchMetrics' `auc`: `x` increasing or decreasing (a decreasing `x` gives the positive
    area), or sorted first with `reorder=True`. It reads the order of `x` on the host.

    Raises:
        ValueError: `x` or `y` is not 1-d after squeezing, they differ in length, or `x` is
            neither increasing nor decreasing without `reorder`.

    Example:
        >>> auc(torch.tensor([0.0, 1.0, 2.0]), torch.tensor([0.0, 1.0, 1.0]))
        tensor(1.5000)
    """
    x = x.squeeze() if x.ndim > 1 else x
    y = y.squeeze() if y.ndim > 1 else y
    if x.ndim > 1 or y.ndim > 1:
        raise ValueError(
            "Expected both `x` and `y` tensor to be 1d, but got tensors with dimension "
            f"{x.ndim} and {y.ndim}"
        )
    if x.numel() != y.numel():
        raise ValueError(
            "Expected the same number of elements in `x` and `y` tensor but received "
            f"{x.numel()} and {y.numel()}"
        )
    with torch.no_grad():
        if reorder:
            x, order = torch.sort(x, stable=True)
            y = y[order]
        steps = x[1:] - x[:-1]
        direction = 1.0
        if bool((steps < 0).any()):
            if not bool((steps <= 0).all()):
                raise ValueError(
                    "The `x` tensor is neither increasing or decreasing. Try setting the "
                    "reorder argument to `True`."
                )
            direction = -1.0
        return torch.trapezoid(y, x) * direction
