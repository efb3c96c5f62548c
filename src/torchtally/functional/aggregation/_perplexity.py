"""Perplexity inputs: a summed or mean token loss with its token count, or logits and labels.

A loss is a number with no trace of how it was reduced, so a mean loss passed where the sum is
expected gives exp(mean / count), a perplexity near 1, and nothing in the value can tell. Two
things keep that from passing silently: the reduction is declared (`loss_reduction`), and an
eager loss that still carries its autograd node is checked against it (`check_loss_reduction`:
the node's type and saved `reduction` are host metadata, read without a sync). Logits need no
declaration: the token losses are computed here.
"""

from __future__ import annotations

import torch
from torch import Tensor

from torchtally._errors import check_choice
from torchtally.functional._checks import check_same_shape, check_tensor
from torchtally.functional.aggregation._mean import mean_compute, perplexity_update
from torchtally.functional.classification._inputs import check_index_labels

__all__ = [
    "LOSS_REDUCTIONS",
    "check_loss_reduction",
    "is_logits",
    "perplexity_from_logits",
    "perplexity_logits_update",
    "perplexity_loss_update",
]

LOSS_REDUCTIONS = ("sum", "mean")
"""How the `loss` given to perplexity was reduced over the tokens: "sum" (cstorch's input) or
"mean" (PyTorch losses' default; multiplied back by the token count)."""

# Autograd nodes whose reduction is readable: a plain mean, and nll/cross-entropy, whose saved
# `reduction` is 0 (none), 1 (mean) or 2 (sum).
_MEAN_NODES = ("MeanBackward0", "MeanBackward1")
_NLL_NODES = ("NllLossBackward0", "NllLoss2DBackward0")


def _reduction_of(loss: Tensor) -> str | None:
    """ "mean", "sum" or None (unknown) from the loss's autograd node, without reading data."""
    node = loss.grad_fn
    if node is None or torch.compiler.is_compiling():
        return None
    kind = type(node).__name__
    if kind in _MEAN_NODES:
        return "mean"
    if kind == "SumBackward0":
        return "sum"
    if kind in _NLL_NODES:
        return {1: "mean", 2: "sum"}.get(getattr(node, "_saved_reduction", -1))
    return None


def check_loss_reduction(loss: Tensor, loss_reduction: str) -> None:
    """Raise when `loss` visibly (by its autograd node) was reduced otherwise than declared.

    Example:
        >>> logits = torch.randn(4, 3, requires_grad=True)
        >>> loss = torch.nn.functional.cross_entropy(logits, torch.tensor([0, 1, 2, 0]))
        >>> check_loss_reduction(loss, "sum")  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        ...
        ValueError: Argument `loss` must be the loss summed over the tokens ...
    """
    found = _reduction_of(loss)
    if found is None or found == loss_reduction:
        return
    if loss_reduction == "sum":
        raise ValueError(
            "Argument `loss` must be the loss summed over the tokens (loss_reduction='sum', "
            "cstorch's input). Received: a mean loss (its autograd node is "
            f"{type(loss.grad_fn).__name__} with reduction='mean'), which would give "
            "exp(mean / token count), a perplexity near 1. Construct the metric with "
            "loss_reduction='mean', compute the loss with reduction='sum', or pass the logits: "
            "`update(labels, logits)`."
        )
    raise ValueError(
        "Argument `loss` must be the mean loss over the tokens (loss_reduction='mean'). "
        f"Received: a summed loss (its autograd node is {type(loss.grad_fn).__name__} with "
        "reduction='sum'). Construct the metric with loss_reduction='sum', or pass the logits."
    )


def is_logits(labels: Tensor, values: Tensor) -> bool:
    """Whether `values` are logits for `labels`: floating, shaped `labels.shape + (V,)`."""
    return (
        values.is_floating_point()
        and values.dim() == labels.dim() + 1
        and values.shape[:-1] == labels.shape
        and values.shape[-1] > 1
    )


def _kept_tokens(labels: Tensor, weights: Tensor | None, ignore_index: int | None) -> Tensor:
    kept = torch.ones_like(labels, dtype=torch.bool) if weights is None else weights > 0
    if ignore_index is not None:
        kept = torch.logical_and(kept, labels != ignore_index)
    return kept


