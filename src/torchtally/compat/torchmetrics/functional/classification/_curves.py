"""TorchMetrics 1.9's curve family as functions: ROC, precision-recall curve, AUROC, average
precision, the fixed-point metrics (precision at recall, ...), equal error rate and log AUC.

Each function is the compatible class's value on one batch (`one_batch`: its `_batch` then its
`_value`, what its `forward` returns), so the function and the class share every point, tie and
reduction. Here: TorchMetrics' argument order and defaults, its input checks and messages under
`validate_args`, and its warning for an exact PR curve without positives.
"""

from __future__ import annotations

import warnings
from typing import Any

from torch import Tensor

from torchtally.compat.torchmetrics.functional._one_batch import compat_class, one_batch
from torchtally.compat.torchmetrics.functional.classification._checks import (
    check_binary_curve_tensors,
    check_int_arg,
    check_multiclass_curve_tensors,
    check_multilabel_curve_tensors,
    check_task,
)

__all__ = [
    "auroc",
    "average_precision",
    "binary_auroc",
    "binary_average_precision",
    "binary_eer",
    "binary_logauc",
    "binary_precision_at_fixed_recall",
    "binary_precision_recall_curve",
    "binary_recall_at_fixed_precision",
    "binary_roc",
    "binary_sensitivity_at_specificity",
    "binary_specificity_at_sensitivity",
    "eer",
    "logauc",
    "multiclass_auroc",
    "multiclass_average_precision",
    "multiclass_eer",
    "multiclass_logauc",
    "multiclass_precision_at_fixed_recall",
    "multiclass_precision_recall_curve",
    "multiclass_recall_at_fixed_precision",
    "multiclass_roc",
    "multiclass_sensitivity_at_specificity",
    "multiclass_specificity_at_sensitivity",
    "multilabel_auroc",
    "multilabel_average_precision",
    "multilabel_eer",
    "multilabel_logauc",
    "multilabel_precision_at_fixed_recall",
    "multilabel_precision_recall_curve",
    "multilabel_recall_at_fixed_precision",
    "multilabel_roc",
    "multilabel_sensitivity_at_specificity",
    "multilabel_specificity_at_sensitivity",
    "precision_at_fixed_recall",
    "precision_recall_curve",
    "recall_at_fixed_precision",
    "roc",
    "sensitivity_at_specificity",
    "specificity_at_sensitivity",
]

_TASKS = ("binary", "multiclass", "multilabel")

Thresholds = int | list[float] | Tensor | None


def _buffer(thresholds: Thresholds) -> dict[str, Any]:
    """The exact mode's buffer holds one batch here (it is never filled: the value is computed
    from the batch itself), so it is the smallest one, not the class's default capacity."""
    return {"capacity": 1} if thresholds is None else {}


def _binary(
    cls: str,
    preds: Tensor,
    target: Tensor,
    thresholds: Thresholds,
    ignore_index: int | None,
    validate_args: bool,
    **arguments: Any,
) -> Any:
    metric = compat_class(cls)(
        thresholds=thresholds,
        ignore_index=ignore_index,
        validate_args=validate_args,
        **arguments,
        **_buffer(thresholds),
    )
    if validate_args:
        check_binary_curve_tensors(preds, target, ignore_index)
    return one_batch(metric, preds, target, validate_args=validate_args)


def _multiclass(
    cls: str,
    preds: Tensor,
    target: Tensor,
    num_classes: int,
    thresholds: Thresholds,
    ignore_index: int | None,
    validate_args: bool,
    **arguments: Any,
) -> Any:
    metric = compat_class(cls)(
        num_classes,
        thresholds=thresholds,
        ignore_index=ignore_index,
        validate_args=validate_args,
        **arguments,
        **_buffer(thresholds),
    )
    if validate_args:
        check_multiclass_curve_tensors(preds, target, num_classes, ignore_index)
    return one_batch(metric, preds, target, validate_args=validate_args)


