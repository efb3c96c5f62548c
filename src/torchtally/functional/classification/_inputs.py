"""Turning classification predictions into class indices, decided by dtype and shape alone."""

from __future__ import annotations

import torch
from torch import Tensor

from torchtally._errors import check_choice
from torchtally.functional._blocks import eager_at_least
from torchtally.functional._checks import check_tensor

__all__ = [
    "SCORE_KINDS",
    "as_class_indices",
    "check_index_labels",
    "is_binary_scores",
    "positive_scores",
    "row_maxima",
    "rows_read_alone",
    "score_probabilities",
]

SCORE_KINDS = ("auto", "probabilities", "logits")
"""What floating `predictions` shaped like the labels hold: "auto" (probabilities, unless a
batch has a score outside [0, 1], then logits: TorchMetrics' rule), "probabilities" or "logits"
(passed through a sigmoid before the threshold)."""

_ORDER_HINT = (
    "torchtally's argument order is `(labels, predictions)` (TorchMetrics' is `(preds, target)`); "
    "pass the labels first, or by keyword."
)


def check_index_labels(labels: object, argument: str = "labels") -> Tensor:
    """Return `labels` after checking it is a tensor of integer (or bool) class indices.

    A floating `labels` is almost always predictions passed in TorchMetrics' `(preds, target)`
    order: a clear error instead of a different number.

    Example:
        >>> check_index_labels(torch.tensor([0.0, 1.0]))  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        ...
        TypeError: Argument `labels` must hold integer class indices ...
    """
    labels = check_tensor(argument, labels)
    if labels.is_floating_point() or labels.is_complex():
        raise TypeError(
            f"Argument `{argument}` must hold integer class indices (an integer or bool dtype). "
            f"Received: {argument}.dtype={labels.dtype}. {_ORDER_HINT}"
        )
    return labels


def positive_scores(
    scores: Tensor, threshold: float, score_kind: str = "auto", *, nan_outside: bool = False
) -> Tensor:
    """Bool mask of scores above `threshold`, read as probabilities or logits (see SCORE_KINDS).

    With "auto" the choice is made per call, as TorchMetrics makes it, but with tensor ops: a
    batch holding any score outside [0, 1] is passed through a sigmoid (`torch.where` on a 0-d
    flag, so no value goes to the host and a traced step keeps one graph). `nan_outside`: see
    `score_probabilities`.

    Example:
        >>> positive_scores(torch.tensor([-2.0, 3.0]), 0.5)
        tensor([False,  True])
    """
    check_choice("score_kind", score_kind, SCORE_KINDS)
    if score_kind == "probabilities":
        return scores > threshold
    if score_kind == "logits":
        return scores.sigmoid() > threshold
    return score_probabilities(scores, "auto", nan_outside=nan_outside) > threshold


def score_probabilities(
    scores: Tensor, score_kind: str = "auto", *, nan_outside: bool = False
) -> Tensor:
    """`scores` as probabilities: as they are ("probabilities"), through a sigmoid
    ("logits"), or, with "auto", through a sigmoid when the batch holds a score outside
    [0, 1] (decided with tensor ops, no host read).

    `nan_outside`: a NaN counts as a score outside [0, 1] (TorchMetrics' rule, "not every score
    lies in [0, 1]"); by default it decides nothing (the metrics count it as an error).

    Example:
        >>> score_probabilities(torch.tensor([0.2, float("nan")]), nan_outside=True)
        tensor([0.5498,    nan])
    """
    check_choice("score_kind", score_kind, SCORE_KINDS)
    if score_kind == "probabilities":
        return scores
    if score_kind == "logits":
        return scores.sigmoid()
    if scores.numel() == 0:  # aminmax refuses an empty tensor; shapes are static when traced
        return scores
    # one aminmax pass: far cheaper than comparing every score twice and reducing the mask
    low, high = scores.aminmax()
    if nan_outside:  # comparisons with NaN fail: ask whether both ends are inside instead
        inside = torch.logical_and(low >= 0, high <= 1)
        return torch.where(inside, scores, scores.sigmoid())
    outside = torch.logical_or(low < 0, high > 1)
    return torch.where(outside, scores.sigmoid(), scores)


#: From this many rows of two class scores, two elementwise passes find each row's maximum and
#: the column of its first maximum faster than a `max` reduction over a last dimension of size
#: 2, which CPU kernels walk row by row (measured 1.5x at 2048 rows, 2x at 8192, 4x at 32768).
_PAIR_ROWS_FROM = 2048


