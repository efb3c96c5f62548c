"""TorchMetrics 1.9's segmentation `MeanIoU` on torchtally: per-class IoU sums, one summed sync."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import torch
from torch import Tensor

from torchtally.compat.torchmetrics._base import Metric
from torchtally.compat.torchmetrics.functional._stat_scores import safe_divide

__all__ = ["DiceScore", "MeanIoU"]

_FORMATS = ("one-hot", "index", "mixed")


class MeanIoU(Metric):
    """TorchMetrics' `MeanIoU`: the IoU of every (sample, class) whose union is non-empty,
    averaged over those pairs (`per_class=True`: per class; a class never seen gives -1).

    Inputs are `(N, C, ...)` one-hot masks or scores (scores are argmaxed over dimension 1),
    `(N, ...)` class indices (`input_format="index"`), or one of each (`"mixed"`). Unlike
    TorchMetrics, `num_classes` is required: the state is preallocated.
    """

    higher_is_better = True
    plot_lower_bound, plot_upper_bound = 0.0, 1.0
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
        self.register_state("score", torch.zeros(width, dtype=torch.float64), False, "sum")
        self.register_state("num_batches", torch.zeros(width, dtype=torch.float64), False, "sum")

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

    def _pair(self, preds: Tensor, target: Tensor) -> tuple[Tensor, Tensor]:
        """Both inputs as `(N, C', ...)` boolean masks (background dropped if asked)."""
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
        return p, t

    def _batch(self, preds: Tensor, target: Tensor) -> dict[str, Tensor]:
        p, t = self._pair(preds, target)
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


_AVERAGES = ("micro", "macro", "weighted", "none", None)
_LEVELS = ("samplewise", "global")


def _divide_or_nan(num: Tensor, denom: Tensor) -> Tensor:
    return safe_divide(num.double(), denom.double(), float("nan"))


def _reduce_dice(
    numerator: Tensor, denominator: Tensor, support: Tensor, average: str | None
) -> Tensor:
    """Per-row Dice `(R, C)` reduced over classes as TorchMetrics does (0/0 is NaN)."""
    if average == "micro":
        return _divide_or_nan(numerator.sum(-1), denominator.sum(-1))
    dice = _divide_or_nan(numerator, denominator)
    if average == "macro":
        return dice.nanmean(-1)
    if average == "weighted":
        weights = _divide_or_nan(support, support.sum(-1, keepdim=True))
        all_nan = dice.isnan().all(-1)
        return torch.where(all_nan, float("nan"), (dice * weights).nansum(-1))
    return dice


class DiceScore(MeanIoU):
    """TorchMetrics' `DiceScore`: `2|P∩T| / (|P| + |T|)` per sample and class, reduced over
    classes by `average` and over samples by NaN-ignoring mean (`aggregation_level="samplewise"`),
    or from counts summed over all samples (`"global"`).

    TorchMetrics keeps every sample's counts in lists; the per-sample values it averages at the
    end are computed per batch here and summed (with their count), so memory is constant.
    """

    def __init__(
        self,
        num_classes: int,
        include_background: bool = True,
        average: str | None = "macro",
        aggregation_level: str | None = "samplewise",
        input_format: str = "one-hot",
        **kwargs: Any,
    ) -> None:
        if average not in _AVERAGES:
            raise ValueError(
                f"Argument `average` must be one of {_AVERAGES}. Received: average={average!r}"
            )
        if aggregation_level not in _LEVELS:
            raise ValueError(
                f"Argument `aggregation_level` must be one of {_LEVELS}. "
                f"Received: aggregation_level={aggregation_level!r}"
            )
        super().__init__(num_classes, include_background, False, input_format, **kwargs)
        self.average, self.aggregation_level = average, aggregation_level
        classes = num_classes - (0 if include_background else 1)
        # MeanIoU's states are not used by Dice; registering over them keeps one state model.
        width = classes if average is None or average == "none" else 1
        if aggregation_level == "global":
            self.register_state("score", torch.zeros(classes, dtype=torch.float64), False, "sum")
            self.register_state(
                "num_batches", torch.zeros(classes, dtype=torch.float64), False, "sum"
            )
            self.register_state("support", torch.zeros(classes, dtype=torch.float64), False, "sum")
        else:
            self.register_state("score", torch.zeros(width, dtype=torch.float64), False, "sum")
            self.register_state(
                "num_batches", torch.zeros(width, dtype=torch.float64), False, "sum"
            )
            self.register_state("support", torch.zeros(width, dtype=torch.float64), False, "sum")

    def _batch(self, preds: Tensor, target: Tensor) -> dict[str, Tensor]:
        p, t = self._pair(preds, target)
        dims = list(range(2, p.dim()))
        p, t = p.double(), t.double()
        numerator = 2 * (p * t).sum(dims)
        denominator = p.sum(dims) + t.sum(dims)
        support = t.sum(dims)
        if self.aggregation_level == "global":
            # score/num_batches/support hold the numerator/denominator/support sums here.
            return {
                "score": numerator.sum(0),
                "num_batches": denominator.sum(0),
                "support": support.sum(0),
            }
        values = _reduce_dice(numerator, denominator, support, self.average)
        values = values.reshape(values.shape[0], -1)
        seen = ~values.isnan()
        return {
            "score": torch.where(seen, values, 0.0).sum(0),
            "num_batches": seen.double().sum(0),
            "support": torch.zeros_like(values[0]),
        }

    def _value(self, state: Mapping[str, Tensor]) -> Tensor:
        if self.aggregation_level == "global":
            numerator, denominator, support = (
                state[k].unsqueeze(0) for k in ("score", "num_batches", "support")
            )
            value = _reduce_dice(numerator, denominator, support, self.average).nanmean(0)
        else:
            value = state["score"] / state["num_batches"]
            if self.average is not None and self.average != "none":
                value = value.reshape(())
        return value.to(torch.get_default_dtype())