def _multilabel(
    cls: str,
    preds: Tensor,
    target: Tensor,
    num_labels: int,
    thresholds: Thresholds,
    ignore_index: int | None,
    validate_args: bool,
    **arguments: Any,
) -> Any:
    metric = compat_class(cls)(
        num_labels,
        thresholds=thresholds,
        ignore_index=ignore_index,
        validate_args=validate_args,
        **arguments,
        **_buffer(thresholds),
    )
    if validate_args:
        check_multilabel_curve_tensors(preds, target, num_labels, ignore_index)
    return one_batch(metric, preds, target, validate_args=validate_args)


def _warn_without_positives(
    target: Tensor, thresholds: Thresholds, ignore_index: int | None
) -> None:
    """TorchMetrics' warning of an exact binary PR curve whose (kept) targets are all 0."""
    if thresholds is not None or not isinstance(target, Tensor):
        return
    kept = target if ignore_index is None else target[target != ignore_index]
    if not bool((kept == 1).any()):
        warnings.warn(
            "No positive samples found in target, recall is undefined. Setting recall to one "
            "for all thresholds.",
            UserWarning,
            stacklevel=3,
        )


def _classes(task: str, num_classes: int | None) -> int:
    check_int_arg("num_classes", num_classes, task)
    assert isinstance(num_classes, int)
    return num_classes


def _labels(task: str, num_labels: int | None) -> int:
    check_int_arg("num_labels", num_labels, task)
    assert isinstance(num_labels, int)
    return num_labels


# ------------------------------------------------------------------------------------ ROC


def binary_roc(
    preds: Tensor,
    target: Tensor,
    thresholds: Thresholds = None,
    ignore_index: int | None = None,
    validate_args: bool = True,
) -> tuple[Tensor, Tensor, Tensor]:
    """`(fpr, tpr, thresholds)` of a binary task, thresholds decreasing."""
    return _binary("BinaryROC", preds, target, thresholds, ignore_index, validate_args)  # type: ignore[no-any-return]


def multiclass_roc(
    preds: Tensor,
    target: Tensor,
    num_classes: int,
    thresholds: Thresholds = None,
    average: str | None = None,
    ignore_index: int | None = None,
    validate_args: bool = True,
) -> Any:
    """One-vs-rest ROC per class (`average=None`), or one micro/macro-averaged curve."""
    return _multiclass(
        "MulticlassROC",
        preds,
        target,
        num_classes,
        thresholds,
        ignore_index,
        validate_args,
        average=average,
    )


def multilabel_roc(
    preds: Tensor,
    target: Tensor,
    num_labels: int,
    thresholds: Thresholds = None,
    ignore_index: int | None = None,
    validate_args: bool = True,
) -> Any:
    """ROC per label."""
    return _multilabel(
        "MultilabelROC", preds, target, num_labels, thresholds, ignore_index, validate_args
    )


def roc(
    preds: Tensor,
    target: Tensor,
    task: str,
    thresholds: Thresholds = None,
    num_classes: int | None = None,
    num_labels: int | None = None,
    average: str | None = None,
    ignore_index: int | None = None,
    validate_args: bool = True,
) -> Any:
    """`binary_roc`, `multiclass_roc` or `multilabel_roc` by `task`."""
    task = check_task(task, _TASKS)
    if task == "binary":
        return binary_roc(preds, target, thresholds, ignore_index, validate_args)
    if task == "multiclass":
        return multiclass_roc(
            preds,
            target,
            _classes(task, num_classes),
            thresholds,
            average,
            ignore_index,
            validate_args,
        )
    return multilabel_roc(
        preds, target, _labels(task, num_labels), thresholds, ignore_index, validate_args
    )


# ------------------------------------------------------------------- precision-recall curve


def binary_precision_recall_curve(
    preds: Tensor,
    target: Tensor,
    thresholds: Thresholds = None,
    ignore_index: int | None = None,
    validate_args: bool = True,
) -> tuple[Tensor, Tensor, Tensor]:
    """`(precision, recall, thresholds)` of a binary task; the last point is (1, 0)."""
    value = _binary(
        "BinaryPrecisionRecallCurve", preds, target, thresholds, ignore_index, validate_args
    )
    _warn_without_positives(target, thresholds, ignore_index)
    return value  # type: ignore[no-any-return]


