"""Accuracy: the (weighted) fraction of predictions equal to their labels."""

from __future__ import annotations

import torch
from torch import Tensor

from torchtally._errors import check_int
from torchtally.functional._checks import (
    ErrorCounts,
    check_same_shape,
    check_tensor,
    count_nonfinite,
    count_outside,
)
from torchtally.functional.classification._inputs import (
    as_class_indices,
    check_index_labels,
    is_binary_scores,
    row_maxima,
)

__all__ = [
    "accuracy",
    "accuracy_compute",
    "accuracy_errors",
    "accuracy_update",
    "accuracy_update_checked",
    "class_score_accuracy_update",
]


def _is_class_scores(labels: Tensor, predictions: Tensor) -> bool:
    return (
        predictions.is_floating_point()
        and predictions.dim() == labels.dim() + 1
        and predictions.shape[:-1] == labels.shape
        and predictions.shape[-1] > 1
    )


def _check_inputs(labels: object, predictions: object, num_classes: int | None) -> None:
    check_index_labels(labels)
    check_tensor("predictions", predictions)
    assert isinstance(labels, Tensor) and isinstance(predictions, Tensor)  # for mypy
    if num_classes is None:
        return
    check_int("num_classes", num_classes, 2)
    if _is_class_scores(labels, predictions) and predictions.shape[-1] != num_classes:
        raise ValueError(
            "Argument `predictions` holding class scores must have a last dimension of size "
            f"num_classes. Received: predictions.shape={tuple(predictions.shape)}, "
            f"num_classes={num_classes}"
        )


def accuracy_update(
    labels: Tensor,
    predictions: Tensor,
    weights: Tensor | None = None,
    threshold: float = 0.5,
    *,
    ignore_index: int | None = None,
    score_kind: str = "auto",
    as_values: bool = False,
) -> tuple[Tensor, Tensor | int]:
    """Sufficient statistics of one batch: (weighted) correct count and token count.

    As in cstorch, with weights the correct predictions are weighted and the denominator is
    the number of positive weights. Elements whose label is `ignore_index` count in neither.
    With `as_values`, `predictions` shaped like `labels` are compared with them value for
    value, whatever their dtypes (no threshold, no argmax, floating labels allowed:
    NeuroBench's classification accuracy).
    """
    predicted = _predicted(labels, predictions, threshold, score_kind, as_values)
    return _accuracy_counts(labels, predicted, weights, ignore_index)


def _predicted(
    labels: Tensor, predictions: Tensor, threshold: float, score_kind: str, as_values: bool
) -> Tensor:
    """The predictions as values to compare with the labels (see `accuracy_update`)."""
    if as_values:
        check_tensor("labels", labels)
        check_tensor("predictions", predictions)
        check_same_shape("labels", labels, "predictions", predictions)
        return predictions
    _check_inputs(labels, predictions, None)
    return as_class_indices(labels, predictions, threshold, score_kind)


def accuracy_errors(
    labels: Tensor,
    predictions: Tensor,
    num_classes: int | None = None,
    ignore_index: int | None = None,
) -> tuple[Tensor, Tensor | None]:
    """0-d counts of invalid labels and of invalid index predictions (None: impossible).

    A label is invalid when it is not a class the predictions can name: negative or
    `>= num_classes` (when given); `>=` the number of class scores; other than 0 and 1 with
    binary scores. An index prediction is invalid when negative or `>= num_classes`. Elements
    whose label is `ignore_index` are never counted.

    Example:
        >>> accuracy_errors(torch.tensor([0, -100, 2]), torch.tensor([0.2, 0.9, 0.4]))[0]
        tensor(2)
    """
    _check_inputs(labels, predictions, num_classes)
    bad_count: Tensor | None = None
    if is_binary_scores(labels, predictions):
        bad_label = torch.logical_and(labels != 0, labels != 1)
    else:
        high = predictions.shape[-1] if _is_class_scores(labels, predictions) else num_classes
        if high is not None and ignore_index is None:
            bad_count = count_outside(labels, 0, high)
            bad_label = labels  # unused
        else:
            bad_label = labels < 0
            if high is not None:
                bad_label = torch.logical_or(bad_label, labels >= high)
    bad_prediction: Tensor | None = None
    if not predictions.is_floating_point() and predictions.shape == labels.shape:
        bad_prediction = predictions < 0
        if num_classes is not None:
            bad_prediction = torch.logical_or(bad_prediction, predictions >= num_classes)
    if ignore_index is not None:
        kept = labels != ignore_index
        bad_label = torch.logical_and(bad_label, kept)
        if bad_prediction is not None:
            bad_prediction = torch.logical_and(bad_prediction, kept)
    return (
        torch.count_nonzero(bad_label) if bad_count is None else bad_count,
        None if bad_prediction is None else torch.count_nonzero(bad_prediction),
    )


def accuracy_update_checked(
    labels: Tensor,
    predictions: Tensor,
    weights: Tensor | None = None,
    threshold: float = 0.5,
    *,
    num_classes: int | None = None,
    ignore_index: int | None = None,
    score_kind: str = "auto",
) -> tuple[Tensor, Tensor | int, ErrorCounts]:
    """`accuracy_update` plus the counts of invalid labels, invalid index predictions (see
    `accuracy_errors`) and predictions that cannot be trusted, by kind name
    (`invalid_labels`, `invalid_predictions`, `nonfinite_predictions`).

    For class scores that is the rows whose maximum is NaN or infinite: a NaN anywhere in a row
    makes its maximum NaN, so the rows' maxima (which the argmax computes anyway) replace a
    pass over every score. A -inf score in a row (a masked class) is legitimate and not counted.
    For binary scores it is the non-finite scores; integer indices have none.
    """
    bad_labels, bad_predictions = accuracy_errors(labels, predictions, num_classes, ignore_index)
    if _is_class_scores(labels, predictions):
        top = predictions.max(dim=-1)
        counts = _accuracy_counts(labels, top.indices, weights, ignore_index)
        nonfinite = count_nonfinite(top.values)
    else:
        counts = accuracy_update(
            labels,
            predictions,
            weights,
            threshold,
            ignore_index=ignore_index,
            score_kind=score_kind,
        )
        nonfinite = count_nonfinite(predictions)
    errors: ErrorCounts = {
        "invalid_labels": bad_labels,
        "invalid_predictions": bad_predictions,
        "nonfinite_predictions": nonfinite,
    }
    return (*counts, errors)


