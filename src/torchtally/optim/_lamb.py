"""`Lamb`: Adam's direction, rescaled per layer by the trust ratio ||w|| / ||update||."""

from __future__ import annotations

from collections.abc import Callable
from typing import final

import torch
from torch import Tensor
from torch.optim.optimizer import ParamsT

from torchtally.optim._base import Optimizer
from torchtally.optim._checks import check_betas, check_bool, check_float
from torchtally.optim._math import has_weight_decay, one_minus_pow, update_moments

__all__ = ["Lamb"]


@final
class Lamb(Optimizer):
    """LAMB (You et al., 2020, "Large Batch Optimization for Deep Learning", Algorithm 2).

    Per parameter tensor (a "layer"), with moments m, v:
    `r = m / (sqrt(v) + eps)`, `u = r + weight_decay * w`,
    `w -= lr * (min(||w||, 10) / ||u||) * u`, step for step equal to `cstorch.optim.Lamb`:
    like Cerebras (and the paper's reference code) the moments are not bias-corrected by
    default and the weight norm is capped at 10. The trust ratio is 1 when either norm is
    zero, and
    `adam=True` fixes it at 1 (Adam with decoupled decay), as cstorch's option does.

    Args:
        params: Parameters or parameter groups.
        lr: Learning rate.
        betas: Decay rates of the first and second moment estimates.
        eps: Added to the denominator for numerical stability.
        weight_decay: Decoupled weight decay, scaled by the trust ratio with the update.
        adam: Always use a trust ratio of 1.
        bias_correction: Divide the moments by their bias corrections (Algorithm 2 of the
            paper does; Cerebras does not).
        maximize: Maximize the objective instead of minimizing it.

    Example:
        >>> w = torch.ones(2, requires_grad=True)
        >>> opt = Lamb([w], lr=0.1)
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
        adam: bool = False,
        *,
        bias_correction: bool = False,
        maximize: bool = False,
    ) -> None:
        defaults = {
            "lr": lr,
            "betas": check_betas("betas", betas),
            "eps": check_float("eps", eps, 0.0),
            "weight_decay": check_float("weight_decay", weight_decay, 0.0),
            "adam": check_bool("adam", adam),
            "bias_correction": check_bool("bias_correction", bias_correction),
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
        """Take one LAMB step.

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
            lr = self.lr_for(group, p)
            exp_avg, exp_avg_sq = state["exp_avg"], state["exp_avg_sq"]
            update_moments(exp_avg, exp_avg_sq, grad, beta1, beta2)
            m_hat, v_hat = exp_avg, exp_avg_sq
            if group["bias_correction"]:
                m_hat = exp_avg / one_minus_pow(beta1, step)
                v_hat = exp_avg_sq / one_minus_pow(beta2, step)
            update = m_hat / (v_hat.sqrt() + group["eps"])
            if has_weight_decay(group["weight_decay"]):
                update = update + group["weight_decay"] * p
            if group["adam"]:
                p.sub_(lr * update)
                continue
            # Cerebras caps the weight norm at 10 (as the reference LAMB implementation does).
            weight_norm, update_norm = p.norm().clamp(0, 10), update.norm()
            usable = (weight_norm > 0) & (update_norm > 0)
            trust = torch.where(usable, weight_norm / torch.where(usable, update_norm, 1.0), 1.0)
            p.sub_((lr * trust) * update)
        return loss
