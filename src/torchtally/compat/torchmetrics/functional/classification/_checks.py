"""TorchMetrics 1.9's argument and input checks of its classification functions.

The functions run them when `validate_args=True` (the default), before any arithmetic, with
TorchMetrics' exception types and messages (its tests match them), plus the checks TorchMetrics
leaves out and we do not: a class index out of range is an error here, not a count in another
cell. These run on the host (a functional call returns its value at once; it is not an update).
"""

from __future__ import annotations

from typing import Any

import torch
from torch import Tensor

__all__ = [
    "check_binary_args",
    "check_binary_tensors",
    "check_choice",
    "check_multiclass_args",
    "check_multiclass_tensors",
    "check_multilabel_args",
    "check_multilabel_tensors",
    "check_same_shape",
    "check_task",
    "check_tensors",
    "raise_invalid_values",
]

AVERAGES = ("micro", "macro", "weighted", "none", None)
MULTIDIM = ("global", "samplewise")


def check_task(task: Any, allowed: tuple[str, ...]) -> str:
    """TorchMetrics' task parsing: `-` reads as `_`; anything else is 'Invalid Task'."""
    value = task.replace("-", "_").lower() if isinstance(task, str) else task
    if value not in allowed:
        names = [name.upper() for name in allowed]
        raise ValueError(f"Invalid Classification: expected one of {names}, but got {task}.")
    return str(value)


def check_int_arg(name: str, value: Any, task: str) -> None:
    """The `task=` wrappers' check of `num_classes`/`num_labels`/`top_k`."""
    if not isinstance(value, int) or isinstance(value, bool):
        raise ValueError(
            f"Optional arg `{name}` must be type `int` when task is {task}. Got {type(value)}"
        )


def check_choice(name: str, value: Any, allowed: tuple[Any, ...]) -> None:
    if value not in allowed:
        raise ValueError(f"Expected argument `{name}` to be one of {allowed}, but got {value}.")


def check_tensors(preds: Any, target: Any) -> None:
    if not isinstance(preds, Tensor) or not isinstance(target, Tensor):
        raise TypeError(
            "Arguments `preds` and `target` must be tensors (order: preds, target). "
            f"Received: preds={type(preds).__name__}, target={type(target).__name__}"
        )


def check_same_shape(preds: Tensor, target: Tensor) -> None:
    if preds.shape != target.shape:
        raise RuntimeError(
            "Predictions and targets are expected to have the same shape, but got "
            f"{preds.shape} and {target.shape}."
        )


def _check_threshold(threshold: Any) -> None:
    if not (isinstance(threshold, float) and 0 <= threshold <= 1):
        raise ValueError(
            f"Expected argument `threshold` to be a float in the [0,1] range, but got {threshold}."
        )


def _check_ignore_index(ignore_index: Any) -> None:
    if ignore_index is not None and (
        not isinstance(ignore_index, int) or isinstance(ignore_index, bool)
    ):
        raise ValueError(
            "Expected argument `ignore_index` to either be `None` or an integer, but got "
            f"{ignore_index}"
        )


def _check_zero_division(zero_division: Any) -> None:
    if zero_division not in (0, 1):
        raise ValueError(
            f"Expected argument `zero_division` to be 0 or 1, but got {zero_division}."
        )


def check_binary_args(
    threshold: Any,
    multidim_average: Any = "global",
    ignore_index: Any = None,
    zero_division: Any = 0,
) -> None:
    _check_threshold(threshold)
    if multidim_average not in MULTIDIM:
        raise ValueError(
            f"Expected argument `multidim_average` to be one of {MULTIDIM}, but got "
            f"{multidim_average}"
        )
    _check_ignore_index(ignore_index)
    _check_zero_division(zero_division)


def check_multiclass_args(
    num_classes: Any,
    top_k: Any = 1,
    average: Any = "macro",
    multidim_average: Any = "global",
    ignore_index: Any = None,
    zero_division: Any = 0,
) -> None:
    if num_classes is None and average != "micro":
        raise ValueError(
            "Argument `num_classes` can only be `None` for `average='micro'`, but got "
            f"`average={average}`."
        )
    if num_classes is not None and (
        not isinstance(num_classes, int) or isinstance(num_classes, bool) or num_classes < 2
    ):
        raise ValueError(
            f"Expected argument `num_classes` to be an integer larger than 1, but got {num_classes}"
        )
    if not isinstance(top_k, int) or isinstance(top_k, bool) or top_k < 1:
        raise ValueError(
            f"Expected argument `top_k` to be an integer larger than or equal to 1, but got {top_k}"
        )
    if top_k > (num_classes if num_classes is not None else 1):
        raise ValueError(
            "Expected argument `top_k` to be smaller or equal to `num_classes` but got "
            f"{top_k} and {num_classes}"
        )
    check_choice("average", average, AVERAGES)
    if multidim_average not in MULTIDIM:
        raise ValueError(
            f"Expected argument `multidim_average` to be one of {MULTIDIM}, but got "
            f"{multidim_average}"
        )
    _check_ignore_index(ignore_index)
    _check_zero_division(zero_division)


