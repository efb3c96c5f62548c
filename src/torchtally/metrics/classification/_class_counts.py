"""`ClassCountsMetric`: the abstract base of every metric computed from per-class counts.

Precision, recall, F-beta, mean per-class accuracy, mean IoU and Dice all hold the same
statistic, `class_counts` (`(3, C)` float64: true positives, predicted and actual count per
class), and differ only in `compute`. Equal `shared_statistic()` keys tell a
`MetricCollection` that two of them can share one state and one update.

Multiclass metrics of up to `PAIR_CLASSES` classes keep the counts as a confusion matrix with
their error counts beside it (`PairLayout`, state `pair_counts`): a class-score batch then
fills it, value checks included, with one scatter. The others keep `class_counts` itself.
"""

from __future__ import annotations

from collections.abc import Hashable, Iterable
from dataclasses import dataclass
from typing import Any

import torch
from torch import Tensor

from torchtally._errors import check_choice, check_int
from torchtally.functional.classification._averaging import (
    AVERAGE_TYPES,
    MACRO_CLASSES,
    check_class_list,
)
from torchtally.functional.classification._class_counts import (
    add_class_counts,
    class_counts_error_counts,
    class_counts_update,
    class_counts_width,
)
from torchtally.functional.classification._confusion_matrix import confusion_matrix_update
from torchtally.functional.classification._inputs import SCORE_KINDS, rows_read_alone
from torchtally.functional.classification._valid_inputs import (
    class_score_batch,
    classification_task,
    error_kinds,
    multiclass_errors,
    multiclass_errors_from_maxima,
    shared_row_maxima,
)
from torchtally.metrics._base import Metric
from torchtally.metrics.classification._held_errors import HeldErrors
from torchtally.metrics.classification._pair_counts import PairLayout

__all__ = [
    "PAIR_CLASSES",
    "AveragedClassCountsMetric",
    "ClassCountsMetric",
    "ClassStatistic",
    "PerClassOverlapMetric",
    "confusion_matrix_key",
]


@dataclass(frozen=True)
class ClassStatistic:
    """The key of a per-class statistic (`shared_statistic()` of the class-count metrics and
    the confusion matrix): equal keys promise identical updates.

    Attributes:
        kind: "class_counts" (tp, predicted, actual per class) or "confusion_matrix".
        task: "binary", "multiclass" or "multilabel".
        num_classes: The number of classes (None for binary).
        threshold: The decision threshold for scores shaped like the labels.
        check_values: Whether the update counts data errors.
        score_kind: How floating scores shaped like the labels are read.
        ignore_index: The label value whose elements are left out (None: none).
    """

    kind: str
    task: str
    num_classes: int | None
    threshold: float
    check_values: bool
    score_kind: str
    ignore_index: int | None = None


#: Multiclass metrics of up to this many classes keep their counts as a confusion matrix
#: (`PairLayout`: about 16 C² bytes; 1 MiB at 256 classes).
PAIR_CLASSES = 256


def confusion_matrix_key(
    num_classes: int, threshold: float, check_values: bool, score_kind: str = "auto"
) -> ClassStatistic:
    """`ConfusionMatrixMetric.shared_statistic()` for these arguments (defined here so that the
    class-count metrics, which derive from it, and the confusion matrix agree)."""
    return ClassStatistic(
        "confusion_matrix",
        "multiclass",
        num_classes,
        float(threshold),
        bool(check_values),
        score_kind,
    )


