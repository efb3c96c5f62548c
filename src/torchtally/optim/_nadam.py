"""`NAdam`: Adam with Nesterov momentum."""

from __future__ import annotations

from collections.abc import Callable
from typing import final

import torch
from torch import Tensor
from torch.optim.optimizer import ParamsT

from torchtally.optim._base import Optimizer, one_scalar
from torchtally.optim._checks import check_betas, check_bool, check_float
from torchtally.optim._math import decay_weights, one_minus_pow, update_moments

__all__ = ["NAdam"]


@final
class NAdam(Optimizer):
    """NAdam (Dozat, 2016), step for step equal to `cstorch.optim.NAdam`.

    Cerebras weights the momentum term by `mu_next / (1 - prod_{i<=t} mu_i * mu_t * mu_next)`:
    its running product already holds `mu_t` and multiplies it in once more. torch (and the
    paper) use `1 - prod_{i<=t} mu_i * mu_next`; `momentum_product="torch"` selects that form.

    Args:
        params: Parameters or parameter groups.
        lr: Learning rate.
        betas: Decay rates of the first and second moment estimates.
        eps: Added to the denominator for numerical stability.
        weight_decay: Weight decay; an L2 penalty on the gradient unless decoupled.
        momentum_decay: Decay of the momentum schedule `mu_t`.
        decoupled_weight_decay: Decay the weights directly, as AdamW does.
        maximize: Maximize the objective instead of minimizing it.
        momentum_product: "cerebras" (default) or "torch": the momentum weight's product.

    Example:
        >>> w = torch.ones(2, requires_grad=True)
        >>> opt = NAdam([w], lr=0.1)
        >>> w.sum().backward()
        >>> opt.step()
        >>> w.detach().lt(1).all().item()
        True
    """

    def __init__(
        self,
        params: ParamsT,
        lr: float | Tensor = 2e-3,
        betas: tuple[float, float] = (0.9, 0.999),
        eps: float = 1e-8,
        weight_decay: float = 0.0,
        momentum_decay: float = 4e-3,
        decoupled_weight_decay: bool = False,
        *,
        maximize: bool = False,
        momentum_product: str = "cerebras",
    ) -> None:
        if momentum_product not in ("cerebras", "torch"):
            raise ValueError(
                'Argument `momentum_product` must be "cerebras" or "torch". '
                f"Received: momentum_product={momentum_product!r}"
            )
        defaults = {
            "lr": lr,
            "betas": check_betas("betas", betas),
            "eps": check_float("eps", eps, 0.0),
            "weight_decay": check_float("weight_decay", weight_decay, 0.0),
            "momentum_decay": check_float("momentum_decay", momentum_decay, 0.0),
            "decoupled_weight_decay": check_bool("decoupled_weight_decay", decoupled_weight_decay),
            "maximize": check_bool("maximize", maximize),
            "momentum_product": momentum_product,
        }
        super().__init__(params, defaults, enable_global_step=True)

    def preinitialize(self) -> None:
        """Create the moment estimates (zero) and the momentum product (one)."""
        for group in self.param_groups:
            for p in group["params"]:
                self.init_state(p, "mu_product", one_scalar)
                self.init_state(p, "exp_avg", torch.zeros_like)
                self.init_state(p, "exp_avg_sq", torch.zeros_like)

    def state_names_to_sparsify(self) -> list[str]:
        """The moment estimates are shaped like their parameter."""
        return ["exp_avg", "exp_avg_sq"]

    @torch.no_grad()
    def step(self, closure: Callable[[], float] | None = None) -> float | None:  # type: ignore[override]
        """Take one NAdam step.

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
            decay = group["momentum_decay"]
            mu = beta1 * (1 - 0.5 * 0.96 ** (step * decay))
            mu_next = beta1 * (1 - 0.5 * 0.96 ** ((step + 1) * decay))
            mu_product = state["mu_product"]
            mu_product.mul_(mu)
            exp_avg, exp_avg_sq = state["exp_avg"], state["exp_avg_sq"]
            update_moments(exp_avg, exp_avg_sq, grad, beta1, beta2)
            denom = (exp_avg_sq / one_minus_pow(beta2, step)).sqrt() + group["eps"]
            grad_weight = lr * (1 - mu) / (1 - mu_product)
            product_next = mu_product * mu_next
            if group.get("momentum_product", "cerebras") == "cerebras":
                product_next = product_next * mu
            avg_weight = lr * mu_next / (1 - product_next)
            p.sub_(grad_weight * (grad / denom)).sub_(avg_weight * (exp_avg / denom))
        return loss
