"""Classification inputs made safe to scatter: clamped indices plus a per-element weight.

An out-of-range label or prediction must neither crash a scatter (CPU raises, CUDA asserts)
nor be counted silently. So every index is clamped into range and the element gets weight 0
when it was invalid; the invalid elements are counted separately (`*_errors`, by the kind
names of `error_kinds`) for the metric to raise at compute. Every choice here depends on
dtypes, shapes and arguments only.
"""

from __future__ import annotations

import torch
from torch import Tensor

from torchtally._errors import ErrorKinds, check_int
from torchtally.functional._blocks import eager_at_least
from torchtally.functional._checks import (
    ErrorCounts,
    check_same_shape,
    check_tensor,
    count_negative,
    count_nonfinite,
    count_nonfinite_rows,
    count_outside,
)
from torchtally.functional.classification._inputs import (
    as_class_indices,
    check_index_labels,
    is_binary_scores,
    positive_scores,
    row_maxima,
)

__all__ = [
    "TASKS",
    "class_score_batch",
    "classification_task",
    "count_nonfinite_weights",
    "error_kinds",
    "indicator_errors",
    "indicator_inputs",
    "multiclass_errors",
    "multiclass_errors_from_maxima",
    "multiclass_inputs",
    "refuse_binary_scores",
    "shared_row_maxima",
]

TASKS = ("binary", "multiclass", "multilabel")


def classification_task(num_classes: int | None, multilabel: bool) -> str:
    """Name the task from the constructor arguments, checking them.

    `num_classes=None` means binary (positive class 1 only); `multilabel=True` means
    `num_classes` independent 0/1 labels per sample; anything else is multiclass.

    Args:
        num_classes: None (binary), the number of classes (>= 2) or of labels (>= 1).
        multilabel: Whether labels are `(..., num_classes)` 0/1 indicators.

    Returns:
        "binary", "multiclass" or "multilabel".

    Example:
        >>> classification_task(None, False), classification_task(3, False)
        ('binary', 'multiclass')
    """
    if not isinstance(multilabel, bool):
        raise TypeError(
            f"Argument `multilabel` must be a bool. Received: multilabel={multilabel!r}"
        )
    if multilabel:
        check_int("num_classes", num_classes, 1)
        return "multilabel"
    check_int("num_classes", num_classes, 2, allow_none=True)
    return "binary" if num_classes is None else "multiclass"


def error_kinds(task: str) -> ErrorKinds:
    """The data errors counted for `task` by kind name (the same names for every task): the
    keys `*_errors` returns counts under."""
    if task == "multiclass":
        return ErrorKinds(
            invalid_labels="labels outside [0, num_classes)",
            invalid_predictions="predictions outside [0, num_classes)",
            nonfinite_predictions="non-finite predictions",
            negative_weights="negative weights",
            nonfinite_weights="NaN or infinite weights",
        )
    return ErrorKinds(
        invalid_labels="labels other than 0 and 1",
        invalid_predictions="predictions other than 0 and 1",
        nonfinite_predictions="non-finite predictions",
        negative_weights="negative weights",
        nonfinite_weights="NaN or infinite weights",
    )


def count_nonfinite_weights(weights: Tensor | None) -> Tensor | None:
    """Number of NaN or infinite weights (None without weights). A NaN weight would otherwise
    turn a count into NaN, which the ratios then read as some number."""
    return None if weights is None else count_nonfinite(weights)


def _is_index_tensor(predictions: Tensor, labels: Tensor) -> bool:
    """Whether `predictions` are indices to validate (integer, shaped like `labels`)."""
    return predictions.shape == labels.shape and not predictions.is_floating_point()


def _element_weights(valid: Tensor, labels: Tensor, weights: Tensor | None) -> Tensor:
    """float64 weight per element: the sample weight where valid, else 0."""
    if weights is None:
        return valid.to(torch.float64)
    check_tensor("weights", weights)
    check_same_shape("labels", labels, "weights", weights)
    # where, not a product: a NaN weight on an invalid element must not leak into the sums
    return torch.where(valid, weights.to(torch.float64), 0.0)


