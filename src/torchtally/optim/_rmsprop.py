"""`RMSprop`: steps divided by a running root mean square of the gradients."""

from __future__ import annotations

from collections.abc import Callable
from typing import final

import torch
from torch import Tensor
from torch.optim.optimizer import ParamsT

from torchtally.optim._base import Optimizer
from torchtally.optim._checks import check_bool, check_float
from torchtally.optim._math import has_weight_decay

__all__ = ["RMSprop"]


@final
class RMSprop(Optimizer):
    """RMSprop (Hinton's lecture 6e), step for step equal to `torch.optim.RMSprop`.

    Args:
        params: Parameters or parameter groups.
        lr: Learning rate.
        alpha: Decay rate of the running average of squared gradients.
        eps: Added to the denominator for numerical stability.
        weight_decay: L2 penalty added to the gradient.
        momentum: Momentum factor.
        centered: Divide by the gradient's estimated variance instead of its second moment.
        maximize: Maximize the objective instead of minimizing it.

    Example:
        >>> w = torch.ones(2, requires_grad=True)
        >>> opt = RMSprop([w], lr=0.01)
        >>> w.sum().backward()
        >>> opt.step()
        >>> w
        tensor([0.9000, 0.9000], requires_grad=True)
    """

    def __init__(
        self,
        params: ParamsT,
        lr: float | Tensor = 1e-2,
        alpha: float = 0.99,
        eps: float = 1e-8,
        weight_decay: float = 0.0,
        momentum: float = 0.0,
        centered: bool = False,
        *,
        maximize: bool = False,
    ) -> None:
        defaults = {
            "lr": lr,
            "alpha": check_float("alpha", alpha, 0.0, 1.0),
            "eps": check_float("eps", eps, 0.0),
            "weight_decay": check_float("weight_decay", weight_decay, 0.0),
            "momentum": check_float("momentum", momentum, 0.0),
            "centered": check_bool("centered", centered),
            "maximize": check_bool("maximize", maximize),
        }
        super().__init__(params, defaults, enable_global_step=True)

    def preinitialize(self) -> None:
        """Create the zero running averages, and the momentum buffer where momentum is on."""
        for group in self.param_groups:
            for p in group["params"]:
                self.init_state(p, "square_avg", torch.zeros_like)
                if group["momentum"] > 0:
                    self.init_state(p, "momentum_buffer", torch.zeros_like)
                if group["centered"]:
                    self.init_state(p, "grad_avg", torch.zeros_like)

    def state_names_to_sparsify(self) -> list[str]:
        """All of RMSprop's buffers are shaped like their parameter."""
        return ["square_avg", "momentum_buffer", "grad_avg"]

    @torch.no_grad()
    def step(self, closure: Callable[[], float] | None = None) -> float | None:  # type: ignore[override]
        """Take one RMSprop step.

        Args:
            closure: Optional function that re-evaluates the model and returns the loss.

        Returns:
            The closure's loss, or None.
        """
        loss = self.evaluate_closure(closure)
        for group, p, grad in self.params_with_grad():
            state = self.state[p]
            self.increment_global_step(p)
            alpha = group["alpha"]
            if has_weight_decay(group["weight_decay"]):
                grad = grad + group["weight_decay"] * p
            square_avg = state["square_avg"]
            square_avg.mul_(alpha).addcmul_(grad, grad, value=1 - alpha)
            if group["centered"]:
                grad_avg = state["grad_avg"]
                grad_avg.lerp_(grad, 1 - alpha)
                avg = square_avg.addcmul(grad_avg, grad_avg, value=-1).sqrt() + group["eps"]
            else:
                avg = square_avg.sqrt() + group["eps"]
            if group["momentum"] > 0:
                buf = state["momentum_buffer"]
                buf.mul_(group["momentum"]).addcdiv_(grad, avg)
                p.sub_(self.lr_for(group, p) * buf)
            else:
                p.sub_(self.lr_for(group, p) * (grad / avg))
        return loss
