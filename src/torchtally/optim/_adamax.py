"""`Adamax`: Adam with the infinity norm in place of the second moment."""

from __future__ import annotations

from collections.abc import Callable
from typing import final

import torch
from torch import Tensor
from torch.optim.optimizer import ParamsT

from torchtally.optim._base import Optimizer
from torchtally.optim._checks import check_betas, check_bool, check_float
from torchtally.optim._math import has_weight_decay, one_minus_pow

__all__ = ["Adamax"]


@final
class Adamax(Optimizer):
    """Adamax (Kingma & Ba, 2015, section 7), step for step equal to `torch.optim.Adamax`.

    Args:
        params: Parameters or parameter groups.
        lr: Learning rate.
        betas: Decay rates of the first moment and of the infinity norm.
        eps: Added to the gradient's magnitude for numerical stability.
        weight_decay: L2 penalty added to the gradient.
        maximize: Maximize the objective instead of minimizing it.

    Example:
        >>> w = torch.ones(2, requires_grad=True)
        >>> opt = Adamax([w], lr=0.1)
        >>> w.sum().backward()
        >>> opt.step()
        >>> w
        tensor([0.9000, 0.9000], requires_grad=True)
    """

    def __init__(
        self,
        params: ParamsT,
        lr: float | Tensor = 1e-3,
        betas: tuple[float, float] = (0.9, 0.999),
        eps: float = 1e-6,
        weight_decay: float = 0.0,
        *,
        maximize: bool = False,
    ) -> None:
        defaults = {
            "lr": lr,
            "betas": check_betas("betas", betas),
            "eps": check_float("eps", eps, 0.0),
            "weight_decay": check_float("weight_decay", weight_decay, 0.0),
            "maximize": check_bool("maximize", maximize),
        }
        super().__init__(params, defaults, enable_global_step=True)

    def preinitialize(self) -> None:
        """Create the zero first moment and infinity norm."""
        self.init_zero_states("exp_avg", "exp_inf")

    def state_names_to_sparsify(self) -> list[str]:
        """Both estimates are shaped like their parameter."""
        return ["exp_avg", "exp_inf"]

    @torch.no_grad()
    def step(self, closure: Callable[[], float] | None = None) -> float | None:  # type: ignore[override]
        """Take one Adamax step.

        Args:
            closure: Optional function that re-evaluates the model and returns the loss.

        Returns:
            The closure's loss, or None.
        """
        loss = self.evaluate_closure(closure)
        for group, p, grad in self.params_with_grad():
            state = self.state[p]
            step = self.step_for(p)
            beta1, beta2 = group["betas"]
            if has_weight_decay(group["weight_decay"]):
                grad = grad + group["weight_decay"] * p
            exp_avg, exp_inf = state["exp_avg"], state["exp_inf"]
            exp_avg.lerp_(grad, 1 - beta1)
            exp_inf.copy_(torch.maximum(exp_inf * beta2, grad.abs() + group["eps"]))
            clr = self.lr_for(group, p) / one_minus_pow(beta1, step)
            p.sub_(clr * (exp_avg / exp_inf))
        return loss
