"""`Adafactor`: Adam-like steps with a factored (row x column) second moment."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any, final

import torch
from torch import Tensor
from torch.optim.optimizer import ParamsT

from torchtally.optim._base import Optimizer
from torchtally.optim._checks import check_bool, check_float

__all__ = ["Adafactor"]


def _check_eps(eps: Any) -> tuple[float | None, float]:
    if not isinstance(eps, (tuple, list)) or len(eps) != 2:
        raise ValueError(
            f"Argument `eps` must be a pair (eps1 or None, eps2). Received: eps={eps!r}"
        )
    eps1 = None if eps[0] is None else check_float("eps[0]", eps[0], 0.0)
    return eps1, check_float("eps[1]", eps[1], 0.0)


def _rms(x: Tensor) -> Tensor:
    return x.norm() / math.sqrt(x.numel())


@final
class Adafactor(Optimizer):
    """Adafactor (Shazeer & Stern, 2018, Algorithms 4 and 5), step for step equal to
    `torch.optim.Adafactor`.

    A matrix (or a batch of them, along the last two dimensions) keeps only the running means
    of its squared gradient's rows and columns; their outer product, divided by the mean row,
    estimates the second moment. Vectors keep the full second moment. With step t:
    `beta2_t = 1 - t**beta2_decay`; relative step `rho_t = min(lr, 1/sqrt(t))`;
    step size `alpha_t = max(eps2, RMS(w)) * rho_t`; update `U = g / sqrt(V_hat)`, clipped to
    `U / max(1, RMS(U) / d)`; `w -= alpha_t * U`.

    Two options from the paper (and cstorch) turn parts off, for a learning rate driven fully
    by a scheduler: `relative_step=False` uses `rho_t = lr`, and `scale_parameter=False` uses
    `alpha_t = rho_t`.

    Args:
        params: Parameters or parameter groups.
        lr: Learning rate (the cap on the relative step).
        beta2_decay: Exponent of the second-moment decay schedule, <= 0.
        eps: `(eps1, eps2)`: eps1 floors the second-moment estimate (None: the dtype's
            machine epsilon); eps2 floors the parameter's RMS.
        d: Clipping threshold of the update's RMS, >= 1.
        weight_decay: Decoupled weight decay: each step multiplies the weights by
            `1 - lr * weight_decay`.
        relative_step: Use `min(lr, 1/sqrt(t))` as the relative step; otherwise `lr`.
        scale_parameter: Scale the step by the parameter's RMS.
        maximize: Maximize the objective instead of minimizing it.

    Example:
        >>> w = torch.ones(2, 2, requires_grad=True)
        >>> opt = Adafactor([w], lr=0.01)
        >>> w.sum().backward()
        >>> opt.step()
        >>> w
        tensor([[0.9900, 0.9900],
                [0.9900, 0.9900]], requires_grad=True)
    """

    def __init__(
        self,
        params: ParamsT,
        lr: float | Tensor = 1e-2,
        beta2_decay: float = -0.8,
        eps: tuple[float | None, float] = (None, 1e-3),
        d: float = 1.0,
        weight_decay: float = 0.0,
        *,
        relative_step: bool = True,
        scale_parameter: bool = True,
        maximize: bool = False,
    ) -> None:
        defaults = {
            "lr": lr,
            "beta2_decay": check_float("beta2_decay", beta2_decay, high=0.0),
            "eps": _check_eps(eps),
            "d": check_float("d", d, 1.0),
            "weight_decay": check_float("weight_decay", weight_decay, 0.0),
            "relative_step": check_bool("relative_step", relative_step),
            "scale_parameter": check_bool("scale_parameter", scale_parameter),
            "maximize": check_bool("maximize", maximize),
        }
        super().__init__(params, defaults, enable_global_step=True)

    def preinitialize(self) -> None:
        """Create zero row and column factors for matrices, a zero second moment otherwise."""
        for group in self.param_groups:
            for p in group["params"]:
                if p.dim() > 1:
                    self.init_state(p, "row_var", lambda q: q.new_zeros((*q.shape[:-1], 1)))
                    self.init_state(
                        p, "col_var", lambda q: q.new_zeros((*q.shape[:-2], 1, q.shape[-1]))
                    )
                else:
                    self.init_state(p, "variance", torch.zeros_like)

    def state_names_to_sparsify(self) -> list[str]:
        """Only a vector's second moment is shaped like its parameter; the factors are not."""
        return ["variance"]

    @torch.no_grad()
    def step(self, closure: Callable[[], float] | None = None) -> float | None:  # type: ignore[override]
        """Take one Adafactor step.

        Args:
            closure: Optional function that re-evaluates the model and returns the loss.

        Returns:
            The closure's loss, or None.
        """
        loss = self.evaluate_closure(closure)
        for group, p, grad in self.params_with_grad():
            step = self.step_for(p)
            lr = self.lr_for(group, p)
            eps1, eps2 = group["eps"]
            eps1 = torch.finfo(p.dtype).eps if eps1 is None else eps1
            rho = torch.minimum(lr, step.rsqrt()) if group["relative_step"] else lr
            alpha = torch.clamp(_rms(p), min=eps2) * rho if group["scale_parameter"] else rho
            if group["weight_decay"] != 0:
                p.mul_(1 - lr * group["weight_decay"])
            weight = (step ** group["beta2_decay"]).to(p.dtype)
            second = self._second_moment(p, grad, weight, eps1)
            update = second.clamp(min=eps1 * eps1).rsqrt() * grad
            clip = torch.clamp(_rms(update) / group["d"], min=1.0)
            p.sub_((alpha / clip) * update)
        return loss

    def _second_moment(self, p: Tensor, grad: Tensor, weight: Tensor, eps1: float) -> Tensor:
        """Fold `grad**2` into the running estimate with weight `1 - beta2_t`; return V_hat."""
        state = self.state[p]
        if p.dim() <= 1:
            state["variance"].lerp_(grad * grad, weight)
            return state["variance"].clone()
        row_var, col_var = state["row_var"], state["col_var"]
        row_var.lerp_((grad * grad).mean(dim=-1, keepdim=True), weight)
        col_var.lerp_((grad * grad).mean(dim=-2, keepdim=True), weight)
        return (row_var @ col_var) / row_var.mean(dim=-2, keepdim=True).clamp(min=eps1)