def multiclass_precision_recall_curve(
    preds: Tensor,
    target: Tensor,
    num_classes: int,
    thresholds: Thresholds = None,
    average: str | None = None,
    ignore_index: int | None = None,
    validate_args: bool = True,
) -> Any:
    """One-vs-rest PR curve per class (`average=None`), or one micro/macro-averaged curve."""
    return _multiclass(
        "MulticlassPrecisionRecallCurve",
        preds,
        target,
        num_classes,
        thresholds,
        ignore_index,
        validate_args,
        average=average,
    )


def multilabel_precision_recall_curve(
    preds: Tensor,
    target: Tensor,
    num_labels: int,
    thresholds: Thresholds = None,
    ignore_index: int | None = None,
    validate_args: bool = True,
) -> Any:
    """PR curve per label."""
    return _multilabel(
        "MultilabelPrecisionRecallCurve",
        preds,
        target,
        num_labels,
        thresholds,
        ignore_index,
        validate_args,
    )


def precision_recall_curve(
    preds: Tensor,
    target: Tensor,
    task: str,
    thresholds: Thresholds = None,
    num_classes: int | None = None,
    num_labels: int | None = None,
    average: str | None = None,
    ignore_index: int | None = None,
    validate_args: bool = True,
) -> Any:
    """The `binary_`, `multiclass_` or `multilabel_precision_recall_curve` by `task`."""
    task = check_task(task, _TASKS)
    if task == "binary":
        return binary_precision_recall_curve(preds, target, thresholds, ignore_index, validate_args)
    if task == "multiclass":
        return multiclass_precision_recall_curve(
            preds,
            target,
            _classes(task, num_classes),
            thresholds,
            average,
            ignore_index,
            validate_args,
        )
    return multilabel_precision_recall_curve(
        preds, target, _labels(task, num_labels), thresholds, ignore_index, validate_args
    )


# ------------------------------------------------------------------------------------ AUROC


def binary_auroc(
    preds: Tensor,
    target: Tensor,
    max_fpr: float | None = None,
    thresholds: Thresholds = None,
    ignore_index: int | None = None,
    validate_args: bool = True,
) -> Tensor:
    """Area under the ROC of a binary task (McClish-standardized partial area with `max_fpr`)."""
    return _binary(  # type: ignore[no-any-return]
        "BinaryAUROC",
        preds,
        target,
        thresholds,
        ignore_index,
        validate_args,
        max_fpr=max_fpr,
    )


def multiclass_auroc(
    preds: Tensor,
    target: Tensor,
    num_classes: int,
    average: str | None = "macro",
    thresholds: Thresholds = None,
    ignore_index: int | None = None,
    validate_args: bool = True,
) -> Tensor:
    """One-vs-rest AUROC per class, averaged `macro`, `weighted` or not (`none`/None)."""
    return _multiclass(  # type: ignore[no-any-return]
        "MulticlassAUROC",
        preds,
        target,
        num_classes,
        thresholds,
        ignore_index,
        validate_args,
        average=average,
    )


def multilabel_auroc(
    preds: Tensor,
    target: Tensor,
    num_labels: int,
    average: str | None = "macro",
    thresholds: Thresholds = None,
    ignore_index: int | None = None,
    validate_args: bool = True,
) -> Tensor:
    """AUROC per label, averaged `micro`, `macro`, `weighted` or not."""
    return _multilabel(  # type: ignore[no-any-return]
        "MultilabelAUROC",
        preds,
        target,
        num_labels,
        thresholds,
        ignore_index,
        validate_args,
        average=average,
    )


