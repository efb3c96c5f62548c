"""Average precision, precision-recall curve and ROC curve: exact (preallocated buffer) or
binned (constant memory); binary, multiclass (one-vs-rest) and multilabel.

The three share one state layout (and one update in a `MetricCollection`); only `compute`
differs. See `torchtally.functional.curves` for the definitions.
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from typing import Any, final

import torch
from torch import Tensor

from torchtally._errors import ErrorKinds, check_choice, check_int, raise_for_counts, tracing
from torchtally.functional._blocks import cached_ones, may_cache
from torchtally.functional._checks import count_negative, count_nonfinite
from torchtally.functional.curves._curves import (
    AVERAGES,
    TASKS,
    binned_average_precision,
    binned_pr_curve,
    binned_roc,
    curve_shapes,
    curve_thresholds,
    exact_average_precision,
    exact_pr_curve,
    exact_roc,
)
from torchtally.metrics._base import CatState, Metric

__all__ = ["AveragePrecisionMetric", "PrecisionRecallCurveMetric", "ROCMetric"]

#: Samples the exact mode stores by default.
DEFAULT_CAPACITY = 1 << 16


class _CurveMetric(Metric):
    """Shared state and update of the curve family."""

    error_kinds = ErrorKinds(
        nonfinite_predictions="non-finite predictions",
        invalid_targets="invalid targets",
        predictions_outside="predictions outside [0, 1] (binned mode)",
        negative_weights="negative weights",
    )
    _averages: tuple[str, ...] = AVERAGES
    cat_overflow_terms = ("samples", "use binned mode (thresholds=...) for constant memory")

    def __init__(
        self,
        task: str = "binary",
        num_classes: int | None = None,
        thresholds: int | Sequence[float] | Tensor | None = None,
        capacity: int | None = None,
        average: str = "macro",
        name: str | None = None,
        *,
        check_values: bool = True,
    ) -> None:
        check_choice("task", task, TASKS)
        if task == "binary":
            if num_classes is not None:
                raise ValueError(
                    "Argument `num_classes` must be None for task='binary'. "
                    f"Received: num_classes={num_classes!r}"
                )
        else:
            check_int("num_classes", num_classes, 2)
        check_choice("average", average, self._averages)
        if thresholds is not None and capacity is not None:
            raise ValueError(
                "Arguments `thresholds` (binned mode) and `capacity` (exact mode) exclude each "
                f"other. Received: thresholds={thresholds!r}, capacity={capacity!r}"
            )
        check_int("capacity", capacity, 1, allow_none=True)
        grid = None if thresholds is None else curve_thresholds(thresholds)
        super().__init__(name, check_values=check_values)
        self.task = task
        self.num_classes = num_classes
        self.average = average
        classes = 1 if num_classes is None else num_classes
        self.binned = grid is not None
        if grid is not None:
            self.capacity = None
            self._grid = tuple(grid.tolist())
            # A constant, the same on every rank: the "max" reduction leaves it unchanged.
            self.register_state("thresholds", grid, reduction="max")
            hist = torch.zeros(classes, 2, grid.shape[0] + 1, dtype=torch.float64)
            self.register_state("histogram", hist)
        else:
            self.capacity = DEFAULT_CAPACITY if capacity is None else capacity
            self._grid = ()
            f64 = torch.float64
            cap = self.capacity
            self.register_state("scores", torch.zeros(cap, classes, dtype=f64), reduction="cat")
            # float16 labels: an integer target converts to them keeping whether it is 0 or 1
            # (every integer from 2 or below 0 stays invalid), so that one copy stores it and
            # its check runs over the stored rows at compute
            self.register_state(
                "labels", torch.zeros(cap, classes, dtype=torch.float16), reduction="cat"
            )
            self.register_state("weights", torch.zeros(cap, dtype=f64), reduction="cat")
        #: Class indices for the multiclass one-hot labels, by device (eager updates reuse them).
        self._class_index: dict[torch.device, Tensor] = {}
        #: Binned mode: each class's first histogram cell, by device.
        self._offsets: dict[tuple[torch.device, int], Tensor] = {}

    def shared_statistic(self) -> Hashable:
        """AP, PR curve and ROC of the same inputs and mode share one update."""
        return ("curves", self.task, self.num_classes, self._grid, self.capacity, self.check_values)

    def update(self, preds: Tensor, target: Tensor, weights: Tensor | None = None) -> None:
        """Add one batch.

        Args:
            preds: Binary: scores of class 1, any shape. Multiclass / multilabel:
                `(N, num_classes)` scores. Binned mode needs probabilities in [0, 1].
            target: Binary: 0/1 shaped like `preds`. Multiclass: `(N,)` class indices.
                Multilabel: `(N, num_classes)` 0/1.
            weights: Optional scalar or `(N,)` sample weights; 0 masks a sample.
        """
        if not self.binned:
            self._append(preds, target, weights)
            return
        self._update_binned(preds, target, weights)

    def _update_binned(self, preds: Tensor, target: Tensor, weights: Tensor | None) -> None:
        """Binned mode: each score's bucket (the thresholds <= it) and its label give its
        histogram cell; unweighted, the ones go straight into the state (exact counts),
        weighted, through a histogram of the batch (the order of today's float64 sums)."""
        scores, target = curve_shapes(preds, target, self.task, self.num_classes)
        rows, classes = scores.shape
        histogram: Tensor = self._buffers["histogram"]  # type: ignore[assignment]
        thresholds: Tensor = self._buffers["thresholds"]  # type: ignore[assignment]
        width = histogram.shape[-1]
        # compared as they are: a float32 score against a float64 threshold as in float64
        bucket = torch.bucketize(scores, thresholds, right=True)
        if self.task == "multiclass":
            positive = torch.eq(target[:, None], self._classes(target))
        else:
            positive = target > 0
        index = torch.add(bucket, positive, alpha=width)  # (class,) kind, bucket
        if classes > 1:
            index.add_(self._class_offsets(target, 2 * width))
        flat = histogram.view(-1)
        if weights is None:
            flat.index_add_(0, index.view(-1), cached_ones(index.numel(), flat))
        else:
            w = self._weights(weights, rows, scores.device)
            batch = torch.zeros_like(flat)
            batch.scatter_add_(0, index.view(-1), w[:, None].expand(rows, classes).reshape(-1))
            flat.add_(batch)
        if not self.check_values:
            return
        if self.task == "multiclass":
            # a valid class matches one column, an invalid one none
            invalid = rows - torch.count_nonzero(positive)
        elif target.dtype == torch.bool:
            invalid = None
        elif target.is_floating_point():
            invalid = torch.count_nonzero(torch.logical_and(target != 0, target != 1))
        else:
            invalid = torch.count_nonzero(target & -2)  # zero just for 0 and 1
        self.record_errors(
            nonfinite_predictions=count_nonfinite(preds),
            invalid_targets=invalid,
            predictions_outside=torch.count_nonzero(torch.logical_or(preds < 0, preds > 1)),
            negative_weights=count_negative(weights),
        )

    def _class_offsets(self, like: Tensor, step: int) -> Tensor:
        """Each class's first histogram cell, `(C,)`: `step` cells a class."""
        assert self.num_classes is not None
        key = (like.device, step)
        cached = None if torch.compiler.is_compiling() or tracing(like) else self._offsets.get(key)
        if cached is None:
            cached = torch.arange(0, self.num_classes * step, step, device=like.device)
            if may_cache(like):
                self._offsets[key] = cached
        return cached

    @staticmethod
    def _weights(weights: Tensor | None, rows: int, device: torch.device) -> Tensor:
        if weights is None:
            return torch.ones(rows, dtype=torch.float64, device=device)
        if weights.dim() == 0:
            return weights.to(torch.float64).expand(rows)
        if weights.numel() == rows:
            return weights.reshape(-1).to(torch.float64)
        raise ValueError(
            f"Argument `weights` must be a scalar or hold one weight per sample ({rows}). "
            f"Received: weights.shape={tuple(weights.shape)}"
        )

    def _append(self, preds: Tensor, target: Tensor, weights: Tensor | None) -> None:
        """Exact mode: the scores, labels and weights into the next rows, each written once
        (the writes convert the dtypes); their checks run over the stored rows at compute."""
        scores, target = curve_shapes(preds, target, self.task, self.num_classes)
        rows = scores.shape[0]
        if weights is not None and weights.dim() != 0:
            if weights.numel() != rows:
                raise ValueError(
                    f"Argument `weights` must be a scalar or hold one weight per sample "
                    f"({rows}). Received: weights.shape={tuple(weights.shape)}"
                )
            weights = weights.reshape(-1)
        states = (self.cat_state("scores"), self.cat_state("labels"), self.cat_state("weights"))
        start = CatState.reserve(states, rows, scores, target)
        if start is None:
            labels = self._labels(target, None)
            w = self._weights(weights, rows, scores.device)
            CatState.append_rows(states, (scores, labels, w))
        else:
            end = start + rows
            states[0].buffer[start:end].copy_(scores)
            self._labels(target, states[1].buffer[start:end])
            stored_weights = states[2].buffer[start:end]
            if weights is None:
                stored_weights.fill_(1.0)
            elif weights.dim() == 0:
                stored_weights.fill_(weights)  # a tensor fill: no host read
            else:
                stored_weights.copy_(weights)
            CatState.commit(states, start, rows)
        if self.check_values and self.task != "multiclass" and target.is_floating_point():
            # A float target converts to the stored float16 inexactly (1 + 1e-4 is 1.0 there):
            # checked here; the stored labels are then its 0/1 test, so nothing is counted twice.
            self.record_errors(
                invalid_targets=torch.count_nonzero(torch.logical_and(target != 0, target != 1))
            )

    def _labels(self, target: Tensor, out: Tensor | None) -> Tensor:
        """The stored labels of `target` (laid out by `curve_shapes`), written into `out`."""
        if out is None:
            shape = (target.shape[0], self.num_classes or 1)
            out = torch.empty(shape, dtype=torch.float16, device=target.device)
        if self.task == "multiclass":
            # one-hot: a target outside the classes has no 1 in its row, counted at compute
            return torch.eq(target[:, None], self._classes(target), out=out)
        if self.check_values and target.is_floating_point():
            return torch.eq(target, 1, out=out)
        return out.copy_(target)

    def _classes(self, target: Tensor) -> Tensor:
        assert self.num_classes is not None
        device = target.device
        cached = (
            None
            if torch.compiler.is_compiling() or tracing(target)
            else self._class_index.get(device)
        )
        if cached is None:
            cached = torch.arange(self.num_classes, device=device)
            if may_cache(target):
                self._class_index[device] = cached
        return cached

    def stored_error_counts(self) -> Tensor | None:
        """The value errors of the stored rows, by kind (as the error counts): non-finite
        scores, invalid targets (not 0/1; multiclass: a class outside the range), none of
        binned mode's scores outside [0, 1], and negative or NaN weights (one per stored
        sample, so a negative scalar weight counts each sample of its batch). None in binned
        mode, without `check_values`, or while tracing. Reads the fill count unless it is
        noted (a device sync off the CPU), and notes it."""
        if self.binned or not self.check_values or tracing(self._buffers["_errors"]):  # type: ignore[arg-type]
            return None
        return self._stored_counts(self._stored_fill())

    def _stored_fill(self) -> int:
        """The rows appended (overflow included), from the notes or one read of the count,
        then noted. The held batches are applied first."""
        states = (self.cat_state("scores"), self.cat_state("labels"), self.cat_state("weights"))
        fill = CatState.common_fill(states)
        if fill is None:
            fill = int(states[0].count)
            CatState.note_fill(states, fill)  # where a note can be trusted
        return fill

    def _stored_counts(self, fill: int) -> Tensor:
        assert self.capacity is not None
        rows = min(fill, self.capacity)
        state: dict[str, Tensor] = self._buffers  # type: ignore[assignment]
        scores, labels, weights = (
            dict.__getitem__(state, name)[:rows] for name in ("scores", "labels", "weights")
        )
        nonfinite = count_nonfinite(scores)
        negative = count_negative(weights)
        assert nonfinite is not None and negative is not None  # float states
        if self.task == "multiclass":
            # a row without its 1; no rows, no error (the count of no scores is a zero)
            invalid = torch.count_nonzero(labels.amax(1) == 0) if rows else nonfinite
        else:
            invalid = torch.count_nonzero(labels * (labels - 1))  # zero just for 0 and 1
        return torch.stack([nonfinite, invalid, negative.new_zeros(()), negative])

    def check_errors(self) -> None:
        """As `Metric.check_errors`, with the stored rows' value errors (exact mode) added to
        those of `update`, all read in one host read, then the capacity checked. (It does not
        ask `Metric.check_errors`, which would read the counts again: a curve metric shares
        its statistic only with curve metrics, so no collection hands it an error of another
        metric's kinds to raise first.)"""
        errors: Tensor = self._buffers["_errors"]  # type: ignore[assignment]
        if self.binned or not self.check_values or tracing(errors):
            super().check_errors()
            return
        fill = self._stored_fill()
        names = tuple(self.error_kinds.values())
        raise_for_counts(self.name, names, errors + self._stored_counts(fill))
        assert self.capacity is not None
        if fill > self.capacity:
            self.cat_state("scores").check_capacity()  # raises, naming the samples dropped

    def _exact_inputs(self) -> tuple[Tensor, Tensor, Tensor]:
        states = (self.cat_state("scores"), self.cat_state("labels"), self.cat_state("weights"))
        fill = states[0].stored_fill()
        if fill is not None:  # eagerly: the filled rows alone
            scores, labels, weights = (state.buffer[:fill] for state in states)
            return scores, labels.to(torch.float64), weights
        scores, count = states[0].values()
        labels, weights = states[1].rows(), states[2].rows()
        unused = torch.arange(scores.shape[0], device=scores.device) >= count
        # Unused rows weigh 0: they change no count; their score sorts them last.
        scores = torch.where(unused[:, None], float("-inf"), scores)
        return scores, labels.to(torch.float64), torch.where(unused, 0.0, weights)

    def _curves(self, exact: Any, binned: Any) -> Any:
        if self.binned:
            hist = self.histogram
            if self.average == "micro":
                hist = hist.sum(0, keepdim=True)
            a, b, t = binned(hist, self.thresholds)
            curves = [(a[c], b[c], t) for c in range(a.shape[0])]
        else:
            # Curves have data-dependent lengths: host work, on the filled rows only.
            states = (
                self.cat_state("scores"),
                self.cat_state("labels"),
                self.cat_state("weights"),
            )
            fill = states[0].stored_fill()
            if fill is None:
                fill = int(states[0].values()[1])
            scores, labels, weights = (state.buffer[:fill] for state in states)
            labels = labels.to(torch.float64)
            if self.average == "micro":
                classes = scores.shape[1]
                scores, labels = scores.reshape(-1, 1), labels.reshape(-1, 1)
                weights = weights.repeat_interleave(classes)
            curves = exact(scores, labels, weights)
        if self.task == "binary" or self.average == "micro":
            return curves[0]
        return curves

    def extra_repr(self) -> str:
        mode = f"thresholds={len(self._grid)}" if self.binned else f"capacity={self.capacity}"
        return (
            f"name={self.name!r}, task={self.task!r}, num_classes={self.num_classes}, "
            f"average={self.average!r}, {mode}"
        )


_ARGS = """
    Args:
        task: "binary", "multiclass" (one-vs-rest) or "multilabel".
        num_classes: None for binary, else the number of classes (labels).
        thresholds: Binned mode: an int T (evenly spaced over [0, 1]) or the thresholds
            themselves; constant memory, exactly additive. Excludes `capacity`.
        capacity: Exact mode (default): samples the buffer holds (default 65,536); more raise
            at compute.
        average: {averages}
        name: Metric name.
        check_values: Count non-finite scores, invalid targets, scores outside [0, 1] in
            binned mode, and negative weights; raise them at compute. Exact mode counts
            them over the stored samples at compute (a negative scalar weight once per
            sample of its batch), so that an update is one write per state.
"""


@final
class AveragePrecisionMetric(_CurveMetric):
    unit = ""
    higher_is_better = True
    input_kind = "scores"
    __doc__ = (
        """Average precision (area under the precision-recall step curve).

    Exact mode equals scikit-learn's `average_precision_score` (ties handled as thresholds)
    and its compute is fixed-shape, so it traces; binned mode equals TorchMetrics'
    `AveragePrecision(thresholds=T)`. A class with no positive gives NaN (exact) or 0
    (binned, as TorchMetrics).
"""
        + _ARGS.format(
            averages='"macro" (default), "micro" (all classes as one binary problem), '
            '"weighted" (by positives) or "none" (per class); ignored for binary.'
        )
        + """
    Example:
        >>> metric = AveragePrecisionMetric()
        >>> metric(torch.tensor([0.1, 0.4, 0.35, 0.8]), torch.tensor([0, 0, 1, 1]))
        tensor(0.8333, dtype=torch.float64)
    """
    )

    def compute(self) -> Tensor:
        average = "macro" if self.task == "binary" else self.average
        if self.binned:
            return binned_average_precision(self.histogram, self.thresholds, average)
        scores, labels, weights = self._exact_inputs()
        return exact_average_precision(scores, labels, weights, average)


@final
class PrecisionRecallCurveMetric(_CurveMetric):
    unit = ""
    higher_is_better = None
    input_kind = "scores"
    __doc__ = (
        """Precision-recall curve: `(precision, recall, thresholds)`, or a list of them per
    class for multiclass / multilabel with average="none".

    Exact mode equals scikit-learn's `precision_recall_curve` (one point per distinct score,
    built on the host at compute: not traceable). Binned mode equals TorchMetrics'
    `PrecisionRecallCurve(thresholds=T)`: `(T + 1,)` precision and recall, fixed shapes.
"""
        + _ARGS.format(averages='"none" (default: per class) or "micro".')
        + """
    Example:
        >>> metric = PrecisionRecallCurveMetric(thresholds=3)
        >>> precision, recall, thresholds = metric(
        ...     torch.tensor([0.1, 0.4, 0.8]), torch.tensor([0, 1, 1]))
        >>> precision, recall
        (tensor([0.6667, 1.0000,    nan, 1.0000], dtype=torch.float64), tensor([1.0000, 0.5000, 0.0000, 0.0000], dtype=torch.float64))
    """
    )
    _averages = ("none", "micro")

    def __init__(
        self,
        task: str = "binary",
        num_classes: int | None = None,
        thresholds: int | Sequence[float] | Tensor | None = None,
        capacity: int | None = None,
        average: str = "none",
        name: str | None = None,
        *,
        check_values: bool = True,
    ) -> None:
        super().__init__(
            task, num_classes, thresholds, capacity, average, name, check_values=check_values
        )

    def compute(self) -> Any:
        return self._curves(exact_pr_curve, binned_pr_curve)


@final
class ROCMetric(_CurveMetric):
    unit = ""
    higher_is_better = None
    input_kind = "scores"
    __doc__ = (
        """ROC curve: `(fpr, tpr, thresholds)` by decreasing threshold, or a list of them per
    class for multiclass / multilabel with average="none".

    Exact mode equals scikit-learn's `roc_curve(drop_intermediate=False)` (the first
    threshold is +inf; built on the host at compute: not traceable). Binned mode equals
    TorchMetrics' `ROC(thresholds=T)`: `(T,)` rates, fixed shapes. For the area, see
    `AUROCMetric`.
"""
        + _ARGS.format(averages='"none" (default: per class) or "micro".')
        + """
    Example:
        >>> fpr, tpr, thresholds = ROCMetric()(torch.tensor([0.1, 0.4, 0.8]), torch.tensor([0, 1, 1]))
        >>> fpr, tpr
        (tensor([0., 0., 0., 1.], dtype=torch.float64), tensor([0.0000, 0.5000, 1.0000, 1.0000], dtype=torch.float64))
    """
    )
    _averages = ("none", "micro")

    def __init__(
        self,
        task: str = "binary",
        num_classes: int | None = None,
        thresholds: int | Sequence[float] | Tensor | None = None,
        capacity: int | None = None,
        average: str = "none",
        name: str | None = None,
        *,
        check_values: bool = True,
    ) -> None:
        super().__init__(
            task, num_classes, thresholds, capacity, average, name, check_values=check_values
        )

    def compute(self) -> Any:
        return self._curves(exact_roc, binned_roc)
