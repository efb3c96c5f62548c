"""TorchMetrics' confusion-matrix family (accuracy ... Cohen's kappa) on one preallocated state.

Each class keeps one int64 confusion matrix: `(2, 2)` binary, `(C, C)` multiclass, `(L, 2, 2)`
multilabel. That is every statistic these metrics need, so a batch is one `index_add_`, the
state syncs with one summed collective, and metrics over the same task and arguments share it
inside a `MetricCollection` (`shared_statistic`).

Two layouts keep `[tp, fp, tn, fn]` rows of width `W` (1 binary, else the classes or labels)
instead:

* `multidim_average="samplewise"`: one row per sample, the value per sample. The rows go into
  a `cat` state preallocated at `capacity` samples (default 65,536; 32 bytes per class per
  sample), appended without a host sync; more samples than that raise at compute.
* multiclass `num_classes=None` (TorchMetrics allows it for micro averages): no class count
  to size a matrix, so the state is the micro counts, `W = 1` (correct and wrong positions).
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping
from typing import Any, ClassVar

import torch
from torch import Tensor

from torchtally._errors import ErrorKinds
from torchtally.compat.torchmetrics._base import Metric
from torchtally.compat.torchmetrics.functional._stat_scores import (
    CLASS_COUNT_FREE,
    binary_confmat_update,
    cohen_kappa_from_confmat,
    confmat_normalize,
    exact_match_update,
    jaccard_from_confmat,
    matthews_from_confmat,
    micro_stat_rows,
    multiclass_confmat_update,
    multilabel_confmat_update,
    reduce_stat_counts,
    reduce_stat_scores,
    safe_divide,
    stat_counts,
    stat_rows,
    stat_scores_table,
    stat_scores_table_from_counts,
)

__all__ = ["DEFAULT_CAPACITY", "ClassificationMetric", "ExactMatchBase"]

_AVERAGES = ("micro", "macro", "weighted", "none", None)
_MULTIDIM = ("global", "samplewise")
_INVALID = "target or prediction values that are neither a valid class/0-1 label nor ignore_index"
#: Samples a `multidim_average="samplewise"` metric stores unless `capacity` says otherwise.
DEFAULT_CAPACITY = 1 << 16


def _check_args(
    task: str,
    num_classes: int | None,
    threshold: float,
    top_k: int,
    average: str | None,
    multidim_average: str,
    ignore_index: int | None,
    zero_division: float,
) -> None:
    if (
        task == "multiclass"
        and num_classes is not None
        and (not isinstance(num_classes, int) or isinstance(num_classes, bool) or num_classes < 2)
    ):
        raise ValueError(
            f"Argument `num_classes` must be an integer >= 2. Received: num_classes={num_classes!r}"
        )
    if task == "multilabel" and (
        not isinstance(num_classes, int) or isinstance(num_classes, bool) or num_classes < 1
    ):
        raise ValueError(
            f"Argument `num_labels` must be an integer >= 1. Received: num_labels={num_classes!r}"
        )
    if not isinstance(threshold, float) or not 0 <= threshold <= 1:
        raise ValueError(
            f"Argument `threshold` must be a float in [0, 1]. Received: threshold={threshold!r}"
        )
    if (
        not isinstance(top_k, int)
        or top_k < 1
        or (task == "multiclass" and top_k > (num_classes or 1))
    ):
        raise ValueError(
            f"Argument `top_k` must be an integer in [1, num_classes]. Received: top_k={top_k!r}"
        )
    if average not in _AVERAGES:
        raise ValueError(
            f"Argument `average` must be one of {_AVERAGES}. Received: average={average!r}"
        )
    if multidim_average not in _MULTIDIM:
        raise ValueError(
            f"Argument `multidim_average` must be one of {_MULTIDIM}. "
            f"Received: multidim_average={multidim_average!r}"
        )
    if ignore_index is not None and (
        not isinstance(ignore_index, int) or isinstance(ignore_index, bool)
    ):
        raise ValueError(
            f"Argument `ignore_index` must be None or an integer. Received: ignore_index={ignore_index!r}"
        )
    if zero_division not in (0, 1):
        raise ValueError(
            f"Argument `zero_division` must be 0 or 1. Received: zero_division={zero_division!r}"
        )


def _check_capacity(capacity: int | None, multidim_average: str) -> int:
    """The samplewise buffer's rows (`capacity` only means something samplewise)."""
    if capacity is None:
        return DEFAULT_CAPACITY
    if not isinstance(capacity, int) or isinstance(capacity, bool) or capacity < 1:
        raise ValueError(
            f"Argument `capacity` must be None or an integer >= 1. Received: capacity={capacity!r}"
        )
    if multidim_average != "samplewise":
        raise ValueError(
            "Argument `capacity` sizes the per-sample buffer of multidim_average='samplewise'. "
            f"Received: capacity={capacity!r}, multidim_average={multidim_average!r}"
        )
    return capacity