class ClassCountsMetric(HeldErrors):
    """Base of the metrics computed from `class_counts`: one `update` for the whole family
    (abstract: subclasses add `compute`, which reads only `self.class_counts`).

    Args:
        num_classes: None for binary inputs (the positive class 1 only), else the number of
            classes, or of labels when `multilabel`.
        multilabel: Whether inputs are `(..., num_classes)` 0/1 indicators.
        threshold: Decision threshold for scores shaped like the labels (binary and multilabel,
            or two classes), compared with probabilities.
        name: Metric name; defaults to the class name in snake case.
        check_values: Count invalid labels/predictions, non-finite scores and negative weights
            and raise them at compute.
        score_kind: What floating scores shaped like the labels are: "auto" (default: a batch
            with any score outside [0, 1] is read as logits and passed through a sigmoid, else
            as probabilities, as TorchMetrics decides; done with tensor ops, no host sync),
            "probabilities" or "logits" (always a sigmoid). Class scores with a trailing class
            dimension are argmaxed and need no declaration.

    Labels are class indices of an integer or bool dtype: floating labels raise a TypeError,
    since they are almost always predictions passed in TorchMetrics' `(preds, target)` order
    (ours is `(labels, predictions)`). Floating predictions shaped like the labels are binary
    scores, so a multiclass metric with more than two classes refuses them (float class
    indices or one-hot labels would otherwise be thresholded into 0/1).
    """

    def __init__(
        self,
        num_classes: int | None,
        *,
        multilabel: bool = False,
        threshold: float = 0.5,
        name: str | None = None,
        check_values: bool = True,
        score_kind: str = "auto",
    ) -> None:
        check_choice("score_kind", score_kind, SCORE_KINDS)
        self.task = classification_task(num_classes, multilabel)
        # Per task, so that the kinds name the rule that was broken; set before the base
        # sizes its error counts from them.
        self.error_kinds = error_kinds(self.task)
        super().__init__(name, check_values=check_values)
        self.num_classes = num_classes
        self.multilabel = multilabel
        self.threshold = float(threshold)
        self.score_kind = score_kind
        #: A label value (e.g. -100 padding) whose elements count nowhere (set by the
        #: averaged metrics: precision, recall, F-beta).
        self.ignore_index: int | None = None
        width = class_counts_width(num_classes, multilabel)
        self._layout: PairLayout | None = None
        if self.task == "multiclass" and width <= PAIR_CLASSES:
            self._layout = PairLayout(width)
            self.register_state("pair_counts", self._layout.zeros())
        else:
            self.register_state("class_counts", torch.zeros((3, width), dtype=torch.float64))

    def __getattr__(self, name: str) -> Any:
        if name == "class_counts":
            layout = getattr(self, "_layout", None)
            if layout is not None:
                return torch.stack(layout.class_rows(self.pair_counts))
        return super().__getattr__(name)

    def class_rows(self) -> tuple[Tensor, Tensor, Tensor]:
        """True positives, predicted and actual count per class (each `(C,)` float64): the
        rows of `class_counts`, without stacking them."""
        layout = self._layout
        if layout is not None:
            return layout.class_rows(self.pair_counts)
        counts: Tensor = self.class_counts
        true_positives, predicted, actual = counts.unbind(0)
        return true_positives, predicted, actual

    def _held_state(self) -> Tensor | None:
        if getattr(self, "_layout", None) is None:
            return None
        return self._buffers["pair_counts"]

    def _held_totals(self, values: list[float]) -> list[float]:
        assert self._layout is not None
        return self._layout.totals(values)

    def _held_views(self, state: Tensor) -> list[Tensor]:
        assert self._layout is not None
        return self._layout.error_views(state)

    def _held_device_totals(self, state: Tensor) -> Tensor:
        assert self._layout is not None
        return self._layout.device_totals(state)

    def shared_statistic(self) -> Hashable:
        """The key of the `class_counts` statistic: equal for metrics whose updates are
        identical (same task, classes, threshold, value checks and score kind), whatever they
        compute.

        Example:
            >>> from torchtally.metrics.classification._precision import PrecisionMetric
            >>> PrecisionMetric(3).shared_statistic()  # doctest: +NORMALIZE_WHITESPACE
            ClassStatistic(kind='class_counts', task='multiclass', num_classes=3,
                           threshold=0.5, check_values=True, score_kind='auto',
                           ignore_index=None)
        """
        return ClassStatistic(
            "class_counts",
            self.task,
            self.num_classes,
            self.threshold,
            self.check_values,
            self.score_kind,
            self.ignore_index,
        )

    def derives_from(self, statistic: Hashable) -> bool:
        """Multiclass counts follow from a confusion matrix over the same classes."""
        if self.task != "multiclass" or self.num_classes is None or self.ignore_index is not None:
            return False
        return statistic == confusion_matrix_key(
            self.num_classes, self.threshold, self.check_values, self.score_kind
        )

    def load_derived(self, source: Metric) -> None:
        """Fill the counts from a confusion matrix's state: the same state when both keep
        pair counts of the same classes; else its diagonal, column sums (predicted) and row
        sums (actual), with its error counts."""
        if self._layout is not None and "pair_counts" in source.state_names():
            self.pair_counts.copy_(source.pair_counts)
            return
        matrix: Tensor = source.confusion_matrix
        self.class_counts.copy_(torch.stack([matrix.diagonal(), matrix.sum(0), matrix.sum(1)]))
        if isinstance(source, HeldErrors):
            self._buffers["_errors"].copy_(source.held_error_counts())  # type: ignore[union-attr]

    def _ignored(self, argument: str, classes: Iterable[int] | None) -> tuple[int, ...]:
        """Check a list of classes to leave out of the averages (none allowed for binary)."""
        if self.task == "binary" and classes is not None:
            raise ValueError(
                f"Argument `{argument}` must be None for binary inputs (num_classes=None). "
                f"Received: {argument}={classes!r}"
            )
        width = class_counts_width(self.num_classes, self.multilabel)
        return check_class_list(argument, classes, width)

    def update(self, labels: Tensor, predictions: Tensor, weights: Tensor | None = None) -> None:
        """Fold one batch into `class_counts` in place and count its data errors.

        Args:
            labels: Integer class indices of any shape, 0/1 labels (binary) or `(..., C)`
                indicators (multilabel); never floating (see the class docstring).
            predictions: Class indices or 0/1 shaped like `labels`, probabilities or logits
                shaped like `labels` (thresholded, see `score_kind`), or class scores with a
                trailing class dimension (argmax; move a channel-first class dimension last
                with `movedim(1, -1)`).
            weights: Optional weights shaped like `labels` (per sample for multilabel); 0
                masks an element out.
        """
        if self.ignore_index is not None:
            # The ignored elements weigh 0 and carry a valid class: they count nowhere, and
            # are no label error.
            keep = labels != self.ignore_index
            labels = torch.where(keep, labels, 0)
            weights = keep.to(torch.float64) if weights is None else torch.where(keep, weights, 0)
        layout = self._layout
        if layout is not None:
            self._update_pairs(layout, labels, predictions, weights)
            return
        if self.task == "multiclass" and self.num_classes is not None:
            fast = class_score_batch(
                labels, predictions, self.num_classes, weights, self.check_values
            )
            if fast is not None:
                labels_c, predicted, weight, errors = fast
                add_class_counts(labels_c, predicted, weight, self._buffers["class_counts"])  # type: ignore[arg-type]
                if errors is not None:
                    self.record_errors(**errors)
                return
        # Large multiclass score batches: one max pass gives the argmax and the rows' maxima
        # the value check reads, instead of a second reduction over every score.
        shared = (
            shared_row_maxima(labels, predictions, self.num_classes)
            if self.check_values and self.task == "multiclass" and self.num_classes is not None
            else None
        )
        class_counts_update(
            labels,
            predictions if shared is None else shared[0],
            self.num_classes,
            multilabel=self.multilabel,
            threshold=self.threshold,
            weights=weights,
            out=self.class_counts,
            score_kind=self.score_kind,
        )
        if self.check_values:
            if shared is not None:
                assert self.num_classes is not None
                errors = multiclass_errors_from_maxima(labels, shared[1], self.num_classes, weights)
            else:
                errors = class_counts_error_counts(
                    labels,
                    predictions,
                    self.num_classes,
                    multilabel=self.multilabel,
                    weights=weights,
                )
            self.record_errors(**errors)

    def _update_pairs(
        self, layout: PairLayout, labels: Tensor, predictions: Tensor, weights: Tensor | None
    ) -> None:
        """`update` into the pair counts: a class-score batch by `add_class_scores`, any other
        by `confusion_matrix_update` into the matrix view (the same inputs and rules as
        `class_counts_update`)."""
        state: Tensor = self._buffers["pair_counts"]  # type: ignore[assignment]
        matrix = self._state_view(state, "pair_counts[matrix]", layout.matrix)
        if weights is None:
            done, errors = layout.add_class_scores(
                state, matrix, labels, predictions, self.check_values
            )
            if done:
                if errors is not None:
                    self.record_errors(**errors)
                return
        shared = (
            shared_row_maxima(labels, predictions, layout.classes) if self.check_values else None
        )
        confusion_matrix_update(
            labels,
            predictions if shared is None else shared[0],
            layout.classes,
            threshold=self.threshold,
            weights=weights,
            out=matrix,
            score_kind=self.score_kind,
        )
        if self.check_values:
            errors = (
                multiclass_errors(labels, predictions, layout.classes, weights)
                if shared is None
                else multiclass_errors_from_maxima(labels, shared[1], layout.classes, weights)
            )
            self.record_errors(**errors)

    def _coalescible(self, args: tuple[Tensor, ...]) -> bool:
        return len(args) in (2, 3) and rows_read_alone(args[0], args[1], self.score_kind)

    def extra_repr(self) -> str:
        return f"name={self.name!r}, task={self.task!r}, num_classes={self.num_classes!r}"


