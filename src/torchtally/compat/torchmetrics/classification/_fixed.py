"""TorchMetrics' operating-point metrics: the best recall at a minimum precision, the best
precision at a minimum recall, the best sensitivity at a minimum specificity and the best
specificity at a minimum sensitivity, each with the threshold that reaches it, and the equal
error rate and the log AUC.

Each class is the matching curve class (binned or exact, binary, multiclass or multilabel) with
TorchMetrics' reduction of the curve at compute: the same points, the same tie-breaking (the
lexicographic maximum over (value, other rate, threshold) for the precision-recall pair, the
first maximum along the ROC for the sensitivity-specificity pair) and the same fallbacks when
no point qualifies (value 0 with a NaN threshold, or value 0 with threshold 1e6). The
reductions are tensor ops (masks and maxima), so a binned metric's compute stays traceable.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, ClassVar

import torch
from torch import Tensor

from torchtally.compat.torchmetrics.classification._curves import (
    BinaryPrecisionRecallCurve,
    BinaryROC,
    MulticlassPrecisionRecallCurve,
    MulticlassROC,
    MultilabelPrecisionRecallCurve,
    MultilabelROC,
)

__all__ = [
    "BinaryEER",
    "BinaryLogAUC",
    "BinaryPrecisionAtFixedRecall",
    "BinaryRecallAtFixedPrecision",
    "BinarySensitivityAtSpecificity",
    "BinarySpecificityAtSensitivity",
    "MulticlassEER",
    "MulticlassLogAUC",
    "MulticlassPrecisionAtFixedRecall",
    "MulticlassRecallAtFixedPrecision",
    "MulticlassSensitivityAtSpecificity",
    "MulticlassSpecificityAtSensitivity",
    "MultilabelEER",
    "MultilabelLogAUC",
    "MultilabelPrecisionAtFixedRecall",
    "MultilabelRecallAtFixedPrecision",
    "MultilabelSensitivityAtSpecificity",
    "MultilabelSpecificityAtSensitivity",
]

Reducer = Callable[[Tensor, Tensor, Tensor, float], tuple[Tensor, Tensor]]


def _lexicographic_best(keys: tuple[Tensor, ...], mask: Tensor) -> Tensor:
    """The points of `mask` that are maximal by `keys[0]`, then `keys[1]`, ... (a mask)."""
    chosen = mask
    for key in keys:
        best = torch.where(chosen, key, float("-inf")).max()
        chosen = chosen & (key == best)
    return chosen


def _pr_operating_point(value: Tensor, other: Tensor, thresholds: Tensor, mask: Tensor) -> Any:
    chosen = _lexicographic_best((value, other, thresholds), mask)
    found = chosen.any()
    best = torch.where(found, torch.where(chosen, value, float("-inf")).max(), 0.0)
    threshold = torch.where(chosen, thresholds, float("-inf")).max()
    threshold = torch.where(found & (best != 0), threshold, float("nan"))
    return best.to(value.dtype), threshold.to(thresholds.dtype)


def _recall_at_precision(
    precision: Tensor, recall: Tensor, thresholds: Tensor, bound: float
) -> tuple[Tensor, Tensor]:
    n = min(precision.shape[0], recall.shape[0], thresholds.shape[0])
    p, r, t = precision[:n], recall[:n], thresholds[:n]
    return _pr_operating_point(r, p, t, p >= bound)  # type: ignore[no-any-return]


def _precision_at_recall(
    precision: Tensor, recall: Tensor, thresholds: Tensor, bound: float
) -> tuple[Tensor, Tensor]:
    n = min(precision.shape[0], recall.shape[0], thresholds.shape[0])
    p, r, t = precision[:n], recall[:n], thresholds[:n]
    return _pr_operating_point(p, r, t, r >= bound)  # type: ignore[no-any-return]


def _roc_operating_point(
    value: Tensor, other: Tensor, thresholds: Tensor, bound: float
) -> tuple[Tensor, Tensor]:
    mask = other >= bound
    # the first maximum, as TorchMetrics; gathered (a Python index would read it on the host)
    index = torch.where(mask, value, float("-inf")).argmax().reshape(1)
    found = mask.any()
    best = torch.where(found, value.gather(0, index)[0], 0.0).to(value.dtype)
    threshold = torch.where(found, thresholds.gather(0, index)[0], 1e6).to(thresholds.dtype)
    return best, threshold


def _sensitivity_at_specificity(
    fpr: Tensor, tpr: Tensor, thresholds: Tensor, bound: float
) -> tuple[Tensor, Tensor]:
    return _roc_operating_point(tpr, 1 - fpr, thresholds, bound)


def _specificity_at_sensitivity(
    fpr: Tensor, tpr: Tensor, thresholds: Tensor, bound: float
) -> tuple[Tensor, Tensor]:
    return _roc_operating_point(1 - fpr, tpr, thresholds, bound)


_REDUCERS: dict[str, Reducer] = {
    "recall_at_precision": _recall_at_precision,
    "precision_at_recall": _precision_at_recall,
    "sensitivity_at_specificity": _sensitivity_at_specificity,
    "specificity_at_sensitivity": _specificity_at_sensitivity,
}


def _check_bound(name: str, value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 <= value <= 1:
        raise ValueError(f"Argument `{name}` must be a float in [0, 1]. Received: {name}={value!r}")
    return float(value)


class _OperatingPoint:
    """Mixin over a curve class: `_value` reduces its curve(s) to `(value, threshold)`."""

    _bound_name: ClassVar[str]
    _reducer: ClassVar[str]
    higher_is_better: bool | None = True

    def _operating_point(self, curves: Any) -> tuple[Tensor, Tensor]:
        reduce = _REDUCERS[self._reducer]
        bound = getattr(self, self._bound_name)
        first, second, thresholds = curves
        if isinstance(first, Tensor) and first.dim() == 1:  # binary
            return reduce(first, second, thresholds, bound)
        if isinstance(first, Tensor):  # binned per class: rows share the thresholds
            rows = [reduce(a, b, thresholds, bound) for a, b in zip(first, second, strict=True)]
        else:  # exact per class: each its own thresholds
            rows = [
                reduce(a, b, t, bound) for a, b, t in zip(first, second, thresholds, strict=True)
            ]
        return torch.stack([r[0] for r in rows]), torch.stack([r[1] for r in rows])

    def _value(self, state: Mapping[str, Tensor]) -> Any:
        return self._operating_point(super()._value(state))  # type: ignore[misc]


# ---------------------------------------------------------------- recall at fixed precision


class BinaryRecallAtFixedPrecision(_OperatingPoint, BinaryPrecisionRecallCurve):
    """TorchMetrics' `BinaryRecallAtFixedPrecision`: `(recall, threshold)`, the highest recall
    whose precision is at least `min_precision` (binned or exact curve)."""

    _bound_name = "min_precision"
    _reducer = "recall_at_precision"

    def __init__(
        self,
        min_precision: float,
        thresholds: int | list[float] | Tensor | None = None,
        ignore_index: int | None = None,
        validate_args: bool = True,
        **kwargs: Any,
    ) -> None:
        bound = _check_bound("min_precision", min_precision)
        super().__init__(thresholds, ignore_index, validate_args, **kwargs)
        self.min_precision = bound


class MulticlassRecallAtFixedPrecision(_OperatingPoint, MulticlassPrecisionRecallCurve):
    """TorchMetrics' `MulticlassRecallAtFixedPrecision` (one-vs-rest): `(recall, threshold)`
    per class."""

    _bound_name = "min_precision"
    _reducer = "recall_at_precision"

    def __init__(
        self,
        num_classes: int,
        min_precision: float,
        thresholds: int | list[float] | Tensor | None = None,
        ignore_index: int | None = None,
        validate_args: bool = True,
        **kwargs: Any,
    ) -> None:
        bound = _check_bound("min_precision", min_precision)
        super().__init__(num_classes, thresholds, None, ignore_index, validate_args, **kwargs)
        self.min_precision = bound


class MultilabelRecallAtFixedPrecision(_OperatingPoint, MultilabelPrecisionRecallCurve):
    """TorchMetrics' `MultilabelRecallAtFixedPrecision`: `(recall, threshold)` per label."""

    _bound_name = "min_precision"
    _reducer = "recall_at_precision"

    def __init__(
        self,
        num_labels: int,
        min_precision: float,
        thresholds: int | list[float] | Tensor | None = None,
        ignore_index: int | None = None,
        validate_args: bool = True,
        **kwargs: Any,
    ) -> None:
        bound = _check_bound("min_precision", min_precision)
        super().__init__(num_labels, thresholds, ignore_index, validate_args, **kwargs)
        self.min_precision = bound