def auroc(
    preds: Tensor,
    target: Tensor,
    task: str,
    thresholds: Thresholds = None,
    num_classes: int | None = None,
    num_labels: int | None = None,
    average: str | None = "macro",
    max_fpr: float | None = None,
    ignore_index: int | None = None,
    validate_args: bool = True,
) -> Tensor | None:
    """`binary_auroc`, `multiclass_auroc` or `multilabel_auroc` by `task`."""
    task = check_task(task, _TASKS)
    if task == "binary":
        return binary_auroc(preds, target, max_fpr, thresholds, ignore_index, validate_args)
    if task == "multiclass":
        return multiclass_auroc(
            preds,
            target,
            _classes(task, num_classes),
            average,
            thresholds,
            ignore_index,
            validate_args,
        )
    return multilabel_auroc(
        preds, target, _labels(task, num_labels), average, thresholds, ignore_index, validate_args
    )


# -------------------------------------------------------------------------- average precision


def binary_average_precision(
    preds: Tensor,
    target: Tensor,
    thresholds: Thresholds = None,
    ignore_index: int | None = None,
    validate_args: bool = True,
) -> Tensor:
    """Average precision (the step sum over the PR curve) of a binary task."""
    value = _binary(
        "BinaryAveragePrecision", preds, target, thresholds, ignore_index, validate_args
    )
    _warn_without_positives(target, thresholds, ignore_index)
    return value  # type: ignore[no-any-return]


def multiclass_average_precision(
    preds: Tensor,
    target: Tensor,
    num_classes: int,
    average: str | None = "macro",
    thresholds: Thresholds = None,
    ignore_index: int | None = None,
    validate_args: bool = True,
) -> Tensor:
    """One-vs-rest average precision per class, averaged `macro`, `weighted` or not."""
    return _multiclass(  # type: ignore[no-any-return]
        "MulticlassAveragePrecision",
        preds,
        target,
        num_classes,
        thresholds,
        ignore_index,
        validate_args,
        average=average,
    )


def multilabel_average_precision(
    preds: Tensor,
    target: Tensor,
    num_labels: int,
    average: str | None = "macro",
    thresholds: Thresholds = None,
    ignore_index: int | None = None,
    validate_args: bool = True,
) -> Tensor:
    """Average precision per label, averaged `micro`, `macro`, `weighted` or not."""
    return _multilabel(  # type: ignore[no-any-return]
        "MultilabelAveragePrecision",
        preds,
        target,
        num_labels,
        thresholds,
        ignore_index,
        validate_args,
        average=average,
    )


def average_precision(
    preds: Tensor,
    target: Tensor,
    task: str,
    thresholds: Thresholds = None,
    num_classes: int | None = None,
    num_labels: int | None = None,
    average: str | None = "macro",
    ignore_index: int | None = None,
    validate_args: bool = True,
) -> Tensor | None:
    """The `binary_`, `multiclass_` or `multilabel_average_precision` by `task`."""
    task = check_task(task, _TASKS)
    if task == "binary":
        return binary_average_precision(preds, target, thresholds, ignore_index, validate_args)
    if task == "multiclass":
        return multiclass_average_precision(
            preds,
            target,
            _classes(task, num_classes),
            average,
            thresholds,
            ignore_index,
            validate_args,
        )
    return multilabel_average_precision(
        preds, target, _labels(task, num_labels), average, thresholds, ignore_index, validate_args
    )


# ----------------------------------------------------------------------- fixed-point metrics


def binary_precision_at_fixed_recall(
    preds: Tensor,
    target: Tensor,
    min_recall: float,
    thresholds: Thresholds = None,
    ignore_index: int | None = None,
    validate_args: bool = True,
) -> tuple[Tensor, Tensor]:
    """`(precision, threshold)`: the highest precision with recall at least `min_recall`."""
    return _binary(  # type: ignore[no-any-return]
        "BinaryPrecisionAtFixedRecall",
        preds,
        target,
        thresholds,
        ignore_index,
        validate_args,
        min_recall=min_recall,
    )


