"""`MeanPerClassAccuracyMetric`: cstorch's mean per-class accuracy (balanced accuracy)."""

from __future__ import annotations

from typing import final

import torch
from torch import Tensor

from torchtally._errors import check_int
from torchtally.functional.classification._mean_per_class_accuracy import (
    mean_per_class_accuracy_compute,
)
from torchtally.metrics.classification._class_counts import ClassCountsMetric

__all__ = ["MeanPerClassAccuracyMetric"]


@final
class MeanPerClassAccuracyMetric(ClassCountsMetric):
    """Mean over classes of the fraction of each class's samples predicted correctly (the
    mean per-class recall).

    The mean runs over all `num_classes` classes, a class with no label counting as 0, as
    cstorch and TensorFlow's `mean_per_class_accuracy` do (scikit-learn's
    `balanced_accuracy_score` averages the classes present instead). 0 before any label.
    `compute` returns float32, as cstorch (the state is float64).

    Args:
        num_classes: Number of classes (>= 2).
        name: Metric name; defaults to "mean_per_class_accuracy".
        threshold: Decision threshold for binary scores shaped like the labels.
        check_values: Count labels/predictions outside `[0, num_classes)`, non-finite scores
            and negative weights and raise them at compute.
        score_kind: What floating scores shaped like the labels are: "auto" (logits when a
            batch has a score outside [0, 1], else probabilities), "probabilities" or "logits".

    Example:
        >>> metric = MeanPerClassAccuracyMetric(3)
        >>> metric(torch.tensor([0, 1, 1, 1]), torch.tensor([0, 1, 0, 0]))
        tensor(0.4444)
    """

    input_kind = "classification"
    #: Display unit of its values (fractions shown ×100 for "%").
    unit = "%"
    #: Whether a larger value is better (early stopping, best checkpoints).
    higher_is_better = True
    result_dtype = torch.float32  # as cstorch

    def __init__(
        self,
        num_classes: int,
        name: str | None = None,
        *,
        threshold: float = 0.5,
        check_values: bool = True,
        score_kind: str = "auto",
    ) -> None:
        check_int("num_classes", num_classes, 2)  # multiclass only: no binary default
        super().__init__(
            num_classes,
            threshold=threshold,
            name=name,
            check_values=check_values,
            score_kind=score_kind,
        )

    def compute(self) -> Tensor:
        return mean_per_class_accuracy_compute(self.class_rows())