# ---------------------------------------------------------------- precision at fixed recall


class BinaryPrecisionAtFixedRecall(_OperatingPoint, BinaryPrecisionRecallCurve):
    """TorchMetrics' `BinaryPrecisionAtFixedRecall`: `(precision, threshold)`, the highest
    precision whose recall is at least `min_recall`."""

    _bound_name = "min_recall"
    _reducer = "precision_at_recall"

    def __init__(
        self,
        min_recall: float,
        thresholds: int | list[float] | Tensor | None = None,
        ignore_index: int | None = None,
        validate_args: bool = True,
        **kwargs: Any,
    ) -> None:
        bound = _check_bound("min_recall", min_recall)
        super().__init__(thresholds, ignore_index, validate_args, **kwargs)
        self.min_recall = bound


class MulticlassPrecisionAtFixedRecall(_OperatingPoint, MulticlassPrecisionRecallCurve):
    """TorchMetrics' `MulticlassPrecisionAtFixedRecall` (one-vs-rest): `(precision, threshold)`
    per class."""

    _bound_name = "min_recall"
    _reducer = "precision_at_recall"

    def __init__(
        self,
        num_classes: int,
        min_recall: float,
        thresholds: int | list[float] | Tensor | None = None,
        ignore_index: int | None = None,
        validate_args: bool = True,
        **kwargs: Any,
    ) -> None:
        bound = _check_bound("min_recall", min_recall)
        super().__init__(num_classes, thresholds, None, ignore_index, validate_args, **kwargs)
        self.min_recall = bound


