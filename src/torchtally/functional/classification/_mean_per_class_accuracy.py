"""Mean per-class accuracy (balanced accuracy) from the shared per-class counts.

Per class, accuracy = tp / actual (the recall). The mean runs over all classes, a class with no
label counting as 0, as in cstorch and TensorFlow's `mean_per_class_accuracy` (scikit-learn's
`balanced_accuracy_score` averages over the classes present instead).
"""

from __future__ import annotations

from torch import Tensor

from torchtally._errors import check_int
from torchtally.functional.classification._averaging import ClassRows, class_rows, safe_divide
from torchtally.functional.classification._class_counts import class_counts_update

__all__ = ["mean_per_class_accuracy", "mean_per_class_accuracy_compute"]


def mean_per_class_accuracy_compute(class_counts: Tensor | ClassRows) -> Tensor:
    """Mean per-class accuracy from accumulated `(3, C)` class counts.

    Args:
        class_counts: Rows [true positives, predicted, actual] per class.

    Returns:
        A 0-d float64 tensor.

    Example:
        >>> counts = class_counts_update(torch.tensor([0, 1, 1]), torch.tensor([0, 1, 0]), 3)
        >>> mean_per_class_accuracy_compute(counts)  # class 2 has no label: it counts 0
        tensor(0.5000, dtype=torch.float64)
    """
    true_positives, _, actual = class_rows(class_counts)
    return safe_divide(true_positives, actual).mean()


def mean_per_class_accuracy(
    labels: Tensor,
    predictions: Tensor,
    num_classes: int,
    threshold: float = 0.5,
    weights: Tensor | None = None,
) -> Tensor:
    """Mean over classes of the fraction of each class's samples predicted correctly.

    Args:
        labels: Integer class indices of any shape.
        predictions: Indices shaped like `labels`, or scores with a trailing class dimension.
        num_classes: Number of classes (>= 2).
        threshold: Decision threshold for binary scores shaped like `labels`.
        weights: Optional sample weights shaped like `labels`.

    Returns:
        A 0-d float64 tensor.

    Example:
        >>> mean_per_class_accuracy(torch.tensor([0, 1, 1, 1]), torch.tensor([0, 1, 0, 0]), 2)
        tensor(0.6667, dtype=torch.float64)
    """
    check_int("num_classes", num_classes, 2)
    counts = class_counts_update(
        labels, predictions, num_classes, threshold=threshold, weights=weights
    )
    return mean_per_class_accuracy_compute(counts)
