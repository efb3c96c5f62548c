"""`optimizer_step`: backward, unscale, clip, step and zero the gradients, in one call."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from torch import Tensor

from torchtally.amp._clip import clip_grad_norm, clip_grad_value, grads_of
from torchtally.amp._grad_scaler import GradScaler

__all__ = ["optimizer_step"]


def optimizer_step(
    loss: Tensor,
    optimizer: Any,
    grad_scaler: GradScaler | None = None,
    max_gradient_norm: float | None = None,
    max_gradient_value: float | None = None,
) -> None:
    """Run the usual gradient-scaling recipe for one step, without host reads.

    Scales the loss and runs backward, unscales the gradients, clips them (by global norm or by
    value, not both), steps the optimizer (skipped with tensor ops on inf/nan when the scaler
    is dynamic), updates the scale and zeroes the gradients. With `grad_scaler=None` the loss
    is not scaled and the step is never skipped.

    Args:
        loss: The loss tensor.
        optimizer: An optimizer, or a list of them.
        grad_scaler: A `GradScaler`, or None.
        max_gradient_norm: Clip the global L2 norm of all gradients to this.
        max_gradient_value: Clip every gradient element into [-value, value].

    Example:
        >>> import torchtally as cstorch
        >>> from torchtally.amp import GradScaler
        >>> model = torch.nn.Linear(2, 1)
        >>> compiled_model = cstorch.compile(model, cstorch.backend("CPU"))
        >>> optimizer = cstorch.optim.SGD(model.parameters(), lr=0.1)
        >>> grad_scaler = GradScaler(loss_scale="dynamic")
        >>> @cstorch.trace
        ... def training_step(batch):
        ...     loss = torch.nn.functional.mse_loss(compiled_model(batch[0]), batch[1])
        ...     optimizer_step(loss, optimizer, grad_scaler, max_gradient_norm=1.0)
        ...     return loss
        >>> loss = training_step((torch.ones(4, 2), torch.zeros(4, 1)))
        >>> loss.shape, model.weight.grad is None  # the gradients were zeroed after the step
        (torch.Size([]), True)
    """
    optimizers = _optimizers(optimizer)
    _check_clipping(max_gradient_norm, max_gradient_value)
    if not isinstance(loss, Tensor):
        raise TypeError(f"Argument `loss` must be a tensor. Received: loss={type(loss).__name__}")
    if grad_scaler is not None and not isinstance(grad_scaler, GradScaler):
        raise TypeError(
            "Argument `grad_scaler` must be a torchtally.amp.GradScaler or None. "
            f"Received: grad_scaler={type(grad_scaler).__name__}"
        )
    (grad_scaler.scale(loss) if grad_scaler is not None else loss).backward()
    if grad_scaler is not None:
        for opt in optimizers:
            grad_scaler.unscale_(opt)
    grads = grads_of(p for opt in optimizers for g in opt.param_groups for p in g["params"])
    if max_gradient_norm is not None:
        clip_grad_norm(grads, max_gradient_norm)
    elif max_gradient_value is not None:
        clip_grad_value(grads, max_gradient_value)
    for opt in optimizers:
        if grad_scaler is not None:
            grad_scaler.step(opt)
        else:
            opt.step()
    if grad_scaler is not None:
        grad_scaler.update()
    for opt in optimizers:
        opt.zero_grad()


def _optimizers(optimizer: Any) -> list[Any]:
    items = list(optimizer) if isinstance(optimizer, Sequence) else [optimizer]
    for item in items:
        if not hasattr(item, "param_groups") or not hasattr(item, "step"):
            raise TypeError(
                "Argument `optimizer` must be an optimizer (with `param_groups` and `step`) or "
                f"a list of them. Received: optimizer={type(item).__name__}"
            )
    return items


def _check_clipping(max_norm: float | None, max_value: float | None) -> None:
    for name, value in (("max_gradient_norm", max_norm), ("max_gradient_value", max_value)):
        if value is None:
            continue
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not value >= 0:
            raise ValueError(
                f"Argument `{name}` must be a number >= 0 or None. Received: {name}={value!r}"
            )
    if max_norm is not None and max_value is not None:
        raise ValueError(
            "Arguments `max_gradient_norm` and `max_gradient_value` cannot both be set: clip "
            f"by norm or by value. Received: max_gradient_norm={max_norm!r}, "
            f"max_gradient_value={max_value!r}"
        )
