"""`HammingScoreMetric`: the fraction of multilabel decisions that are right."""

from __future__ import annotations

from typing import final

import torch
from torch import Tensor

from torchtally._errors import ErrorKinds
from torchtally.functional._checks import count_negative, count_nonfinite
from torchtally.functional.multilabel._hamming import hamming_update
from torchtally.metrics._base import Metric

__all__ = ["HammingScoreMetric"]


@final
class HammingScoreMetric(Metric):
    """Hamming score: the weighted fraction of (sample, label) pairs predicted right, i.e.
    `1 - MultilabelHammingDistance(average="micro")` (Burn's `HammingScore`). NaN before any
    sample.

    Args:
        threshold: A label is predicted when its score is > threshold.
        name: Metric name; defaults to "hamming_score_metric".
        check_values: Count non-finite scores, labels other than 0/1 and negative weights.

    Example:
        >>> metric = HammingScoreMetric()
        >>> metric(torch.tensor([[0.9, 0.2], [0.1, 0.7]]), torch.tensor([[1, 1], [0, 1]]))
        tensor(0.7500, dtype=torch.float64)
    """

    unit = ""
    higher_is_better = True
    input_kind = "multilabel"
    correct: Tensor
    total: Tensor
    error_kinds = ErrorKinds(
        nonfinite_predictions="non-finite predictions",
        invalid_labels="labels not 0 or 1",
        negative_weights="negative weights",
    )

    def __init__(
        self, threshold: float = 0.5, name: str | None = None, *, check_values: bool = True
    ) -> None:
        super().__init__(name, check_values=check_values)
        self.threshold = float(threshold)
        self.register_state("correct", torch.zeros((), dtype=torch.float64))
        self.register_state("total", torch.zeros((), dtype=torch.float64))

    def update(self, preds: Tensor, target: Tensor, weights: Tensor | None = None) -> None:
        """Add `(N, L)` scores and 0/1 labels, with optional `(N,)` sample weights."""
        correct, total = hamming_update(preds, target, self.threshold, weights)
        self.correct.add_(correct)
        self.total.add_(total)
        if self.check_values:
            invalid = torch.count_nonzero(torch.logical_and(target != 0, target != 1))
            self.record_errors(
                nonfinite_predictions=count_nonfinite(preds),
                invalid_labels=invalid,
                negative_weights=count_negative(weights),
            )

    def compute(self) -> Tensor:
        return self.correct / self.total
