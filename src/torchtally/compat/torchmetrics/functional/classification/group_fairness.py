"""`torchmetrics.functional.classification.group_fairness`: TorchMetrics 1.9's group fairness
functions (`binary_groups_stat_rates`, `demographic_parity`, `equal_opportunity`,
`binary_fairness`) and the per-group counting the classes share.

The counts are the binary confusion matrix of the stat-score family
(`binary_confmat_update`: TorchMetrics' sigmoid of logits, threshold and `ignore_index`), one
per sample, summed into its group's row with one `index_add_`: fixed shapes, no host read.

Groups are keyed by their identifier. TorchMetrics 1.9 numbers the groups present in a batch
in sorted order instead, so where an identifier is absent its keys (and, in its classes, the
rows a batch is added to) name the wrong group; with the identifiers `0 .. k-1` all present
(its documented input) both agree. The functions report the groups present, as TorchMetrics;
the classes every one of their `num_groups` groups, as TorchMetrics' preallocated states.
"""

from __future__ import annotations

import warnings
from typing import Any

import torch
from torch import Tensor

from torchtally.compat.torchmetrics.functional._stat_scores import (
    binary_confmat_update,
    safe_divide,
)
from torchtally.compat.torchmetrics.functional.classification._checks import (
    check_binary_args,
    check_binary_tensors,
)

__all__ = [
    "binary_fairness",
    "binary_groups_stat_rates",
    "demographic_parity",
    "equal_opportunity",
]

_TASKS = ("demographic_parity", "equal_opportunity", "all")

#: `(tp, fp, tn, fn)`, each `(G,)` int64.
GroupStats = tuple[Tensor, Tensor, Tensor, Tensor]


def check_fairness_task(task: Any) -> None:
    """TorchMetrics' check (and message) of `task`."""
    if task not in _TASKS:
        raise ValueError(
            "Expected argument `task` to either be ``demographic_parity``,"
            f"``equal_opportunity`` or ``all`` but got {task}."
        )


def check_groups(preds: Any, groups: Any) -> None:
    """What the counting needs of `groups` (checked from metadata only): a long tensor with
    one identifier per sample (TorchMetrics' dtype message)."""
    if not isinstance(groups, Tensor):
        raise ValueError(
            "Argument `groups` must be a tensor of group identifiers. "
            f"Received: {type(groups).__name__}"
        )
    if groups.dtype != torch.long:
        raise ValueError(f"Expected dtype of argument groups to be long, not {groups.dtype}.")
    samples = preds.shape[0] if isinstance(preds, Tensor) and preds.dim() else 1
    if groups.numel() != samples:
        raise ValueError(
            "Argument `groups` must hold one group identifier per sample (dimension 0 of "
            f"`preds`: {samples}). Received: groups of shape {tuple(groups.shape)}"
        )


def group_stat_scores(
    preds: Tensor,
    target: Tensor,
    groups: Tensor,
    num_groups: int,
    threshold: float = 0.5,
    ignore_index: int | None = None,
) -> tuple[GroupStats, Tensor, Tensor, Tensor]:
    """Per group: `(tp, fp, tn, fn)` of one batch, the samples seen (ignored positions
    included: TorchMetrics' notion of a group being present), the count of invalid
    target/prediction values and of group identifiers outside `[0, num_groups)` (left out).

    Example:
        >>> stats, seen, _, _ = group_stat_scores(
        ...     torch.tensor([0.9, 0.2, 0.7]), torch.tensor([1, 0, 0]), torch.tensor([0, 1, 1]), 2
        ... )
        >>> torch.stack(stats, 1)  # rows: groups; columns: tp, fp, tn, fn
        tensor([[1, 0, 0, 0],
                [0, 1, 1, 0]])
    """
    per_sample, invalid = binary_confmat_update(
        preds, target, threshold, ignore_index, samplewise=True
    )
    ids = groups.reshape(-1)
    known = (ids >= 0) & (ids < num_groups)
    row = torch.where(known, ids, 0)
    confmat = torch.zeros(num_groups, 2, 2, dtype=per_sample.dtype, device=per_sample.device)
    confmat.index_add_(0, row, per_sample * known.view(-1, 1, 1))
    seen = torch.zeros(num_groups, dtype=torch.int64, device=ids.device)
    seen.index_add_(0, row, known.long())
    stats = confmat[:, 1, 1], confmat[:, 0, 1], confmat[:, 0, 0], confmat[:, 1, 0]
    return stats, seen, invalid, (~known).sum()


def stat_rates(stats: GroupStats) -> Tensor:
    """`(G, 4)`: each group's `(tp, fp, tn, fn)` over its total (NaN for a group without
    counted samples, as TorchMetrics)."""
    table = torch.stack(stats, dim=1)
    return table / table.sum(1, keepdim=True)


def _ratio(rates: Tensor, ids: Tensor, prefix: str) -> dict[str, Tensor]:
    """TorchMetrics' disparity: the lowest rate over the highest (first of ties), keyed by
    both groups."""
    low, high = torch.argmin(rates), torch.argmax(rates)
    key = f"{prefix}_{int(ids[low])}_{int(ids[high])}"
    return {key: safe_divide(rates[low], rates[high])}