def _check_samplewise_shape(task: str, preds: Tensor, target: Tensor) -> None:
    """Samplewise statistics reduce over the dimensions after the sample (and class) ones."""
    scores = task == "multiclass" and preds.dim() == target.dim() + 1
    least = 3 if task == "multilabel" or scores else 2
    if preds.dim() < least:
        layout = {"binary": "(N, ...)", "multilabel": "(N, L, ...)"}.get(
            task, "(N, C, ...) scores or (N, ...) labels"
        )
        raise ValueError(
            f"Argument `preds` must have at least {least} dimensions with "
            f"multidim_average='samplewise' ({layout}, the value per sample N is over the "
            f"dimensions '...'). Received: preds of shape {tuple(preds.shape)}"
        )


class ClassificationMetric(Metric):
    """Base of the confusion-matrix family for one task (binary, multiclass or multilabel).

    Subclasses set `task` and implement `_reduce(confmat)`; those with a
    `multidim_average` argument (or TorchMetrics' `num_classes=None`) implement
    `_reduce_counts((tp, fp, tn, fn))` as well, for the row layouts (module docstring).
    """

    task: ClassVar[str] = "binary"
    #: The statistic `_reduce_counts` computes (decides whether `num_classes=None` is allowed).
    kind: ClassVar[str] = ""
    error_kinds = ErrorKinds(invalid_values=_INVALID)
    higher_is_better: bool | None = True
    plot_lower_bound, plot_upper_bound = 0.0, 1.0
    is_differentiable = False
    cat_overflow_terms = ("samples", "use multidim_average='global' for constant memory")

    def __init__(
        self,
        *,
        num_classes: int | None = None,
        threshold: float = 0.5,
        top_k: int = 1,
        average: str | None = "macro",
        multidim_average: str = "global",
        ignore_index: int | None = None,
        validate_args: bool = True,
        zero_division: float = 0,
        capacity: int | None = None,
        **kwargs: Any,
    ) -> None:
        _check_args(
            self.task,
            num_classes,
            threshold,
            top_k,
            average,
            multidim_average,
            ignore_index,
            zero_division,
        )
        rows = _check_capacity(capacity, multidim_average)
        if (
            self.task == "multiclass"
            and num_classes is None
            and (self.kind not in CLASS_COUNT_FREE or average != "micro")
        ):
            raise ValueError(
                "Argument `num_classes` must be an integer >= 2"
                + (
                    " unless average='micro'"
                    if self.kind in CLASS_COUNT_FREE
                    else " for this statistic (its true negatives need the class count)"
                )
                + f". Received: num_classes=None, average={average!r}"
            )
        super().__init__(**kwargs)
        self.num_classes = num_classes
        self._width = int(num_classes or 1)
        self.threshold = threshold
        self.top_k = top_k
        self.average = average
        self.multidim_average = multidim_average
        self.ignore_index = ignore_index
        self.validate_args = validate_args
        self.zero_division = float(zero_division)
        self.samplewise = multidim_average == "samplewise"
        self.capacity: int | None = rows if self.samplewise else None
        #: `[tp, fp, tn, fn]` rows instead of a confusion matrix (module docstring).
        self._rows = self.samplewise or (self.task == "multiclass" and num_classes is None)
        if self.samplewise:
            self.register_state(
                "stats", torch.zeros(rows, 4, self._width, dtype=torch.int64), False, "cat"
            )
        elif self._rows:
            self.register_state("stats", torch.zeros(4, 1, dtype=torch.int64), False, "sum")
        else:
            shape: tuple[int, ...] = (
                (2, 2)
                if self.task == "binary"
                else (self._width, self._width)
                if self.task == "multiclass"
                else (self._width, 2, 2)
            )
            self.register_state("confmat", torch.zeros(shape, dtype=torch.int64), False, "sum")

    def shared_statistic(self) -> Hashable | None:
        # Everything the state depends on; compute (the averaging) may differ.
        return (
            "tm_confmat",
            self.task,
            self.num_classes,
            self.threshold,
            self.top_k,
            self.ignore_index,
            self.validate_args,
            self.multidim_average,
            self.capacity,
        )

    def _check_shapes(self, preds: Tensor, target: Tensor) -> None:
        if not isinstance(preds, Tensor) or not isinstance(target, Tensor):
            raise TypeError(
                "Arguments `preds` and `target` must be tensors (TorchMetrics' order: "
                f"update(preds, target)). Received: preds={type(preds).__name__}, "
                f"target={type(target).__name__}"
            )
        if self.samplewise:
            _check_samplewise_shape(self.task, preds, target)
        if self.task == "multiclass":
            if target.is_floating_point():
                raise ValueError(
                    "Argument `target` must hold integer class indices. Received a "
                    f"{target.dtype} tensor: the order is update(preds, target), preds first."
                )
            if preds.dim() == target.dim() + 1:
                classes = self.num_classes if self.num_classes is not None else preds.shape[1]
                expected = (target.shape[0], classes, *target.shape[1:])
                if tuple(preds.shape) != expected or not preds.is_floating_point():
                    raise ValueError(
                        f"Argument `preds` must be float scores of shape {expected} (N, C, ...) "
                        f"for target of shape {tuple(target.shape)}. Received: preds of shape "
                        f"{tuple(preds.shape)} and dtype {preds.dtype}"
                    )
                return
        if preds.shape != target.shape:
            raise ValueError(
                "Arguments `preds` and `target` must have the same shape"
                + (
                    " (or preds (N, C, ...) with target (N, ...))"
                    if self.task == "multiclass"
                    else ""
                )
                + f". Received: preds {tuple(preds.shape)}, target {tuple(target.shape)}"
            )
        if self.task == "multilabel" and (preds.dim() < 2 or preds.shape[1] != self.num_classes):
            raise ValueError(
                f"Argument `preds` must have shape (N, {self.num_classes}, ...) (num_labels in "
                f"dimension 1). Received: preds of shape {tuple(preds.shape)}"
            )

    def _batch(self, preds: Tensor, target: Tensor) -> dict[str, Tensor]:
        self._check_shapes(preds, target)
        samplewise = self.samplewise
        if self.task == "binary":
            confmat, invalid = binary_confmat_update(
                preds, target, self.threshold, self.ignore_index, samplewise
            )
        elif self.num_classes is None:
            stats, invalid = micro_stat_rows(preds, target, self.ignore_index, samplewise)
            return self._with_errors({"stats": stats}, invalid)
        elif self.task == "multiclass":
            confmat, invalid = multiclass_confmat_update(
                preds, target, self._width, self.top_k, self.ignore_index, samplewise
            )
        else:
            confmat, invalid = multilabel_confmat_update(
                preds, target, self._width, self.threshold, self.ignore_index, samplewise
            )
        if self._rows:
            return self._with_errors({"stats": stat_rows(confmat, self.task)}, invalid)
        return self._with_errors({"confmat": confmat}, invalid)

    def _with_errors(self, batch: dict[str, Any], invalid: Tensor) -> dict[str, Any]:
        if self.validate_args:
            batch["_errors"] = {"invalid_values": invalid}
        return batch

    def _value(self, state: Mapping[str, Tensor]) -> Any:
        if self._rows:
            return self._reduce_counts(stat_counts(state["stats"], self.task))
        return self._reduce(state["confmat"])

    def _reduce(self, confmat: Tensor) -> Tensor:
        raise NotImplementedError

    def _reduce_counts(self, counts: tuple[Tensor, Tensor, Tensor, Tensor]) -> Tensor:
        raise NotImplementedError