class MultilabelPrecisionAtFixedRecall(_OperatingPoint, MultilabelPrecisionRecallCurve):
    """TorchMetrics' `MultilabelPrecisionAtFixedRecall`: `(precision, threshold)` per label."""

    _bound_name = "min_recall"
    _reducer = "precision_at_recall"

    def __init__(
        self,
        num_labels: int,
        min_recall: float,
        thresholds: int | list[float] | Tensor | None = None,
        ignore_index: int | None = None,
        validate_args: bool = True,
        **kwargs: Any,
    ) -> None:
        bound = _check_bound("min_recall", min_recall)
        super().__init__(num_labels, thresholds, ignore_index, validate_args, **kwargs)
        self.min_recall = bound


# ---------------------------------------------------------- sensitivity at specificity


class BinarySensitivityAtSpecificity(_OperatingPoint, BinaryROC):
    """TorchMetrics' `BinarySensitivityAtSpecificity`: `(sensitivity, threshold)`, the highest
    true positive rate whose specificity (1 - fpr) is at least `min_specificity`."""

    _bound_name = "min_specificity"
    _reducer = "sensitivity_at_specificity"

    def __init__(
        self,
        min_specificity: float,
        thresholds: int | list[float] | Tensor | None = None,
        ignore_index: int | None = None,
        validate_args: bool = True,
        **kwargs: Any,
    ) -> None:
        bound = _check_bound("min_specificity", min_specificity)
        super().__init__(thresholds, ignore_index, validate_args, **kwargs)
        self.min_specificity = bound


class MulticlassSensitivityAtSpecificity(_OperatingPoint, MulticlassROC):
    """TorchMetrics' `MulticlassSensitivityAtSpecificity` (one-vs-rest): `(sensitivity,
    threshold)` per class."""

    _bound_name = "min_specificity"
    _reducer = "sensitivity_at_specificity"

    def __init__(
        self,
        num_classes: int,
        min_specificity: float,
        thresholds: int | list[float] | Tensor | None = None,
        ignore_index: int | None = None,
        validate_args: bool = True,
        **kwargs: Any,
    ) -> None:
        bound = _check_bound("min_specificity", min_specificity)
        super().__init__(num_classes, thresholds, None, ignore_index, validate_args, **kwargs)
        self.min_specificity = bound


class MultilabelSensitivityAtSpecificity(_OperatingPoint, MultilabelROC):
    """TorchMetrics' `MultilabelSensitivityAtSpecificity`: `(sensitivity, threshold)` per label."""

    _bound_name = "min_specificity"
    _reducer = "sensitivity_at_specificity"

    def __init__(
        self,
        num_labels: int,
        min_specificity: float,
        thresholds: int | list[float] | Tensor | None = None,
        ignore_index: int | None = None,
        validate_args: bool = True,
        **kwargs: Any,
    ) -> None:
        bound = _check_bound("min_specificity", min_specificity)
        super().__init__(num_labels, thresholds, ignore_index, validate_args, **kwargs)
        self.min_specificity = bound


# ---------------------------------------------------------- specificity at sensitivity