def fairness_ratios(stats: GroupStats, task: str, ids: Tensor | None = None) -> dict[str, Tensor]:
    """Demographic parity (positive rates) and/or equal opportunity (true positive rates)
    over the groups `ids` (default: every row of `stats`)."""
    tp, fp, tn, fn = stats
    if ids is None:
        ids = torch.arange(tp.numel(), device=tp.device)
    else:
        tp, fp, tn, fn = tp[ids], fp[ids], tn[ids], fn[ids]
    result: dict[str, Tensor] = {}
    if task in ("demographic_parity", "all"):
        result.update(_ratio(safe_divide(tp + fp, tp + fp + tn + fn), ids, "DP"))
    if task in ("equal_opportunity", "all"):
        result.update(_ratio(safe_divide(tp, tp + fn), ids, "EO"))
    return result


def _one_batch(
    preds: Tensor,
    target: Tensor,
    groups: Tensor,
    threshold: float,
    ignore_index: int | None,
    validate_args: bool,
) -> tuple[GroupStats, Tensor]:
    """The stats of the groups present and their identifiers."""
    if validate_args:
        check_binary_args(threshold, "global", ignore_index)
        check_binary_tensors(preds, target, "global", ignore_index)
    check_groups(preds, groups)
    if groups.numel() and int(groups.min()) < 0:
        raise ValueError(
            "Argument `groups` must hold group identifiers 0, 1, ..., num_groups - 1. "
            f"Received: a smallest identifier of {int(groups.min())}"
        )
    num_groups = int(groups.max()) + 1 if groups.numel() else 1
    stats, seen, _, _ = group_stat_scores(
        preds, target, groups, num_groups, threshold, ignore_index
    )
    return stats, torch.nonzero(seen).reshape(-1)


def binary_groups_stat_rates(
    preds: Tensor,
    target: Tensor,
    groups: Tensor,
    num_groups: int,
    threshold: float = 0.5,
    ignore_index: int | None = None,
    validate_args: bool = True,
) -> dict[str, Tensor]:
    """`{"group_<id>": (tp, fp, tn, fn) / total}` of each group present in `groups`
    (identifiers `0 .. num_groups - 1`).

    Example:
        >>> binary_groups_stat_rates(
        ...     torch.tensor([0, 1, 0, 1]), torch.tensor([0, 1, 1, 1]), torch.tensor([0, 1, 0, 1]), 2
        ... )
        {'group_0': tensor([0.0000, 0.0000, 0.5000, 0.5000]), 'group_1': tensor([1., 0., 0., 0.])}
    """
    too_large = isinstance(groups, Tensor) and groups.numel() and int(groups.max()) >= num_groups
    if validate_args and too_large:
        raise ValueError(
            "Argument `groups` must hold group identifiers 0, 1, ..., num_groups - 1 "
            f"(num_groups={num_groups}). Received: a largest identifier of {int(groups.max())}"
        )
    stats, ids = _one_batch(preds, target, groups, threshold, ignore_index, validate_args)
    rates = stat_rates(stats)
    return {f"group_{int(i)}": rates[i] for i in ids}


def demographic_parity(
    preds: Tensor,
    groups: Tensor,
    threshold: float = 0.5,
    ignore_index: int | None = None,
    validate_args: bool = True,
) -> dict[str, Tensor]:
    """`{"DP_<low>_<high>": ...}`: the lowest positive-prediction rate of the groups present
    over the highest.

    Example:
        >>> demographic_parity(torch.tensor([0, 1, 0, 1]), torch.tensor([0, 1, 0, 1]))
        {'DP_0_1': tensor(0.)}
    """
    target = torch.zeros(preds.shape, dtype=torch.long, device=preds.device)
    stats, ids = _one_batch(preds, target, groups, threshold, ignore_index, validate_args)
    return fairness_ratios(stats, "demographic_parity", ids)


def equal_opportunity(
    preds: Tensor,
    target: Tensor,
    groups: Tensor,
    threshold: float = 0.5,
    ignore_index: int | None = None,
    validate_args: bool = True,
) -> dict[str, Tensor]:
    """`{"EO_<low>_<high>": ...}`: the lowest true positive rate of the groups present over
    the highest.

    Example:
        >>> equal_opportunity(
        ...     torch.tensor([0, 1, 1, 1]), torch.tensor([1, 1, 1, 1]), torch.tensor([0, 0, 1, 1])
        ... )
        {'EO_0_1': tensor(0.5000)}
    """
    stats, ids = _one_batch(preds, target, groups, threshold, ignore_index, validate_args)
    return fairness_ratios(stats, "equal_opportunity", ids)


def binary_fairness(
    preds: Tensor,
    target: Tensor,
    groups: Tensor,
    task: str = "all",
    threshold: float = 0.5,
    ignore_index: int | None = None,
    validate_args: bool = True,
) -> dict[str, Tensor]:
    """Demographic parity (`task="demographic_parity"`, no target needed), equal opportunity
    (`"equal_opportunity"`) or both (`"all"`) over the groups present.

    Example:
        >>> binary_fairness(
        ...     torch.tensor([0, 1, 1, 1]), torch.tensor([1, 1, 1, 1]), torch.tensor([0, 0, 1, 1])
        ... )
        {'DP_0_1': tensor(0.5000), 'EO_0_1': tensor(0.5000)}
    """
    check_fairness_task(task)
    if task == "demographic_parity":
        if target is not None:
            warnings.warn(
                "The task demographic_parity does not require a target.", UserWarning, stacklevel=2
            )
        target = torch.zeros(preds.shape, dtype=torch.long, device=preds.device)
    stats, ids = _one_batch(preds, target, groups, threshold, ignore_index, validate_args)
    return fairness_ratios(stats, task, ids)