def _clamped(indices: Tensor, num_classes: int) -> tuple[Tensor, Tensor]:
    # a `long()` that changes nothing still costs a dispatch
    as_long = indices if indices.dtype == torch.int64 else indices.long()
    clamped = as_long.clamp(0, num_classes - 1)
    return clamped, clamped == as_long


def multiclass_inputs(
    labels: Tensor,
    predictions: Tensor,
    num_classes: int,
    threshold: float = 0.5,
    weights: Tensor | None = None,
    score_kind: str = "auto",
) -> tuple[Tensor, Tensor, Tensor]:
    """Clamped label and predicted indices and element weights (0 where either was invalid).

    Args:
        labels: Integer (or bool) class indices of any shape.
        predictions: Indices shaped like `labels`, class scores with a trailing dimension of
            size `num_classes`, or (two classes only) binary scores shaped like `labels` (see
            `as_class_indices`).
        num_classes: Number of classes.
        threshold: Decision threshold for binary scores.
        weights: Optional sample weights shaped like `labels`.
        score_kind: What binary scores are: "auto", "probabilities" or "logits".

    Returns:
        `(labels, predicted, weight)`: int64 indices in `[0, num_classes)` and float64 weights,
        all shaped like `labels`.

    Example:
        >>> multiclass_inputs(torch.tensor([0, 5]), torch.tensor([1, 1]), 3)[2]
        tensor([1., 0.], dtype=torch.float64)
    """
    check_index_labels(labels)
    check_tensor("predictions", predictions)
    binary_scores = is_binary_scores(labels, predictions)
    if binary_scores and num_classes > 2:
        refuse_binary_scores(labels, predictions, num_classes)
    predicted = as_class_indices(labels, predictions, threshold, score_kind)
    if (
        not binary_scores
        and predictions.shape != labels.shape
        and (predictions.shape[-1] != num_classes)
    ):
        raise ValueError(
            "Argument `predictions` holding class scores must have a last dimension of size "
            f"num_classes. Received: predictions.shape={tuple(predictions.shape)}, "
            f"num_classes={num_classes}"
        )
    labels_c, valid = _clamped(labels, num_classes)
    if _is_index_tensor(predictions, labels):
        predicted, valid_predictions = _clamped(predicted, num_classes)
        valid = valid & valid_predictions
    else:
        # an argmax over num_classes scores, or a thresholded 0/1: always in range
        predicted = predicted if predicted.dtype == torch.int64 else predicted.long()
    return labels_c, predicted, _element_weights(valid, labels, weights)


def multiclass_errors(
    labels: Tensor, predictions: Tensor, num_classes: int, weights: Tensor | None = None
) -> ErrorCounts:
    """Counts of the `error_kinds("multiclass")` by name (None: cannot occur)."""
    predictions_outside = (
        count_outside(predictions, 0, num_classes)
        if _is_index_tensor(predictions, labels)
        else None
    )
    return {
        "invalid_labels": count_outside(labels, 0, num_classes),
        "invalid_predictions": predictions_outside,
        "nonfinite_predictions": _count_nonfinite_predictions(predictions, labels),
        "negative_weights": count_negative(weights),
        "nonfinite_weights": count_nonfinite_weights(weights),
    }


#: From this many class scores per batch, one max pass serves the argmax and the value check.
_SHARED_MAX_FROM = 1 << 15


def shared_row_maxima(
    labels: Tensor, predictions: Tensor, num_classes: int
) -> tuple[Tensor, Tensor] | None:
    """For a large batch of class scores `labels.shape + (num_classes,)`: its argmax and row
    maxima from one `max` pass, so that a metric can update with the indices and count the
    non-finite rows from the maxima (what `multiclass_errors` would find with a second pass).
    None for anything else (smaller batches, indices, binary scores, wrong shapes), which takes
    the ordinary path and its checks."""
    if (
        isinstance(predictions, Tensor)  # a list is refused on the ordinary path, by name
        and predictions.is_floating_point()
        and isinstance(labels, Tensor)
        and predictions.dim() == labels.dim() + 1
        and predictions.shape[-1] == num_classes
        and predictions.shape[:-1] == labels.shape
        and eager_at_least(predictions, _SHARED_MAX_FROM)
    ):
        top = predictions.max(dim=-1)
        return top.indices, top.values
    return None


