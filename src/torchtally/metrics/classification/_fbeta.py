"""`FBetaScoreMetric` (cstorch's) and `F1ScoreMetric`, accumulated exactly over batches."""

from __future__ import annotations

from collections.abc import Iterable
from typing import final

import torch
from torch import Tensor

from torchtally.functional.classification._precision_recall import check_beta, fbeta_compute
from torchtally.metrics.classification._class_counts import AveragedClassCountsMetric

__all__ = ["F1ScoreMetric", "FBetaScoreMetric"]


class _FBeta(AveragedClassCountsMetric):
    """F-beta over class counts (abstract: `FBetaScoreMetric` and `F1ScoreMetric`)."""

    def __init__(
        self,
        num_classes: int | None,
        beta: float,
        average_type: str,
        ignore_labels: Iterable[int] | None,
        name: str | None,
        threshold: float,
        multilabel: bool,
        check_values: bool,
        score_kind: str,
        macro_classes: str,
        ignore_index: int | None,
    ) -> None:
        self.beta = check_beta(beta)
        super().__init__(
            num_classes,
            average_type,
            ignore_labels,
            name,
            threshold=threshold,
            multilabel=multilabel,
            check_values=check_values,
            score_kind=score_kind,
            macro_classes=macro_classes,
            ignore_index=ignore_index,
        )

    def _fbeta(self) -> Tensor:
        return fbeta_compute(
            self.class_rows(),
            self.beta,
            self.average_type,
            self.task,
            self.ignore_labels,
            self.macro_classes,
        )


@final
class FBetaScoreMetric(_FBeta):
    """F-beta, (1 + beta²) P R / (beta² P + R), over every sample seen (cstorch's signature).

    Tasks, inputs, averages and zero-division conventions are `PrecisionMetric`'s; the score is
    scikit-learn's `fbeta_score`: 0 for a class with neither labels nor predictions.

    Args:
        num_classes: None for binary (the positive class 1 only), else the number of classes
            (or of labels when `multilabel`).
        beta: Weight of recall relative to precision (finite, >= 0; 0 gives precision).
        average_type: "micro", "macro", "weighted" or "none".
        ignore_labels: Classes left out of the average (not for binary).
        name: Metric name; defaults to "f_beta_score".
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
        >>> metric = FBetaScoreMetric(3, beta=2.0, average_type="macro", ignore_labels=[0])
        >>> metric(torch.tensor([0, 1, 2, 2]), torch.tensor([0, 2, 2, 2]))
        tensor(0.4545)
    """

    input_kind = "classification"
    #: Display unit of its values (fractions shown ×100 for "%").
    unit = "%"
    #: Whether a larger value is better (early stopping, best checkpoints).
    higher_is_better = True
    result_dtype = torch.float32  # as cstorch

    def __init__(
        self,
        num_classes: int | None = None,
        beta: float = 1.0,
        average_type: str = "micro",
        ignore_labels: Iterable[int] | None = None,
        name: str | None = None,
        *,
        threshold: float = 0.5,
        multilabel: bool = False,
        check_values: bool = True,
        score_kind: str = "auto",
        macro_classes: str = "all",
        ignore_index: int | None = None,
    ) -> None:
        super().__init__(
            num_classes,
            beta,
            average_type,
            ignore_labels,
            name,
            threshold,
            multilabel,
            check_values,
            score_kind,
            macro_classes,
            ignore_index,
        )

    def compute(self) -> Tensor:
        return self._fbeta()


@final
class F1ScoreMetric(_FBeta):
    """F1, the harmonic mean of precision and recall: `FBetaScoreMetric` with beta = 1.

    Args:
        num_classes: None for binary, else the number of classes (or labels).
        average_type: "micro", "macro", "weighted" or "none".
        ignore_labels: Classes left out of the average (not for binary).
        name: Metric name; defaults to "f1_score".
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
        >>> metric = F1ScoreMetric()
        >>> metric(torch.tensor([1, 0, 1, 1]), torch.tensor([0.9, 0.8, 0.3, 0.7]))
        tensor(0.6667, dtype=torch.float64)
    """

    input_kind = "classification"
    #: Display unit of its values (fractions shown ×100 for "%").
    unit = "%"
    #: Whether a larger value is better (early stopping, best checkpoints).
    higher_is_better = True

    def __init__(
        self,
        num_classes: int | None = None,
        average_type: str = "micro",
        ignore_labels: Iterable[int] | None = None,
        name: str | None = None,
        *,
        threshold: float = 0.5,
        multilabel: bool = False,
        check_values: bool = True,
        score_kind: str = "auto",
        macro_classes: str = "all",
        ignore_index: int | None = None,
    ) -> None:
        super().__init__(
            num_classes,
            1.0,
            average_type,
            ignore_labels,
            name,
            threshold,
            multilabel,
            check_values,
            score_kind,
            macro_classes,
            ignore_index,
        )

    def compute(self) -> Tensor:
        return self._fbeta()
