"""`Adagrad`: per-coordinate steps divided by the root of the summed squared gradients."""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from typing import final

import torch
from torch import Tensor
from torch.optim.optimizer import ParamsT

from torchtally.optim._base import Optimizer
from torchtally.optim._checks import check_bool, check_float
from torchtally.optim._math import has_weight_decay

__all__ = ["Adagrad"]


@final
class Adagrad(Optimizer):
    """Adagrad (Duchi et al., 2011), step for step equal to `torch.optim.Adagrad` (dense
    gradients only).

    Args:
        params: Parameters or parameter groups.
        lr: Learning rate.
        lr_decay: The rate at step t is `lr / (1 + (t - 1) * lr_decay)`.
        weight_decay: L2 penalty added to the gradient.
        initial_accumulator_value: Starting value of the sum of squared gradients.
        eps: Added to the denominator for numerical stability.
        maximize: Maximize the objective instead of minimizing it.

    Example:
        >>> w = torch.ones(2, requires_grad=True)
        >>> opt = Adagrad([w], lr=0.1)
        >>> w.sum().backward()
        >>> opt.step()
        >>> w
        tensor([0.9000, 0.9000], requires_grad=True)
    """

    def __init__(
        self,
        params: ParamsT,
        lr: float | Tensor = 1e-2,
        lr_decay: float = 0.0,
        weight_decay: float = 0.0,
        initial_accumulator_value: float = 0.0,
        eps: float = 1e-6,
        *,
        maximize: bool = False,
    ) -> None:
        defaults = {
            "lr": lr,
            "lr_decay": check_float("lr_decay", lr_decay, 0.0),
            "weight_decay": check_float("weight_decay", weight_decay, 0.0),
            "initial_accumulator_value": check_float(
                "initial_accumulator_value", initial_accumulator_value, 0.0
            ),
            "eps": check_float("eps", eps, 0.0),
            "maximize": check_bool("maximize", maximize),
        }
        super().__init__(params, defaults, enable_global_step=True)

    def preinitialize(self) -> None:
        """Create the sum of squared gradients, filled with `initial_accumulator_value`."""
        for group in self.param_groups:
            start = group["initial_accumulator_value"]
            for p in group["params"]:
                self.init_state(p, "sum", partial(torch.full_like, fill_value=start))

    def state_names_to_sparsify(self) -> list[str]:
        """The sum of squared gradients is shaped like its parameter."""
        return ["sum"]

    @torch.no_grad()
    def step(self, closure: Callable[[], float] | None = None) -> float | None:  # type: ignore[override]
        """Take one Adagrad step.

        Args:
            closure: Optional function that re-evaluates the model and returns the loss.

        Returns:
            The closure's loss, or None.
        """
        loss = self.evaluate_closure(closure)
        for group, p, grad in self.params_with_grad():
            step = self.step_for(p)
            if has_weight_decay(group["weight_decay"]):
                grad = grad + group["weight_decay"] * p
            clr = self.lr_for(group, p) / (1 + (step - 1) * group["lr_decay"])
            state_sum = self.state[p]["sum"]
            state_sum.addcmul_(grad, grad)
            p.sub_(clr * (grad / (state_sum.sqrt() + group["eps"])))
        return loss
