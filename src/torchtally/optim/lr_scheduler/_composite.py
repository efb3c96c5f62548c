"""`SequentialLR` and `ChainedScheduler`: schedules made of other schedules."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, cast

import torch
from torch import Tensor

from torchtally.optim.lr_scheduler._base import LRScheduler
from torchtally.optim.lr_scheduler._checks import check_milestones

__all__ = ["ChainedScheduler", "SequentialLR"]


def _check_schedulers(
    schedulers: Any, optimizer: torch.optim.Optimizer | None, key: str
) -> tuple[list[LRScheduler], torch.optim.Optimizer]:
    """The schedulers as a list, and the one optimizer they all schedule."""
    if not isinstance(schedulers, (list, tuple)) or not schedulers:
        raise ValueError(
            "Argument `schedulers` must be a non-empty list of torchtally LRSchedulers. "
            f"Received: schedulers={schedulers!r}"
        )
    for index, scheduler in enumerate(schedulers):
        if not isinstance(scheduler, LRScheduler):
            raise ValueError(
                f"Argument `schedulers[{index}]` must be a torchtally LRScheduler (a closed "
                f"form). Received: {type(scheduler).__name__}"
            )
        if scheduler.param_group_key != key:
            raise ValueError(
                f"Argument `schedulers[{index}]` must set the parameter groups' {key!r}, as "
                f"this composite does. Received: a scheduler of {scheduler.param_group_key!r}"
            )
    optimizer = schedulers[0].optimizer if optimizer is None else optimizer
    for index, scheduler in enumerate(schedulers):
        if scheduler.optimizer is not optimizer:
            raise ValueError(
                f"Argument `schedulers[{index}]` schedules a different optimizer; every "
                "scheduler must schedule the same one."
            )
    return list(schedulers), optimizer


class _Composite(LRScheduler):
    """Saves and restores its children with itself."""

    _schedulers: list[LRScheduler]

    def state_dict(self) -> dict[str, Any]:
        """The step count and each child's state.

        Returns:
            `{"last_epoch": int, "_schedulers": [child states]}`.
        """
        saved = super().state_dict()
        saved["_schedulers"] = [s.state_dict() for s in self._schedulers]
        return saved

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        """Restore the children, then the step count (which sets the rates).

        Args:
            state_dict: As returned by `state_dict()`.
        """
        children = state_dict.get("_schedulers", [])
        if len(children) != len(self._schedulers):
            raise ValueError(
                f"Argument `state_dict` must hold {len(self._schedulers)} scheduler states "
                f"under '_schedulers'. Received: {len(children)}"
            )
        for scheduler, child in zip(self._schedulers, children):
            scheduler.load_state_dict(child)
        super().load_state_dict(state_dict)


class SequentialLR(_Composite):
    """One schedule after another, equal to torch's `SequentialLR`.

    Scheduler i runs from `milestones[i - 1]` (step 0 for the first), seeing the steps since its
    own start: at step t in `[milestones[i - 1], milestones[i])` the rate is scheduler i's at
    `t - milestones[i - 1]`. Every child is evaluated each step and `torch.where` picks one.

    Args:
        optimizer: The optimizer whose learning rates are scheduled.
        schedulers: The schedules, in order; all on `optimizer`.
        milestones: The steps at which each next schedule starts (one fewer than schedulers).
        last_epoch: The step count before construction; -1 starts a new schedule.

    Example:
        >>> from torchtally.optim.lr_scheduler import ConstantLR, LinearLR
        >>> opt = torch.optim.SGD([torch.zeros(1, requires_grad=True)], lr=1.0)
        >>> warmup = LinearLR(opt, 0.0, 1.0, total_iters=4)
        >>> scheduler = SequentialLR(opt, [warmup, ConstantLR(opt, 0.5)], milestones=[4])
        >>> scheduler.step()
        >>> scheduler.get_last_lr()
        [tensor(0.2500)]
        >>> scheduler.step(4)
        >>> scheduler.get_last_lr()
        [tensor(0.5000)]
    """

    def __init__(
        self,
        optimizer: torch.optim.Optimizer,
        schedulers: Sequence[LRScheduler],
        milestones: Sequence[int],
        last_epoch: int = -1,
    ) -> None:
        self._schedulers, _ = _check_schedulers(schedulers, optimizer, self.param_group_key)
        self.milestones = check_milestones("milestones", milestones, strict=True)
        if len(self.milestones) != len(self._schedulers) - 1:
            raise ValueError(
                "Argument `milestones` must have one entry fewer than `schedulers` "
                f"({len(self._schedulers) - 1}). Received: milestones={milestones!r}"
            )
        # A composite starts where its first child does (None when that child does not say).
        self.initial_learning_rate = self._schedulers[0].initial_learning_rate
        last = self._schedulers[-1].total_iters
        total = None if last is None else (self.milestones[-1] if self.milestones else 0) + last
        super().__init__(optimizer, total_iters=total, last_epoch=last_epoch)

    def _get_closed_form_lr(self) -> Tensor:
        step = self.last_epoch
        first, *rest = self._schedulers
        first.last_epoch.copy_(step)
        lr = first._closed_form_checked()
        for start, scheduler in zip(self.milestones, rest):
            # Before its start a child sits at step 0; its value is computed and discarded.
            scheduler.last_epoch.copy_(torch.clamp(step - start, min=0))
            lr = torch.where(step >= start, scheduler._closed_form_checked(), lr)
        return lr


class ChainedScheduler(_Composite):
    """Several schedules applied together: the first gives the rate, each other one scales it
    by its own rate over its initial rate. Every child steps with the chain.

    `lr(t) = s_0(t) * prod_{i >= 1} s_i(t) / s_i.initial_learning_rate`. Torch's
    `ChainedScheduler` of multiplicative schedulers on base rate b (e.g. `ExponentialLR(0.9)` and
    `StepLR(10, 0.5)`) equals the chain of our equivalents started at b and at any rate.

    Args:
        schedulers: The schedules; all on the same optimizer. Each after the first must start
            from a rate > 0.
        optimizer: The optimizer (default: the first scheduler's).

    Example:
        >>> from torchtally.optim.lr_scheduler import ExponentialLR, StepLR
        >>> opt = torch.optim.SGD([torch.zeros(1, requires_grad=True)], lr=1.0)
        >>> decay = ExponentialLR(opt, 1.0, total_iters=1, decay_rate=0.5)
        >>> scheduler = ChainedScheduler([decay, StepLR(opt, 1.0, step_size=2, gamma=0.1)])
        >>> scheduler.step(2)
        >>> scheduler.get_last_lr()
        [tensor(0.0250)]
    """

    def __init__(
        self,
        schedulers: Sequence[LRScheduler],
        optimizer: torch.optim.Optimizer | None = None,
    ) -> None:
        self._schedulers, optimizer = _check_schedulers(schedulers, optimizer, self.param_group_key)
        for index, scheduler in enumerate(self._schedulers[1:], start=1):
            start = scheduler.initial_learning_rate
            if not isinstance(start, (int, float)) or start <= 0:
                raise ValueError(
                    f"Argument `schedulers[{index}]` must start from a learning rate > 0 to "
                    f"scale the chain. Received: initial_learning_rate={start!r}"
                )
        # A composite starts where its first child does (None when that child does not say).
        self.initial_learning_rate = self._schedulers[0].initial_learning_rate
        super().__init__(optimizer)

    def _get_closed_form_lr(self) -> Tensor:
        first, *rest = self._schedulers
        first.last_epoch.copy_(self.last_epoch)
        lr = first._closed_form_checked()
        for scheduler in rest:
            scheduler.last_epoch.copy_(self.last_epoch)
            # Checked to be a number > 0 at construction.
            start = cast(float, scheduler.initial_learning_rate)
            lr = lr * (scheduler._closed_form_checked() / start)
        return lr
