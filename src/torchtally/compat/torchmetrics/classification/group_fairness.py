"""`torchmetrics.classification.group_fairness`: TorchMetrics 1.9's `BinaryGroupStatRates`
and `BinaryFairness` on four preallocated `(num_groups,)` int64 count states (`tp`, `fp`,
`tn`, `fn`, TorchMetrics' names), updated by one `index_add_` per batch with no host read.

Each sample's counts go to the row of its group identifier (TorchMetrics 1.9 adds a batch's
counts to the rows of the groups present in it, numbered in sorted order, so a batch without
group 0 lands in the wrong rows: the same values whenever every group appears in every
batch). Invalid targets, label predictions and group identifiers outside
`[0, num_groups)` are left out and raise at `compute` (TorchMetrics raises in `update`, a host
read per batch).
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping
from typing import Any

import torch
from torch import Tensor

from torchtally._errors import ErrorKinds
from torchtally.compat.torchmetrics._base import Metric
from torchtally.compat.torchmetrics.functional.classification._checks import check_binary_args
from torchtally.compat.torchmetrics.functional.classification.group_fairness import (
    check_fairness_task,
    check_groups,
    fairness_ratios,
    group_stat_scores,
    stat_rates,
)

__all__ = ["BinaryFairness", "BinaryGroupStatRates"]


class _GroupStatScores(Metric):
    """The per-group counts shared by both classes."""

    error_kinds = ErrorKinds(
        invalid_values="targets that are neither 0/1 nor ignore_index, or label predictions "
        "that are not 0/1",
        invalid_groups="group identifiers outside [0, num_groups)",
    )
    is_differentiable = False
    higher_is_better = False
    full_state_update = False
    plot_lower_bound, plot_upper_bound = 0.0, 1.0

    def _setup(
        self, num_groups: Any, threshold: float, ignore_index: int | None, validate_args: bool
    ) -> None:
        if validate_args:
            check_binary_args(threshold, "global", ignore_index)
        if not isinstance(num_groups, int) or isinstance(num_groups, bool) or num_groups < 1:
            raise ValueError(
                "Argument `num_groups` must be an integer >= 1 (the per-group counts are "
                f"preallocated). Received: num_groups={num_groups!r}"
            )
        self.num_groups = num_groups
        self.threshold, self.ignore_index = threshold, ignore_index
        self.validate_args = validate_args
        for name in ("tp", "fp", "tn", "fn"):
            self.register_state(name, torch.zeros(num_groups, dtype=torch.int64), False, "sum")

    def _counts(self, preds: Tensor, target: Tensor, groups: Tensor) -> dict[str, Tensor]:
        if not isinstance(preds, Tensor) or not isinstance(target, Tensor):
            raise ValueError(
                "Arguments `preds` and `target` must be tensors (order: update(preds, target, "
                f"groups)). Received: {type(preds).__name__}, {type(target).__name__}"
            )
        if preds.shape != target.shape:
            raise ValueError(
                "Arguments `preds` and `target` must have the same shape. Received: preds "
                f"{tuple(preds.shape)}, target {tuple(target.shape)}"
            )
        check_groups(preds, groups)
        (tp, fp, tn, fn), _, invalid, unknown = group_stat_scores(
            preds, target, groups, self.num_groups, self.threshold, self.ignore_index
        )
        batch: dict[str, Any] = {"tp": tp, "fp": fp, "tn": tn, "fn": fn}
        if self.validate_args:
            batch["_errors"] = {"invalid_values": invalid, "invalid_groups": unknown}
        else:  # an identifier out of range cannot be counted anywhere: never silent
            batch["_errors"] = {"invalid_groups": unknown}
        return batch

    @staticmethod
    def _stats(state: Mapping[str, Tensor]) -> tuple[Tensor, Tensor, Tensor, Tensor]:
        return state["tp"], state["fp"], state["tn"], state["fn"]


class BinaryGroupStatRates(_GroupStatScores):
    """TorchMetrics' `BinaryGroupStatRates`: per group, `(tp, fp, tn, fn)` over the group's
    total, as `{"group_<id>": tensor}` for each of the `num_groups` groups (NaN for a group
    without counted samples).

    Example:
        >>> metric = BinaryGroupStatRates(num_groups=2)
        >>> metric(torch.tensor([0, 1, 0, 1]), torch.tensor([0, 1, 1, 1]), torch.tensor([0, 1, 0, 1]))
        {'group_0': tensor([0.0000, 0.0000, 0.5000, 0.5000]), 'group_1': tensor([1., 0., 0., 0.])}
    """

    def __init__(
        self,
        num_groups: int,
        threshold: float = 0.5,
        ignore_index: int | None = None,
        validate_args: bool = True,
        **kwargs: Any,
    ) -> None:
        super().__init__(**kwargs)
        self._setup(num_groups, threshold, ignore_index, validate_args)

    def _batch(self, preds: Tensor, target: Tensor, groups: Tensor) -> dict[str, Tensor]:
        return self._counts(preds, target, groups)

    def _value(self, state: Mapping[str, Tensor]) -> dict[str, Tensor]:
        rates = stat_rates(self._stats(state))
        return {f"group_{i}": rates[i] for i in range(self.num_groups)}


class BinaryFairness(_GroupStatScores):
    """TorchMetrics' `BinaryFairness`: demographic parity (the lowest positive-prediction rate
    of the `num_groups` groups over the highest, `"DP_<low>_<high>"`) and/or equal opportunity
    (the same of true positive rates, `"EO_<low>_<high>"`), by `task`.

    Example:
        >>> metric = BinaryFairness(num_groups=2)
        >>> metric(torch.tensor([0, 1, 1, 1]), torch.tensor([1, 1, 1, 1]), torch.tensor([0, 0, 1, 1]))
        {'DP_0_1': tensor(0.5000), 'EO_0_1': tensor(0.5000)}
    """

    def __init__(
        self,
        num_groups: int,
        task: str = "all",
        threshold: float = 0.5,
        ignore_index: int | None = None,
        validate_args: bool = True,
        **kwargs: Any,
    ) -> None:
        check_fairness_task(task)
        super().__init__(**kwargs)
        self.task = task
        self._setup(num_groups, threshold, ignore_index, validate_args)

    def _batch(self, preds: Tensor, target: Tensor, groups: Tensor) -> dict[str, Tensor]:
        if self.task == "demographic_parity":
            if target is not None:
                warnings.warn(
                    "The task demographic_parity does not require a target.",
                    UserWarning,
                    stacklevel=3,
                )
            shape = preds.shape if isinstance(preds, Tensor) else ()
            target = torch.zeros(shape, dtype=torch.long, device=groups.device)
        return self._counts(preds, target, groups)

    def _value(self, state: Mapping[str, Tensor]) -> dict[str, Tensor]:
        return fairness_ratios(self._stats(state), self.task)
