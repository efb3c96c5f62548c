"""TorchMetrics' binary curve metrics in binned mode: one `(T, 2, 2)` confusion matrix per
threshold, so memory is constant, the update is one `index_add_` and the sync one collective.

`thresholds` is an int (that many evenly spaced thresholds in [0, 1]), a list of floats or a
1-D tensor, as in TorchMetrics. TorchMetrics' exact mode (`thresholds=None`) keeps every score
in a growing list; it is refused here with a pointer to the alternatives.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import torch
from torch import Tensor

from torchtally.compat.torchmetrics._base import Metric
from torchtally.compat.torchmetrics.functional._stat_scores import safe_divide

__all__ = [
    "BinaryAUROC",
    "BinaryAveragePrecision",
    "BinaryPrecisionRecallCurve",
    "BinaryROC",
    "MulticlassAUROC",
    "MulticlassAveragePrecision",
    "MultilabelAUROC",
]


def _thresholds(thresholds: Any) -> Tensor:
    if thresholds is None:
        raise ValueError(
            "Argument `thresholds` must be an int >= 2, a list of floats in [0, 1] or a 1-D "
            "tensor: the exact mode (thresholds=None) keeps every score in an unbounded state. "
            "Use e.g. thresholds=1000, or torchtally.metrics.AUROCMetric for exact AUROC with a "
            "preallocated capacity. Received: thresholds=None"
        )
    if isinstance(thresholds, bool) or not isinstance(thresholds, (int, list, Tensor)):
        raise ValueError(
            "Argument `thresholds` must be an int, a list of floats or a tensor. "
            f"Received: thresholds={thresholds!r}"
        )
    if isinstance(thresholds, int):
        if thresholds < 2:
            raise ValueError(
                f"Argument `thresholds` must be an integer >= 2. Received: thresholds={thresholds}"
            )
        return torch.linspace(0, 1, thresholds)
    values = torch.as_tensor(thresholds, dtype=torch.float32)
    if values.dim() != 1 or not bool(((values >= 0) & (values <= 1)).all()):
        raise ValueError(
            "Argument `thresholds` must be 1-D with values in [0, 1]. "
            f"Received: thresholds={thresholds!r}"
        )
    return values


class _BinaryBinnedCurve(Metric):
    error_kinds = ("targets that are neither 0/1 nor ignore_index",)
    is_differentiable = False

    def __init__(
        self,
        thresholds: int | list[float] | Tensor | None = None,
        ignore_index: int | None = None,
        validate_args: bool = True,
        **kwargs: Any,
    ) -> None:
        grid = _thresholds(thresholds)
        if ignore_index is not None and (
            not isinstance(ignore_index, int) or isinstance(ignore_index, bool)
        ):
            raise ValueError(
                f"Argument `ignore_index` must be None or an integer. Received: ignore_index={ignore_index!r}"
            )
        super().__init__(**kwargs)
        self.ignore_index, self.validate_args = ignore_index, validate_args
        # The grid is configuration, not state: a buffer so it moves with the metric.
        self.register_buffer("thresholds", grid, persistent=False)
        self.register_state(
            "confmat", torch.zeros(grid.numel(), 2, 2, dtype=torch.int64), True, "sum"
        )

    def _batch(self, preds: Tensor, target: Tensor) -> dict[str, Tensor]:
        if not isinstance(preds, Tensor) or not preds.is_floating_point():
            raise ValueError(
                "Argument `preds` must be a float tensor of scores or logits (order: "
                f"update(preds, target)). Received: {getattr(preds, 'dtype', type(preds).__name__)}"
            )
        if not isinstance(target, Tensor) or target.shape != preds.shape:
            raise ValueError(
                "Arguments `preds` and `target` must have the same shape. Received: preds "
                f"{tuple(preds.shape)}, target {tuple(getattr(target, 'shape', ()))}"
            )
        p, t = preds.reshape(-1), target.reshape(-1)
        binary = (t == 0) | (t == 1)
        ignored = torch.zeros_like(binary) if self.ignore_index is None else t == self.ignore_index
        counted = binary & ~ignored
        # TorchMetrics decides logits over the counted scores only (after removing ignored ones).
        inside = (((p >= 0) & (p <= 1)) | ~counted).all()
        p = torch.where(inside, p, p.sigmoid())
        grid = self.thresholds.to(p.dtype)
        count = grid.numel()
        above = (p.unsqueeze(-1) >= grid).long()
        index = (
            above
            + 2 * t.long().clamp(0, 1).unsqueeze(-1)
            + 4 * torch.arange(count, device=p.device)
        )
        weight = counted.long().unsqueeze(-1).expand(-1, count)
        confmat = torch.zeros(count * 4, dtype=torch.int64, device=p.device)
        confmat.index_add_(0, index.reshape(-1), weight.reshape(-1))
        batch = {"confmat": confmat.view(count, 2, 2)}
        if self.validate_args:
            batch["_errors"] = (~binary & ~ignored).sum().reshape(1)
        return batch

    def _roc(self, confmat: Tensor) -> tuple[Tensor, Tensor, Tensor]:
        tps, fps, fns, tns = confmat[:, 1, 1], confmat[:, 0, 1], confmat[:, 1, 0], confmat[:, 0, 0]
        tpr = safe_divide(tps, tps + fns).flip(0)
        fpr = safe_divide(fps, fps + tns).flip(0)
        return fpr, tpr, self.thresholds.flip(0)

    def _pr(self, confmat: Tensor) -> tuple[Tensor, Tensor, Tensor]:
        tps, fps, fns = confmat[:, 1, 1], confmat[:, 0, 1], confmat[:, 1, 0]
        nan = float("nan")
        precision = safe_divide(tps, tps + fps, nan)
        recall = safe_divide(tps, tps + fns, nan)
        one = torch.ones(1, dtype=precision.dtype, device=precision.device)
        return torch.cat([precision, one]), torch.cat([recall, one * 0]), self.thresholds.clone()


class BinaryROC(_BinaryBinnedCurve):
    """TorchMetrics' `BinaryROC` (binned): `(fpr, tpr, thresholds)`, thresholds descending."""

    def _value(self, state: Mapping[str, Tensor]) -> tuple[Tensor, Tensor, Tensor]:
        return self._roc(state["confmat"])