def class_score_batch(
    labels: object,
    predictions: object,
    num_classes: int,
    weights: Tensor | None,
    check_values: bool,
) -> tuple[Tensor, Tensor, Tensor, ErrorCounts | None] | None:
    """The commonest batch, `(N,)` int64 labels and `(N, num_classes)` class scores without
    weights, made ready to scatter with the fewest ops: `(labels, predicted, weight, errors)`
    as `multiclass_inputs` and `multiclass_errors` give them (errors None unless
    `check_values`; `predicted` may be bool, see `row_maxima`). None for anything else,
    which takes the ordinary path.

    One `max` pass (see `row_maxima`) gives the argmax and the rows' maxima the value check reads, and one clamp
    serves both the safe label index and the count of labels outside `[0, num_classes)`.
    """
    if not (
        weights is None
        and isinstance(labels, Tensor)
        and isinstance(predictions, Tensor)
        and labels.dtype == torch.int64
        and labels.dim() == 1
        and predictions.dim() == 2
        and predictions.is_floating_point()
        and predictions.shape[1] == num_classes
        and predictions.shape[0] == labels.shape[0]
    ):
        return None
    clamped = labels.clamp(0, num_classes - 1)
    valid = clamped == labels
    weight = valid.to(torch.float64)
    if not check_values:
        return clamped, predictions.argmax(-1), weight, None
    maxima, predicted = row_maxima(predictions)
    outside = torch.rsub(torch.count_nonzero(valid), labels.shape[0])
    errors: ErrorCounts = {
        "invalid_labels": outside,
        "nonfinite_predictions": count_nonfinite(maxima),
    }
    return clamped, predicted, weight, errors


def multiclass_errors_from_maxima(
    labels: Tensor, maxima: Tensor, num_classes: int, weights: Tensor | None = None
) -> ErrorCounts:
    """`multiclass_errors` of class scores, given their row maxima (see `shared_row_maxima`)."""
    return {
        "invalid_labels": count_outside(labels, 0, num_classes),
        "nonfinite_predictions": count_nonfinite(maxima),
        "negative_weights": count_negative(weights),
        "nonfinite_weights": count_nonfinite_weights(weights),
    }


def _count_nonfinite_predictions(predictions: Tensor, labels: Tensor) -> Tensor | None:
    """Class scores: rows whose maximum (which decides the class) is NaN or inf; else values."""
    if predictions.is_floating_point() and predictions.dim() == labels.dim() + 1:
        return count_nonfinite_rows(predictions)
    return count_nonfinite(predictions)


def _indicator_shapes(labels: Tensor, predictions: Tensor, num_labels: int | None) -> None:
    check_index_labels(labels)
    check_tensor("predictions", predictions)
    if num_labels is None:
        return  # binary: as_class_indices checks the shapes
    if labels.dim() == 0 or labels.shape[-1] != num_labels:
        raise ValueError(
            "Argument `labels` must have shape (..., num_classes) for multilabel inputs. "
            f"Received: labels.shape={tuple(labels.shape)}, num_classes={num_labels}"
        )
    check_same_shape("labels", labels, "predictions", predictions)


def _is_zero_or_one(values: Tensor) -> tuple[Tensor, Tensor]:
    one = values == 1
    return one, one | (values == 0)