def perplexity_loss_update(
    labels: Tensor,
    loss: Tensor,
    weights: Tensor | None = None,
    loss_reduction: str = "sum",
    ignore_index: int | None = None,
) -> tuple[Tensor, Tensor]:
    """Summed token loss and token count of one batch, from a reduced (or per-token) loss.

    Args:
        labels: The target tokens, integer; only which of them count is read.
        loss: "sum": the loss summed over the counted tokens (any shape: its elements are
            added, so per-token losses shaped like `labels` also work). "mean": the mean loss
            over the counted tokens (one element), multiplied back by their count.
        weights: Optional per-token weights shaped like `labels`; tokens with weight > 0 count.
        loss_reduction: "sum" or "mean".
        ignore_index: A label value (padding) whose tokens do not count.

    Returns:
        `(total_loss, token_count)`, 0-d float64.

    Example:
        >>> perplexity_loss_update(torch.zeros(4, dtype=torch.long), torch.tensor(2.0), None, "mean")
        (tensor(8., dtype=torch.float64), tensor(4., dtype=torch.float64))
    """
    check_index_labels(labels)
    check_tensor("loss", loss)
    check_choice("loss_reduction", loss_reduction, LOSS_REDUCTIONS)
    if weights is not None:
        check_tensor("weights", weights)
        check_same_shape("labels", labels, "weights", weights)
    check_loss_reduction(loss, loss_reduction)
    loss = loss.detach()  # a state must never hold graph history
    if loss_reduction == "sum" and ignore_index is None:
        return perplexity_update(labels, loss, weights)
    tokens = _kept_tokens(labels, weights, ignore_index).sum(dtype=torch.float64)
    if loss_reduction == "sum":
        return loss.sum(dtype=torch.float64), tokens
    if loss.numel() != 1:
        raise ValueError(
            "Argument `loss` must hold one value (the mean over the tokens) when "
            f"loss_reduction='mean'. Received: loss.shape={tuple(loss.shape)}"
        )
    return loss.reshape(()).to(torch.float64) * tokens, tokens


def perplexity_logits_update(
    labels: Tensor,
    logits: Tensor,
    weights: Tensor | None = None,
    ignore_index: int | None = None,
    detach: bool = True,
) -> tuple[Tensor, Tensor, Tensor]:
    """Summed cross-entropy, token count and count of invalid labels of one batch of logits.

    Tokens count where `weights > 0` (when given) and the label is not `ignore_index`; a label
    outside `[0, V)` is left out and counted as invalid (for the metric to raise).

    Args:
        labels: Integer target tokens of any shape.
        logits: Floating logits of shape `labels.shape + (V,)`.
        weights: Optional per-token weights shaped like `labels` (a mask: > 0 counts).
        ignore_index: A label value (padding) whose tokens do not count.
        detach: Cut the summed loss from the logits' autograd graph (a metric's state must
            hold no graph history); False keeps it, for a batch value that is differentiable
            (TorchMetrics' `Perplexity`).

    Returns:
        `(total_loss, token_count, invalid_labels)`: 0-d float64, float64, int64.

    Example:
        >>> logits = torch.zeros(1, 3, 4)
        >>> perplexity_logits_update(torch.tensor([[0, 1, -100]]), logits, None, -100)[:2]
        (tensor(2.7726, dtype=torch.float64), tensor(2., dtype=torch.float64))
    """
    check_index_labels(labels)
    check_tensor("logits", logits)
    if not is_logits(labels, logits):
        raise ValueError(
            "Argument `logits` must be floating, of shape labels.shape + (vocabulary size,). "
            f"Received: labels.shape={tuple(labels.shape)}, logits.shape={tuple(logits.shape)}, "
            f"logits.dtype={logits.dtype}"
        )
    if weights is not None:
        check_tensor("weights", weights)
        check_same_shape("labels", labels, "weights", weights)
    if detach:
        logits = logits.detach()
    vocabulary = logits.shape[-1]
    kept = _kept_tokens(labels, weights, ignore_index)
    as_long = labels.long()
    clamped = as_long.clamp(0, vocabulary - 1)
    invalid = torch.logical_and(kept, clamped != as_long)
    kept = torch.logical_and(kept, torch.logical_not(invalid))
    # log-softmax in at least float32: half-precision logits lose the small differences
    work = logits if logits.dtype in (torch.float32, torch.float64) else logits.float()
    token_nll = -work.log_softmax(-1).gather(-1, clamped.unsqueeze(-1)).squeeze(-1)
    total = torch.where(kept, token_nll.to(torch.float64), 0.0).sum()
    return total, kept.sum(dtype=torch.float64), torch.count_nonzero(invalid)


def perplexity_from_logits(
    labels: Tensor, logits: Tensor, weights: Tensor | None = None, ignore_index: int | None = None
) -> Tensor:
    """exp(mean cross-entropy of `logits` against `labels`) over the counted tokens.

    Example:
        >>> round(float(perplexity_from_logits(torch.tensor([0, 1]), torch.zeros(2, 5))), 4)
        5.0
    """
    total, tokens, _ = perplexity_logits_update(labels, logits, weights, ignore_index)
    return torch.exp(mean_compute(total, tokens))