def class_score_accuracy_update(
    labels: object,
    predictions: object,
    num_classes: int | None,
    check_values: bool,
) -> tuple[Tensor, int, ErrorCounts | None] | None:
    """`accuracy_update_checked` (or `accuracy_update`) of the commonest batch, `(N,)` int64
    labels and `(N, C)` class scores with no weights and no ignored label, in the fewest ops:
    `(correct, total, errors)` with the errors as `accuracy_update_checked` names them (None
    when not `check_values`; index predictions and weights cannot occur). None for anything
    else, which takes the ordinary path."""
    if not (
        isinstance(labels, Tensor)
        and isinstance(predictions, Tensor)
        and labels.dtype == torch.int64
        and labels.dim() == 1
        and predictions.dim() == 2
        and predictions.is_floating_point()
        and predictions.shape[0] == labels.shape[0]
        and predictions.shape[1] > 1
        and num_classes in (None, predictions.shape[1])
    ):
        return None
    if not check_values:
        correct = torch.count_nonzero(predictions.argmax(-1) == labels)
        return correct, labels.shape[0], None
    maxima, predicted = row_maxima(predictions)
    correct = torch.count_nonzero(predicted == labels)
    bad_labels = count_outside(labels, 0, predictions.shape[1])
    errors: ErrorCounts = {
        "invalid_labels": bad_labels,
        "nonfinite_predictions": count_nonfinite(maxima),
    }
    return correct, labels.shape[0], errors


def _accuracy_counts(
    labels: Tensor, predicted: Tensor, weights: Tensor | None, ignore_index: int | None
) -> tuple[Tensor, Tensor | int]:
    correct = predicted == labels
    if weights is None:
        if ignore_index is None:
            # a Python count: adding it to the state is one kernel, and no tensor is made for it
            return correct.sum(), labels.numel()
        kept = labels != ignore_index
        return torch.logical_and(correct, kept).sum(), kept.sum()
    check_tensor("weights", weights)
    check_same_shape("labels", labels, "weights", weights)
    if ignore_index is not None:
        # where, not a product: a NaN weight on an ignored element must not leak into the sums
        weights = torch.where(labels != ignore_index, weights, 0.0)
    return (correct * weights).sum(), (weights > 0).sum()


def accuracy_compute(correct: Tensor, total: Tensor | int) -> Tensor:
    """Correct over total; NaN when nothing was counted."""
    return correct.double() / total


def accuracy(
    labels: Tensor,
    predictions: Tensor,
    weights: Tensor | None = None,
    threshold: float = 0.5,
    *,
    ignore_index: int | None = None,
    score_kind: str = "auto",
    as_values: bool = False,
    float32_mean: bool = False,
) -> Tensor:
    """Fraction of `predictions` that match `labels`.

    Args:
        labels: Integer (or bool) class indices. Floating labels raise: the order is
            `(labels, predictions)` (TorchMetrics' is `(preds, target)`).
        predictions: Class indices, binary scores shaped like `labels` (or `(..., 1)`;
            probabilities or logits, see `score_kind`), or class scores with a trailing class
            dimension (see `as_class_indices`).
        weights: Optional per-element weights shaped like `labels`; the result is the weighted
            correct count over the number of positive weights (cstorch's definition).
        threshold: Decision threshold for binary scores (on probabilities).
        ignore_index: A label value (e.g. -100 padding) whose elements count in neither the
            numerator nor the denominator.
        score_kind: "auto" (a batch with a score outside [0, 1] is read as logits), or
            "probabilities" / "logits".
        as_values: Compare `predictions` shaped like `labels` with them value for value,
            whatever their dtypes (no threshold, no argmax, floating labels allowed:
            NeuroBench's classification accuracy).
        float32_mean: Return PyTorch's float32 `mean` of the 0/1 matches, rounded as that
            kernel rounds on the inputs' device (NeuroBench's convention; on CUDA it scales
            the count by a float32 1/n, which can differ from k/n in the last bit). Takes no
            `weights` and no `ignore_index`.

    Returns:
        A 0-d float64 tensor (float32 with `float32_mean`). This function does not
        validate label values; `AccuracyMetric` counts invalid ones and raises them at
        compute.

    Example:
        >>> accuracy(torch.tensor([0, 1, 2]), torch.tensor([0, 1, 1]))
        tensor(0.6667, dtype=torch.float64)
    """
    if float32_mean:
        if weights is not None or ignore_index is not None:
            raise ValueError(
                "Argument `float32_mean=True` takes no `weights` and no `ignore_index` (a "
                "plain mean of the matches). Received: "
                f"weights={'a tensor' if weights is not None else None}, "
                f"ignore_index={ignore_index!r}"
            )
        predicted = _predicted(labels, predictions, threshold, score_kind, as_values)
        return torch.eq(predicted, labels).float().mean()
    return accuracy_compute(
        *accuracy_update(
            labels,
            predictions,
            weights,
            threshold,
            ignore_index=ignore_index,
            score_kind=score_kind,
            as_values=as_values,
        )
    )