def indicator_inputs(
    labels: Tensor,
    predictions: Tensor,
    num_labels: int | None = None,
    threshold: float = 0.5,
    weights: Tensor | None = None,
    score_kind: str = "auto",
) -> tuple[Tensor, Tensor, Tensor]:
    """Positive-label and positive-prediction masks and element weights, for binary and
    multilabel inputs.

    Args:
        labels: 0/1 labels of an integer or bool dtype. Binary: any shape. Multilabel:
            `(..., num_labels)`.
        predictions: 0/1 indices or scores shaped like `labels` (probabilities or logits, see
            `positive_scores`: positive where the probability is `> threshold`); binary also
            accepts `(..., 1)` scores and two-class scores with a trailing dimension.
        num_labels: None for binary, else the number of labels.
        threshold: Decision threshold for scores.
        weights: Optional sample weights: shaped like `labels` (binary) or like
            `labels.shape[:-1]` (multilabel: one weight per sample, as scikit-learn's).
        score_kind: What scores are: "auto", "probabilities" or "logits".

    Returns:
        `(label_is_1, predicted_1, weight)`, shaped like `labels`; weight is float64 and 0 where
        a label or an index prediction was neither 0 nor 1.

    Example:
        >>> indicator_inputs(torch.tensor([1, 2]), torch.tensor([0.9, 0.1]))[2]
        tensor([1., 0.], dtype=torch.float64)
    """
    _indicator_shapes(labels, predictions, num_labels)
    positive, valid = _is_zero_or_one(labels)
    if num_labels is None:
        predicted = as_class_indices(labels, predictions, threshold, score_kind)
        if not is_binary_scores(labels, predictions) and (
            predictions.shape != labels.shape and predictions.shape[-1] != 2
        ):
            raise ValueError(
                "Argument `predictions` holding binary class scores must have a last dimension "
                f"of size 2. Received: predictions.shape={tuple(predictions.shape)}"
            )
    else:
        predicted = (
            positive_scores(predictions, threshold, score_kind)
            if predictions.is_floating_point()
            else predictions
        )
    if _is_index_tensor(predictions, labels):
        predicted_one, valid_prediction = _is_zero_or_one(predicted)
        valid = valid & valid_prediction
    else:
        predicted_one = predicted.bool()
    if weights is not None and num_labels is not None:
        check_tensor("weights", weights)
        check_same_shape("labels.shape[:-1]", labels[..., 0], "weights", weights)
        # one weight per sample, shared by its labels
        weights = weights.unsqueeze(-1).expand(labels.shape)
    return positive, predicted_one, _element_weights(valid, labels, weights)


def _count_not_zero_or_one(values: Tensor) -> Tensor:
    return torch.logical_and(values != 0, values != 1).sum()


def indicator_errors(
    labels: Tensor, predictions: Tensor, weights: Tensor | None = None
) -> ErrorCounts:
    """Counts of the `error_kinds("binary")` (same for multilabel) by name (None: cannot
    occur)."""
    predictions_invalid = (
        _count_not_zero_or_one(predictions) if _is_index_tensor(predictions, labels) else None
    )
    return {
        "invalid_labels": _count_not_zero_or_one(labels),
        "invalid_predictions": predictions_invalid,
        "nonfinite_predictions": count_nonfinite(predictions),
        "negative_weights": count_negative(weights),
        "nonfinite_weights": count_nonfinite_weights(weights),
    }


def refuse_binary_scores(labels: Tensor, predictions: Tensor, num_classes: int) -> None:
    """Raise for floating predictions shaped like `labels` given to a metric of more than two
    classes: thresholding would turn float class indices (or one-hot rows) into 0/1, a
    different number with no error."""
    if not is_binary_scores(labels, predictions):
        return
    raise TypeError(
        "Argument `predictions` must be integer class indices shaped like `labels` or "
        f"floating class scores of shape labels.shape + (num_classes,) = "
        f"{(*labels.shape, num_classes)}; floating scores shaped like `labels` are "
        f"binary scores, which only two classes can have. Received: "
        f"predictions.shape={tuple(predictions.shape)}, predictions.dtype={predictions.dtype}, "
        f"labels.shape={tuple(labels.shape)}, num_classes={num_classes}. One-hot labels "
        "must be given as class indices (`labels.argmax(-1)`)."
    )
