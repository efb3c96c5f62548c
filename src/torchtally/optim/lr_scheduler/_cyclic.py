"""`CyclicLR`: the rate swept between two bounds in triangular cycles."""

from __future__ import annotations

from collections.abc import Callable

import torch
from torch import Tensor

from torchtally._errors import check_choice, check_int
from torchtally.optim._checks import check_float
from torchtally.optim.lr_scheduler._base import LRScheduler
from torchtally.optim.lr_scheduler._checks import check_rate

__all__ = ["CyclicLR"]

_MODES = ("triangular", "triangular2", "exp_range")


class CyclicLR(LRScheduler):
    """Cyclical learning rates (Smith, 2017), equal to torch's `CyclicLR` with
    `cycle_momentum=False` (momentum is not cycled).

    Each cycle rises from `base_lr` towards `max_lr` over `step_size_up` steps and falls back
    over `step_size_down`. The amplitude is scaled per cycle ("triangular": 1,
    "triangular2": halved each cycle) or per step ("exp_range": `gamma**t`), or by
    `scale_fn`, which receives a float tensor (the cycle number or the step count, per
    `scale_mode`) and must use tensor operations only.

    Args:
        optimizer: The optimizer whose learning rates are scheduled.
        base_lr: The lower bound, and the rate at step 0.
        max_lr: The upper bound of the first cycle.
        step_size_up: Steps of the rising half.
        step_size_down: Steps of the falling half (None: `step_size_up`).
        mode: "triangular", "triangular2" or "exp_range"; ignored when `scale_fn` is given.
        gamma: The per-step factor of "exp_range".
        scale_fn: A custom amplitude scale.
        scale_mode: What `scale_fn` receives: "cycle" or "iterations".

    Example:
        >>> opt = torch.optim.SGD([torch.zeros(1, requires_grad=True)], lr=1.0)
        >>> scheduler = CyclicLR(opt, base_lr=0.0, max_lr=1.0, step_size_up=2)
        >>> scheduler.step()
        >>> scheduler.get_last_lr()
        [tensor(0.5000)]
    """

    initial_learning_rate: float

    def __init__(
        self,
        optimizer: torch.optim.Optimizer,
        base_lr: float,
        max_lr: float,
        step_size_up: int = 2000,
        step_size_down: int | None = None,
        mode: str = "triangular",
        gamma: float = 1.0,
        scale_fn: Callable[[Tensor], Tensor] | None = None,
        scale_mode: str = "cycle",
    ) -> None:
        self.base_lr = check_rate("base_lr", base_lr)
        self.max_lr = check_rate("max_lr", max_lr)
        self.initial_learning_rate = self.base_lr
        check_int("step_size_up", step_size_up, 1)
        check_int("step_size_down", step_size_down, 1, allow_none=True)
        check_choice("mode", mode, _MODES)
        check_choice("scale_mode", scale_mode, ("cycle", "iterations"))
        if scale_fn is not None and not callable(scale_fn):
            raise ValueError(
                f"Argument `scale_fn` must be callable or None. Received: scale_fn={scale_fn!r}"
            )
        self.step_size_up = step_size_up
        self.step_size_down = step_size_up if step_size_down is None else step_size_down
        self.mode, self.gamma = mode, check_float("gamma", gamma, 0.0)
        self.scale_fn = scale_fn
        # As in torch: the built-in modes fix what their scale is a function of.
        if scale_fn is None:
            scale_mode = "iterations" if mode == "exp_range" else "cycle"
        self.scale_mode = scale_mode
        super().__init__(optimizer)

    def _scale(self, x: Tensor) -> Tensor:
        if self.scale_fn is not None:
            return self.scale_fn(x)
        if self.mode == "triangular":
            return torch.ones_like(x)
        if self.mode == "triangular2":
            return 0.5 ** (x - 1)
        return self.gamma**x

    def _get_closed_form_lr(self) -> Tensor:
        step = self._float_epoch()
        total = self.step_size_up + self.step_size_down
        up_ratio = self.step_size_up / total
        # Cerebras' order of float operations (its rates to the last bit).
        cycle = torch.floor(step / total + 1)
        x = (step / total - cycle) + 1
        rising = x / up_ratio
        falling = (x - 1) / (up_ratio - 1)
        height = torch.where(x <= up_ratio, rising, falling) * (self.max_lr - self.base_lr)
        return height * self._scale(cycle if self.scale_mode == "cycle" else step) + self.base_lr