class AveragedClassCountsMetric(ClassCountsMetric):
    """Base of precision, recall and F-beta: an `average_type` and cstorch's `ignore_labels`
    (abstract: subclasses add `compute`)."""

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
        check_choice("average_type", average_type, AVERAGE_TYPES)
        check_choice("macro_classes", macro_classes, MACRO_CLASSES)
        if ignore_index is not None and (
            isinstance(ignore_index, bool) or not isinstance(ignore_index, int) or multilabel
        ):
            raise ValueError(
                "Argument `ignore_index` must be an integer label value (binary or multiclass "
                f"inputs) or None. Received: ignore_index={ignore_index!r}, "
                f"multilabel={multilabel}"
            )
        super().__init__(
            num_classes,
            multilabel=multilabel,
            threshold=threshold,
            name=name,
            check_values=check_values,
            score_kind=score_kind,
        )
        self.average_type = average_type
        self.macro_classes = macro_classes
        self.ignore_index = ignore_index
        self.ignore_labels = self._ignored("ignore_labels", ignore_labels)


class PerClassOverlapMetric(ClassCountsMetric):
    """Base of mean IoU and Dice: multiclass only, with cstorch's `ignore_classes` (abstract:
    subclasses add `compute`)."""

    def __init__(
        self,
        num_classes: int,
        ignore_classes: Iterable[int] | None = None,
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
        self.ignore_classes = self._ignored("ignore_classes", ignore_classes)
