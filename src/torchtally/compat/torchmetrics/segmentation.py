"""TorchMetrics 1.9's segmentation `MeanIoU` on torchtally: per-class IoU sums, one summed sync."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import torch
from torch import Tensor

from torchtally.compat.torchmetrics._base import Metric
from torchtally.compat.torchmetrics.functional._stat_scores import safe_divide

__all__ = ["MeanIoU"]

_FORMATS = ("one-hot", "index", "mixed")


class MeanIoU(Metric):
    """TorchMetrics' `MeanIoU`: the IoU of every (sample, class) whose union is non-empty,
    averaged over those pairs (`per_class=True`: per class; a class never seen gives -1).

    Inputs are `(N, C, ...)` one-hot masks or scores (scores are argmaxed over dimension 1),
    `(N, ...)` class indices (`input_format="index"`), or one of each (`"mixed"`). Unlike
    TorchMetrics, `num_classes` is required: the state is preallocated.
    """

    higher_is_better = True
    is_differentiable = False

    def __init__(
        self,
        num_classes: int | None = None,
        include_background: bool = True,
        per_class: bool = False,
        input_format: str = "one-hot",
        **kwargs: Any,
    ) -> None:
        if not isinstance(num_classes, int) or isinstance(num_classes, bool) or num_classes < 1:
            raise ValueError(
                "Argument `num_classes` must be an integer >= 1 (torchtally preallocates the "
                f"state, so it is not inferred from the first batch). Received: num_classes={num_classes!r}"
            )
        if input_format not in _FORMATS:
            raise ValueError(
                f"Argument `input_format` must be one of {_FORMATS}. Received: input_format={input_format!r}"
            )
        if not include_background and num_classes < 2:
            raise ValueError(
                "Argument `num_classes` must be >= 2 when include_background=False. "
                f"Received: num_classes={num_classes}"
            )
        super().__init__(**kwargs)
        self.num_classes, self.include_background = num_classes, bool(include_background)
        self.per_class, self.input_format = bool(per_class), input_format
        width = (num_classes - (0 if include_background else 1)) if per_class else 1
        self.register_state("score", torch.zeros(width, dtype=torch.float64), True, "sum")
        self.register_state("num_batches", torch.zeros(width, dtype=torch.float64), True, "sum")

    def _masks(self, x: Tensor, as_index: bool) -> Tensor:
        classes = self.num_classes
        if as_index:
            return (
                torch.nn.functional.one_hot(x.long().clamp(0, classes - 1), classes)
                .movedim(-1, 1)
                .bool()
            )
        if x.shape[1] != classes:
            raise ValueError(
                f"One-hot inputs must have {classes} classes in dimension 1. Received shape {tuple(x.shape)}"
            )
        if x.is_floating_point():
            return torch.nn.functional.one_hot(x.argmax(1), classes).movedim(-1, 1).bool()
        return x.bool()

    def _batch(self, preds: Tensor, target: Tensor) -> dict[str, Tensor]:
        if self.input_format == "mixed":
            preds_index, target_index = (
                preds.dim() + 1 == target.dim(),
                target.dim() + 1 == preds.dim(),
            )
            if not (preds_index or target_index):
                raise ValueError(
                    "With input_format='mixed' one input must be (N, C, ...) and the other (N, ...). "
                    f"Received: preds {tuple(preds.shape)}, target {tuple(target.shape)}"
                )
        else:
            if preds.shape != target.shape:
                raise ValueError(
                    "Arguments `preds` and `target` must have the same shape. Received: preds "
                    f"{tuple(preds.shape)}, target {tuple(target.shape)}"
                )
            preds_index = target_index = self.input_format == "index"
        p, t = self._masks(preds, preds_index), self._masks(target, target_index)
        if p.dim() < 3:
            raise ValueError(
                f"Inputs must have at least 3 dimensions (N, C, ...). Received {p.dim()}"
            )
        if not self.include_background:
            p, t = p[:, 1:], t[:, 1:]
        dims = list(range(2, p.dim()))
        intersection = (p & t).sum(dims)
        union = t.sum(dims) + p.sum(dims) - intersection
        valid = union > 0
        score = torch.where(valid, safe_divide(intersection, union).double(), 0.0)
        if self.per_class:
            return {"score": score.sum(0), "num_batches": valid.double().sum(0)}
        return {"score": score.sum().reshape(1), "num_batches": valid.double().sum().reshape(1)}

    def _value(self, state: Mapping[str, Tensor]) -> Tensor:
        value = state["score"] / state["num_batches"]
        value = value.to(torch.get_default_dtype())
        return value.nan_to_num(-1.0) if self.per_class else value.nanmean()