class StatReduction(ClassificationMetric):
    """A metric that is one of TorchMetrics' stat-score reductions (`kind`)."""

    kind: ClassVar[str] = "accuracy"
    beta: float = 1.0

    def _reduce(self, confmat: Tensor) -> Tensor:
        return reduce_stat_scores(
            self.kind,
            confmat,
            self.task,
            self.average,
            top_k=self.top_k,
            beta=self.beta,
            zero_division=self.zero_division,
        )

    def _reduce_counts(self, counts: tuple[Tensor, Tensor, Tensor, Tensor]) -> Tensor:
        return reduce_stat_counts(
            self.kind,
            counts,
            self.task,
            self.average,
            top_k=self.top_k,
            beta=self.beta,
            zero_division=self.zero_division,
        )


class StatScoresBase(ClassificationMetric):
    kind = "stat_scores"

    def _reduce(self, confmat: Tensor) -> Tensor:
        return stat_scores_table(confmat, self.task, self.average)

    def _reduce_counts(self, counts: tuple[Tensor, Tensor, Tensor, Tensor]) -> Tensor:
        # TorchMetrics weighs a multilabel sample's labels by their support over every sample
        # (per sample for multiclass): its tests' reference does the same.
        batch_weights = self.samplewise and self.task == "multilabel"
        return stat_scores_table_from_counts(
            counts, self.task, self.average, batch_weights=batch_weights
        )