class BinarySpecificityAtSensitivity(_OperatingPoint, BinaryROC):
    """TorchMetrics' `BinarySpecificityAtSensitivity`: `(specificity, threshold)`, the highest
    specificity (1 - fpr) whose true positive rate is at least `min_sensitivity`."""

    _bound_name = "min_sensitivity"
    _reducer = "specificity_at_sensitivity"

    def __init__(
        self,
        min_sensitivity: float,
        thresholds: int | list[float] | Tensor | None = None,
        ignore_index: int | None = None,
        validate_args: bool = True,
        **kwargs: Any,
    ) -> None:
        bound = _check_bound("min_sensitivity", min_sensitivity)
        super().__init__(thresholds, ignore_index, validate_args, **kwargs)
        self.min_sensitivity = bound


class MulticlassSpecificityAtSensitivity(_OperatingPoint, MulticlassROC):
    """TorchMetrics' `MulticlassSpecificityAtSensitivity` (one-vs-rest): `(specificity,
    threshold)` per class."""

    _bound_name = "min_sensitivity"
    _reducer = "specificity_at_sensitivity"

    def __init__(
        self,
        num_classes: int,
        min_sensitivity: float,
        thresholds: int | list[float] | Tensor | None = None,
        ignore_index: int | None = None,
        validate_args: bool = True,
        **kwargs: Any,
    ) -> None:
        bound = _check_bound("min_sensitivity", min_sensitivity)
        super().__init__(num_classes, thresholds, None, ignore_index, validate_args, **kwargs)
        self.min_sensitivity = bound


class MultilabelSpecificityAtSensitivity(_OperatingPoint, MultilabelROC):
    """TorchMetrics' `MultilabelSpecificityAtSensitivity`: `(specificity, threshold)` per label."""

    _bound_name = "min_sensitivity"
    _reducer = "specificity_at_sensitivity"

    def __init__(
        self,
        num_labels: int,
        min_sensitivity: float,
        thresholds: int | list[float] | Tensor | None = None,
        ignore_index: int | None = None,
        validate_args: bool = True,
        **kwargs: Any,
    ) -> None:
        bound = _check_bound("min_sensitivity", min_sensitivity)
        super().__init__(num_labels, thresholds, ignore_index, validate_args, **kwargs)
        self.min_sensitivity = bound


# ------------------------------------------------------------------------ equal error rate


def _equal_error_rate(fpr: Tensor, tpr: Tensor) -> Tensor:
    """TorchMetrics' EER: at the first ROC point where |fpr - fnr| is smallest, their mean."""
    fnr = 1 - tpr
    index = (fpr - fnr).abs().argmin().reshape(1)  # gathered: no host read
    return ((fpr.gather(0, index) + fnr.gather(0, index)) / 2)[0]


class _EqualErrorRate:
    """Mixin over a ROC class: `_value` reduces each ROC to its equal error rate."""

    higher_is_better: bool | None = False

    def _value(self, state: Mapping[str, Tensor]) -> Any:
        fpr, tpr, _ = super()._value(state)  # type: ignore[misc]
        if isinstance(fpr, Tensor) and fpr.dim() == 1:
            return _equal_error_rate(fpr, tpr)
        return torch.stack([_equal_error_rate(f, t) for f, t in zip(fpr, tpr, strict=True)])


class BinaryEER(_EqualErrorRate, BinaryROC):
    """TorchMetrics' `BinaryEER`: the equal error rate, where the false positive rate meets the
    false negative rate on the (binned or exact) ROC."""


class MulticlassEER(_EqualErrorRate, MulticlassROC):
    """TorchMetrics' `MulticlassEER` (one-vs-rest): the equal error rate per class
    (`average=None`; the micro/macro-averaged ROC is not supported yet)."""


class MultilabelEER(_EqualErrorRate, MultilabelROC):
    """TorchMetrics' `MultilabelEER`: the equal error rate per label."""


# -------------------------------------------------------------------------------- log AUC


def _log_auc(fpr: Tensor, tpr: Tensor, fpr_range: tuple[float, float]) -> Tensor:
    """TorchMetrics' log AUC of one ROC: the area under tpr against log10(fpr) between the two
    bounds of `fpr_range` (tpr interpolated at them), divided by the log width of the range."""
    if fpr.numel() < 2 or tpr.numel() < 2:
        return torch.zeros((), device=fpr.device)
    bounds = torch.tensor(fpr_range, device=fpr.device)
    order = torch.argsort(fpr)
    xp, fp = fpr[order], tpr[order]
    slope = (fp[1:] - fp[:-1]) / (xp[1:] - xp[:-1])
    segment = (torch.searchsorted(xp, bounds) - 1).clamp(0, slope.numel() - 1)
    at_bounds = fp[segment] + slope[segment] * (bounds - xp[segment])
    ys = torch.cat([tpr, at_bounds]).sort().values
    xs = torch.cat([fpr, bounds]).sort().values.log10()
    log_bounds = bounds.log10()
    positions = torch.arange(xs.numel(), device=xs.device)
    # The curve between the last occurrences of the two bounds: a host read of two indices
    # (the kept length depends on the data), so this compute does not trace.
    low = int(torch.where(xs == log_bounds[0], positions, -1).max())
    high = int(torch.where(xs == log_bounds[1], positions, -1).max())
    area = torch.trapezoid(ys[low : high + 1], xs[low : high + 1])
    return area / (log_bounds[1] - log_bounds[0])


