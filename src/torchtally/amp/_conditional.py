"""Stepping an optimizer only where a 0-d boolean tensor is true, without reading it.

`torch.amp.GradScaler` skips the step with a Python `if` on the inf check, which copies the
flag to the host and stalls the device. Here the step always runs and is then undone with
`torch.where`: parameters and tensor-valued optimizer state are snapshot before the step and
restored where the condition is false. State the step created from nothing (a first momentum
buffer) is zeroed instead, which is the value those optimizers start from. The price is one
copy of the parameters and state per step.
"""

from __future__ import annotations

from typing import Any

import torch
from torch import Tensor

__all__ = ["step_where"]


def step_where(condition: Tensor, optimizer: Any, *args: Any, **kwargs: Any) -> Any:
    """Run `optimizer.step(*args, **kwargs)`, keeping its effect only where `condition` holds.

    Args:
        condition: A 0-d bool tensor (e.g. "all gradients are finite").
        optimizer: Any torch-style optimizer (`param_groups`, `state`, `step`).
        *args: Passed to `optimizer.step`.
        **kwargs: Passed to `optimizer.step`.

    Returns:
        Whatever `optimizer.step` returns.

    Example:
        >>> p = torch.nn.Parameter(torch.ones(2)); p.grad = torch.ones(2)
        >>> opt = torch.optim.SGD([p], lr=1.0)
        >>> step_where(torch.tensor(False), opt)
        >>> p.data
        tensor([1., 1.])
    """
    params = [p for group in optimizer.param_groups for p in group["params"]]
    with torch.no_grad():
        saved_params = [p.detach().clone() for p in params]
        saved_state = [_tensor_state(optimizer.state.get(p, {})) for p in params]
    result = optimizer.step(*args, **kwargs)
    with torch.no_grad():
        for p, old in zip(params, saved_params):
            p.copy_(torch.where(condition.to(p.device), p, old))
        for p, old_state in zip(params, saved_state):
            _restore_state(optimizer.state.get(p, {}), old_state, condition)
    return result


def _tensor_state(state: dict[str, Any]) -> dict[str, Tensor]:
    return {k: v.detach().clone() for k, v in state.items() if isinstance(v, Tensor)}


def _restore_state(state: dict[str, Any], old: dict[str, Tensor], condition: Tensor) -> None:
    for key, value in state.items():
        if not isinstance(value, Tensor):
            continue  # Python numbers cannot be chosen by a tensor condition
        before = old.get(key)
        if before is None or before.shape != value.shape:
            before = torch.zeros_like(value)
        value.copy_(torch.where(condition.to(value.device), value, before))
