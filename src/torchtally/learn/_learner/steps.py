"""The user's side of a step: the step function's contract, the default one, and batch moves.

A step function takes `(model, batch)` and returns an output (`ClassificationOutput`, ...).
The learner runs it inside its traced step: for training it then backpropagates the output's
`loss` and steps the optimizer; for evaluation it runs it under `torch.no_grad()`. It must not
read tensor values (no `.item()`, no `if loss > x:`): the step runs as one graph.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import torch
import torch.nn.functional as F
from torch import Tensor

from torchtally.learn._outputs import ClassificationOutput

__all__ = ["StepFn", "classification_step", "loss_of", "to_device"]

#: A step function: `(model, batch) -> output`.
StepFn = Callable[[Any, Any], Any]


def classification_step(model: Callable[..., Tensor], batch: Any) -> ClassificationOutput:
    """The default step: an `(inputs, labels)` batch, logits out, cross-entropy loss.

    Args:
        model: The (compiled) model, returning `(N, C)` logits.
        batch: A pair `(inputs, labels)` with integer `(N,)` labels.

    Returns:
        `ClassificationOutput(cross_entropy(logits, labels), logits, labels)`.

    Example:
        >>> out = classification_step(torch.nn.Linear(4, 3), (torch.ones(2, 4), torch.tensor([0, 2])))
        >>> out.output.shape
        torch.Size([2, 3])
    """
    if not isinstance(batch, (tuple, list)) or len(batch) != 2:
        size = f" of {len(batch)} elements" if isinstance(batch, (tuple, list)) else ""
        raise TypeError(
            "Argument `batch` of the default step must be a pair (inputs, labels); pass "
            "`train_step=` / `eval_step=` for other batches. "
            f"Received: a {type(batch).__name__}{size}"
        )
    inputs, labels = batch
    logits = model(inputs)
    return ClassificationOutput(F.cross_entropy(logits, labels), logits, labels)


def loss_of(output: Any) -> Tensor:
    """The loss a train step backpropagates.

    Args:
        output: The train step's output.

    Returns:
        Its `loss` tensor.

    Raises:
        TypeError: The output has no tensor `loss`.
    """
    loss = getattr(output, "loss", None)
    if not isinstance(loss, Tensor):
        raise TypeError(
            "Argument `train_step` must return an output with a tensor `loss` (e.g. "
            f"ClassificationOutput). Received: {type(output).__name__} with loss={loss!r}"
        )
    return loss


def to_device(batch: Any, device: torch.device) -> Any:
    """`batch` with every tensor (nested in tuples, lists, dicts) moved to `device`.

    Args:
        batch: A loader's batch.
        device: The model's device.

    Returns:
        The batch, same structure (unchanged on CPU). Copies to a GPU are non-blocking.
    """
    if device.type == "cpu":
        return batch
    if isinstance(batch, Tensor):
        return batch.to(device, non_blocking=True)
    if isinstance(batch, tuple):
        items = [to_device(item, device) for item in batch]
        return type(batch)(*items) if hasattr(batch, "_fields") else tuple(items)
    if isinstance(batch, list):
        return [to_device(item, device) for item in batch]
    if isinstance(batch, Mapping):
        return {key: to_device(value, device) for key, value in batch.items()}
    return batch
