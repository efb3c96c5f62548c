"""`Adam` and `AdamW`: adaptive moments, with L2 or decoupled weight decay."""

from __future__ import annotations

from abc import ABC
from collections.abc import Callable
from typing import Any, final

import torch
from torch import Tensor
from torch.optim.optimizer import ParamsT

from torchtally.optim._base import Optimizer
from torchtally.optim._checks import check_betas, check_bool, check_float
from torchtally.optim._math import decay_weights, one_minus_pow, update_moments

__all__ = ["Adam", "AdamW"]


class _AdamBase(Optimizer, ABC):
    """The Adam update shared by `Adam` and `AdamW`, which differ only in their defaults."""

    def __init__(
        self,
        params: ParamsT,
        lr: float | Tensor,
        betas: tuple[float, float],
        eps: float,
        weight_decay: float,
        amsgrad: bool,
        *,
        maximize: bool,
        decoupled_weight_decay: bool,
        correct_bias: bool,
    ) -> None:
        defaults: dict[str, Any] = {
            "lr": lr,
            "betas": check_betas("betas", betas),
            "eps": check_float("eps", eps, 0.0),
            "weight_decay": check_float("weight_decay", weight_decay, 0.0),
            "amsgrad": check_bool("amsgrad", amsgrad),
            "maximize": check_bool("maximize", maximize),
            "decoupled_weight_decay": check_bool("decoupled_weight_decay", decoupled_weight_decay),
            "correct_bias": check_bool("correct_bias", correct_bias),
        }
        super().__init__(params, defaults, enable_global_step=True)

    def preinitialize(self) -> None:
        """Create the zero moment estimates (and the running maximum with `amsgrad`)."""
        for group in self.param_groups:
            for p in group["params"]:
                self.init_state(p, "exp_avg", torch.zeros_like)
                self.init_state(p, "exp_avg_sq", torch.zeros_like)
                if group["amsgrad"]:
                    self.init_state(p, "max_exp_avg_sq", torch.zeros_like)

    def state_names_to_sparsify(self) -> list[str]:
        """The moment estimates are shaped like their parameter."""
        return ["exp_avg", "exp_avg_sq", "max_exp_avg_sq"]

    @torch.no_grad()
    def step(self, closure: Callable[[], float] | None = None) -> float | None:  # type: ignore[override]
        """Take one Adam step.

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
            second = exp_avg_sq
            if group["amsgrad"]:
                second = state["max_exp_avg_sq"]
                second.copy_(torch.maximum(second, exp_avg_sq))
            if group["correct_bias"]:
                step_size = lr / one_minus_pow(beta1, step)
                denom = second.sqrt() / one_minus_pow(beta2, step).sqrt() + group["eps"]
            else:
                step_size, denom = lr, second.sqrt() + group["eps"]
            p.sub_(step_size * (exp_avg / denom))
        return loss


@final
class Adam(_AdamBase):
    """Adam (Kingma & Ba, 2015), step for step equal to `torch.optim.Adam`.

    Args:
        params: Parameters or parameter groups.
        lr: Learning rate.
        betas: Decay rates of the first and second moment estimates.
        eps: Added to the denominator for numerical stability.
        weight_decay: Weight decay; an L2 penalty on the gradient unless decoupled.
        amsgrad: Use the running maximum of the second moment (AMSGrad).
        maximize: Maximize the objective instead of minimizing it.
        decoupled_weight_decay: Decay the weights directly, as AdamW does.
        correct_bias: Divide the moments by their bias corrections (cstorch's option).

    Example:
        >>> w = torch.ones(2, requires_grad=True)
        >>> opt = Adam([w], lr=0.1)
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
        eps: float = 1e-8,
        weight_decay: float = 0.0,
        amsgrad: bool = False,
        *,
        maximize: bool = False,
        decoupled_weight_decay: bool = False,
        correct_bias: bool = True,
    ) -> None:
        super().__init__(
            params,
            lr,
            betas,
            eps,
            weight_decay,
            amsgrad,
            maximize=maximize,
            decoupled_weight_decay=decoupled_weight_decay,
            correct_bias=correct_bias,
        )


@final
class AdamW(_AdamBase):
    """AdamW (Loshchilov & Hutter, 2019), step for step equal to `torch.optim.AdamW`.

    Args:
        params: Parameters or parameter groups.
        lr: Learning rate.
        betas: Decay rates of the first and second moment estimates.
        eps: Added to the denominator for numerical stability.
        weight_decay: Decoupled weight decay: each step multiplies the weights by
            `1 - lr * weight_decay`.
        amsgrad: Use the running maximum of the second moment (AMSGrad).
        maximize: Maximize the objective instead of minimizing it.
        correct_bias: Divide the moments by their bias corrections (cstorch's option).

    Example:
        >>> w = torch.ones(2, requires_grad=True)
        >>> opt = AdamW([w], lr=0.1, weight_decay=0.0)
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
        eps: float = 1e-8,
        weight_decay: float = 1e-2,
        amsgrad: bool = False,
        *,
        maximize: bool = False,
        correct_bias: bool = True,
    ) -> None:
        super().__init__(
            params,
            lr,
            betas,
            eps,
            weight_decay,
            amsgrad,
            maximize=maximize,
            decoupled_weight_decay=True,
            correct_bias=correct_bias,
        )
