"""`DiceCoefficientMetric`: cstorch's mean Dice coefficient, accumulated over batches."""

from __future__ import annotations

from typing import final

import torch
from torch import Tensor

from torchtally.functional.classification._dice import dice_coefficient_compute
from torchtally.metrics.classification._class_counts import PerClassOverlapMetric

__all__ = ["DiceCoefficientMetric"]


@final
class DiceCoefficientMetric(PerClassOverlapMetric):
    """Mean over classes of 2 tp / (2 tp + fp + fn), the per-class F1 (e.g. segmentation).

    The mean runs over the classes present in the labels or the predictions seen so far (a
    class with neither has no Dice), leaving out `ignore_classes`, as cstorch does; 0 when
    no class qualifies. It equals scikit-learn's `f1_score(average="macro")` over the present
    classes.

    Args:
        num_classes: Number of classes (>= 2).
        ignore_classes: Classes left out of the mean (e.g. the background or a void class).
        name: Metric name; defaults to "dice_coefficient".
        threshold: Decision threshold for binary scores shaped like the labels.
        check_values: Count labels/predictions outside `[0, num_classes)`, non-finite scores
            and negative weights and raise them at compute.
        score_kind: What floating scores shaped like the labels are: "auto" (logits when a
            batch has a score outside [0, 1], else probabilities), "probabilities" or "logits".

    Example:
        >>> dice = DiceCoefficientMetric(2)
        >>> dice(torch.tensor([[0, 1], [1, 1]]), torch.tensor([[0, 1], [0, 1]]))
        tensor(0.7333)
    """

    input_kind = "classification"
    #: Display unit of its values (fractions shown ×100 for "%").
    unit = "%"
    #: Whether a larger value is better (early stopping, best checkpoints).
    higher_is_better = True
    result_dtype = torch.float32  # as cstorch

    def compute(self) -> Tensor:
        return dice_coefficient_compute(self.class_rows(), self.ignore_classes)
