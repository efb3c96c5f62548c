"""`RAdam`: Adam with the variance of the adaptive rate rectified."""

from __future__ import annotations

from collections.abc import Callable
from typing import final

import torch
from torch import Tensor
from torch.optim.optimizer import ParamsT

from torchtally.optim._base import Optimizer
from torchtally.optim._checks import check_betas, check_bool, check_float
from torchtally.optim._math import decay_weights, one_minus_pow, update_moments

__all__ = ["RAdam"]


@final
class RAdam(Optimizer):
    """RAdam (Liu et al., 2020), step for step equal to `torch.optim.RAdam`.

    While the variance is intractable (rho_t <= 5) the step is plain momentum SGD; the switch is
    a `torch.where`, not a Python branch.

    Args:
        params: Parameters or parameter groups.
        lr: Learning rate.
        betas: Decay rates of the first and second moment estimates.
        eps: Added to the denominator for numerical stability.
        weight_decay: Weight decay; an L2 penalty on the gradient unless decoupled.
        decoupled_weight_decay: Decay the weights directly, as AdamW does.
        maximize: Maximize the objective instead of minimizing it.

    Example:
        >>> w = torch.ones(2, requires_grad=True)
        >>> opt = RAdam([w], lr=0.1)
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
        decoupled_weight_decay: bool = False,
        *,
        maximize: bool = False,
    ) -> None:
        defaults = {
            "lr": lr,
            "betas": check_betas("betas", betas),
            "eps": check_float("eps", eps, 0.0),
            "weight_decay": check_float("weight_decay", weight_decay, 0.0),
            "decoupled_weight_decay": check_bool("decoupled_weight_decay", decoupled_weight_decay),
            "maximize": check_bool("maximize", maximize),
        }
        super().__init__(params, defaults, enable_global_step=True)

    def preinitialize(self) -> None:
        """Create the zero moment estimates."""
        self.init_zero_states("exp_avg", "exp_avg_sq")

    def state_names_to_sparsify(self) -> list[str]:
        """The moment estimates are shaped like their parameter."""
        return ["exp_avg", "exp_avg_sq"]

    @torch.no_grad()
    def step(self, closure: Callable[[], float] | None = None) -> float | None:  # type: ignore[override]
        """Take one RAdam step.

        Args:
            closure: Optional function that re-evaluates the model and returns the loss.

        Returns:
            The closure's loss, or None.
        """
        loss = self.evaluate_closure(closure)
        for group, p, grad in self.params_with_grad():
            state = self.state[p]
            step = self.step_for(p)
            lr, weight_decay = self.lr_for(group, p), group["weight_decay"]
            beta1, beta2 = group["betas"]
            grad = decay_weights(p, grad, lr, weight_decay, group["decoupled_weight_decay"])
            exp_avg, exp_avg_sq = state["exp_avg"], state["exp_avg_sq"]
            update_moments(exp_avg, exp_avg_sq, grad, beta1, beta2)
            # rho_t is a difference of two numbers near 2 / (1 - beta2): float32 would lose four
            # digits of it, so it is computed in float64 where the device has it.
            wide = step if p.device.type == "mps" else step.to(torch.float64)
            correction2 = one_minus_pow(beta2, wide)
            rho_inf = 2 / (1 - beta2) - 1
            rho_t = rho_inf - 2 * wide * (1 - correction2) / correction2
            tractable = rho_t > 5
            # Clamped so the branch not taken stays finite.
            safe_rho = torch.where(tractable, rho_t, 5.0)
            rect = (
                (safe_rho - 4)
                * (safe_rho - 2)
                * rho_inf
                / ((rho_inf - 4) * (rho_inf - 2) * safe_rho)
            ).sqrt()
            adaptive = correction2.sqrt() / (exp_avg_sq.sqrt() + group["eps"])
            scale = torch.where(tractable, rect * adaptive, 1.0)
            p.sub_(lr * (exp_avg / one_minus_pow(beta1, step) * scale))
        return loss