class BinaryPrecisionRecallCurve(_BinaryBinnedCurve):
    """TorchMetrics' `BinaryPrecisionRecallCurve` (binned): `(precision, recall, thresholds)`."""

    def _value(self, state: Mapping[str, Tensor]) -> tuple[Tensor, Tensor, Tensor]:
        return self._pr(state["confmat"])


class BinaryAUROC(_BinaryBinnedCurve):
    """TorchMetrics' `BinaryAUROC` (binned): the trapezoidal area under the binned ROC."""

    higher_is_better = True

    def __init__(
        self,
        max_fpr: float | None = None,
        thresholds: int | list[float] | Tensor | None = None,
        ignore_index: int | None = None,
        validate_args: bool = True,
        **kwargs: Any,
    ) -> None:
        if max_fpr is not None and max_fpr != 1:
            raise ValueError(
                "Argument `max_fpr` must be None or 1 here (partial AUC is not supported yet). "
                f"Received: max_fpr={max_fpr!r}"
            )
        super().__init__(thresholds, ignore_index, validate_args, **kwargs)
        self.max_fpr = max_fpr

    def _value(self, state: Mapping[str, Tensor]) -> Tensor:
        fpr, tpr, _ = self._roc(state["confmat"])
        return torch.trapezoid(tpr, fpr)


class BinaryAveragePrecision(_BinaryBinnedCurve):
    """TorchMetrics' `BinaryAveragePrecision` (binned): the step sum over the binned PR curve."""

    higher_is_better = True

    def _value(self, state: Mapping[str, Tensor]) -> Tensor:
        precision, recall, _ = self._pr(state["confmat"])
        precision = torch.nan_to_num(precision, nan=0.0)
        recall = torch.nan_to_num(recall, nan=0.0)
        return -((recall[1:] - recall[:-1]) * precision[:-1]).sum()


