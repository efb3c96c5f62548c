"""TorchMetrics' hinge loss (binary; multiclass Crammer-Singer or one-vs-all) on two summed
float64 states. TorchMetrics drops `ignore_index` rows with a boolean mask (a data-dependent
shape); here they get weight 0, and the sigmoid/softmax of logits is decided over the counted
rows with `torch.where`, so the update has fixed shapes and never reads the data on the host.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import torch
from torch import Tensor

from torchtally._errors import ErrorKinds
from torchtally.compat.torchmetrics._base import Metric

__all__ = ["BinaryHingeLoss", "MulticlassHingeLoss"]

_MODES = ("crammer-singer", "one-vs-all")


class _HingeLoss(Metric):
    error_kinds = ErrorKinds(
        invalid_targets="targets that are neither a valid label nor ignore_index"
    )
    higher_is_better = False
    plot_lower_bound = 0.0
    is_differentiable = True

    def _setup(self, squared: Any, ignore_index: Any, validate_args: bool, width: int) -> None:
        if not isinstance(squared, bool):
            raise ValueError(f"Argument `squared` must be a bool. Received: squared={squared!r}")
        if ignore_index is not None and (
            not isinstance(ignore_index, int) or isinstance(ignore_index, bool)
        ):
            raise ValueError(
                "Argument `ignore_index` must be None or an integer. "
                f"Received: ignore_index={ignore_index!r}"
            )
        self.squared, self.ignore_index = squared, ignore_index
        self.validate_args = validate_args
        shape = () if width == 1 else (width,)
        self.register_state("measures", torch.zeros(shape, dtype=torch.float64), False, "sum")
        self.register_state("total", torch.zeros((), dtype=torch.float64), False, "sum")

    def _measures(self, margin: Tensor, counted: Tensor, invalid: Tensor) -> dict[str, Tensor]:
        measures = (1 - margin).clamp(min=0)
        if self.squared:
            measures = measures * measures
        weight = counted.to(measures.dtype)
        if measures.dim() == 2:
            weight = weight.unsqueeze(-1)
        batch: dict[str, Any] = {
            "measures": (measures * weight).sum(0).double(),
            "total": counted.double().sum(),
        }
        if self.validate_args:
            batch["_errors"] = {"invalid_targets": invalid}
        return batch

    def _value(self, state: Mapping[str, Tensor]) -> Tensor:
        # The metric's dtype (TorchMetrics' float states: the default dtype, or `set_dtype`'s);
        # the functions set it to the scores' dtype, as TorchMetrics' return: a float64
        # gradcheck of a float32 result differentiates rounding noise.
        return (state["measures"] / state["total"]).to(self.dtype)


def _check_scores(preds: Any, expected: str, target: Tensor, shape_ok: bool = True) -> None:
    if not isinstance(preds, Tensor) or not preds.is_floating_point() or not shape_ok:
        raise ValueError(
            f"Argument `preds` must be float scores or logits of shape {expected} (order: "
            f"update(preds, target)). Received: {getattr(preds, 'dtype', type(preds).__name__)}"
            f" of shape {tuple(getattr(preds, 'shape', ()))}, target {tuple(target.shape)}"
        )


class BinaryHingeLoss(_HingeLoss):
    """TorchMetrics' `BinaryHingeLoss`: mean of `max(0, 1 - margin)` (squared if `squared`),
    the margin being the score (sigmoid if logits) for a positive target and minus it for a
    negative one."""

    def __init__(
        self,
        squared: bool = False,
        ignore_index: int | None = None,
        validate_args: bool = True,
        **kwargs: Any,
    ) -> None:
        super().__init__(**kwargs)
        self._setup(squared, ignore_index, validate_args, 1)

    def _batch(self, preds: Tensor, target: Tensor) -> dict[str, Tensor]:
        _check_scores(preds, "like `target`", target)
        _check_scores(preds, "like `target`", target, preds.shape == target.shape)
        p, t = preds.reshape(-1), target.reshape(-1)
        binary = (t == 0) | (t == 1)
        ignored = torch.zeros_like(binary) if self.ignore_index is None else t == self.ignore_index
        counted = binary & ~ignored
        inside = (((p >= 0) & (p <= 1)) | ~counted).all()
        p = torch.where(inside, p, p.sigmoid())
        margin = torch.where(t == 1, p, -p)
        return self._measures(margin, counted, (~binary & ~ignored).sum())


class MulticlassHingeLoss(_HingeLoss):
    """TorchMetrics' `MulticlassHingeLoss`: scores (softmax if logits) of shape `(N, C, ...)`;
    `multiclass_mode="crammer-singer"` takes the target's score minus the best other score as
    the margin (one value), `"one-vs-all"` a binary hinge loss per class (a `(C,)` value)."""

    def __init__(
        self,
        num_classes: int,
        squared: bool = False,
        multiclass_mode: str = "crammer-singer",
        ignore_index: int | None = None,
        validate_args: bool = True,
        **kwargs: Any,
    ) -> None:
        if not isinstance(num_classes, int) or isinstance(num_classes, bool) or num_classes < 2:
            raise ValueError(
                f"Argument `num_classes` must be an integer >= 2. Received: num_classes={num_classes!r}"
            )
        if multiclass_mode not in _MODES:
            raise ValueError(
                f"Argument `multiclass_mode` must be one of {_MODES}. "
                f"Received: multiclass_mode={multiclass_mode!r}"
            )
        super().__init__(**kwargs)
        self.num_classes, self.multiclass_mode = num_classes, multiclass_mode
        width = num_classes if multiclass_mode == "one-vs-all" else 1
        self._setup(squared, ignore_index, validate_args, width)

    def _batch(self, preds: Tensor, target: Tensor) -> dict[str, Tensor]:
        classes = self.num_classes
        expected = f"(N, {classes}, ...) for target (N, ...)"
        _check_scores(preds, expected, target)
        shape_ok = preds.dim() == target.dim() + 1 and preds.shape[1] == classes
        _check_scores(preds, expected, target, shape_ok)
        scores = preds.movedim(1, -1).reshape(-1, classes)
        t = target.reshape(-1).long()
        in_range = (t >= 0) & (t < classes)
        ignored = (
            torch.zeros_like(in_range) if self.ignore_index is None else t == self.ignore_index
        )
        counted = in_range & ~ignored
        inside = (((scores >= 0) & (scores <= 1)) | ~counted.unsqueeze(-1)).all()
        scores = torch.where(inside, scores, scores.softmax(-1))
        is_target = torch.nn.functional.one_hot(t.clamp(0, classes - 1), classes).bool()
        if self.multiclass_mode == "crammer-singer":
            own = (scores * is_target).sum(-1)
            others = torch.where(is_target, float("-inf"), scores).max(-1).values
            margin = own - others
        else:
            margin = torch.where(is_target, scores, -scores)
        return self._measures(margin, counted, (~in_range & ~ignored).sum())
