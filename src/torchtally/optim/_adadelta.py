"""`Adadelta`: per-coordinate steps scaled by running averages of squared gradients and updates."""

from __future__ import annotations

from collections.abc import Callable
from typing import final

import torch
from torch import Tensor
from torch.optim.optimizer import ParamsT

from torchtally.optim._base import Optimizer
from torchtally.optim._checks import check_bool, check_float
from torchtally.optim._math import has_weight_decay

__all__ = ["Adadelta"]


@final
class Adadelta(Optimizer):
    """Adadelta (Zeiler, 2012), step for step equal to `torch.optim.Adadelta`.

    Args:
        params: Parameters or parameter groups.
        lr: Factor on the computed update.
        rho: Decay rate of the running averages.
        eps: Added inside the square roots for numerical stability.
        weight_decay: L2 penalty added to the gradient.
        maximize: Maximize the objective instead of minimizing it.

    Example:
        >>> w = torch.ones(2, requires_grad=True)
        >>> opt = Adadelta([w], lr=1.0)
        >>> w.sum().backward()
        >>> opt.step()
        >>> w.detach().lt(1).all().item()
        True
    """

    def __init__(
        self,
        params: ParamsT,
        lr: float | Tensor = 1.0,
        rho: float = 0.9,
        eps: float = 1e-6,
        weight_decay: float = 0.0,
        *,
        maximize: bool = False,
    ) -> None:
        defaults = {
            "lr": lr,
            "rho": check_float("rho", rho, 0.0, 1.0),
            "eps": check_float("eps", eps, 0.0),
            "weight_decay": check_float("weight_decay", weight_decay, 0.0),
            "maximize": check_bool("maximize", maximize),
        }
        super().__init__(params, defaults, enable_global_step=True)

    def preinitialize(self) -> None:
        """Create the zero running averages of squared gradients and squared updates."""
        self.init_zero_states("square_avg", "acc_delta")

    def state_names_to_sparsify(self) -> list[str]:
        """Both running averages are shaped like their parameter."""
        return ["square_avg", "acc_delta"]

    @torch.no_grad()
    def step(self, closure: Callable[[], float] | None = None) -> float | None:  # type: ignore[override]
        """Take one Adadelta step.

        Args:
            closure: Optional function that re-evaluates the model and returns the loss.

        Returns:
            The closure's loss, or None.
        """
        loss = self.evaluate_closure(closure)
        for group, p, grad in self.params_with_grad():
            state = self.state[p]
            self.increment_global_step(p)
            rho, eps = group["rho"], group["eps"]
            if has_weight_decay(group["weight_decay"]):
                grad = grad + group["weight_decay"] * p
            square_avg, acc_delta = state["square_avg"], state["acc_delta"]
            square_avg.mul_(rho).addcmul_(grad, grad, value=1 - rho)
            delta = (acc_delta + eps).sqrt() / (square_avg + eps).sqrt() * grad
            acc_delta.mul_(rho).addcmul_(delta, delta, value=1 - rho)
            p.sub_(self.lr_for(group, p) * delta)
        return loss