def check_multilabel_args(
    num_labels: Any,
    threshold: Any = 0.5,
    average: Any = "macro",
    multidim_average: Any = "global",
    ignore_index: Any = None,
    zero_division: Any = 0,
) -> None:
    if not isinstance(num_labels, int) or isinstance(num_labels, bool) or num_labels < 2:
        raise ValueError(
            f"Expected argument `num_labels` to be an integer larger than 1, but got {num_labels}"
        )
    if not (isinstance(threshold, float) and 0 <= threshold <= 1):
        raise ValueError(f"Expected argument `threshold` to be a float, but got {threshold}.")
    check_choice("average", average, AVERAGES)
    if multidim_average not in MULTIDIM:
        raise ValueError(
            f"Expected argument `multidim_average` to be one of {MULTIDIM}, but got "
            f"{multidim_average}"
        )
    _check_ignore_index(ignore_index)
    _check_zero_division(zero_division)


def _check_zero_one(values: Tensor, name: str, ignore_index: int | None) -> None:
    unique = torch.unique(values)
    bad = (unique != 0) & (unique != 1)
    if name == "target" and ignore_index is not None:
        bad = bad & (unique != ignore_index)
    if bool(bad.any()):
        if name == "target":
            expected = [0, 1] if ignore_index is None else [ignore_index]
            raise RuntimeError(
                f"Detected the following values in `target`: {unique} but expected only the "
                f"following values {expected}."
            )
        raise RuntimeError(
            f"Detected the following values in `preds`: {unique} but expected only the "
            "following values [0,1] since `preds` is a label tensor."
        )


def check_binary_tensors(
    preds: Tensor, target: Tensor, multidim_average: str = "global", ignore_index: int | None = None
) -> None:
    check_tensors(preds, target)
    check_same_shape(preds, target)
    _check_zero_one(target, "target", ignore_index)
    if not preds.is_floating_point():
        _check_zero_one(preds, "preds", None)
    if multidim_average != "global" and preds.ndim < 2:
        raise ValueError(
            "Expected input to be at least 2D when multidim_average is set to `samplewise`"
        )


def check_multiclass_tensors(
    preds: Tensor,
    target: Tensor,
    num_classes: int | None,
    multidim_average: str = "global",
    ignore_index: int | None = None,
) -> None:
    check_tensors(preds, target)
    if preds.ndim == target.ndim + 1:
        if not preds.is_floating_point():
            raise ValueError(
                "If `preds` have one dimension more than `target`, `preds` should be a float "
                "tensor."
            )
        if num_classes is not None and preds.shape[1] != num_classes:
            raise ValueError(
                "If `preds` have one dimension more than `target`, `preds.shape[1]` should be "
                f"equal to number of classes. Received: preds.shape[1]={preds.shape[1]}, "
                f"num_classes={num_classes}"
            )
        if preds.shape[2:] != target.shape[1:]:
            raise ValueError(
                "If `preds` have one dimension more than `target`, the shape of `preds` should "
                "be (N, C, ...), and the shape of `target` should be (N, ...)."
            )
        if multidim_average != "global" and preds.ndim < 3:
            raise ValueError(
                "If `preds` have one dimension more than `target`, the shape of `preds` should "
                "be at least 3D when multidim_average is set to `samplewise`"
            )
    elif preds.ndim == target.ndim:
        if preds.shape != target.shape:
            raise ValueError(
                "The `preds` and `target` should have the same shape, got `preds` with "
                f"shape={preds.shape} and `target` with shape={target.shape}."
            )
        if multidim_average != "global" and preds.ndim < 2:
            raise ValueError(
                "When `preds` and `target` have the same shape, the shape of `preds` should be "
                "at least 2D when multidim_average is set to `samplewise`"
            )
    else:
        raise ValueError(
            "Either `preds` and `target` both should have the (same) shape (N, ...), or "
            "`target` should be (N, ...) and `preds` should be (N, C, ...)."
        )
    if num_classes is None:
        return
    check_value = num_classes if ignore_index is None else num_classes + 1
    named = [(target, "target")] + ([] if preds.is_floating_point() else [(preds, "preds")])
    for values, name in named:
        unique = torch.unique(values)
        if unique.numel() > check_value:
            raise RuntimeError(
                f"Detected more unique values in `{name}` than expected. Expected only "
                f"{check_value} but found {unique.numel()} in `{name}`. Found values: {unique}."
            )