def multiclass_precision_at_fixed_recall(
    preds: Tensor,
    target: Tensor,
    num_classes: int,
    min_recall: float,
    thresholds: Thresholds = None,
    ignore_index: int | None = None,
    validate_args: bool = True,
) -> tuple[Tensor, Tensor]:
    """`(precision, threshold)` per class (one-vs-rest)."""
    return _multiclass(  # type: ignore[no-any-return]
        "MulticlassPrecisionAtFixedRecall",
        preds,
        target,
        num_classes,
        thresholds,
        ignore_index,
        validate_args,
        min_recall=min_recall,
    )


def multilabel_precision_at_fixed_recall(
    preds: Tensor,
    target: Tensor,
    num_labels: int,
    min_recall: float,
    thresholds: Thresholds = None,
    ignore_index: int | None = None,
    validate_args: bool = True,
) -> tuple[Tensor, Tensor]:
    """`(precision, threshold)` per label."""
    return _multilabel(  # type: ignore[no-any-return]
        "MultilabelPrecisionAtFixedRecall",
        preds,
        target,
        num_labels,
        thresholds,
        ignore_index,
        validate_args,
        min_recall=min_recall,
    )


def precision_at_fixed_recall(
    preds: Tensor,
    target: Tensor,
    task: str,
    min_recall: float,
    thresholds: Thresholds = None,
    num_classes: int | None = None,
    num_labels: int | None = None,
    ignore_index: int | None = None,
    validate_args: bool = True,
) -> tuple[Tensor, Tensor] | None:
    """The `binary_`, `multiclass_` or `multilabel_precision_at_fixed_recall` by `task`."""
    task = check_task(task, _TASKS)
    if task == "binary":
        return binary_precision_at_fixed_recall(
            preds, target, min_recall, thresholds, ignore_index, validate_args
        )
    if task == "multiclass":
        return multiclass_precision_at_fixed_recall(
            preds,
            target,
            _classes(task, num_classes),
            min_recall,
            thresholds,
            ignore_index,
            validate_args,
        )
    return multilabel_precision_at_fixed_recall(
        preds,
        target,
        _labels(task, num_labels),
        min_recall,
        thresholds,
        ignore_index,
        validate_args,
    )


def binary_recall_at_fixed_precision(
    preds: Tensor,
    target: Tensor,
    min_precision: float,
    thresholds: Thresholds = None,
    ignore_index: int | None = None,
    validate_args: bool = True,
) -> tuple[Tensor, Tensor]:
    """`(recall, threshold)`: the highest recall with precision at least `min_precision`."""
    return _binary(  # type: ignore[no-any-return]
        "BinaryRecallAtFixedPrecision",
        preds,
        target,
        thresholds,
        ignore_index,
        validate_args,
        min_precision=min_precision,
    )


def multiclass_recall_at_fixed_precision(
    preds: Tensor,
    target: Tensor,
    num_classes: int,
    min_precision: float,
    thresholds: Thresholds = None,
    ignore_index: int | None = None,
    validate_args: bool = True,
) -> tuple[Tensor, Tensor]:
    """`(recall, threshold)` per class (one-vs-rest)."""
    return _multiclass(  # type: ignore[no-any-return]
        "MulticlassRecallAtFixedPrecision",
        preds,
        target,
        num_classes,
        thresholds,
        ignore_index,
        validate_args,
        min_precision=min_precision,
    )


def multilabel_recall_at_fixed_precision(
    preds: Tensor,
    target: Tensor,
    num_labels: int,
    min_precision: float,
    thresholds: Thresholds = None,
    ignore_index: int | None = None,
    validate_args: bool = True,
) -> tuple[Tensor, Tensor]:
    """`(recall, threshold)` per label."""
    return _multilabel(  # type: ignore[no-any-return]
        "MultilabelRecallAtFixedPrecision",
        preds,
        target,
        num_labels,
        thresholds,
        ignore_index,
        validate_args,
        min_precision=min_precision,
    )


