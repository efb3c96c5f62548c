"""TorchMetrics 1.9's calibration error, hinge loss and multilabel ranking metrics as functions:
each is the compatible class's value on one batch (`one_batch`), with TorchMetrics' argument
order, defaults and input checks."""

from __future__ import annotations

from typing import Any

from torch import Tensor

from torchtally.compat.torchmetrics.functional._one_batch import compat_class, one_batch
from torchtally.compat.torchmetrics.functional.classification._checks import (
    check_binary_tensors,
    check_float_preds,
    check_int_arg,
    check_multiclass_tensors,
    check_multilabel_tensors,
    check_task,
)

__all__ = [
    "binary_calibration_error",
    "binary_hinge_loss",
    "calibration_error",
    "hinge_loss",
    "multiclass_calibration_error",
    "multiclass_hinge_loss",
    "multilabel_coverage_error",
    "multilabel_ranking_average_precision",
    "multilabel_ranking_loss",
]


def _in_dtype_of(metric: Any, preds: Tensor) -> None:
    """TorchMetrics' functions return the scores' floating dtype (its classes, their states'):
    the metric's value is cast to its dtype, so it takes the scores'."""
    if isinstance(preds, Tensor) and preds.is_floating_point():
        metric.set_dtype(preds.dtype)


def _binary_value(metric: Any, preds: Tensor, target: Tensor, validate_args: bool) -> Tensor:
    if validate_args:
        check_binary_tensors(preds, target, "global", metric.ignore_index)
        check_float_preds(preds)
    return one_batch(metric, preds, target, validate_args=validate_args)  # type: ignore[no-any-return]


def _multiclass_value(
    metric: Any, preds: Tensor, target: Tensor, num_classes: int, validate_args: bool
) -> Tensor:
    if validate_args:
        check_multiclass_tensors(preds, target, num_classes, "global", metric.ignore_index)
        check_float_preds(preds)
    return one_batch(metric, preds, target, validate_args=validate_args)  # type: ignore[no-any-return]


def _multilabel_value(
    metric: Any, preds: Tensor, target: Tensor, num_labels: int, validate_args: bool
) -> Tensor:
    if validate_args:
        check_multilabel_tensors(preds, target, num_labels, "global", metric.ignore_index)
        check_float_preds(preds)
    return one_batch(metric, preds, target, validate_args=validate_args)  # type: ignore[no-any-return]


def binary_calibration_error(
    preds: Tensor,
    target: Tensor,
    n_bins: int = 15,
    norm: str = "l1",
    ignore_index: int | None = None,
    validate_args: bool = True,
) -> Tensor:
    """Top-label calibration error of a binary task over `n_bins` equal-width bins."""
    metric = compat_class("BinaryCalibrationError")(n_bins, norm, ignore_index, validate_args)
    _in_dtype_of(metric, preds)
    return _binary_value(metric, preds, target, validate_args)


def multiclass_calibration_error(
    preds: Tensor,
    target: Tensor,
    num_classes: int,
    n_bins: int = 15,
    norm: str = "l1",
    ignore_index: int | None = None,
    validate_args: bool = True,
) -> Tensor:
    """Top-label calibration error of a multiclass task."""
    metric = compat_class("MulticlassCalibrationError")(
        num_classes, n_bins, norm, ignore_index, validate_args
    )
    _in_dtype_of(metric, preds)
    return _multiclass_value(metric, preds, target, num_classes, validate_args)


def calibration_error(
    preds: Tensor,
    target: Tensor,
    task: str,
    n_bins: int = 15,
    norm: str = "l1",
    num_classes: int | None = None,
    ignore_index: int | None = None,
    validate_args: bool = True,
) -> Tensor:
    """`binary_calibration_error` or `multiclass_calibration_error` by `task`."""
    task = check_task(task, ("binary", "multiclass"))
    if task == "binary":
        return binary_calibration_error(preds, target, n_bins, norm, ignore_index, validate_args)
    check_int_arg("num_classes", num_classes, task)
    assert isinstance(num_classes, int)
    return multiclass_calibration_error(
        preds, target, num_classes, n_bins, norm, ignore_index, validate_args
    )


def binary_hinge_loss(
    preds: Tensor,
    target: Tensor,
    squared: bool = False,
    ignore_index: int | None = None,
    validate_args: bool = False,
) -> Tensor:
    """Mean hinge loss of a binary task (squared with `squared=True`)."""
    metric = compat_class("BinaryHingeLoss")(squared, ignore_index, validate_args)
    _in_dtype_of(metric, preds)
    return _binary_value(metric, preds, target, validate_args)


def multiclass_hinge_loss(
    preds: Tensor,
    target: Tensor,
    num_classes: int,
    squared: bool = False,
    multiclass_mode: str = "crammer-singer",
    ignore_index: int | None = None,
    validate_args: bool = False,
) -> Tensor:
    """Mean hinge loss of a multiclass task, Crammer-Singer or one-vs-all."""
    metric = compat_class("MulticlassHingeLoss")(
        num_classes, squared, multiclass_mode, ignore_index, validate_args
    )
    _in_dtype_of(metric, preds)
    return _multiclass_value(metric, preds, target, num_classes, validate_args)


def hinge_loss(
    preds: Tensor,
    target: Tensor,
    task: str,
    num_classes: int | None = None,
    squared: bool = False,
    multiclass_mode: str = "crammer-singer",
    ignore_index: int | None = None,
    validate_args: bool = True,
) -> Tensor:
    """`binary_hinge_loss` or `multiclass_hinge_loss` by `task`."""
    task = check_task(task, ("binary", "multiclass"))
    if task == "binary":
        return binary_hinge_loss(preds, target, squared, ignore_index, validate_args)
    check_int_arg("num_classes", num_classes, task)
    assert isinstance(num_classes, int)
    return multiclass_hinge_loss(
        preds, target, num_classes, squared, multiclass_mode, ignore_index, validate_args
    )


def multilabel_coverage_error(
    preds: Tensor,
    target: Tensor,
    num_labels: int,
    ignore_index: int | None = None,
    validate_args: bool = True,
) -> Tensor:
    """How far down the ranked labels one must go to cover every relevant label."""
    metric = compat_class("MultilabelCoverageError")(num_labels, ignore_index, validate_args)
    return _multilabel_value(metric, preds, target, num_labels, validate_args)


def multilabel_ranking_average_precision(
    preds: Tensor,
    target: Tensor,
    num_labels: int,
    ignore_index: int | None = None,
    validate_args: bool = True,
) -> Tensor:
    """Label ranking average precision of a multilabel task."""
    metric = compat_class("MultilabelRankingAveragePrecision")(
        num_labels, ignore_index, validate_args
    )
    return _multilabel_value(metric, preds, target, num_labels, validate_args)


def multilabel_ranking_loss(
    preds: Tensor,
    target: Tensor,
    num_labels: int,
    ignore_index: int | None = None,
    validate_args: bool = True,
) -> Tensor:
    """Label ranking loss: the fraction of (relevant, irrelevant) pairs ranked wrongly."""
    metric = compat_class("MultilabelRankingLoss")(num_labels, ignore_index, validate_args)
    return _multilabel_value(metric, preds, target, num_labels, validate_args)