def _check_fpr_range(fpr_range: Any) -> tuple[float, float]:
    if (
        not isinstance(fpr_range, tuple)
        or len(fpr_range) != 2
        or not all(isinstance(x, (int, float)) and not isinstance(x, bool) for x in fpr_range)
        or not 0 <= fpr_range[0] < fpr_range[1] <= 1
    ):
        raise ValueError(
            "Argument `fpr_range` must be a tuple of two floats (low, high) with "
            f"0 <= low < high <= 1. Received: fpr_range={fpr_range!r}"
        )
    return float(fpr_range[0]), float(fpr_range[1])


_LOG_AUC_AVERAGES = ("macro", "none", None)


class _LogAUC:
    """Mixin over a ROC class: `_value` reduces each ROC to its log AUC (macro: the mean over
    the classes whose value is not NaN, as TorchMetrics)."""

    higher_is_better: bool | None = True
    fpr_range: tuple[float, float]
    log_auc_average: str | None = None

    def _value(self, state: Mapping[str, Tensor]) -> Any:
        fpr, tpr, _ = super()._value(state)  # type: ignore[misc]
        if isinstance(fpr, Tensor) and fpr.dim() == 1:
            return _log_auc(fpr, tpr, self.fpr_range)
        scores = torch.stack(
            [_log_auc(f, t, self.fpr_range) for f, t in zip(fpr, tpr, strict=True)]
        )
        if self.log_auc_average == "macro":
            return scores[~scores.isnan()].mean()
        return scores


def _check_log_auc_average(average: Any) -> str | None:
    if average not in _LOG_AUC_AVERAGES:
        raise ValueError(
            f"Argument `average` must be one of {_LOG_AUC_AVERAGES}. Received: average={average!r}"
        )
    return average  # type: ignore[no-any-return]


class BinaryLogAUC(_LogAUC, BinaryROC):
    """TorchMetrics' `BinaryLogAUC`: the area under the ROC with a log10 false positive rate
    axis over `fpr_range`, normalized by its log width (binned or exact ROC; the compute reads
    two indices on the host)."""

    def __init__(
        self,
        fpr_range: tuple[float, float] = (0.001, 0.1),
        thresholds: int | list[float] | Tensor | None = None,
        ignore_index: int | None = None,
        validate_args: bool = False,
        **kwargs: Any,
    ) -> None:
        bounds = _check_fpr_range(fpr_range)
        super().__init__(thresholds, ignore_index, validate_args, **kwargs)
        self.fpr_range = bounds


class MulticlassLogAUC(_LogAUC, MulticlassROC):
    """TorchMetrics' `MulticlassLogAUC` (one-vs-rest): per class (`average=None` or "none") or
    their mean over the classes that are not NaN (`average="macro"`)."""

    def __init__(
        self,
        num_classes: int,
        fpr_range: tuple[float, float] = (0.001, 0.1),
        average: str | None = None,
        thresholds: int | list[float] | Tensor | None = None,
        ignore_index: int | None = None,
        validate_args: bool = True,
        **kwargs: Any,
    ) -> None:
        bounds, chosen = _check_fpr_range(fpr_range), _check_log_auc_average(average)
        super().__init__(num_classes, thresholds, None, ignore_index, validate_args, **kwargs)
        self.fpr_range, self.log_auc_average = bounds, chosen


class MultilabelLogAUC(_LogAUC, MultilabelROC):
    """TorchMetrics' `MultilabelLogAUC`: per label (`average=None` or "none") or their mean
    over the labels that are not NaN (`average="macro"`)."""

    def __init__(
        self,
        num_labels: int,
        fpr_range: tuple[float, float] = (0.001, 0.1),
        average: str | None = None,
        thresholds: int | list[float] | Tensor | None = None,
        ignore_index: int | None = None,
        validate_args: bool = True,
        **kwargs: Any,
    ) -> None:
        bounds, chosen = _check_fpr_range(fpr_range), _check_log_auc_average(average)
        super().__init__(num_labels, thresholds, ignore_index, validate_args, **kwargs)
        self.fpr_range, self.log_auc_average = bounds, chosen