def recall_at_fixed_precision(
    preds: Tensor,
    target: Tensor,
    task: str,
    min_precision: float,
    thresholds: Thresholds = None,
    num_classes: int | None = None,
    num_labels: int | None = None,
    ignore_index: int | None = None,
    validate_args: bool = True,
) -> tuple[Tensor, Tensor] | None:
    """The `binary_`, `multiclass_` or `multilabel_recall_at_fixed_precision` by `task`."""
    task = check_task(task, _TASKS)
    if task == "binary":
        return binary_recall_at_fixed_precision(
            preds, target, min_precision, thresholds, ignore_index, validate_args
        )
    if task == "multiclass":
        return multiclass_recall_at_fixed_precision(
            preds,
            target,
            _classes(task, num_classes),
            min_precision,
            thresholds,
            ignore_index,
            validate_args,
        )
    return multilabel_recall_at_fixed_precision(
        preds,
        target,
        _labels(task, num_labels),
        min_precision,
        thresholds,
        ignore_index,
        validate_args,
    )


def binary_sensitivity_at_specificity(
    preds: Tensor,
    target: Tensor,
    min_specificity: float,
    thresholds: Thresholds = None,
    ignore_index: int | None = None,
    validate_args: bool = True,
) -> tuple[Tensor, Tensor]:
    """`(sensitivity, threshold)`: the highest sensitivity with specificity at least
    `min_specificity`."""
    return _binary(  # type: ignore[no-any-return]
        "BinarySensitivityAtSpecificity",
        preds,
        target,
        thresholds,
        ignore_index,
        validate_args,
        min_specificity=min_specificity,
    )


def multiclass_sensitivity_at_specificity(
    preds: Tensor,
    target: Tensor,
    num_classes: int,
    min_specificity: float,
    thresholds: Thresholds = None,
    ignore_index: int | None = None,
    validate_args: bool = True,
) -> tuple[Tensor, Tensor]:
    """`(sensitivity, threshold)` per class (one-vs-rest)."""
    return _multiclass(  # type: ignore[no-any-return]
        "MulticlassSensitivityAtSpecificity",
        preds,
        target,
        num_classes,
        thresholds,
        ignore_index,
        validate_args,
        min_specificity=min_specificity,
    )


def multilabel_sensitivity_at_specificity(
    preds: Tensor,
    target: Tensor,
    num_labels: int,
    min_specificity: float,
    thresholds: Thresholds = None,
    ignore_index: int | None = None,
    validate_args: bool = True,
) -> tuple[Tensor, Tensor]:
    """`(sensitivity, threshold)` per label."""
    return _multilabel(  # type: ignore[no-any-return]
        "MultilabelSensitivityAtSpecificity",
        preds,
        target,
        num_labels,
        thresholds,
        ignore_index,
        validate_args,
        min_specificity=min_specificity,
    )


def sensitivity_at_specificity(
    preds: Tensor,
    target: Tensor,
    task: str,
    min_specificity: float,
    thresholds: Thresholds = None,
    num_classes: int | None = None,
    num_labels: int | None = None,
    ignore_index: int | None = None,
    validate_args: bool = True,
) -> tuple[Tensor, Tensor]:
    """The `binary_`, `multiclass_` or `multilabel_sensitivity_at_specificity` by `task`."""
    task = check_task(task, _TASKS)
    if task == "binary":
        return binary_sensitivity_at_specificity(
            preds, target, min_specificity, thresholds, ignore_index, validate_args
        )
    if task == "multiclass":
        return multiclass_sensitivity_at_specificity(
            preds,
            target,
            _classes(task, num_classes),
            min_specificity,
            thresholds,
            ignore_index,
            validate_args,
        )
    return multilabel_sensitivity_at_specificity(
        preds,
        target,
        _labels(task, num_labels),
        min_specificity,
        thresholds,
        ignore_index,
        validate_args,
    )


