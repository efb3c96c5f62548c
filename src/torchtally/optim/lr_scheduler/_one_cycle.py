"""`OneCycleLR`: one warm-up to a peak rate, then annealing far below the start."""

from __future__ import annotations

import math

import torch
from torch import Tensor

from torchtally._errors import check_choice, check_int
from torchtally.optim._checks import check_bool, check_float
from torchtally.optim.lr_scheduler._base import LRScheduler
from torchtally.optim.lr_scheduler._checks import check_rate

__all__ = ["OneCycleLR"]


class OneCycleLR(LRScheduler):
    """The 1cycle policy (Smith & Topin, 2018), equal to torch's `OneCycleLR` with
    `cycle_momentum=False` and `div_factor = max_lr / initial_learning_rate`.

    Phases (each annealed by half a cosine or linearly): `initial_learning_rate` to `max_lr`
    until step `pct_start * total_steps - 1`, then down to
    `initial_learning_rate / final_div_factor` at step `total_steps - 1`. With `three_phase`,
    the second phase returns to `initial_learning_rate` first, mirroring the warm-up. Torch
    raises past `total_steps`; a traced step cannot. As in Cerebras, the last phase's formula
    simply goes on (the cosine climbs back, the linear ramp goes below zero): keep training
    within `total_steps`.

    Args:
        optimizer: The optimizer whose learning rates are scheduled.
        initial_learning_rate: The rate at step 0.
        max_lr: The peak rate.
        total_steps: Length of the cycle.
        pct_start: Fraction of the cycle spent warming up.
        final_div_factor: The final rate is `initial_learning_rate / final_div_factor`.
        three_phase: Use the three-phase form.
        anneal_strategy: "cos" or "linear".

    Example:
        >>> opt = torch.optim.SGD([torch.zeros(1, requires_grad=True)], lr=1.0)
        >>> scheduler = OneCycleLR(opt, 0.1, max_lr=1.0, total_steps=10, pct_start=0.5)
        >>> scheduler.step(4)
        >>> scheduler.get_last_lr()
        [tensor(1.)]
    """

    initial_learning_rate: float

    def __init__(
        self,
        optimizer: torch.optim.Optimizer,
        initial_learning_rate: float,
        max_lr: float,
        total_steps: int = 1000,
        pct_start: float = 0.3,
        final_div_factor: float = 1e4,
        three_phase: bool = False,
        anneal_strategy: str = "cos",
    ) -> None:
        self.initial_learning_rate = check_rate("initial_learning_rate", initial_learning_rate)
        self.max_lr = check_rate("max_lr", max_lr)
        check_int("total_steps", total_steps, 2)
        self.total_steps = total_steps
        self.pct_start = check_float(
            "pct_start", pct_start, 0.0, 1.0, low_open=True, high_open=True
        )
        self.final_div_factor = check_float(
            "final_div_factor", final_div_factor, 0.0, low_open=True
        )
        self.three_phase = check_bool("three_phase", three_phase)
        check_choice("anneal_strategy", anneal_strategy, ("cos", "linear"))
        self.anneal_strategy = anneal_strategy
        self._phases = self._build_phases()
        super().__init__(optimizer, total_iters=total_steps)

    def _build_phases(self) -> list[tuple[float, float, float, float]]:
        """(start step, end step, start rate, end rate) of each phase, as torch lays them out."""
        low = self.initial_learning_rate
        final = low / self.final_div_factor
        warm_end = self.pct_start * self.total_steps - 1
        last = self.total_steps - 1.0
        if self.three_phase:
            ends = [
                (warm_end, low, self.max_lr),
                (2 * warm_end, self.max_lr, low),
                (last, low, final),
            ]
        else:
            ends = [(warm_end, low, self.max_lr), (last, self.max_lr, final)]
        phases, start = [], 0.0
        for end, start_lr, end_lr in ends:
            if end <= start:
                raise ValueError(
                    "Arguments `pct_start` and `total_steps` must give every phase at least one "
                    f"step. Received: pct_start={self.pct_start}, total_steps={self.total_steps}, "
                    f"three_phase={self.three_phase}"
                )
            phases.append((start, end, start_lr, end_lr))
            start = end
        return phases

    def _anneal(self, start_lr: float, end_lr: float, pct: Tensor) -> Tensor:
        if self.anneal_strategy == "cos":
            return end_lr + (start_lr - end_lr) / 2 * (torch.cos(math.pi * pct) + 1)
        return (end_lr - start_lr) * pct + start_lr

    def _get_closed_form_lr(self) -> Tensor:
        # Not clamped at total_steps: as in Cerebras, the last phase's formula goes on.
        step = self._float_epoch()
        *earlier, (start, end, start_lr, end_lr) = self._phases
        lr = self._anneal(start_lr, end_lr, (step - start) / (end - start))
        for start, end, start_lr, end_lr in reversed(earlier):
            phase_lr = self._anneal(start_lr, end_lr, (step - start) / (end - start))
            lr = torch.where(step <= end, phase_lr, lr)
        return lr
