"""`Rprop`: resilient backpropagation, steps that grow or shrink with the gradient's sign."""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from typing import final

import torch
from torch import Tensor
from torch.optim.optimizer import ParamsT

from torchtally.optim._base import Optimizer
from torchtally.optim._checks import check_bool, check_float

__all__ = ["Rprop"]


def _check_pair(name: str, value: object, first: str, second: str) -> tuple[float, float]:
    if not isinstance(value, (tuple, list)) or len(value) != 2:
        raise ValueError(f"Argument `{name}` must be a pair of floats. Received: {name}={value!r}")
    low = check_float(f"{name}[0]", value[0], 0.0)
    high = check_float(f"{name}[1]", value[1], 0.0)
    if low > high:
        raise ValueError(
            f"Argument `{name}` must have {first} <= {second}. Received: {name}={value!r}"
        )
    return low, high


def _filled_like(value: Tensor, p: Tensor) -> Tensor:
    return torch.zeros_like(p).add_(value.to(p.device))


@final
class Rprop(Optimizer):
    """Rprop (Riedmiller & Braun, 1993), step for step equal to `torch.optim.Rprop`.

    Each coordinate keeps its own step size, multiplied by `etas[1]` while the gradient keeps
    its sign and by `etas[0]` when it flips (and then that coordinate skips one update).

    Args:
        params: Parameters or parameter groups.
        lr: Initial step size.
        etas: Multiplicative decrease and increase factors, 0 < etaminus < 1 < etaplus.
        step_sizes: Smallest and largest allowed step sizes.
        maximize: Maximize the objective instead of minimizing it.

    Example:
        >>> w = torch.ones(2, requires_grad=True)
        >>> opt = Rprop([w], lr=0.1)
        >>> w.sum().backward()
        >>> opt.step()
        >>> w
        tensor([0.9000, 0.9000], requires_grad=True)
    """

    def __init__(
        self,
        params: ParamsT,
        lr: float | Tensor = 1e-3,
        etas: tuple[float, float] = (0.5, 1.2),
        step_sizes: tuple[float, float] = (1e-6, 50.0),
        *,
        maximize: bool = False,
    ) -> None:
        etaminus, etaplus = _check_pair("etas", etas, "etaminus", "etaplus")
        if not 0 < etaminus < 1 < etaplus:
            raise ValueError(
                f"Argument `etas` must satisfy 0 < etas[0] < 1 < etas[1]. Received: etas={etas!r}"
            )
        defaults = {
            "lr": lr,
            "etas": (etaminus, etaplus),
            "step_sizes": _check_pair("step_sizes", step_sizes, "the minimum", "the maximum"),
            "maximize": check_bool("maximize", maximize),
        }
        super().__init__(params, defaults, enable_global_step=True)

    def preinitialize(self) -> None:
        """Create the previous gradient (zero) and the step sizes (the learning rate)."""
        for group in self.param_groups:
            lr = group["lr"]
            for p in group["params"]:
                self.init_state(p, "prev", torch.zeros_like)
                self.init_state(p, "step_size", partial(_filled_like, lr))

    def state_names_to_sparsify(self) -> list[str]:
        """The previous gradient and the step sizes are shaped like their parameter."""
        return ["prev", "step_size"]

    @torch.no_grad()
    def step(self, closure: Callable[[], float] | None = None) -> float | None:  # type: ignore[override]
        """Take one Rprop step.

        Args:
            closure: Optional function that re-evaluates the model and returns the loss.

        Returns:
            The closure's loss, or None.
        """
        loss = self.evaluate_closure(closure)
        for group, p, grad in self.params_with_grad():
            state = self.state[p]
            step = self.step_for(p)
            etaminus, etaplus = group["etas"]
            low, high = group["step_sizes"]
            prev, step_size = state["prev"], state["step_size"]
            agreement = grad * prev
            factor = torch.where(agreement > 0, etaplus, torch.where(agreement < 0, etaminus, 1.0))
            # torch sets the step sizes from the rate current at the first step.
            start = torch.where(step == 1, self.lr_for(group, p), step_size)
            step_size.copy_((start * factor).clamp(low, high))
            grad = torch.where(agreement < 0, 0.0, grad)
            p.sub_(grad.sign() * step_size)
            prev.copy_(grad)
        return loss
