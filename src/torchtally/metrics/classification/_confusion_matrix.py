"""`ConfusionMatrixMetric`: a (C, C) confusion matrix filled by one scatter per update."""

from __future__ import annotations

from collections.abc import Hashable
from typing import final

from torch import Tensor

from torchtally._errors import check_choice, check_int
from torchtally.functional.classification._confusion_matrix import (
    NORMALIZE,
    confusion_matrix_compute,
    confusion_matrix_update,
)
from torchtally.functional.classification._inputs import SCORE_KINDS, rows_read_alone
from torchtally.functional.classification._valid_inputs import (
    error_kinds,
    multiclass_errors,
    multiclass_errors_from_maxima,
    shared_row_maxima,
)
from torchtally.metrics.classification._class_counts import confusion_matrix_key
from torchtally.metrics.classification._held_errors import HeldErrors
from torchtally.metrics.classification._pair_counts import PairLayout

__all__ = ["ConfusionMatrixMetric"]


@final
class ConfusionMatrixMetric(HeldErrors):
    """Counts of (label, prediction) pairs over every sample seen, as scikit-learn's
    `confusion_matrix`: entry [i, j] counts samples with label i predicted as j.

    Args:
        num_classes: Number of classes (>= 2; 2 for a binary confusion matrix).
        normalize: None (counts), "true" (each row sums to 1), "pred" (each column sums to 1)
            or "all"; a row/column/total that is 0 gives 0s, as scikit-learn.
        name: Metric name; defaults to "confusion_matrix".
        threshold: Decision threshold for binary scores shaped like the labels (two classes).
        score_kind: What such binary scores are: "auto" (logits when a batch has a score
            outside [0, 1], else probabilities), "probabilities" or "logits".
        check_values: Count labels/predictions outside `[0, num_classes)`, non-finite scores
            and negative weights and raise them at compute.

    Example:
        >>> cm = ConfusionMatrixMetric(2)
        >>> cm(torch.tensor([0, 1, 1]), torch.tensor([0, 1, 0]))
        tensor([[1., 0.],
                [1., 1.]], dtype=torch.float64)
    """

    unit = ""
    higher_is_better = None
    input_kind = "classification"
    error_kinds = error_kinds("multiclass")

    def __init__(
        self,
        num_classes: int,
        normalize: str | None = None,
        name: str | None = None,
        *,
        threshold: float = 0.5,
        check_values: bool = True,
        score_kind: str = "auto",
    ) -> None:
        check_int("num_classes", num_classes, 2)
        check_choice("normalize", normalize, NORMALIZE)
        check_choice("score_kind", score_kind, SCORE_KINDS)
        self.score_kind = score_kind
        super().__init__(name, check_values=check_values)
        self.num_classes = num_classes
        self.normalize = normalize
        self.threshold = float(threshold)
        self._layout = PairLayout(num_classes)
        # The matrix is a view of one flat state that also holds the error counts (see
        # PairLayout), so that a class-score batch fills both with one scatter.
        self.register_state("pair_counts", self._layout.zeros())

    @property
    def confusion_matrix(self) -> Tensor:
        """The `(C, C)` counts so far (rows: labels), a view of the state."""
        return self._layout.matrix(self.pair_counts)

    def _held_state(self) -> Tensor | None:
        return self._buffers["pair_counts"]

    def _held_totals(self, values: list[float]) -> list[float]:
        return self._layout.totals(values)

    def _held_views(self, state: Tensor) -> list[Tensor]:
        return self._layout.error_views(state)

    def _held_device_totals(self, state: Tensor) -> Tensor:
        return self._layout.device_totals(state)

    def shared_statistic(self) -> Hashable:
        """The multiclass confusion statistic's key; the multiclass class-count metrics and
        accuracy derive from it.

        Example:
            >>> ConfusionMatrixMetric(3).shared_statistic().kind
            'confusion_matrix'
        """
        return confusion_matrix_key(
            self.num_classes, self.threshold, self.check_values, self.score_kind
        )

    def update(self, labels: Tensor, predictions: Tensor, weights: Tensor | None = None) -> None:
        """Count one batch.

        Args:
            labels: Integer (or bool) class indices of any shape; floating labels raise (the
                order is `(labels, predictions)`, TorchMetrics' is `(preds, target)`).
            predictions: Indices shaped like `labels`, scores with a trailing class dimension,
                or (two classes) binary scores shaped like `labels`.
            weights: Optional sample weights shaped like `labels`.
        """
        state: Tensor = self._buffers["pair_counts"]  # type: ignore[assignment]
        matrix = self._state_view(state, "pair_counts[matrix]", self._layout.matrix)
        if weights is None:
            done, errors = self._layout.add_class_scores(
                state, matrix, labels, predictions, self.check_values
            )
            if done:
                if errors is not None:
                    self.record_errors(**errors)
                return
        # Large class-score batches: one max pass gives the argmax and the rows' maxima the
        # value check reads, instead of a second reduction over every score.
        shared = (
            shared_row_maxima(labels, predictions, self.num_classes) if self.check_values else None
        )
        confusion_matrix_update(
            labels,
            predictions if shared is None else shared[0],
            self.num_classes,
            threshold=self.threshold,
            weights=weights,
            out=matrix,
            score_kind=self.score_kind,
        )
        if self.check_values:
            errors = (
                multiclass_errors(labels, predictions, self.num_classes, weights)
                if shared is None
                else multiclass_errors_from_maxima(labels, shared[1], self.num_classes, weights)
            )
            self.record_errors(**errors)

    def _coalescible(self, args: tuple[Tensor, ...]) -> bool:
        return len(args) in (2, 3) and rows_read_alone(args[0], args[1], self.score_kind)

    def compute(self) -> Tensor:
        return confusion_matrix_compute(self.confusion_matrix, self.normalize)

    def extra_repr(self) -> str:
        return f"name={self.name!r}, num_classes={self.num_classes}, normalize={self.normalize!r}"
