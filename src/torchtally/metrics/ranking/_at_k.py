"""`PrecisionAtKMetric` and `RecallAtKMetric`: cstorch's @k metrics (TensorFlow's
`precision_at_k` / `recall_at_k` with sparse labels). Both keep the same three sums, so in a
`MetricCollection` they share one update."""

from __future__ import annotations

from collections.abc import Hashable
from typing import final

import torch
from torch import Tensor

from torchtally._errors import ErrorKinds, check_int
from torchtally.functional._checks import count_negative, count_nonfinite
from torchtally.functional.ranking._top_k import (
    at_k_update,
    check_top_k_inputs,
    precision_at_k_compute,
    recall_at_k_compute,
)
from torchtally.metrics._base import Metric

__all__ = ["PrecisionAtKMetric", "RecallAtKMetric"]


_NARROW_INTS = (torch.uint8, torch.int8, torch.int16)


class _AtKMetric(Metric):
    """Shared state and update: weighted hits in the top k, weight, weighted label count."""

    array_inputs = ("labels", "predictions", "weights")
    error_kinds = ErrorKinds(
        invalid_labels="labels outside [0, num_classes)",
        nonfinite_predictions="non-finite predictions",
        negative_weights="negative weights",
    )

    def __init__(self, k: int, name: str | None = None, *, check_values: bool = True) -> None:
        check_int("k", k, 1)
        super().__init__(name, check_values=check_values)
        self.k = k
        for state in ("hits", "weight", "label_hits", "relevant"):
            self.register_state(state, torch.zeros((), dtype=torch.float64))

    def shared_statistic(self) -> Hashable:
        """`("at_k", k, check_values)`: precision@k and recall@k share one update."""
        return ("at_k", self.k, self.check_values)

    def update(self, labels: Tensor, predictions: Tensor, weights: Tensor | None = None) -> None:
        """Count one batch.

        Args:
            labels: `(N,)` or `(N, num_labels)` integer ids of the relevant classes (a
                repeat counts once for precision, at each occurrence for recall, as cstorch).
            predictions: `(N, num_classes)` scores or logits; the top k are the k highest,
                ties going to the lower class id.
            weights: Optional scalar or `(N,)` per-sample weights; 0 masks a sample.
        """
        if isinstance(weights, Tensor) and weights.dim() > 1:
            # (N, 1) holds one weight per sample too, but is not what `at_k_update` reads
            raise ValueError(
                "Argument `weights` must be a scalar or hold one weight per sample, shape "
                f"(N,). Received: weights.shape={tuple(weights.shape)}"
            )
        if isinstance(labels, Tensor) and labels.dtype in _NARROW_INTS:
            labels = labels.long()  # class ids index with gather, which takes int64 (or int32)
        hits, weight, label_hits, relevant = at_k_update(labels, predictions, self.k, weights)
        if self.check_values:
            ids = check_top_k_inputs(labels, predictions, self.k)
            outside = torch.logical_or(ids < 0, ids >= predictions.shape[1])
            self.record_errors(
                invalid_labels=torch.count_nonzero(outside),
                nonfinite_predictions=count_nonfinite(predictions),
                negative_weights=count_negative(weights),
            )
        self.hits.add_(hits)
        self.weight.add_(weight)
        self.label_hits.add_(label_hits)
        self.relevant.add_(relevant)

    def extra_repr(self) -> str:
        return f"name={self.name!r}, k={self.k}"


@final
class PrecisionAtKMetric(_AtKMetric):
    """Precision@k: the weighted fraction of each sample's top-k classes that are relevant,
    `sum_i w_i * hits_i / (k * sum_i w_i)` (cstorch `PrecisionAtKMetric`, TF's
    `precision_at_k` with sparse labels). NaN before any sample.

    Args:
        k: The number of top predictions (1 <= k <= num_classes).
        name: Metric name; defaults to "precision_at_k".
        check_values: Count labels outside `[0, num_classes)` (never hits), non-finite scores
            and negative weights, and raise them at compute.

    Example:
        >>> p = PrecisionAtKMetric(2)
        >>> p(torch.tensor([[1, 3]]), torch.tensor([[0.1, 0.5, 0.3, 0.2]]))
        0.5
    """

    input_kind = "ranking"
    #: Display unit of its values (fractions shown ×100 for "%").
    unit = "%"
    #: Whether a larger value is better (early stopping, best checkpoints).
    higher_is_better = True
    result_dtype = float  # as cstorch

    def compute(self) -> Tensor:
        return precision_at_k_compute(self.hits, self.weight, self.k)


@final
class RecallAtKMetric(_AtKMetric):
    """Recall@k: the weighted fraction of each sample's relevant classes found in its top k,
    `sum_i w_i * hits_i / sum_i w_i * |labels_i|` (cstorch `RecallAtKMetric`, TF's
    `recall_at_k` with sparse labels). NaN before any sample.

    Args:
        k: The number of top predictions (1 <= k <= num_classes).
        name: Metric name; defaults to "recall_at_k".
        check_values: Count labels outside `[0, num_classes)` (never hits, but counted as
            relevant, as in TF), non-finite scores and negative weights, and raise them at
            compute.

    Example:
        >>> r = RecallAtKMetric(1)
        >>> r(torch.tensor([[1, 3]]), torch.tensor([[0.1, 0.5, 0.3, 0.2]]))
        0.5
    """

    input_kind = "ranking"
    #: Display unit of its values (fractions shown ×100 for "%").
    unit = "%"
    #: Whether a larger value is better (early stopping, best checkpoints).
    higher_is_better = True
    result_dtype = float  # as cstorch

    def compute(self) -> Tensor:
        return recall_at_k_compute(self.label_hits, self.relevant)
