"""TorchMetrics' confusion-matrix family (accuracy ... Cohen's kappa) on one preallocated state.

Each class keeps one int64 confusion matrix: `(2, 2)` binary, `(C, C)` multiclass, `(L, 2, 2)`
multilabel. That is every statistic these metrics need, so a batch is one `index_add_`, the
state syncs with one summed collective, and metrics over the same task and arguments share it
inside a `MetricCollection` (`shared_statistic`).
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping
from typing import Any, ClassVar

import torch
from torch import Tensor

from torchtally._errors import ErrorKinds
from torchtally.compat.torchmetrics._base import Metric
from torchtally.compat.torchmetrics.functional._stat_scores import (
    binary_confmat_update,
    cohen_kappa_from_confmat,
    confmat_normalize,
    exact_match_update,
    jaccard_from_confmat,
    matthews_from_confmat,
    multiclass_confmat_update,
    multilabel_confmat_update,
    reduce_stat_scores,
    safe_divide,
    stat_scores_table,
)

__all__ = ["ClassificationMetric", "ExactMatchBase"]

_AVERAGES = ("micro", "macro", "weighted", "none", None)
_INVALID = "target or prediction values that are neither a valid class/0-1 label nor ignore_index"


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
    if task == "multiclass" and (
        not isinstance(num_classes, int) or isinstance(num_classes, bool) or num_classes < 2
    ):
        raise ValueError(
            "Argument `num_classes` must be an integer >= 2 (torchtally preallocates the "
            f"state, so None is not accepted). Received: num_classes={num_classes!r}"
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
    if not isinstance(top_k, int) or top_k < 1 or (task == "multiclass" and top_k > num_classes):  # type: ignore[operator]
        raise ValueError(
            f"Argument `top_k` must be an integer in [1, num_classes]. Received: top_k={top_k!r}"
        )
    if average not in _AVERAGES:
        raise ValueError(
            f"Argument `average` must be one of {_AVERAGES}. Received: average={average!r}"
        )
    if multidim_average != "global":
        raise ValueError(
            "Argument `multidim_average` must be 'global': per-sample statistics would need an "
            "unbounded state; use torchmetrics.functional for 'samplewise'. "
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


class ClassificationMetric(Metric):
    """Base of the confusion-matrix family for one task (binary, multiclass or multilabel).

    Subclasses set `task` and implement `_reduce(confmat)`.
    """

    task: ClassVar[str] = "binary"
    error_kinds = ErrorKinds(invalid_values=_INVALID)
    higher_is_better: bool | None = True
    plot_lower_bound, plot_upper_bound = 0.0, 1.0
    is_differentiable = False

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
        shape: tuple[int, ...] = (
            (2, 2)
            if self.task == "binary"
            else (num_classes, num_classes)  # type: ignore[assignment]
            if self.task == "multiclass"
            else (num_classes, 2, 2)
        )
        self.register_state("confmat", torch.zeros(shape, dtype=torch.int64), False, "sum")

    def shared_statistic(self) -> Hashable | None:
        # Everything the confusion matrix depends on; compute (the averaging) may differ.
        return (
            "tm_confmat",
            self.task,
            self.num_classes,
            self.threshold,
            self.top_k,
            self.ignore_index,
            self.validate_args,
        )

    def _check_shapes(self, preds: Tensor, target: Tensor) -> None:
        if not isinstance(preds, Tensor) or not isinstance(target, Tensor):
            raise TypeError(
                "Arguments `preds` and `target` must be tensors (TorchMetrics' order: "
                f"update(preds, target)). Received: preds={type(preds).__name__}, "
                f"target={type(target).__name__}"
            )
        if self.task == "multiclass":
            if target.is_floating_point():
                raise ValueError(
                    "Argument `target` must hold integer class indices. Received a "
                    f"{target.dtype} tensor: the order is update(preds, target), preds first."
                )
            if preds.dim() == target.dim() + 1:
                expected = (target.shape[0], self.num_classes, *target.shape[1:])
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
        if self.task == "binary":
            confmat, invalid = binary_confmat_update(
                preds, target, self.threshold, self.ignore_index
            )
        elif self.task == "multiclass":
            confmat, invalid = multiclass_confmat_update(
                preds,
                target,
                self._width,
                self.top_k,
                self.ignore_index,
            )
        else:
            confmat, invalid = multilabel_confmat_update(
                preds,
                target,
                self._width,
                self.threshold,
                self.ignore_index,
            )
        batch: dict[str, Any] = {"confmat": confmat}
        if self.validate_args:
            batch["_errors"] = {"invalid_values": invalid}
        return batch

    def _value(self, state: Mapping[str, Tensor]) -> Any:
        return self._reduce(state["confmat"])

    def _reduce(self, confmat: Tensor) -> Tensor:
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


class StatScoresBase(ClassificationMetric):
    def _reduce(self, confmat: Tensor) -> Tensor:
        return stat_scores_table(confmat, self.task, self.average)


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
    """Fraction of samples whose every position (multiclass) or label (multilabel) is right."""

    task: ClassVar[str] = "multiclass"
    error_kinds = ErrorKinds(invalid_values=_INVALID)
    higher_is_better = True
    plot_lower_bound, plot_upper_bound = 0.0, 1.0
    is_differentiable = False

    def __init__(
        self,
        num_classes: int,
        threshold: float = 0.5,
        multidim_average: str = "global",
        ignore_index: int | None = None,
        validate_args: bool = True,
        **kwargs: Any,
    ) -> None:
        _check_args(
            self.task, num_classes, threshold, 1, "micro", multidim_average, ignore_index, 0
        )
        super().__init__(**kwargs)
        self.num_classes, self.threshold = num_classes, threshold
        self.multidim_average, self.ignore_index = multidim_average, ignore_index
        self.validate_args = validate_args
        self.register_state("correct", torch.zeros((), dtype=torch.int64), False, "sum")
        self.register_state("total", torch.zeros((), dtype=torch.int64), False, "sum")

    def _batch(self, preds: Tensor, target: Tensor) -> dict[str, Tensor]:
        correct, total, invalid = exact_match_update(
            preds,
            target,
            self.num_classes,
            multilabel=self.task == "multilabel",
            threshold=self.threshold,
            ignore_index=self.ignore_index,
        )
        batch: dict[str, Any] = {"correct": correct, "total": total}
        if self.validate_args:
            batch["_errors"] = {"invalid_values": invalid}
        return batch

    def _value(self, state: Mapping[str, Tensor]) -> Tensor:
        return safe_divide(state["correct"], state["total"])