class MulticlassAUROC(Metric):
    """TorchMetrics' `MulticlassAUROC` (binned, one-vs-rest): a `(T, C, 2, 2)` state, scores
    `(N, C, ...)` softmaxed when they are not probabilities, averaged macro/weighted/none."""

    error_kinds = ("targets that are neither a class index nor ignore_index",)
    higher_is_better = True
    is_differentiable = False

    def __init__(
        self,
        num_classes: int,
        average: str | None = "macro",
        thresholds: int | list[float] | Tensor | None = None,
        ignore_index: int | None = None,
        validate_args: bool = True,
        **kwargs: Any,
    ) -> None:
        if not isinstance(num_classes, int) or isinstance(num_classes, bool) or num_classes < 2:
            raise ValueError(
                f"Argument `num_classes` must be an integer >= 2. Received: num_classes={num_classes!r}"
            )
        if average not in ("macro", "weighted", "none", None):
            raise ValueError(
                "Argument `average` must be one of ('macro', 'weighted', 'none', None). "
                f"Received: average={average!r}"
            )
        grid = _thresholds(thresholds)
        super().__init__(**kwargs)
        self.num_classes, self.average = num_classes, average
        self.ignore_index, self.validate_args = ignore_index, validate_args
        self.register_buffer("thresholds", grid, persistent=False)
        self.register_state(
            "confmat",
            torch.zeros(grid.numel(), num_classes, 2, 2, dtype=torch.int64),
            True,
            "sum",
        )

    def _batch(self, preds: Tensor, target: Tensor) -> dict[str, Tensor]:
        classes = self.num_classes
        if (
            not isinstance(preds, Tensor)
            or not preds.is_floating_point()
            or preds.dim() != target.dim() + 1
            or preds.shape[1] != classes
        ):
            raise ValueError(
                f"Argument `preds` must be float scores of shape (N, {classes}, ...) for target "
                f"(N, ...) (order: update(preds, target)). Received: preds "
                f"{tuple(getattr(preds, 'shape', ()))}, target {tuple(target.shape)}"
            )
        scores = preds.movedim(1, -1).reshape(-1, classes)
        t = target.reshape(-1).long()
        in_range = (t >= 0) & (t < classes)
        ignored = (
            torch.zeros_like(in_range) if self.ignore_index is None else t == self.ignore_index
        )
        counted = in_range & ~ignored
        inside = (((scores >= 0) & (scores <= 1)) | ~counted.unsqueeze(-1)).all()
        scores = torch.where(inside, scores, scores.softmax(-1))
        grid = self.thresholds.to(scores.dtype)
        count = grid.numel()
        above = (scores.unsqueeze(-1) >= grid).long()  # (N, C, T)
        positive = torch.nn.functional.one_hot(t.clamp(0, classes - 1), classes)
        index = (
            above
            + 2 * positive.unsqueeze(-1)
            + 4 * torch.arange(classes, device=t.device).view(1, -1, 1)
            + 4 * classes * torch.arange(count, device=t.device)
        )
        weight = counted.long().view(-1, 1, 1).expand_as(index)
        confmat = torch.zeros(count * classes * 4, dtype=torch.int64, device=t.device)
        confmat.index_add_(0, index.reshape(-1), weight.reshape(-1))
        batch = {"confmat": confmat.view(count, classes, 2, 2)}
        if self.validate_args:
            batch["_errors"] = (~in_range & ~ignored).sum().reshape(1)
        return batch

    def _value(self, state: Mapping[str, Tensor]) -> Tensor:
        confmat = state["confmat"]
        return _average_auroc(_auroc_per_class(confmat), confmat, self.average)