def binary_specificity_at_sensitivity(
    preds: Tensor,
    target: Tensor,
    min_sensitivity: float,
    thresholds: Thresholds = None,
    ignore_index: int | None = None,
    validate_args: bool = True,
) -> tuple[Tensor, Tensor]:
    """`(specificity, threshold)`: the highest specificity with sensitivity at least
    `min_sensitivity`."""
    return _binary(  # type: ignore[no-any-return]
        "BinarySpecificityAtSensitivity",
        preds,
        target,
        thresholds,
        ignore_index,
        validate_args,
        min_sensitivity=min_sensitivity,
    )


def multiclass_specificity_at_sensitivity(
    preds: Tensor,
    target: Tensor,
    num_classes: int,
    min_sensitivity: float,
    thresholds: Thresholds = None,
    ignore_index: int | None = None,
    validate_args: bool = True,
) -> tuple[Tensor, Tensor]:
    """`(specificity, threshold)` per class (one-vs-rest)."""
    return _multiclass(  # type: ignore[no-any-return]
        "MulticlassSpecificityAtSensitivity",
        preds,
        target,
        num_classes,
        thresholds,
        ignore_index,
        validate_args,
        min_sensitivity=min_sensitivity,
    )


def multilabel_specificity_at_sensitivity(
    preds: Tensor,
    target: Tensor,
    num_labels: int,
    min_sensitivity: float,
    thresholds: Thresholds = None,
    ignore_index: int | None = None,
    validate_args: bool = True,
) -> tuple[Tensor, Tensor]:
    """`(specificity, threshold)` per label."""
    return _multilabel(  # type: ignore[no-any-return]
        "MultilabelSpecificityAtSensitivity",
        preds,
        target,
        num_labels,
        thresholds,
        ignore_index,
        validate_args,
        min_sensitivity=min_sensitivity,
    )


def specificity_at_sensitivity(
    preds: Tensor,
    target: Tensor,
    task: str,
    min_sensitivity: float,
    thresholds: Thresholds = None,
    num_classes: int | None = None,
    num_labels: int | None = None,
    ignore_index: int | None = None,
    validate_args: bool = True,
) -> tuple[Tensor, Tensor]:
    """The `binary_`, `multiclass_` or `multilabel_specificity_at_sensitivity` by `task`."""
    task = check_task(task, _TASKS)
    if task == "binary":
        return binary_specificity_at_sensitivity(
            preds, target, min_sensitivity, thresholds, ignore_index, validate_args
        )
    if task == "multiclass":
        return multiclass_specificity_at_sensitivity(
            preds,
            target,
            _classes(task, num_classes),
            min_sensitivity,
            thresholds,
            ignore_index,
            validate_args,
        )
    return multilabel_specificity_at_sensitivity(
        preds,
        target,
        _labels(task, num_labels),
        min_sensitivity,
        thresholds,
        ignore_index,
        validate_args,
    )


def _convert_fpr_to_specificity(fpr: Tensor) -> Tensor:
    """TorchMetrics' private conversion of false positive rates to specificities."""
    return 1 - fpr


# ------------------------------------------------------------------- equal error rate, log AUC


def binary_eer(
    preds: Tensor,
    target: Tensor,
    thresholds: Thresholds = None,
    ignore_index: int | None = None,
    validate_args: bool = True,
) -> Tensor:
    """Equal error rate: where the false positive rate meets the false negative rate."""
    return _binary("BinaryEER", preds, target, thresholds, ignore_index, validate_args)  # type: ignore[no-any-return]


def multiclass_eer(
    preds: Tensor,
    target: Tensor,
    num_classes: int,
    thresholds: Thresholds = None,
    average: str | None = None,
    ignore_index: int | None = None,
    validate_args: bool = True,
) -> Tensor:
    """Equal error rate per class (one-vs-rest), or of the micro/macro-averaged ROC."""
    return _multiclass(  # type: ignore[no-any-return]
        "MulticlassEER",
        preds,
        target,
        num_classes,
        thresholds,
        ignore_index,
        validate_args,
        average=average,
    )