def row_maxima(scores: Tensor) -> tuple[Tensor, Tensor]:
    """Each row's maximum over the last dimension of `scores` and the index of its first
    maximum (`torch.max(dim=-1)`), the index as int64, or as bool for a large eager CPU batch
    of two columns (1 where the second score is greater: a tie goes to the first, as in `max`).

    The bool index differs from `max`'s only in a row whose maximum is NaN, which the value
    checks count as an error (its index then names no trusted class either way).
    """
    if (
        scores.shape[-1] == 2
        and scores.device.type == "cpu"
        and eager_at_least(scores, 2 * _PAIR_ROWS_FROM)
    ):
        first, second = scores.unbind(-1)
        return torch.maximum(first, second), torch.gt(second, first)
    top = scores.max(dim=-1)
    return top.values, top.indices


def as_class_indices(
    labels: Tensor, predictions: Tensor, threshold: float = 0.5, score_kind: str = "auto"
) -> Tensor:
    """Return predicted class indices shaped like `labels`.

    - Integer or bool `predictions` shaped like `labels` are class indices already.
    - Floating `predictions` shaped like `labels` are binary scores (probabilities or logits,
      see `positive_scores`): class 1 where the probability is `> threshold`. A trailing
      dimension of size 1 (`(N, 1)` sigmoid outputs for `(N,)` labels) is read the same way.
    - Floating `predictions` with one more trailing dimension are per-class scores or logits:
      the class is their argmax.

    The choice depends only on dtype and shape, so it is fixed when a step is traced.

    Args:
        labels: Target class indices.
        predictions: Indices or scores, as above.
        threshold: Decision threshold for binary scores.
        score_kind: "auto", "probabilities" or "logits" (binary scores only).

    Returns:
        Integer class indices with the shape of `labels`.
    """
    check_tensor("labels", labels)
    check_tensor("predictions", predictions)
    if (
        predictions.is_floating_point()
        and predictions.dim() == labels.dim() + 1
        and predictions.shape[-1] == 1
        and predictions.shape[:-1] == labels.shape
    ):
        # an argmax over one column is always 0: these are one score per sample
        predictions = predictions.squeeze(-1)
    if predictions.shape == labels.shape:
        if predictions.is_floating_point():
            return positive_scores(predictions, threshold, score_kind).long()
        return predictions
    if predictions.dim() == labels.dim() + 1 and predictions.shape[:-1] == labels.shape:
        if not predictions.is_floating_point():
            raise ValueError(
                "Argument `predictions` with one more dimension than `labels` must hold "
                f"floating-point class scores. Received: predictions.dtype={predictions.dtype}"
            )
        # max().indices: the first maximum, like argmax, and faster for a short class dim
        return predictions.max(dim=-1).indices
    raise ValueError(
        "Argument `predictions` must have the shape of `labels` (class indices or binary scores) "
        "or that shape plus a trailing class dimension (class scores). Received: "
        f"labels.shape={tuple(labels.shape)}, predictions.shape={tuple(predictions.shape)}. "
        + _ORDER_HINT
    )


def is_binary_scores(labels: Tensor, predictions: Tensor) -> bool:
    """Whether `as_class_indices` reads `predictions` as binary scores (one per label)."""
    if not predictions.is_floating_point():
        return False
    return predictions.shape == labels.shape or (
        predictions.dim() == labels.dim() + 1
        and predictions.shape[-1] == 1
        and predictions.shape[:-1] == labels.shape
    )


def rows_read_alone(labels: Tensor, predictions: Tensor, score_kind: str) -> bool:
    """Whether each row of a batch means the same whatever the other rows hold, so that
    batches may be concatenated before an update (see `Metric._coalescible`).

    Integer predictions and class scores (a trailing class dimension) are; floating scores
    shaped like `labels` with `score_kind="auto"` are not, since a batch with any score outside
    [0, 1] is read as logits. Predictions of another shape (reshaped with a warning) are
    refused too, so that the warning still comes with the call that earns it.
    """
    if predictions.dim() == labels.dim() + 1 and predictions.shape[-1] > 1:
        return predictions.shape[:-1] == labels.shape
    if predictions.shape != labels.shape:
        return False
    return score_kind != "auto" or not predictions.is_floating_point()
