"""`AccuracyMetric`: cstorch's accuracy, accumulated over batches."""

from __future__ import annotations

import warnings
from collections.abc import Hashable
from typing import final

import torch
from torch import Tensor

from torchtally._errors import ErrorKinds, check_choice, check_int, user_stacklevel
from torchtally.functional._checks import check_tensor, count_negative
from torchtally.functional.classification._accuracy import (
    accuracy_compute,
    accuracy_update,
    accuracy_update_checked,
    class_score_accuracy_update,
)
from torchtally.functional.classification._inputs import (
    SCORE_KINDS,
    check_index_labels,
    rows_read_alone,
)
from torchtally.functional.classification._valid_inputs import (
    count_nonfinite_weights,
    refuse_binary_scores,
)
from torchtally.metrics._base import Metric
from torchtally.metrics.classification._class_counts import ClassStatistic

__all__ = ["AccuracyMetric"]


@final
class AccuracyMetric(Metric):
    """Fraction of predictions equal to their labels (cstorch `AccuracyMetric`).

    Args:
        name: Metric name; defaults to "accuracy".
        threshold: Decision threshold when predictions are binary scores (on probabilities).
        num_classes: Optional number of classes (>= 2): labels and index predictions outside
            `[0, num_classes)` are then counted as errors, and class scores must have that many
            columns. Without it, labels must be >= 0 and below the number of class scores, and
            index predictions >= 0.
        ignore_index: A label value (e.g. -100 padding) whose elements count in neither the
            numerator nor the denominator, and are never errors.
        score_kind: What floating predictions shaped like the labels (or `(..., 1)`) are:
            "auto" (default: a batch with any score outside [0, 1] is read as logits and passed
            through a sigmoid, else as probabilities, as TorchMetrics decides; tensor ops, no
            host sync), "probabilities" or "logits".
        check_values: Count invalid labels (see `num_classes`; with binary scores, labels other
            than 0 and 1), invalid index predictions, untrustworthy predictions (rows of class
            scores whose maximum is NaN or infinite, non-finite binary scores), negative weights
            and NaN or infinite weights, and raise them at compute.

    Labels must have an integer or bool dtype: floating labels raise a TypeError at the call,
    because they are almost always predictions passed in TorchMetrics' `(preds, target)` order
    (ours is `(labels, predictions)`).

    Example:
        >>> acc = AccuracyMetric("accuracy")
        >>> acc(labels=torch.tensor([0, 1, 1]), predictions=torch.tensor([0, 1, 0]))
        tensor(0.6667)
    """

    input_kind = "classification"
    #: Display unit of its values (fractions shown ×100 for "%").
    unit = "%"
    #: Whether a larger value is better (early stopping, best checkpoints).
    higher_is_better = True
    result_dtype = torch.float32  # as cstorch

    error_kinds = ErrorKinds(
        invalid_labels="labels outside the classes (negative, >= the number of class "
        "scores, or not 0/1 for binary scores)",
        invalid_predictions="negative predictions",
        nonfinite_predictions="non-finite predictions",
        negative_weights="negative weights",
        nonfinite_weights="NaN or infinite weights",
    )

    def __init__(
        self,
        name: str | None = None,
        *,
        threshold: float = 0.5,
        num_classes: int | None = None,
        ignore_index: int | None = None,
        score_kind: str = "auto",
        check_values: bool = True,
    ) -> None:
        check_int("num_classes", num_classes, 2, allow_none=True)
        if ignore_index is not None and (
            isinstance(ignore_index, bool) or not isinstance(ignore_index, int)
        ):
            raise TypeError(
                "Argument `ignore_index` must be an integer or None. "
                f"Received: ignore_index={ignore_index!r}"
            )
        check_choice("score_kind", score_kind, SCORE_KINDS)
        if num_classes is not None:
            # Per instance, so that the message names the range that was broken.
            self.error_kinds = ErrorKinds(
                invalid_labels="labels outside [0, num_classes) (or other than 0 and 1 "
                "for binary scores)",
                invalid_predictions="predictions outside [0, num_classes)",
                nonfinite_predictions="non-finite predictions",
                negative_weights="negative weights",
                nonfinite_weights="NaN or infinite weights",
            )
        super().__init__(name, check_values=check_values)
        self.threshold = float(threshold)
        self.num_classes = num_classes
        self.ignore_index = ignore_index
        self.score_kind = score_kind
        self.register_state("correct", torch.zeros((), dtype=torch.float64))
        self.register_state("total", torch.zeros((), dtype=torch.float64))

    def update(self, labels: Tensor, predictions: Tensor, weights: Tensor | None = None) -> None:
        """Count one batch.

        Args:
            labels: Integer (or bool) class indices; floating labels raise.
            predictions: Class indices, binary scores (probabilities or logits, shaped like
                `labels` or `(..., 1)`), or class scores with a trailing class dim.
            weights: Optional weights shaped like `labels`; the denominator counts weights > 0.
                Integer predictions of another shape but as many elements as `labels` (e.g.
                `(B, 1)` for `(B,)`) are reshaped to it with a warning, as cstorch does.
        """
        # The (1,) buffers themselves: a 0-d state read as `self.correct` costs a failed attribute
        # lookup, __getattr__ and a view check per call.
        buffers = self._buffers
        fast = (
            class_score_accuracy_update(labels, predictions, self.num_classes, self.check_values)
            if weights is None and self.ignore_index is None
            else None
        )
        if fast is not None:
            fast_correct, fast_total, errors = fast
            if errors is not None:
                self.record_errors(**errors)
            buffers["correct"].add_(fast_correct)  # type: ignore[union-attr]
            buffers["total"].add_(fast_total)  # type: ignore[union-attr]
            return
        check_index_labels(labels)
        check_tensor("predictions", predictions)
        if self.num_classes is not None and self.num_classes > 2:
            # Thresholding would read one-hot labels and their scores as binary cells (a
            # different number with no error): refused, as every class-count metric does.
            refuse_binary_scores(labels, predictions, self.num_classes)
        if (
            not predictions.is_floating_point()
            and predictions.shape != labels.shape
            and predictions.numel() == labels.numel()
        ):
            warnings.warn(
                "AccuracyMetric: `predictions` of shape "
                f"{tuple(predictions.shape)} reshaped to the shape of `labels`, "
                f"{tuple(labels.shape)}, as cstorch does.",
                stacklevel=user_stacklevel(),
            )
            predictions = predictions.reshape(labels.shape)
        if self.check_values:
            correct, total, errors = accuracy_update_checked(
                labels,
                predictions,
                weights,
                self.threshold,
                num_classes=self.num_classes,
                ignore_index=self.ignore_index,
                score_kind=self.score_kind,
            )
            self.record_errors(
                **errors,
                negative_weights=count_negative(weights),
                nonfinite_weights=count_nonfinite_weights(weights),
            )
        else:
            correct, total = accuracy_update(
                labels,
                predictions,
                weights,
                self.threshold,
                ignore_index=self.ignore_index,
                score_kind=self.score_kind,
            )
        buffers["correct"].add_(correct)  # type: ignore[union-attr]
        buffers["total"].add_(total)  # type: ignore[union-attr]

    def _coalescible(self, args: tuple[Tensor, ...]) -> bool:
        return len(args) in (2, 3) and rows_read_alone(args[0], args[1], self.score_kind)

    def compute(self) -> Tensor:
        return accuracy_compute(self.correct, self.total)

    # In a collection, accuracy is read off a multiclass confusion statistic instead of being
    # updated on its own. cstorch's weighting (denominator = count of positive weights) cannot
    # be read off weighted counts, so such a collection refuses `weights`.
    derived_supports_weights = False

    def derives_from(self, statistic: Hashable) -> bool:
        # The source leaves out invalid labels and raises them; ignored labels it would count
        # as errors, so an `ignore_index` keeps accuracy on its own update.
        # Exact only where the source counts the same data errors by the same rules and any
        # of them raises: the same classes, and value checks on for both. Unchecked, a label
        # outside the classes is dropped from the source's counts but is a wrong prediction
        # here (0.5 here, 1.0 read off the counts): a different number.
        return (
            self.ignore_index is None
            and self.check_values
            and isinstance(statistic, ClassStatistic)
            and statistic.kind in ("class_counts", "confusion_matrix")
            and statistic.task == "multiclass"
            and statistic.num_classes == self.num_classes
            and statistic.threshold == self.threshold
            and statistic.check_values
            and statistic.score_kind == self.score_kind
        )

    def load_derived(self, source: Metric) -> None:
        if "class_counts" in source.state_names():
            counts = source.class_counts
            correct, total = counts[0].sum(), counts[2].sum()
        else:
            matrix = source.confusion_matrix
            correct, total = matrix.diagonal().sum(), matrix.sum()
        self.correct.copy_(correct)
        self.total.copy_(total)
