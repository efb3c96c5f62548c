"""`StepLR`, `MultiStepLR` and `PiecewiseConstantLR`: rates that change at given steps."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import torch
from torch import Tensor

from torchtally._errors import check_int
from torchtally.optim._base import SCALAR_DTYPE
from torchtally.optim._checks import check_float
from torchtally.optim.lr_scheduler._base import LRScheduler, scheduler_device
from torchtally.optim.lr_scheduler._checks import check_milestones, check_rate

__all__ = ["MultiStepLR", "PiecewiseConstantLR", "StepLR"]


class StepLR(LRScheduler):
    """The rate multiplied by `gamma` every `step_size` steps, equal to torch's `StepLR`.

    Args:
        optimizer: The optimizer whose learning rates are scheduled.
        initial_learning_rate: The rate at step 0 (torch: the optimizer's base rate).
        step_size: Steps between decays.
        gamma: Factor of each decay.

    Example:
        >>> opt = torch.optim.SGD([torch.zeros(1, requires_grad=True)], lr=1.0)
        >>> scheduler = StepLR(opt, 1.0, step_size=2, gamma=0.5)
        >>> scheduler.step(5)
        >>> scheduler.get_last_lr()
        [tensor(0.2500)]
    """

    initial_learning_rate: float

    def __init__(
        self,
        optimizer: torch.optim.Optimizer,
        initial_learning_rate: float,
        step_size: int,
        gamma: float = 0.1,
    ) -> None:
        self.initial_learning_rate = check_rate("initial_learning_rate", initial_learning_rate)
        check_int("step_size", step_size, 1)
        self.step_size = step_size
        self.gamma = check_float("gamma", gamma, 0.0)
        super().__init__(optimizer)

    def _get_closed_form_lr(self) -> Tensor:
        decays = torch.div(self.last_epoch, self.step_size, rounding_mode="floor")
        return self.initial_learning_rate * self.gamma ** decays.to(SCALAR_DTYPE)


class MultiStepLR(LRScheduler):
    """The rate multiplied by `gamma` at each milestone, equal to torch's `MultiStepLR`
    (a milestone listed twice decays twice).

    Args:
        optimizer: The optimizer whose learning rates are scheduled.
        initial_learning_rate: The rate at step 0 (torch: the optimizer's base rate).
        gamma: Factor of each decay.
        milestones: Steps at which the rate decays, non-decreasing.

    Example:
        >>> opt = torch.optim.SGD([torch.zeros(1, requires_grad=True)], lr=1.0)
        >>> scheduler = MultiStepLR(opt, 1.0, milestones=[1, 3], gamma=0.5)
        >>> scheduler.step(3)
        >>> scheduler.get_last_lr()
        [tensor(0.2500)]
    """

    initial_learning_rate: float

    def __init__(
        self,
        optimizer: torch.optim.Optimizer,
        initial_learning_rate: float,
        gamma: float | Sequence[int] = 0.1,
        milestones: Sequence[int] | float | None = None,
    ) -> None:
        # Cerebras' positional order is (initial_learning_rate, gamma, milestones); torchtally
        # once took (initial_learning_rate, milestones, gamma). The types tell them apart.
        if isinstance(gamma, (list, tuple)) and not isinstance(milestones, (list, tuple)):
            gamma, milestones = (0.1 if milestones is None else milestones), gamma
        if milestones is None:
            raise ValueError(
                "Argument `milestones` must be a list of integers >= 0. Received: milestones=None"
            )
        self.initial_learning_rate = check_rate("initial_learning_rate", initial_learning_rate)
        self.milestones = check_milestones("milestones", milestones, strict=False)
        self.gamma = check_float("gamma", gamma, 0.0)
        device = scheduler_device(optimizer)
        # Built once: a tensor made inside the step would be a host-to-device copy.
        self._milestones = torch.tensor(self.milestones, dtype=torch.int64, device=device)
        super().__init__(optimizer)

    def _get_closed_form_lr(self) -> Tensor:
        passed = (self.last_epoch >= self._milestones).sum()
        return self.initial_learning_rate * self.gamma ** passed.to(SCALAR_DTYPE)


class PiecewiseConstantLR(LRScheduler):
    """`learning_rates[i]` from `milestones[i - 1]` (inclusive) to `milestones[i]` (cstorch's).

    Args:
        optimizer: The optimizer whose learning rates are scheduled.
        learning_rates: The rates, one more than the milestones.
        milestones: Steps at which the next rate starts, strictly increasing.

    Example:
        >>> opt = torch.optim.SGD([torch.zeros(1, requires_grad=True)], lr=1.0)
        >>> scheduler = PiecewiseConstantLR(opt, [1.0, 0.5, 0.25], milestones=[2, 4])
        >>> scheduler.step(2)
        >>> scheduler.get_last_lr()
        [tensor(0.5000)]
    """

    initial_learning_rate: float

    def __init__(
        self,
        optimizer: torch.optim.Optimizer,
        learning_rates: Sequence[float],
        milestones: Sequence[int],
    ) -> None:
        self.milestones = check_milestones("milestones", milestones, strict=True)
        if (
            not isinstance(learning_rates, (list, tuple))
            or len(learning_rates) != len(self.milestones) + 1
        ):
            raise ValueError(
                "Argument `learning_rates` must be a list one longer than `milestones` "
                f"({len(self.milestones) + 1} rates). Received: learning_rates={learning_rates!r}"
            )
        self.learning_rates = [
            check_rate(f"learning_rates[{i}]", lr) for i, lr in enumerate(learning_rates)
        ]
        self.initial_learning_rate = self.learning_rates[0]
        device = scheduler_device(optimizer)
        self._milestones = torch.tensor(self.milestones, dtype=torch.int64, device=device)
        self._rates = torch.tensor(self.learning_rates, dtype=SCALAR_DTYPE, device=device)
        super().__init__(optimizer)

    def _get_closed_form_lr(self) -> Tensor:
        passed = (self.last_epoch >= self._milestones).sum()
        # index_select, not `rates[passed]`: indexing with a 0-dim tensor reads it on the host.
        return self._rates.index_select(0, passed.reshape(1)).reshape(())

    def state_dict(self) -> dict[str, Any]:
        """The step count, with the per-segment counts cstorch keeps (it builds this schedule
        from constant schedules in sequence), so that cstorch can load it.

        Returns:
            `{"last_epoch": int, "_schedulers": [{"last_epoch": int}, ...]}`.
        """
        saved = super().state_dict()
        step = saved["last_epoch"]
        starts = [0, *self.milestones]
        saved["_schedulers"] = [{"last_epoch": max(0, step - start)} for start in starts]
        return saved