class ConfusionMatrixBase(ClassificationMetric):
    normalize: str | None = None

    def _reduce(self, confmat: Tensor) -> Tensor:
        return confmat_normalize(confmat, self.normalize)


class JaccardBase(ClassificationMetric):
    def _reduce(self, confmat: Tensor) -> Tensor:
        return jaccard_from_confmat(
            confmat, self.task, self.average, self.ignore_index, self.zero_division
        )


class MatthewsBase(ClassificationMetric):
    def _reduce(self, confmat: Tensor) -> Tensor:
        return matthews_from_confmat(confmat)


class CohenKappaBase(ClassificationMetric):
    weights: str | None = None

    def _reduce(self, confmat: Tensor) -> Tensor:
        return cohen_kappa_from_confmat(confmat, self.weights)


class ExactMatchBase(Metric):
    """Fraction of samples whose every position (multiclass) or label (multilabel) is right;
    with `multidim_average="samplewise"`, per sample (multilabel: the fraction of its extra
    positions whose labels are all right), kept as `(correct, total)` rows in a `cat` state."""

    task: ClassVar[str] = "multiclass"
    error_kinds = ErrorKinds(invalid_values=_INVALID)
    higher_is_better = True
    plot_lower_bound, plot_upper_bound = 0.0, 1.0
    is_differentiable = False
    cat_overflow_terms = ("samples", "use multidim_average='global' for constant memory")

    def __init__(
        self,
        num_classes: int,
        threshold: float = 0.5,
        multidim_average: str = "global",
        ignore_index: int | None = None,
        validate_args: bool = True,
        capacity: int | None = None,
        **kwargs: Any,
    ) -> None:
        if self.task == "multiclass" and num_classes is None:
            raise ValueError(
                "Argument `num_classes` must be an integer >= 2. Received: num_classes=None"
            )
        _check_args(
            self.task, num_classes, threshold, 1, "micro", multidim_average, ignore_index, 0
        )
        rows = _check_capacity(capacity, multidim_average)
        super().__init__(**kwargs)
        self.num_classes, self.threshold = num_classes, threshold
        self.multidim_average, self.ignore_index = multidim_average, ignore_index
        self.validate_args = validate_args
        self.samplewise = multidim_average == "samplewise"
        self.capacity: int | None = rows if self.samplewise else None
        if self.samplewise:
            self.register_state("samples", torch.zeros(rows, 2, dtype=torch.int64), False, "cat")
        else:
            self.register_state("correct", torch.zeros((), dtype=torch.int64), False, "sum")
            self.register_state("total", torch.zeros((), dtype=torch.int64), False, "sum")

    def _batch(self, preds: Tensor, target: Tensor) -> dict[str, Tensor]:
        if self.samplewise and isinstance(preds, Tensor) and isinstance(target, Tensor):
            _check_samplewise_shape(self.task, preds, target)
        correct, total, invalid = exact_match_update(
            preds,
            target,
            self.num_classes,
            multilabel=self.task == "multilabel",
            threshold=self.threshold,
            ignore_index=self.ignore_index,
            samplewise=self.samplewise,
        )
        batch: dict[str, Any] = (
            {"samples": torch.stack([correct, total], dim=-1)}
            if self.samplewise
            else {"correct": correct, "total": total}
        )
        if self.validate_args:
            batch["_errors"] = {"invalid_values": invalid}
        return batch

    def _value(self, state: Mapping[str, Tensor]) -> Tensor:
        if self.samplewise:
            correct, total = state["samples"].unbind(-1)
            return safe_divide(correct, total)
        return safe_divide(state["correct"], state["total"])
