"""`Lion`: sign of an interpolated momentum (evolved sign momentum)."""

from __future__ import annotations

from collections.abc import Callable
from typing import final

import torch
from torch import Tensor
from torch.optim.optimizer import ParamsT

from torchtally.optim._base import Optimizer
from torchtally.optim._checks import check_betas, check_bool, check_float
from torchtally.optim._math import has_weight_decay

__all__ = ["Lion"]


@final
class Lion(Optimizer):
    """Lion (Chen et al., 2023, "Symbolic Discovery of Optimization Algorithms", Program 1).

    Per step, with gradient g and momentum m:
    `c = beta1 * m + (1 - beta1) * g`, `theta -= lr * (sign(c) + weight_decay * theta)`,
    `m = beta2 * m + (1 - beta2) * g`. Every coordinate moves by exactly `lr` (plus decay),
    so Lion wants a learning rate 3-10x smaller than AdamW's.

    Args:
        params: Parameters or parameter groups.
        lr: Learning rate.
        betas: Interpolation factor of the update (beta1) and decay of the momentum (beta2).
        weight_decay: Decoupled weight decay.
        maximize: Maximize the objective instead of minimizing it.

    Example:
        >>> w = torch.ones(2, requires_grad=True)
        >>> opt = Lion([w], lr=0.1)
        >>> w.sum().backward()
        >>> opt.step()
        >>> w
        tensor([0.9000, 0.9000], requires_grad=True)
    """

    def __init__(
        self,
        params: ParamsT,
        lr: float | Tensor = 1e-4,
        betas: tuple[float, float] = (0.9, 0.99),
        weight_decay: float = 0.0,
        *,
        maximize: bool = False,
    ) -> None:
        defaults = {
            "lr": lr,
            "betas": check_betas("betas", betas),
            "weight_decay": check_float("weight_decay", weight_decay, 0.0),
            "maximize": check_bool("maximize", maximize),
        }
        super().__init__(params, defaults, enable_global_step=False)

    def preinitialize(self) -> None:
        """Create the zero momentum."""
        self.init_zero_states("exp_avg")

    def state_names_to_sparsify(self) -> list[str]:
        """The momentum is shaped like its parameter."""
        return ["exp_avg"]

    @torch.no_grad()
    def step(self, closure: Callable[[], float] | None = None) -> float | None:  # type: ignore[override]
        """Take one Lion step.

        Args:
            closure: Optional function that re-evaluates the model and returns the loss.

        Returns:
            The closure's loss, or None.
        """
        loss = self.evaluate_closure(closure)
        for group, p, grad in self.params_with_grad():
            beta1, beta2 = group["betas"]
            exp_avg = self.state[p]["exp_avg"]
            lr = self.lr_for(group, p)
            # Cerebras' order of operations: the sign of a near-tie flips with rounding, so the
            # interpolation is formed exactly as there (not with lerp).
            update = (exp_avg * beta1).add_(grad, alpha=1 - beta1).sign_()
            if has_weight_decay(group["weight_decay"]):
                p.mul_(1 - lr * group["weight_decay"])
            p.sub_(lr * update)
            exp_avg.mul_(beta2).add_(grad, alpha=1 - beta2)
        return loss
