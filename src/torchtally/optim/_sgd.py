"""`SGD`: stochastic gradient descent with momentum, dampening, Nesterov and weight decay."""

from __future__ import annotations

from collections.abc import Callable
from typing import final

import torch
from torch import Tensor
from torch.optim.optimizer import ParamsT

from torchtally.optim._base import Optimizer
from torchtally.optim._checks import check_bool, check_float
from torchtally.optim._math import has_weight_decay

__all__ = ["SGD"]


@final
class SGD(Optimizer):
    """Stochastic gradient descent, step for step equal to `cstorch.optim.SGD`.

    The momentum buffer starts at zero and every step, the first included, adds the dampened
    gradient: `buf = momentum * buf + (1 - dampening) * grad`, as Cerebras does. (torch seeds
    the buffer with the undamped first gradient; the two agree whenever `dampening` is 0.)

    Args:
        params: Parameters or parameter groups.
        lr: Learning rate.
        momentum: Momentum factor.
        dampening: Dampening of the momentum.
        weight_decay: L2 penalty added to the gradient.
        nesterov: Use Nesterov momentum (needs momentum > 0 and dampening 0).
        maximize: Maximize the objective instead of minimizing it.

    Example:
        >>> w = torch.ones(2, requires_grad=True)
        >>> opt = SGD([w], lr=0.1, momentum=0.9)
        >>> w.sum().backward()
        >>> opt.step()
        >>> w
        tensor([0.9000, 0.9000], requires_grad=True)
    """

    def __init__(
        self,
        params: ParamsT,
        lr: float | Tensor = 1e-3,
        momentum: float = 0.0,
        dampening: float = 0.0,
        weight_decay: float = 0.0,
        nesterov: bool = False,
        *,
        maximize: bool = False,
    ) -> None:
        momentum = check_float("momentum", momentum, 0.0)
        dampening = check_float("dampening", dampening)
        if check_bool("nesterov", nesterov) and (momentum <= 0 or dampening != 0):
            raise ValueError(
                "Argument `nesterov` needs momentum > 0 and dampening = 0. "
                f"Received: nesterov=True, momentum={momentum}, dampening={dampening}"
            )
        defaults = {
            "lr": lr,
            "momentum": momentum,
            "dampening": dampening,
            "weight_decay": check_float("weight_decay", weight_decay, 0.0),
            "nesterov": nesterov,
            "maximize": check_bool("maximize", maximize),
        }
        super().__init__(params, defaults)

    def preinitialize(self) -> None:
        """Create a zero momentum buffer for each parameter of a group with momentum."""
        for group in self.param_groups:
            if group["momentum"] != 0:
                for p in group["params"]:
                    self.init_state(p, "momentum_buffer", torch.zeros_like)

    def state_names_to_sparsify(self) -> list[str]:
        """The momentum buffer is shaped like its parameter."""
        return ["momentum_buffer"]

    @torch.no_grad()
    def step(self, closure: Callable[[], float] | None = None) -> float | None:  # type: ignore[override]
        """Take one SGD step.

        Args:
            closure: Optional function that re-evaluates the model and returns the loss.

        Returns:
            The closure's loss, or None.
        """
        loss = self.evaluate_closure(closure)
        for group, p, grad in self.params_with_grad():
            if has_weight_decay(group["weight_decay"]):
                grad = grad + group["weight_decay"] * p
            momentum = group["momentum"]
            if momentum != 0:
                buf = self.state[p]["momentum_buffer"]
                buf.mul_(momentum).add_(grad, alpha=1 - group["dampening"])
                grad = grad + momentum * buf if group["nesterov"] else buf
            p.sub_(self.lr_for(group, p) * grad)
        return loss
