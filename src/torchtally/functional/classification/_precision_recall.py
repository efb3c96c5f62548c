"""Precision, recall and F-beta from the shared per-class counts (scikit-learn's definitions).

For each class, precision = tp / predicted, recall = tp / actual and
F-beta = (1 + beta²) tp / (beta² actual + predicted), each 0 when its denominator is 0. The
statistics are `class_counts_update`'s; see `_averaging` for the averages and `ignore_labels`.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence

from torch import Tensor

from torchtally.functional.classification._averaging import (
    ClassRows,
    average_class_scores,
    check_class_list,
    safe_divide,
)
from torchtally.functional.classification._class_counts import (
    class_counts_update,
    class_counts_width,
)
from torchtally.functional.classification._valid_inputs import classification_task

__all__ = [
    "check_beta",
    "f1_score",
    "fbeta_compute",
    "fbeta_ratio",
    "fbeta_score",
    "precision",
    "precision_compute",
    "precision_ratio",
    "recall",
    "recall_compute",
    "recall_ratio",
]


def check_beta(beta: float) -> float:
    """Return `beta` as a float after checking it is a finite number >= 0."""
    if isinstance(beta, bool) or not isinstance(beta, int | float) or not 0 <= beta < math.inf:
        raise ValueError(f"Argument `beta` must be a finite number >= 0. Received: beta={beta!r}")
    return float(beta)


def precision_ratio(tp: Tensor, predicted: Tensor, zero_division: float = 0.0) -> Tensor:
    """Precision from counts, tp / predicted (`zero_division` where nothing was predicted).
    Of the negatives (tn / (tn + fn)) it is the negative predictive value."""
    return safe_divide(tp, predicted, zero_division)


def recall_ratio(tp: Tensor, actual: Tensor, zero_division: float = 0.0) -> Tensor:
    """Recall from counts, tp / actual (`zero_division` where the class has no label). Of the
    negatives (tn / (tn + fp)) it is the specificity."""
    return safe_divide(tp, actual, zero_division)


def fbeta_ratio(
    tp: Tensor, predicted: Tensor, actual: Tensor, beta2: float, zero_division: float = 0.0
) -> Tensor:
    """F-beta from counts, (1 + beta²) tp / (beta² actual + predicted): the harmonic form of
    (1 + beta²) P R / (beta² P + R) written on counts, so that 0/0 is `zero_division`."""
    return safe_divide((1.0 + beta2) * tp, beta2 * actual + predicted, zero_division)


def _precision(tp: Tensor, predicted: Tensor, actual: Tensor) -> Tensor:
    return precision_ratio(tp, predicted)


def _recall(tp: Tensor, predicted: Tensor, actual: Tensor) -> Tensor:
    return recall_ratio(tp, actual)


def precision_compute(
    class_counts: Tensor | ClassRows,
    average_type: str = "micro",
    task: str = "multiclass",
    ignore_labels: Sequence[int] = (),
    macro_classes: str = "all",
) -> Tensor:
    """Precision from accumulated `(3, C)` class counts.

    Args:
        class_counts: Rows [true positives, predicted, actual] per class.
        average_type: "micro", "macro", "weighted" or "none".
        task: "binary", "multiclass" or "multilabel".
        ignore_labels: Classes left out of the average.
        macro_classes: "all" (cstorch) or "seen" (scikit-learn): the classes "macro"
            averages over (see `average_class_scores`).

    Returns:
        float64: 0-d, or `(C,)` for "none".

    Example:
        >>> counts = class_counts_update(torch.tensor([0, 1, 1]), torch.tensor([0, 1, 0]), 2)
        >>> precision_compute(counts, "none")
        tensor([0.5000, 1.0000], dtype=torch.float64)
    """
    return average_class_scores(
        class_counts, _precision, average_type, task, ignore_labels, macro_classes
    )


def recall_compute(
    class_counts: Tensor | ClassRows,
    average_type: str = "micro",
    task: str = "multiclass",
    ignore_labels: Sequence[int] = (),
    macro_classes: str = "all",
) -> Tensor:
    """Recall from accumulated `(3, C)` class counts (arguments as `precision_compute`).

    Example:
        >>> counts = class_counts_update(torch.tensor([0, 1, 1]), torch.tensor([0, 1, 0]), 2)
        >>> recall_compute(counts, "none")
        tensor([1.0000, 0.5000], dtype=torch.float64)
    """
    return average_class_scores(
        class_counts, _recall, average_type, task, ignore_labels, macro_classes
    )


def fbeta_compute(
    class_counts: Tensor | ClassRows,
    beta: float = 1.0,
    average_type: str = "micro",
    task: str = "multiclass",
    ignore_labels: Sequence[int] = (),
    macro_classes: str = "all",
) -> Tensor:
    """F-beta from accumulated `(3, C)` class counts (other arguments as `precision_compute`).

    Args:
        class_counts: Rows [true positives, predicted, actual] per class.
        beta: Weight of recall relative to precision; 0 gives precision.
        average_type: "micro", "macro", "weighted" or "none".
        task: "binary", "multiclass" or "multilabel".
        ignore_labels: Classes left out of the average.
        macro_classes: "all" (cstorch) or "seen" (scikit-learn): the classes "macro"
            averages over (see `average_class_scores`).

    Returns:
        float64: 0-d, or `(C,)` for "none".

    Example:
        >>> counts = class_counts_update(torch.tensor([0, 1, 1]), torch.tensor([0, 1, 0]), 2)
        >>> fbeta_compute(counts, 1.0, "none")
        tensor([0.6667, 0.6667], dtype=torch.float64)
    """
    beta2 = check_beta(beta) ** 2

    def score(tp: Tensor, predicted: Tensor, actual: Tensor) -> Tensor:
        return fbeta_ratio(tp, predicted, actual, beta2)

    return average_class_scores(
        class_counts, score, average_type, task, ignore_labels, macro_classes
    )


def _counts_and_task(
    labels: Tensor,
    predictions: Tensor,
    num_classes: int | None,
    threshold: float,
    multilabel: bool,
    ignore_labels: Iterable[int] | None,
    weights: Tensor | None,
) -> tuple[Tensor, str, tuple[int, ...]]:
    task = classification_task(num_classes, multilabel)
    if task == "binary" and ignore_labels is not None:
        raise ValueError(
            "Argument `ignore_labels` must be None for binary inputs (num_classes=None). "
            f"Received: ignore_labels={ignore_labels!r}"
        )
    ignore = check_class_list(
        "ignore_labels", ignore_labels, class_counts_width(num_classes, multilabel)
    )
    counts = class_counts_update(
        labels,
        predictions,
        num_classes,
        multilabel=multilabel,
        threshold=threshold,
        weights=weights,
    )
    return counts, task, ignore


def precision(
    labels: Tensor,
    predictions: Tensor,
    num_classes: int | None = None,
    average_type: str = "micro",
    threshold: float = 0.5,
    multilabel: bool = False,
    ignore_labels: Iterable[int] | None = None,
    weights: Tensor | None = None,
) -> Tensor:
    """Precision, tp / (tp + fp), as scikit-learn's `precision_score`.

    Args:
        labels: Class indices (multiclass), 0/1 labels (binary, `num_classes=None`) or 0/1
            indicators `(..., num_classes)` (`multilabel=True`).
        predictions: Class indices or scores; see `class_counts_update`.
        num_classes: None for binary (the positive class 1 only, scikit-learn's
            `average="binary"`), else the number of classes or labels.
        average_type: "micro", "macro", "weighted" or "none".
        threshold: Decision threshold for scores shaped like `labels`.
        multilabel: Whether the inputs are multilabel indicators.
        ignore_labels: Classes left out of the average (not allowed for binary).
        weights: Optional sample weights.

    Returns:
        float64: 0-d, or `(C,)` for "none".

    Example:
        >>> precision(torch.tensor([0, 1, 2, 2]), torch.tensor([0, 2, 2, 2]), 3, "macro")
        tensor(0.5556, dtype=torch.float64)
    """
    counts, task, ignore = _counts_and_task(
        labels, predictions, num_classes, threshold, multilabel, ignore_labels, weights
    )
    return precision_compute(counts, average_type, task, ignore)


def recall(
    labels: Tensor,
    predictions: Tensor,
    num_classes: int | None = None,
    average_type: str = "micro",
    threshold: float = 0.5,
    multilabel: bool = False,
    ignore_labels: Iterable[int] | None = None,
    weights: Tensor | None = None,
) -> Tensor:
    """Recall, tp / (tp + fn), as scikit-learn's `recall_score` (arguments as `precision`).

    Example:
        >>> recall(torch.tensor([0, 1, 2, 2]), torch.tensor([0, 2, 2, 2]), 3, "macro")
        tensor(0.6667, dtype=torch.float64)
    """
    counts, task, ignore = _counts_and_task(
        labels, predictions, num_classes, threshold, multilabel, ignore_labels, weights
    )
    return recall_compute(counts, average_type, task, ignore)


def fbeta_score(
    labels: Tensor,
    predictions: Tensor,
    num_classes: int | None = None,
    beta: float = 1.0,
    average_type: str = "micro",
    threshold: float = 0.5,
    multilabel: bool = False,
    ignore_labels: Iterable[int] | None = None,
    weights: Tensor | None = None,
) -> Tensor:
    """F-beta score, as scikit-learn's `fbeta_score` (other arguments as `precision`).

    Args:
        labels: Class indices, 0/1 labels or multilabel indicators.
        predictions: Class indices or scores.
        num_classes: None for binary, else the number of classes or labels.
        beta: Weight of recall relative to precision (finite, >= 0).
        average_type: "micro", "macro", "weighted" or "none".
        threshold: Decision threshold for scores shaped like `labels`.
        multilabel: Whether the inputs are multilabel indicators.
        ignore_labels: Classes left out of the average.
        weights: Optional sample weights.

    Returns:
        float64: 0-d, or `(C,)` for "none".

    Example:
        >>> fbeta_score(torch.tensor([1, 0, 1, 1]), torch.tensor([1, 1, 0, 1]), beta=2.0)
        tensor(0.6667, dtype=torch.float64)
    """
    check_beta(beta)
    counts, task, ignore = _counts_and_task(
        labels, predictions, num_classes, threshold, multilabel, ignore_labels, weights
    )
    return fbeta_compute(counts, beta, average_type, task, ignore)


def f1_score(
    labels: Tensor,
    predictions: Tensor,
    num_classes: int | None = None,
    average_type: str = "micro",
    threshold: float = 0.5,
    multilabel: bool = False,
    ignore_labels: Iterable[int] | None = None,
    weights: Tensor | None = None,
) -> Tensor:
    """F1 score: `fbeta_score` with beta = 1 (arguments as `precision`).

    Example:
        >>> f1_score(torch.tensor([1, 0, 1, 1]), torch.tensor([1, 1, 0, 1]))
        tensor(0.6667, dtype=torch.float64)
    """
    return fbeta_score(
        labels,
        predictions,
        num_classes,
        1.0,
        average_type,
        threshold,
        multilabel,
        ignore_labels,
        weights,
    )