def check_multilabel_tensors(
    preds: Tensor,
    target: Tensor,
    num_labels: int,
    multidim_average: str = "global",
    ignore_index: int | None = None,
) -> None:
    check_tensors(preds, target)
    check_same_shape(preds, target)
    if preds.ndim < 2 or preds.shape[1] != num_labels:
        raise ValueError(
            "Expected both `target.shape[1]` and `preds.shape[1]` to be equal to the number of "
            f"labels but got {preds.shape[1] if preds.ndim > 1 else None} and expected "
            f"{num_labels}"
        )
    _check_zero_one(target, "target", ignore_index)
    if not preds.is_floating_point():
        _check_zero_one(preds, "preds", None)
    if multidim_average != "global" and preds.ndim < 3:
        raise ValueError(
            "Expected input to be at least 3D when multidim_average is set to `samplewise`"
        )


def raise_invalid_values(invalid: Tensor, num_classes: int, ignore_index: int | None) -> None:
    """The values TorchMetrics' unique-count check lets through: a class index outside
    `[0, num_classes)` (and not `ignore_index`), which it would count in another cell or crash on."""
    if int(invalid) > 0:
        allowed = f"[0, {num_classes - 1}]" + (
            "" if ignore_index is None else f" or ignore_index={ignore_index}"
        )
        raise RuntimeError(
            f"Arguments `preds` and `target` must hold class indices in {allowed}. Received "
            f"{int(invalid)} value(s) outside that range."
        )


# ------------------------------------------------------------------- curves and their kin


def check_binary_curve_tensors(preds: Tensor, target: Tensor, ignore_index: int | None) -> None:
    """TorchMetrics' input checks of the binary curve family (ROC, PR curve, AUROC, ...)."""
    check_tensors(preds, target)
    check_same_shape(preds, target)
    if target.is_floating_point():
        raise ValueError(
            "Expected argument `target` to be an int or long tensor with ground truth labels "
            f"but got tensor with dtype {target.dtype}"
        )
    if not preds.is_floating_point():
        raise ValueError(
            "Expected argument `preds` to be an floating tensor with probability/logit scores, "
            f"but got tensor with dtype {preds.dtype}"
        )
    _check_zero_one(target, "target", ignore_index)


def check_multiclass_curve_tensors(
    preds: Tensor, target: Tensor, num_classes: int, ignore_index: int | None
) -> None:
    """TorchMetrics' input checks of the multiclass curve family."""
    check_tensors(preds, target)
    if preds.ndim != target.ndim + 1:
        raise ValueError(
            "Expected `preds` to have one more dimension than `target` but got "
            f"{preds.ndim} and {target.ndim}"
        )
    if target.is_floating_point():
        raise ValueError(
            "Expected argument `target` to be an int or long tensor, but got tensor with dtype "
            f"{target.dtype}"
        )
    if not preds.is_floating_point():
        raise ValueError(f"Expected `preds` to be a float tensor, but got {preds.dtype}")
    if preds.shape[1] != num_classes:
        raise ValueError(
            "Expected `preds.shape[1]` to be equal to the number of classes but got "
            f"{preds.shape[1]} and {num_classes}."
        )
    if preds.shape[0] != target.shape[0] or preds.shape[2:] != target.shape[1:]:
        raise ValueError(
            "Expected the shape of `preds` should be (N, C, ...) and the shape of `target` "
            f"should be (N, ...) but got {preds.shape} and {target.shape}"
        )
    expected = num_classes if ignore_index is None else num_classes + 1
    found = torch.unique(target).numel()
    if found > expected:
        raise RuntimeError(
            "Detected more unique values in `target` than `num_classes`. Expected only "
            f"{expected} but found {found} in `target`."
        )


def check_multilabel_curve_tensors(
    preds: Tensor, target: Tensor, num_labels: int, ignore_index: int | None
) -> None:
    """TorchMetrics' input checks of the multilabel curve family."""
    check_binary_curve_tensors(preds, target, ignore_index)
    if preds.ndim < 2 or preds.shape[1] != num_labels:
        raise ValueError(
            "Expected both `target.shape[1]` and `preds.shape[1]` to be equal to the number of "
            f"labels but got {preds.shape[1] if preds.ndim > 1 else None} and expected "
            f"{num_labels}"
        )


def check_float_preds(preds: Tensor) -> None:
    """Calibration, hinge and ranking metrics need scores, not labels."""
    if not preds.is_floating_point():
        raise ValueError(
            "Expected argument `preds` to be floating tensor with probabilities/logits but got "
            f"tensor with dtype {preds.dtype}"
        )
