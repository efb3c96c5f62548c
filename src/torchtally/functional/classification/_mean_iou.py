"""Mean intersection over union (Jaccard index) from the shared per-class counts.

Per class, IoU = tp / (predicted + actual - tp). The mean runs over the classes with a
non-empty union (present in the labels or the predictions) that are not ignored, as in cstorch
and TensorFlow's `MeanIoU`; it equals scikit-learn's `jaccard_score(average="macro")` over the
classes present. 0 when no class qualifies, as in cstorch.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from torch import Tensor

from torchtally._errors import check_int
from torchtally.functional.classification._averaging import (
    ClassRows,
    check_class_list,
    class_rows,
    kept_classes,
    mean_or_zero,
    safe_divide,
)
from torchtally.functional.classification._class_counts import class_counts_update

__all__ = ["mean_iou", "mean_iou_compute"]


def mean_iou_compute(
    class_counts: Tensor | ClassRows, ignore_classes: Sequence[int] = ()
) -> Tensor:
    """Mean IoU from accumulated `(3, C)` class counts.

    Args:
        class_counts: Rows [true positives, predicted, actual] per class.
        ignore_classes: Classes left out of the mean.

    Returns:
        A 0-d float64 tensor.

    Example:
        >>> counts = class_counts_update(torch.tensor([0, 1, 1]), torch.tensor([0, 1, 0]), 3)
        >>> mean_iou_compute(counts)
        tensor(0.5000, dtype=torch.float64)
    """
    true_positives, predicted, actual = class_rows(class_counts)
    union = predicted + actual - true_positives
    kept = kept_classes(true_positives.shape[0], ignore_classes, true_positives)
    present = union > 0
    if kept is None:
        # the IoU of a class with no union is 0 already: no masking op
        return mean_or_zero(safe_divide(true_positives, union), present, zero_outside=True)
    return mean_or_zero(safe_divide(true_positives, union), kept & present)


def mean_iou(
    labels: Tensor,
    predictions: Tensor,
    num_classes: int,
    ignore_classes: Iterable[int] | None = None,
    threshold: float = 0.5,
    weights: Tensor | None = None,
) -> Tensor:
    """Mean IoU of segmentation (or any multiclass) predictions.

    Args:
        labels: Integer class indices of any shape, e.g. `(N, H, W)`.
        predictions: Indices shaped like `labels`, or scores with a trailing class dimension
            (move a channel-first class dimension last: `logits.movedim(1, -1)`).
        num_classes: Number of classes (>= 2).
        ignore_classes: Classes left out of the mean (e.g. the background).
        threshold: Decision threshold for binary scores shaped like `labels`.
        weights: Optional weights shaped like `labels` (0 masks an element out).

    Returns:
        A 0-d float64 tensor.

    Example:
        >>> mean_iou(torch.tensor([[0, 1], [1, 1]]), torch.tensor([[0, 1], [0, 1]]), 2)
        tensor(0.5833, dtype=torch.float64)
    """
    check_int("num_classes", num_classes, 2)
    ignore = check_class_list("ignore_classes", ignore_classes, num_classes)
    counts = class_counts_update(
        labels, predictions, num_classes, threshold=threshold, weights=weights
    )
    return mean_iou_compute(counts, ignore)
