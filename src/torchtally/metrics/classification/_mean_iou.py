"""`MeanIOUMetric`: cstorch's mean intersection over union, accumulated over batches."""

from __future__ import annotations

from collections.abc import Iterable
from typing import final

from torch import Tensor

from torchtally._errors import check_int
from torchtally.functional.classification._mean_iou import mean_iou_compute
from torchtally.metrics.classification._class_counts import ClassCountsMetric

__all__ = ["MeanIOUMetric"]


@final
class MeanIOUMetric(ClassCountsMetric):
    """Mean over classes of tp / (tp + fp + fn), e.g. for semantic segmentation.

    The mean runs over the classes present in the labels or the predictions seen so far (a
    class with an empty union has no IoU), leaving out `ignore_classes`, as cstorch and
    TensorFlow do; NaN when no class qualifies. It equals scikit-learn's
    `jaccard_score(average="macro")` over the present classes.

    Args:
        num_classes: Number of classes (>= 2).
        ignore_classes: Classes left out of the mean (e.g. the background or a void class).
        name: Metric name; defaults to "mean_iou".
        threshold: Decision threshold for binary scores shaped like the labels.
        check_values: Count labels/predictions outside `[0, num_classes)`, non-finite scores
            and negative weights and raise them at compute.

    Example:
        >>> miou = MeanIOUMetric(2)
        >>> miou(torch.tensor([[0, 1], [1, 1]]), torch.tensor([[0, 1], [0, 1]]))
        tensor(0.5833, dtype=torch.float64)
    """

    def __init__(
        self,
        num_classes: int,
        ignore_classes: Iterable[int] | None = None,
        name: str | None = None,
        *,
        threshold: float = 0.5,
        check_values: bool = True,
    ) -> None:
        check_int("num_classes", num_classes, 2)  # multiclass only: no binary default
        super().__init__(num_classes, threshold=threshold, name=name, check_values=check_values)
        self.ignore_classes = self._ignored("ignore_classes", ignore_classes)

    def update(self, labels: Tensor, predictions: Tensor, weights: Tensor | None = None) -> None:
        """Count one batch.

        Args:
            labels: Integer class indices of any shape, e.g. `(N, H, W)`.
            predictions: Indices shaped like `labels`, or scores with a trailing class
                dimension (move a channel-first class dimension last: `movedim(1, -1)`).
            weights: Optional weights shaped like `labels` (0 masks an element out).
        """
        self._accumulate(labels, predictions, weights)

    def compute(self) -> Tensor:
        return mean_iou_compute(self.class_counts, self.ignore_classes)