def multilabel_eer(
    preds: Tensor,
    target: Tensor,
    num_labels: int,
    thresholds: Thresholds = None,
    ignore_index: int | None = None,
    validate_args: bool = True,
) -> Tensor:
    """Equal error rate per label."""
    return _multilabel(  # type: ignore[no-any-return]
        "MultilabelEER", preds, target, num_labels, thresholds, ignore_index, validate_args
    )


def eer(
    preds: Tensor,
    target: Tensor,
    task: str,
    thresholds: Thresholds = None,
    num_classes: int | None = None,
    num_labels: int | None = None,
    average: str | None = None,
    ignore_index: int | None = None,
    validate_args: bool = True,
) -> Tensor:
    """`binary_eer`, `multiclass_eer` or `multilabel_eer` by `task`."""
    task = check_task(task, _TASKS)
    if task == "binary":
        return binary_eer(preds, target, thresholds, ignore_index, validate_args)
    if task == "multiclass":
        return multiclass_eer(
            preds,
            target,
            _classes(task, num_classes),
            thresholds,
            average,
            ignore_index,
            validate_args,
        )
    return multilabel_eer(
        preds, target, _labels(task, num_labels), thresholds, ignore_index, validate_args
    )


def binary_logauc(
    preds: Tensor,
    target: Tensor,
    fpr_range: tuple[float, float] = (0.001, 0.1),
    thresholds: Thresholds = None,
    ignore_index: int | None = None,
    validate_args: bool = True,
) -> Tensor:
    """Area under the ROC against log10(fpr) over `fpr_range`, normalized by its log width."""
    return _binary(  # type: ignore[no-any-return]
        "BinaryLogAUC",
        preds,
        target,
        thresholds,
        ignore_index,
        validate_args,
        fpr_range=fpr_range,
    )


def multiclass_logauc(
    preds: Tensor,
    target: Tensor,
    num_classes: int,
    fpr_range: tuple[float, float] = (0.001, 0.1),
    average: str | None = "macro",
    thresholds: Thresholds = None,
    ignore_index: int | None = None,
    validate_args: bool = True,
) -> Tensor:
    """Log AUC per class (one-vs-rest), or their mean (`macro`)."""
    return _multiclass(  # type: ignore[no-any-return]
        "MulticlassLogAUC",
        preds,
        target,
        num_classes,
        thresholds,
        ignore_index,
        validate_args,
        fpr_range=fpr_range,
        average=average,
    )


def multilabel_logauc(
    preds: Tensor,
    target: Tensor,
    num_labels: int,
    fpr_range: tuple[float, float] = (0.001, 0.1),
    average: str | None = "macro",
    thresholds: Thresholds = None,
    ignore_index: int | None = None,
    validate_args: bool = True,
) -> Tensor:
    """Log AUC per label, or their mean (`macro`)."""
    return _multilabel(  # type: ignore[no-any-return]
        "MultilabelLogAUC",
        preds,
        target,
        num_labels,
        thresholds,
        ignore_index,
        validate_args,
        fpr_range=fpr_range,
        average=average,
    )


def logauc(
    preds: Tensor,
    target: Tensor,
    task: str,
    thresholds: Thresholds = None,
    num_classes: int | None = None,
    num_labels: int | None = None,
    fpr_range: tuple[float, float] = (0.001, 0.1),
    average: str | None = None,
    ignore_index: int | None = None,
    validate_args: bool = True,
) -> Tensor | None:
    """`binary_logauc`, `multiclass_logauc` or `multilabel_logauc` by `task`."""
    task = check_task(task, _TASKS)
    if task == "binary":
        return binary_logauc(preds, target, fpr_range, thresholds, ignore_index, validate_args)
    if task == "multiclass":
        return multiclass_logauc(
            preds,
            target,
            _classes(task, num_classes),
            fpr_range,
            average,
            thresholds,
            ignore_index,
            validate_args,
        )
    return multilabel_logauc(
        preds,
        target,
        _labels(task, num_labels),
        fpr_range,
        average,
        thresholds,
        ignore_index,
        validate_args,
    )
