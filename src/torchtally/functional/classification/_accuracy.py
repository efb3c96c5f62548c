"""Accuracy: the (weighted) fraction of predictions equal to their labels."""

from __future__ import annotations

from torch import Tensor

from torchtally.functional._checks import check_same_shape, count_nonfinite
from torchtally.functional.classification._inputs import as_class_indices

__all__ = ["accuracy", "accuracy_compute", "accuracy_update", "accuracy_update_checked"]


def accuracy_update(
    labels: Tensor, predictions: Tensor, weights: Tensor | None = None, threshold: float = 0.5
) -> tuple[Tensor, Tensor | int]:
    """Sufficient statistics of one batch: (weighted) correct count and token count.

    As in cstorch, with weights the correct predictions are weighted and the denominator is
    the number of positive weights.
    """
    return _accuracy_counts(labels, as_class_indices(labels, predictions, threshold), weights)


def accuracy_update_checked(
    labels: Tensor, predictions: Tensor, weights: Tensor | None = None, threshold: float = 0.5
) -> tuple[Tensor, Tensor | int, Tensor | None]:
    """`accuracy_update` plus the count of predictions that cannot be trusted.

    For class scores that is the rows whose maximum is NaN or infinite: a NaN anywhere in a row
    makes its maximum NaN, so the rows' maxima (which the argmax computes anyway) replace a
    pass over every score. A -inf score in a row (a masked class) is legitimate and not counted.
    For binary scores it is the non-finite scores; integer indices have none.
    """
    scores = predictions.is_floating_point() and predictions.dim() == labels.dim() + 1
    if scores and predictions.shape[:-1] == labels.shape:
        top = predictions.max(dim=-1)
        counts = _accuracy_counts(labels, top.indices, weights)
        return (*counts, count_nonfinite(top.values))
    counts = accuracy_update(labels, predictions, weights, threshold)
    return (*counts, count_nonfinite(predictions))


def _accuracy_counts(
    labels: Tensor, predicted: Tensor, weights: Tensor | None
) -> tuple[Tensor, Tensor | int]:
    correct = predicted == labels
    if weights is None:
        # a Python count: adding it to the state is one kernel, and no tensor is made for it
        return correct.sum(), labels.numel()
    check_same_shape("labels", labels, "weights", weights)
    return (correct * weights).sum(), (weights > 0).sum()


def accuracy_compute(correct: Tensor, total: Tensor | int) -> Tensor:
    """Correct over total; NaN when nothing was counted."""
    return correct.double() / total


def accuracy(
    labels: Tensor, predictions: Tensor, weights: Tensor | None = None, threshold: float = 0.5
) -> Tensor:
    """Fraction of `predictions` that match `labels`.

    Args:
        labels: Class indices.
        predictions: Class indices, binary scores shaped like `labels`, or class scores with a
            trailing class dimension (see `as_class_indices`).
        weights: Optional per-element weights shaped like `labels`; the result is the weighted
            correct count over the number of positive weights (cstorch's definition).
        threshold: Decision threshold for binary scores.

    Returns:
        A 0-d float64 tensor.

    Example:
        >>> accuracy(torch.tensor([0, 1, 2]), torch.tensor([0, 1, 1]))
        tensor(0.6667, dtype=torch.float64)
    """
    return accuracy_compute(*accuracy_update(labels, predictions, weights, threshold))
