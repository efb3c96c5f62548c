"""`ASGD`: averaged stochastic gradient descent."""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from typing import final

import torch
from torch import Tensor
from torch.optim.optimizer import ParamsT

from torchtally.optim._base import Optimizer, one_scalar
from torchtally.optim._checks import check_bool, check_float
from torchtally.optim._math import has_weight_decay

__all__ = ["ASGD"]


def _copy_to_device_of(value: Tensor, p: Tensor) -> Tensor:
    return value.detach().to(p.device, copy=True)


@final
class ASGD(Optimizer):
    """Averaged SGD (Polyak & Juditsky, 1992), step for step equal to `torch.optim.ASGD`.

    The step size `eta` and averaging weight `mu` are state tensors updated in place.
    `state[p]["ax"]` holds the running average of the parameter.

    Args:
        params: Parameters or parameter groups.
        lr: Learning rate.
        lambd: Decay term.
        alpha: Power of the step-size decay.
        t0: Step at which averaging starts.
        weight_decay: L2 penalty added to the gradient.
        maximize: Maximize the objective instead of minimizing it.

    Example:
        >>> w = torch.ones(2, requires_grad=True)
        >>> opt = ASGD([w], lr=0.1, lambd=0.0)
        >>> w.sum().backward()
        >>> opt.step()
        >>> w
        tensor([0.9000, 0.9000], requires_grad=True)
    """

    def __init__(
        self,
        params: ParamsT,
        lr: float | Tensor = 1e-2,
        lambd: float = 1e-4,
        alpha: float = 0.75,
        t0: float = 1e6,
        weight_decay: float = 0.0,
        *,
        maximize: bool = False,
    ) -> None:
        defaults = {
            "lr": lr,
            "lambd": check_float("lambd", lambd, 0.0),
            "alpha": check_float("alpha", alpha, 0.0),
            "t0": check_float("t0", t0, 0.0),
            "weight_decay": check_float("weight_decay", weight_decay, 0.0),
            "maximize": check_bool("maximize", maximize),
        }
        super().__init__(params, defaults, enable_global_step=True)

    def preinitialize(self) -> None:
        """Create `eta` (the learning rate), `mu` (one) and the zero average `ax`."""
        for group in self.param_groups:
            for p in group["params"]:
                lr = group["lr"]
                self.init_state(p, "eta", partial(_copy_to_device_of, lr))
                self.init_state(p, "mu", one_scalar)
                self.init_state(p, "ax", torch.zeros_like)

    def state_names_to_sparsify(self) -> list[str]:
        """The average `ax` is shaped like its parameter."""
        return ["ax"]

    @torch.no_grad()
    def step(self, closure: Callable[[], float] | None = None) -> float | None:  # type: ignore[override]
        """Take one ASGD step.

        Args:
            closure: Optional function that re-evaluates the model and returns the loss.

        Returns:
            The closure's loss, or None.
        """
        loss = self.evaluate_closure(closure)
        for group, p, grad in self.params_with_grad():
            state = self.state[p]
            step = self.step_for(p)
            lr, lambd = self.lr_for(group, p), group["lambd"]
            if has_weight_decay(group["weight_decay"]):
                grad = grad + group["weight_decay"] * p
            # torch creates eta from the rate current at the first step; a scheduler may have
            # changed the rate since construction.
            eta = torch.where(step == 1, lr, state["eta"])
            p.mul_(1 - lambd * eta).sub_(eta * grad)
            ax, mu = state["ax"], state["mu"]
            ax.copy_(torch.where(mu == 1, p, ax + (p - ax) * mu))
            state["eta"].copy_(lr / (1 + lambd * lr * step) ** group["alpha"])
            state["mu"].copy_(1 / torch.clamp(step - group["t0"], min=1))
        return loss
