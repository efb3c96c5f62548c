"""`ScalePerParamLR`: another schedule's rate, scaled per parameter group (muP-style)."""

from __future__ import annotations

from typing import Any

import torch
from torch import Tensor

from torchtally.optim.lr_scheduler._base import LRScheduler

__all__ = ["ScalePerParamLR"]


class ScalePerParamLR(LRScheduler):
    """Each parameter group gets `scheduler`'s rate times the group's `adjust_learning_rate`
    (or `adjust_val`; default 1.0), as `cstorch.optim.lr_scheduler.ScalePerParamLR`.

    The factors are read from the groups once, at construction (as Cerebras does).
    `configure_param_groups` sets them from a config's `adjust_learning_rate`.

    Args:
        optimizer: The optimizer whose learning rates are scheduled.
        scheduler: The wrapped schedule (built on the same optimizer).

    Example:
        >>> from torchtally.optim.lr_scheduler import ConstantLR
        >>> a, b = torch.zeros(1, requires_grad=True), torch.zeros(1, requires_grad=True)
        >>> opt = torch.optim.SGD([{"params": [a]}, {"params": [b], "adjust_learning_rate": 0.5}],
        ...                       lr=1.0)
        >>> scheduler = ScalePerParamLR(opt, ConstantLR(opt, 0.2))
        >>> scheduler.get_last_lr()
        [tensor(0.2000), tensor(0.1000)]
    """

    def __init__(self, optimizer: torch.optim.Optimizer, scheduler: LRScheduler) -> None:
        if not isinstance(scheduler, LRScheduler):
            raise ValueError(
                "Argument `scheduler` must be a torchtally LRScheduler. "
                f"Received: scheduler={type(scheduler).__name__}"
            )
        if scheduler.param_group_key != self.param_group_key:
            raise ValueError(
                f"Argument `scheduler` must set the parameter groups' {self.param_group_key!r}, "
                f"as this wrapper does. Received: a scheduler of {scheduler.param_group_key!r}"
            )
        if scheduler.optimizer is not optimizer:
            raise ValueError(
                "Argument `scheduler` must schedule the same optimizer as this ScalePerParamLR."
            )
        self.scheduler = scheduler
        self.adjustment_scalars = [
            float(group.get("adjust_learning_rate", group.get("adjust_val", 1.0)))
            for group in optimizer.param_groups
        ]
        self.initial_learning_rate = scheduler.initial_learning_rate
        super().__init__(optimizer, total_iters=scheduler.total_iters)

    def _get_closed_form_lr(self) -> Tensor:
        self.scheduler.last_epoch.copy_(self.last_epoch)
        return self.scheduler._closed_form_checked()

    def get_lr(self) -> list[float | Tensor]:
        """The wrapped rate times each group's factor, one per parameter group."""
        return list(self._scaled())

    def _scaled(self) -> list[Tensor]:
        lr = self._closed_form_checked()
        return [lr * scale for scale in self.adjustment_scalars]

    def _apply_lr(self) -> None:
        rates = self._scaled()
        for group, rate in zip(self.optimizer.param_groups, rates):
            if self.applies_to(group):
                self._write(group, rate)
        self._last_lr = list(rates)

    def state_dict(self) -> dict[str, Any]:
        """The step count and the wrapped schedule's state (under cstorch's key).

        Returns:
            `{"last_epoch": int, "_scheduler": {...}}`.
        """
        saved = super().state_dict()
        saved["_scheduler"] = self.scheduler.state_dict()
        return saved
