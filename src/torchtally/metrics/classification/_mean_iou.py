"""`MeanIOUMetric`: cstorch's mean intersection over union, accumulated over batches."""

from __future__ import annotations

from typing import final

import torch
from torch import Tensor

from torchtally.functional.classification._mean_iou import mean_iou_compute
from torchtally.metrics.classification._class_counts import PerClassOverlapMetric

__all__ = ["MeanIOUMetric"]


@final
class MeanIOUMetric(PerClassOverlapMetric):
    """Mean over classes of tp / (tp + fp + fn), e.g. for semantic segmentation.

    The mean runs over the classes present in the labels or the predictions seen so far (a
    class with an empty union has no IoU), leaving out `ignore_classes`, as cstorch and
    TensorFlow do; 0 when no class qualifies (as cstorch). It equals scikit-learn's
    `jaccard_score(average="macro")` over the present classes.

    Args:
        num_classes: Number of classes (>= 2).
        ignore_classes: Classes left out of the mean (e.g. the background or a void class).
        name: Metric name; defaults to "mean_iou".
        threshold: Decision threshold for binary scores shaped like the labels.
        check_values: Count labels/predictions outside `[0, num_classes)`, non-finite scores
            and negative weights and raise them at compute.
        score_kind: What floating scores shaped like the labels are: "auto" (logits when a
            batch has a score outside [0, 1], else probabilities), "probabilities" or "logits".

    Example:
        >>> miou = MeanIOUMetric(2)
        >>> miou(torch.tensor([[0, 1], [1, 1]]), torch.tensor([[0, 1], [0, 1]]))
        tensor(0.5833)
    """

    input_kind = "classification"
    #: Display unit of its values (fractions shown ×100 for "%").
    unit = "%"
    #: Whether a larger value is better (early stopping, best checkpoints).
    higher_is_better = True
    result_dtype = torch.float32  # as cstorch

    def compute(self) -> Tensor:
        return mean_iou_compute(self.class_rows(), self.ignore_classes)
