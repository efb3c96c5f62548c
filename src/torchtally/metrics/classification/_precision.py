"""`PrecisionMetric`: precision accumulated exactly over batches (Burn's `Precision`)."""

from __future__ import annotations

from typing import final

from torch import Tensor

from torchtally.functional.classification._precision_recall import precision_compute
from torchtally.metrics.classification._class_counts import AveragedClassCountsMetric

__all__ = ["PrecisionMetric"]


@final
class PrecisionMetric(AveragedClassCountsMetric):
    """Precision, tp / (tp + fp), over every sample seen, as scikit-learn's `precision_score`.

    Three tasks, fixed by the constructor:

    - binary (`num_classes=None`): 0/1 labels; predictions 0/1 or scores (positive where
      `> threshold`). The score of the positive class 1 (scikit-learn's `average="binary"`);
      every `average_type` gives it ("none": shape `(1,)`).
    - multiclass (`num_classes=C`, C >= 2, including C = 2): integer labels of any shape;
      predictions indices, or scores with a trailing class dimension (argmax).
    - multilabel (`multilabel=True`): `(..., C)` 0/1 indicators; predictions 0/1 or scores.

    A class with no predicted sample has precision 0 (scikit-learn's default zero division).
    "macro" averages over every class (cstorch's rule: a class absent from both labels and
    predictions counts as 0); `macro_classes="seen"` averages over the classes that occur in
    the labels or the predictions (scikit-learn's default and TorchMetrics'); see
    `torchtally.functional.classification._averaging`.

    Args:
        num_classes: None for binary, else the number of classes (or labels).
        average_type: "micro", "macro", "weighted" or "none".
        ignore_labels: Classes left out of the average (cstorch's; not for binary).
        name: Metric name; defaults to "precision".
        threshold: Decision threshold for scores shaped like the labels.
        multilabel: Whether the inputs are multilabel indicators.
        check_values: Count invalid labels/predictions, non-finite scores and negative weights
            and raise them at compute.
        score_kind: What floating scores shaped like the labels are: "auto" (logits when a
            batch has a score outside [0, 1], else probabilities), "probabilities" or "logits".
        macro_classes: Which classes "macro" averages over: "all" (default, cstorch's rule:
            a class absent from labels and predictions counts as 0) or "seen" (scikit-learn's
            and TorchMetrics' rule: only the classes in the labels or the predictions).
        ignore_index: A label value (e.g. -100 padding) whose elements count nowhere and are
            never errors (binary and multiclass inputs).

    Example:
        >>> metric = PrecisionMetric(3, average_type="macro")
        >>> metric.update(torch.tensor([0, 1, 2, 2]), torch.tensor([0, 2, 2, 2]))
        >>> metric.compute()
        tensor(0.5556, dtype=torch.float64)
    """

    input_kind = "classification"
    #: Display unit of its values (fractions shown ×100 for "%").
    unit = "%"
    #: Whether a larger value is better (early stopping, best checkpoints).
    higher_is_better = True

    def compute(self) -> Tensor:
        return precision_compute(
            self.class_rows(),
            self.average_type,
            self.task,
            self.ignore_labels,
            self.macro_classes,
        )
