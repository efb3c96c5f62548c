"""`AccuracyMetric`: cstorch's accuracy, accumulated over batches."""

from __future__ import annotations

import math
import warnings
from collections.abc import Hashable
from typing import final

import torch
from torch import Tensor

from torchtally._errors import ErrorKinds, check_choice, check_int, user_stacklevel
from torchtally.functional._checks import check_tensor, count_negative
from torchtally.functional.classification._accuracy import (
    accuracy_update,
    accuracy_update_checked,
    class_score_accuracy_update,
)
from torchtally.functional.classification._fused import (
    accuracy_codes,
    class_score_rows,
    device_constant,
    fuses,
    unit_constant,
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
from torchtally.metrics.classification._held_errors import HeldErrors

__all__ = ["AccuracyMetric"]


#: The flat state: one slot per error kind, then the counts of the ordinary paths, then the
#: codes of the fused path (`accuracy_codes`: seven label codes, seven row-maximum codes).
_KINDS = 5
_CORRECT, _TOTAL = _KINDS, _KINDS + 1
_LABEL_CODES = _KINDS + 2
_SCORE_CODES = _LABEL_CODES + 7
_SIZE = _SCORE_CODES + 7
#: Label codes: below 0, a class before the argmax, the argmax (correct), after it, >= C.
_BELOW, _HIT, _ABOVE = 1, 3, 5
#: Row-maximum codes of a non-finite maximum: -inf, +inf or NaN.
_NEG_INF, _POS_INF_OR_NAN = 0, 6


def _ratio_rows(device: torch.device) -> Tensor:
    """`(2, _SIZE)` rows whose products with the state are the correct count and the total."""
    rows = torch.zeros(2, _SIZE, dtype=torch.float64, device=device)
    rows[0, _CORRECT] = rows[0, _LABEL_CODES + _HIT] = 1.0
    rows[1, _TOTAL] = 1.0
    rows[1, _LABEL_CODES : _LABEL_CODES + 7] = 1.0
    return rows


def _divide(numerator: float, denominator: float) -> float:
    """`numerator / denominator` as a tensor division gives it (IEEE: 0/0 is NaN, x/0 an
    infinity), where Python's raises."""
    if denominator:
        return numerator / denominator
    if numerator == 0 or math.isnan(numerator):
        return math.nan
    return math.copysign(math.inf, numerator) * math.copysign(1.0, denominator)


def _ratio_rows_of(state: Tensor) -> Tensor:
    return device_constant(("accuracy ratio rows",), state, _ratio_rows)


@final
class AccuracyMetric(HeldErrors):
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
        # One state: the error counts (see HeldErrors), the ordinary paths' correct count and
        # total, and the fused path's codes, so that `compute` reads them with one product.
        self.register_state("counts", torch.zeros(_SIZE, dtype=torch.float64))

    @property
    def correct(self) -> Tensor:
        """The (weighted) count of correct predictions so far (0-d float64)."""
        counts: Tensor = self.counts
        return counts[_CORRECT] + counts[_LABEL_CODES + _HIT]

    @property
    def total(self) -> Tensor:
        """The count of predictions so far (positive weights, with weights; 0-d float64)."""
        counts: Tensor = self.counts
        return counts[_TOTAL] + counts[_LABEL_CODES : _LABEL_CODES + 7].sum()

    def _held_state(self) -> Tensor | None:
        return self._buffers["counts"]

    def _held_totals(self, values: list[float]) -> list[float]:
        totals = list(values[:_KINDS])
        labels, scores = values[_LABEL_CODES:_SCORE_CODES], values[_SCORE_CODES:_SIZE]
        totals[0] += labels[_BELOW] + labels[_ABOVE]
        totals[2] += scores[_NEG_INF] + scores[_POS_INF_OR_NAN]
        return totals

    def _held_device_totals(self, state: Tensor) -> Tensor:
        labels, scores = state[_LABEL_CODES:_SCORE_CODES], state[_SCORE_CODES:_SIZE]
        bins = torch.stack(
            [labels[_BELOW] + labels[_ABOVE], scores[_NEG_INF] + scores[_POS_INF_OR_NAN]]
        )
        return state[:_KINDS].index_add(0, torch.tensor([0, 2], device=state.device), bins)

    def _add_counts(self, state: Tensor, correct: Tensor | int, total: Tensor | int) -> None:
        self._state_view(state, "counts[correct]", lambda s: s[_CORRECT]).add_(correct)
        self._state_view(state, "counts[total]", lambda s: s[_TOTAL]).add_(total)

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
        # The buffer itself: a state read as `self.counts` costs a failed attribute lookup and
        # __getattr__ per call.
        state: Tensor = self._buffers["counts"]  # type: ignore[assignment]
        # Made here, with the state's device known, so that `compute` only reads it.
        _ratio_rows_of(state)
        if weights is None and self.ignore_index is None:
            if self._fused_update(state, labels, predictions):
                return
            fast = class_score_accuracy_update(
                labels, predictions, self.num_classes, self.check_values
            )
            if fast is not None:
                fast_correct, fast_total, errors = fast
                if errors is not None:
                    self.record_errors(**errors)
                self._add_counts(state, fast_correct, fast_total)
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
        self._add_counts(state, correct, total)

    def _fused_update(self, state: Tensor, labels: object, predictions: object) -> bool:
        """The commonest batch, int64 labels and class scores (`class_score_rows`), off the
        CPU: its codes scattered into the state, value checks included (`accuracy_codes`:
        five ops; three without checks). False for anything else."""
        rows_of = class_score_rows(labels, predictions)
        if (
            rows_of is None
            or not fuses(rows_of[1])
            or rows_of[1].shape[1] < 2
            or self.num_classes not in (None, rows_of[1].shape[1])
        ):
            return False
        labels, predictions = rows_of
        one = unit_constant(state)
        rows = labels.shape[0]
        if not self.check_values:
            # wrong -> label code 2, correct -> label code 3 (every row is in the total)
            correct = torch.eq(
                predictions.argmax(-1), labels, out=labels.new_empty(rows, dtype=torch.int64)
            )
            bins = state[_LABEL_CODES + _HIT - 1 : _LABEL_CODES + _HIT + 1]
            bins.index_add_(0, correct, one.expand(rows))
            return True
        codes = accuracy_codes(labels, predictions)
        table = state.as_strided((7, 2), (1, 7), _LABEL_CODES)  # code by column
        table.scatter_add_(0, codes, one.expand(rows, 2))
        return True

    def _coalescible(self, args: tuple[Tensor, ...]) -> bool:
        return len(args) in (2, 3) and rows_read_alone(args[0], args[1], self.score_kind)

    def compute(self) -> Tensor:
        counts: Tensor = self.counts
        host = self._checked_copy(counts)
        if host is not None:
            # The counts were just read to the host for the value checks: the quotient of
            # those numbers (the same float64 division) is one fill, where reducing the state
            # again takes an op more.
            correct = host[_CORRECT] + host[_LABEL_CODES + _HIT]
            total = host[_TOTAL] + sum(host[_LABEL_CODES:_SCORE_CODES])
            return torch.full(
                (), _divide(correct, total), dtype=torch.float64, device=counts.device
            )
        ratio = torch.mv(_ratio_rows_of(counts), counts)
        return ratio[0] / ratio[1]

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
        counts = source.class_counts if hasattr(source, "class_counts") else None
        if counts is not None:
            correct, total = counts[0].sum(), counts[2].sum()
        else:
            matrix = source.confusion_matrix
            correct, total = matrix.diagonal().sum(), matrix.sum()
        state: Tensor = self._buffers["counts"]  # type: ignore[assignment]
        state.zero_()
        state[_CORRECT] = correct
        state[_TOTAL] = total
        if isinstance(source, HeldErrors):
            # the source's counts by kind: the same kinds, counted by the same rules
            state[:_KINDS] = source.held_error_counts().to(state.dtype)