class MultilabelAUROC(Metric):
    """TorchMetrics' `MultilabelAUROC` (binned): a `(T, L, 2, 2)` state over `(N, L, ...)` scores
    (sigmoid when they are not probabilities), averaged micro/macro/weighted/none."""

    error_kinds = ("targets that are neither 0/1 nor ignore_index",)
    higher_is_better = True
    is_differentiable = False

    def __init__(
        self,
        num_labels: int,
        average: str | None = "macro",
        thresholds: int | list[float] | Tensor | None = None,
        ignore_index: int | None = None,
        validate_args: bool = True,
        **kwargs: Any,
    ) -> None:
        if not isinstance(num_labels, int) or isinstance(num_labels, bool) or num_labels < 1:
            raise ValueError(
                f"Argument `num_labels` must be an integer >= 1. Received: num_labels={num_labels!r}"
            )
        if average not in ("micro", "macro", "weighted", "none", None):
            raise ValueError(
                "Argument `average` must be one of ('micro', 'macro', 'weighted', 'none', None). "
                f"Received: average={average!r}"
            )
        grid = _thresholds(thresholds)
        super().__init__(**kwargs)
        self.num_labels, self.average = num_labels, average
        self.ignore_index, self.validate_args = ignore_index, validate_args
        self.register_buffer("thresholds", grid, persistent=False)
        self.register_state(
            "confmat", torch.zeros(grid.numel(), num_labels, 2, 2, dtype=torch.int64), True, "sum"
        )

    def _batch(self, preds: Tensor, target: Tensor) -> dict[str, Tensor]:
        labels = self.num_labels
        if (
            not isinstance(preds, Tensor)
            or not preds.is_floating_point()
            or preds.shape != target.shape
            or preds.dim() < 2
            or preds.shape[1] != labels
        ):
            raise ValueError(
                f"Argument `preds` must be float scores of shape (N, {labels}, ...) like target "
                f"(order: update(preds, target)). Received: preds "
                f"{tuple(getattr(preds, 'shape', ()))}, target {tuple(target.shape)}"
            )
        # TorchMetrics decides logits over every score, ignored positions included.
        scores = preds.movedim(1, -1).reshape(-1, labels)
        scores = torch.where(((scores >= 0) & (scores <= 1)).all(), scores, scores.sigmoid())
        t = target.movedim(1, -1).reshape(-1, labels).long()
        binary = (t == 0) | (t == 1)
        ignored = torch.zeros_like(binary) if self.ignore_index is None else t == self.ignore_index
        counted = binary & ~ignored
        grid = self.thresholds.to(scores.dtype)
        count = grid.numel()
        index = (
            (scores.unsqueeze(-1) >= grid).long()
            + 2 * t.clamp(0, 1).unsqueeze(-1)
            + 4 * torch.arange(labels, device=t.device).view(1, -1, 1)
            + 4 * labels * torch.arange(count, device=t.device)
        )
        weight = counted.long().unsqueeze(-1).expand_as(index)
        confmat = torch.zeros(count * labels * 4, dtype=torch.int64, device=t.device)
        confmat.index_add_(0, index.reshape(-1), weight.reshape(-1))
        batch = {"confmat": confmat.view(count, labels, 2, 2)}
        if self.validate_args:
            batch["_errors"] = (~binary & ~ignored).sum().reshape(1)
        return batch

    def _value(self, state: Mapping[str, Tensor]) -> Tensor:
        confmat = state["confmat"]
        if self.average == "micro":
            return _auroc_per_class(confmat.sum(1, keepdim=True))[0]
        return _average_auroc(_auroc_per_class(confmat), confmat, self.average)


def _auroc_per_class(confmat: Tensor) -> Tensor:
    """Trapezoidal AUROC per class from a `(T, K, 2, 2)` per-threshold confusion matrix."""
    tps, fps = confmat[:, :, 1, 1], confmat[:, :, 0, 1]
    fns, tns = confmat[:, :, 1, 0], confmat[:, :, 0, 0]
    tpr = safe_divide(tps, tps + fns).flip(0).T
    fpr = safe_divide(fps, fps + tns).flip(0).T
    return torch.trapezoid(tpr, fpr, dim=1)


def _average_auroc(per_class: Tensor, confmat: Tensor, average: str | None) -> Tensor:
    """TorchMetrics' reduction: NaN classes left out of macro/weighted, weights = support."""
    if average is None or average == "none":
        return per_class
    valid = ~per_class.isnan()
    kept = torch.where(valid, per_class, 0.0)
    if average == "macro":
        return kept.sum() / valid.sum()
    support = torch.where(valid, confmat[0, :, 1, :].sum(-1).float(), 0.0)
    return (kept * safe_divide(support, support.sum())).sum()


class MulticlassAveragePrecision(MulticlassAUROC):
    """TorchMetrics' `MulticlassAveragePrecision` (binned, one-vs-rest), macro/weighted/none."""

    def _value(self, state: Mapping[str, Tensor]) -> Tensor:
        confmat = state["confmat"]
        tps, fps, fns = confmat[:, :, 1, 1], confmat[:, :, 0, 1], confmat[:, :, 1, 0]
        classes = confmat.shape[1]
        precision = torch.nan_to_num(safe_divide(tps, tps + fps, float("nan")), nan=0.0)
        recall = torch.nan_to_num(safe_divide(tps, tps + fns, float("nan")), nan=0.0)
        ones = torch.ones(1, classes, dtype=precision.dtype, device=precision.device)
        precision = torch.cat([precision, ones]).T
        recall = torch.cat([recall, ones * 0]).T
        per_class = -((recall[:, 1:] - recall[:, :-1]) * precision[:, :-1]).sum(1)
        return _average_auroc(per_class, confmat, self.average)
